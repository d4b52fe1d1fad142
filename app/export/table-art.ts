import type { EngineContext } from '../../engines/context.js';
import { type DrawnRect, traceDrawings } from '../../engines/mupdf-paths.js';
import { glyphColours, pageGeometry, type TraceGlyph } from '../../engines/mupdf-stext.js';
import type { DrawnImage } from '../../engines/page-images.js';
import { deviceToUser, type Point, unlessUnreadable, type Word } from '../document/index.js';

/**
 * The page's line art read as a table's look, for every exporter: which rules are borders of which cells, which
 * filled rectangles shade them, which cells a ruled grid merges (a header over a group of ruled columns, a cell
 * whose rows no rule separates), and which words a short rule under their baseline underlines. Geometry only,
 * in whatever frame the caller gives (rows top to bottom, y down).
 */

export type Rgb = [number, number, number];
export type Frame = { x0: number; y0: number; x1: number; y1: number };
export type Rule = Frame & { rgb: Rgb };
export type Side = 'top' | 'bottom' | 'left' | 'right';
/** A border as drawn: its thickness (points) and colour. */
export interface Edge {
  width: number;
  rgb: Rgb;
}

/**
 * The page's line art (rectangles and straight rules), where it places images (device space), and the map from
 * its device space to PDF user space.
 */
export interface PageArt {
  rects: DrawnRect[];
  images: DrawnImage[];
  /** Paths of any shape the page draws (curves and diagrams too, which `rects` leaves out). */
  paths: number;
  /** Where glyphs drawn invisibly start (device space): the text layer OCR puts under a scan, hidden text. */
  invisible: Point[];
  /** Where the other glyphs start, on pages that draw some invisibly (none elsewhere). */
  shown: Point[];
  toUser: (p: Point) => Point;
}

/**
 * Line art and image placements of the pages, for cell fills and borders and for pictures (one MuPDF trace), and
 * on pages that draw text invisibly (an OCR layer under a scan, or one whose scan is missing; hidden text), where
 * that text is (a second trace of those pages only, since the first does not keep the glyphs; a page it fails on
 * keeps its text as it is).
 */
export async function readPageArt(path: string, pages: number[], ctx: EngineContext): Promise<Map<number, PageArt>> {
  const [{ rects, images, paths, hiddenText }, geometry] = await Promise.all([traceDrawings(path, pages, ctx), pageGeometry(path, pages, ctx)]);
  const hiding = [...hiddenText].sort((a, b) => a - b);
  const glyphs = hiding.length
    ? await glyphColours(path, hiding, ctx).catch(unlessUnreadable(new Map<number, TraceGlyph[]>()))
    : new Map<number, TraceGlyph[]>();
  const on = <T extends { page: number }>(xs: T[], page: number) => xs.filter((x) => x.page === page);
  return new Map(
    geometry.map((g) => [
      g.page,
      {
        rects: on(rects, g.page),
        images: on(images, g.page),
        paths: paths.get(g.page) ?? 0,
        // Spaces draw nothing either way (some producers set every space invisibly).
        invisible: (glyphs.get(g.page) ?? []).filter((gl) => gl.invisible && !/^\s*$/u.test(gl.c)).map(({ x, y }) => ({ x, y })),
        shown: (glyphs.get(g.page) ?? []).filter((gl) => !gl.invisible && !/^\s*$/u.test(gl.c)).map(({ x, y }) => ({ x, y })),
        toUser: deviceToUser(g),
      },
    ]),
  );
}

export const isWhite = (rgb: number[]) => rgb.every((v) => v > 0.97);
/** A rule: a thin rectangle or stroke, at most 2.5 pt thick and at least 3 pt long. */
export const isThin = (f: Frame) => Math.min(f.x1 - f.x0, f.y1 - f.y0) <= 2.5 && Math.max(f.x1 - f.x0, f.y1 - f.y0) >= 3;

/** A grid of cells: column boundaries (ascending) and each row's vertical extent (not finite: not placed). */
export interface Grid {
  bounds: number[];
  rows: { y0: number; y1: number }[];
}

export interface CellArt {
  /** Borders by `row|column` (0-based). */
  edges: Map<string, Partial<Record<Side, Edge>>>;
  fill: (r: number, c: number) => Rgb | undefined;
}

/**
 * Fills and borders of the grid's cells from the page's drawings: a cell takes the colour of the last shape
 * drawn under its centre; a rule (a thin rectangle or stroke) lying between two rows or two columns is the
 * border between them, for the cells it runs along.
 */
export function cellArt(grid: Grid, rules: Rule[]): CellArt {
  const { bounds, rows } = grid;
  const ncols = bounds.length - 1;
  const colMid = (c: number) => (bounds[c] + bounds[c + 1]) / 2;
  const rowMid = (r: number) => (rows[r].y0 + rows[r].y1) / 2;
  const placed = rows.map((_, r) => r).filter((r) => Number.isFinite(rows[r].y0));
  const shapes = rules.filter((f) => !isThin(f) && f.x1 - f.x0 >= 2 && f.y1 - f.y0 >= 2);
  const lines = rules.filter(isThin);
  const edges = new Map<string, Partial<Record<Side, Edge>>>();
  const edge = (r: number, c: number, side: Side, f: Rule) => {
    const k = `${r}|${c}`;
    const b = edges.get(k) ?? edges.set(k, {}).get(k)!;
    b[side] = { width: Math.min(f.x1 - f.x0, f.y1 - f.y0), rgb: f.rgb };
  };
  for (const f of lines) {
    if (f.x1 - f.x0 >= f.y1 - f.y0) {
      const y = (f.y0 + f.y1) / 2;
      // Between the row above (centre above the rule) and the row below, and close to one of them.
      const below = placed.find((r) => rowMid(r) > y);
      const above = [...placed].reverse().find((r) => rowMid(r) <= y);
      const near = (r: number | undefined) =>
        r !== undefined && Math.min(Math.abs(y - rows[r].y0), Math.abs(y - rows[r].y1)) <= 1.5 * (rows[r].y1 - rows[r].y0);
      if (!near(below) && !near(above)) continue;
      for (let c = 0; c < ncols; c++) {
        if (colMid(c) < f.x0 || colMid(c) > f.x1) continue;
        if (below !== undefined && near(below)) edge(below, c, 'top', f);
        if (above !== undefined && near(above)) edge(above, c, 'bottom', f);
      }
    } else {
      const x = (f.x0 + f.x1) / 2;
      if (x < bounds[0] - 20 || x > bounds[ncols] + 20) continue;
      const right = Array.from({ length: ncols }, (_, c) => c).find((c) => colMid(c) > x);
      const left = right === undefined ? ncols - 1 : right - 1;
      for (const r of placed) {
        if (rowMid(r) < f.y0 || rowMid(r) > f.y1) continue;
        if (right !== undefined) edge(r, right, 'left', f);
        if (left >= 0) edge(r, left, 'right', f);
      }
    }
  }
  const fill = (r: number, c: number) => {
    const [x, y] = [colMid(c), rowMid(r)];
    const under = shapes.filter((f) => f.x0 <= x && x <= f.x1 && f.y0 <= y && y <= f.y1).pop();
    return under && !isWhite(under.rgb) ? under.rgb : undefined;
  };
  return { edges, fill };
}

/** Cells by row and column; a cell covering several columns is at its first one and sets `span`. */
export type SpanCells<T extends { span: number }> = (T | undefined)[][];

/**
 * A header centred over a group of columns of a ruled table (the group's rules start below it) is one cell
 * merged across the group: its empty neighbours join it while no rule separates them in its row though one
 * does in other rows.
 */
export function groupHeaders<T extends { span: number }>(ncols: number, cells: SpanCells<T>, { edges }: CellArt) {
  const ruledSomewhere = new Set<number>();
  for (const [k, b] of edges) if (b.right) ruledSomewhere.add(Number(k.split('|')[1]));
  cells.forEach((row, r) => {
    // Only rows inside the table: some vertical rule crosses them.
    if (!Array.from({ length: ncols }, (_, c) => edges.get(`${r}|${c}`)).some((b) => b?.left || b?.right)) return;
    const open = (c: number) => ruledSomewhere.has(c) && !edges.get(`${r}|${c}`)?.right && !edges.get(`${r}|${c + 1}`)?.left;
    // Columns free in this row: no cell starts there and no merged cell covers them.
    const free = Array.from({ length: ncols }, (_, c) => !row[c]);
    row.forEach((cell, c) => {
      for (let k = 1; cell && k < cell.span; k++) free[c + k] = false;
    });
    for (let c = 0; c < ncols; c++) {
      const cell = row[c];
      if (!cell) continue;
      let [s, e] = [c, c + cell.span - 1];
      while (s > 0 && free[s - 1] && open(s - 1)) s--;
      while (e + 1 < ncols && free[e + 1] && open(e)) e++;
      if (e - s + 1 === cell.span) {
        c = e;
        continue;
      }
      row[c] = undefined;
      row[s] = { ...cell, span: e - s + 1 };
      for (let k = s; k <= e; k++) free[k] = false;
      c = e;
    }
  });
}

/**
 * Cells that reach down over the rows below them (a row header beside several rows): the rows under a cell
 * stay empty in its columns and no rule separates them from it there, though a rule does separate those rows
 * elsewhere in the table. Returns the number of rows each such cell covers, by `row|column`.
 */
export function rowSpans<T extends { span: number }>(cells: SpanCells<T>, { edges }: CellArt): Map<string, number> {
  const ruled = (r: number, c: number) => !!(edges.get(`${r}|${c}`)?.bottom || edges.get(`${r + 1}|${c}`)?.top);
  const covered = (r: number, c: number) => cells[r].some((cell, k) => cell && k <= c && c < k + cell.span);
  const out = new Map<string, number>();
  cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      if (!cell) return;
      const cols = Array.from({ length: cell.span }, (_, k) => c + k);
      // Only inside a ruled box: the cell's own column has a rule above or below it somewhere.
      let n = 1;
      while (
        r + n < cells.length &&
        cols.every((k) => !covered(r + n, k) && !ruled(r + n - 1, k)) &&
        cells[r + n].some((_, k) => !cols.includes(k) && ruled(r + n - 1, k))
      )
        n++;
      // The merged cell must be closed by a rule below it (or the table's last row): otherwise it is just empty cells.
      if (n > 1 && (r + n === cells.length || cols.some((k) => ruled(r + n - 1, k)))) out.set(`${r}|${c}`, n);
    }),
  );
  return out;
}

/**
 * Words a rule underlines: a horizontal rule at most 1.5 pt thick, from just above the bottom of their box to a
 * little below it, running under them and not much beyond them (a table's rule under a cell's text runs on to
 * the cell's edges). Boxes and rules in one frame.
 */
export function underlinedWords(words: Word[], rules: Frame[]): Set<Word> {
  const out = new Set<Word>();
  for (const f of rules) {
    if (f.y1 - f.y0 > 1.5 || f.x1 - f.x0 < 3) continue;
    const y = (f.y0 + f.y1) / 2;
    const on = words.filter((w) => {
      const h = w.box.y1 - w.box.y0;
      return y > w.box.y1 - 0.35 * h && y < w.box.y1 + 0.15 * h && w.box.x0 >= f.x0 - 1 && w.box.x1 <= f.x1 + 1;
    });
    if (!on.length) continue;
    const size = Math.max(...on.map((w) => w.font.size));
    if (f.x0 < Math.min(...on.map((w) => w.box.x0)) - 0.5 * size || f.x1 > Math.max(...on.map((w) => w.box.x1)) + 0.5 * size) continue;
    for (const w of on) out.add(w);
  }
  return out;
}

/**
 * Words drawn invisibly: more of the glyphs starting in their box are drawn invisibly (`hidden`, in the words'
 * frame: an OCR layer under a scan or without one, hidden text) than visibly (`shown`). A word drawn both ways at
 * one place stays visible.
 */
export function invisibleWords(words: Word[], hidden: Point[], shown: Point[] = []): Set<Word> {
  if (!hidden.length) return new Set();
  // Points in bands 8 pt high, so a word looks only at the glyphs of its own height (a page has thousands).
  const bands = (at: Point[]) => {
    const m = new Map<number, Point[]>();
    for (const p of at) if (Number.isFinite(p.y)) (m.get(Math.floor(p.y / 8)) ?? m.set(Math.floor(p.y / 8), []).get(Math.floor(p.y / 8))!).push(p);
    return m;
  };
  const [h, s] = [bands(hidden), bands(shown)];
  const count = (w: Word, at: Map<number, Point[]>) => {
    let n = 0;
    for (let b = Math.floor((w.box.y0 - 1) / 8); b <= Math.floor((w.box.y1 + 1) / 8) && b - Math.floor((w.box.y0 - 1) / 8) < 1000; b++)
      for (const { x, y } of at.get(b) ?? []) if (x >= w.box.x0 - 1 && x <= w.box.x1 + 1 && y >= w.box.y0 - 1 && y <= w.box.y1 + 1) n++;
    return n;
  };
  return new Set(words.filter((w) => count(w, h) > count(w, s)));
}

/** A cell reaches over the columns its text crosses only up to the next filled one (both exporters' rule). */
export function clipSpans<T extends { span: number }>(row: (T | undefined)[]): (T | undefined)[] {
  row.forEach((cell, c) => {
    if (!cell) return;
    let span = 1;
    while (span < cell.span && !row[c + span]) span++;
    cell.span = span;
  });
  return row;
}

/** A vertical rule at `x` from `y0` to `y1` (device space) that parts the text beside it (see cellDividers). */
export interface Divider {
  x: number;
  y0: number;
  y1: number;
}

/**
 * Vertical rules that divide one ruled row into cells with rows of their own (a form's column of figures beside a
 * column of charts, each side ruled into rows at heights of its own): rules across meet the vertical one at its
 * top and at its bottom from both sides, and inside it rules across meet it (end at it) from one side only, at
 * heights where none meets or crosses it from the other (a ruled table's column rule has the table's rows across
 * it, or is one row high). The text on either side of such a rule is read on its own (dividedPage).
 */
export function cellDividers(rects: Frame[]): Divider[] {
  const thin = rects.filter(isThin);
  const across = thin.filter((f) => f.x1 - f.x0 > f.y1 - f.y0).map((f) => ({ y: (f.y0 + f.y1) / 2, x0: f.x0, x1: f.x1 }));
  const out: Divider[] = [];
  for (const v of thin.filter((f) => f.y1 - f.y0 > f.x1 - f.x0)) {
    // A rule across reaches the vertical one when it ends on it (within a point of its edge) or runs through it.
    const fromLeft = (h: { x0: number; x1: number }) => h.x0 < v.x0 - 3 && h.x1 >= v.x0 - 1;
    const fromRight = (h: { x0: number; x1: number }) => h.x1 > v.x1 + 3 && h.x0 <= v.x1 + 1;
    const bothSides = (y: number, within: number) => {
      const at = across.filter((h) => Math.abs(h.y - y) <= within);
      return at.some(fromLeft) && at.some(fromRight);
    };
    // Its ends are a row's top and bottom rules (their thickness apart).
    if (!bothSides(v.y0, 3) || !bothSides(v.y1, 3)) continue;
    const inside = across.filter((h) => h.y > v.y0 + 3 && h.y < v.y1 - 3 && (fromLeft(h) || fromRight(h)));
    if (inside.length && !inside.some((h) => bothSides(h.y, 1))) out.push({ x: (v.x0 + v.x1) / 2, y0: v.y0, y1: v.y1 });
  }
  return out;
}
