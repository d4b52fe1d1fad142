import ExcelJS from 'exceljs';
import type { EngineContext } from '../../engines/context.js';
import { type PageModel, type Point, pagesTime, readPageBatches, unlessUnreadable, type Word } from '../document/index.js';
import { colourHex } from './docx-style.js';
import { cellArt, clipSpans, type Edge, type Frame, groupHeaders, type PageArt, readPageArt, type Side } from './table-art.js';
import { naturalWidth, styleOf } from './text-style.js';

/**
 * PDF to a spreadsheet: one sheet per page, laid out as a grid of the page's own rows and columns, so a
 * table comes out as real cells and the text around it keeps its place (a page of prose is its lines in
 * column A). The grid comes from word positions, not from the reading-order table detector (tuned for
 * prose: it reads a dense numeric table such as the NICS report as one paragraph).
 *
 * Rows: words whose vertical extents overlap. Pieces: the words of a row split at gaps wider than ~1 em.
 * Columns: x ranges that the pieces of almost every multi-piece row leave empty (a few headers centred over
 * several columns may cross them). A piece lies in the column of its centre, or, when it spans a gutter,
 * in the column where it starts.
 *
 * Look: each cell keeps its text's font, size, weight, slant and colour; fills and borders come from the page's
 * rectangles and rules (readPageArt), headers over several columns are merged cells, widths and heights follow
 * the page, and the sheet prints on the page's paper with its margins.
 */

export interface Piece {
  text: string;
  x0: number;
  x1: number;
  /** Vertical extent in the same frame (y down). */
  y0: number;
  y1: number;
  words: Word[];
}

type Dir = [number, number];

/** The writing direction of a word in PDF user space, to the nearest quarter turn. */
function dirOf(w: Word): Dir {
  const dx = w.corners.topRight.x - w.corners.topLeft.x;
  const dy = w.corners.topRight.y - w.corners.topLeft.y;
  return Math.abs(dx) >= Math.abs(dy) ? [Math.sign(dx) || 1, 0] : [0, Math.sign(dy)];
}

/** A box of PDF user space (given by its corners) in the frame where text of direction `u` runs left to right and lines go down. */
function toFrame(corners: Point[], [ux, uy]: Dir): Frame {
  const pts = corners.map((p) => ({ x: p.x * ux + p.y * uy, y: p.x * uy - p.y * ux }));
  return {
    x0: Math.min(...pts.map((p) => p.x)),
    y0: Math.min(...pts.map((p) => p.y)),
    x1: Math.max(...pts.map((p) => p.x)),
    y1: Math.max(...pts.map((p) => p.y)),
  };
}

const inFrame = (w: Word, u: Dir): Frame => toFrame(Object.values(w.corners), u);

/** The page's main writing direction (by characters), in PDF user space. */
function mainDir(page: PageModel): Dir {
  const weight = new Map<string, number>();
  for (const w of page.lines.flatMap((l) => l.words)) weight.set(String(dirOf(w)), (weight.get(String(dirOf(w))) ?? 0) + w.text.length);
  return ([...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '1,0').split(',').map(Number) as Dir;
}

/**
 * The page's words grouped into rows (top to bottom) and, within a row, into pieces (left to right), in the
 * frame of the page's main writing direction: a table printed sideways (a /Rotate 90 page, or landscape
 * content turned on a portrait page) reads as it would turned upright.
 */
export function rowsOf(page: PageModel): Piece[][] {
  const all = page.lines.flatMap((l) => l.words);
  const main = mainDir(page);
  const along = (w: Word) => String(dirOf(w)) === String(main);
  const words = all
    .filter(along)
    .map((w) => ({ w, b: inFrame(w, main) }))
    .sort((a, b) => a.b.y0 - b.b.y0 || a.b.x0 - b.b.x0);
  const rows: { y0: number; y1: number; words: typeof words }[] = [];
  for (const it of words) {
    const { b } = it;
    const h = b.y1 - b.y0;
    // The nearest earlier row this word overlaps by more than half its height.
    let row: (typeof rows)[number] | undefined;
    for (let i = rows.length - 1; i >= 0 && !row; i--)
      if (Math.min(rows[i].y1, b.y1) - Math.max(rows[i].y0, b.y0) > 0.5 * Math.min(h, rows[i].y1 - rows[i].y0)) row = rows[i];
    if (row) {
      row.words.push(it);
      row.y0 = Math.min(row.y0, b.y0);
      row.y1 = Math.max(row.y1, b.y1);
    } else rows.push({ y0: b.y0, y1: b.y1, words: [it] });
  }
  const out = rows
    .sort((a, b) => a.y0 - b.y0)
    .map((r) => {
      const pieces: Piece[] = [];
      let last: (typeof words)[number] | undefined;
      for (const it of r.words.sort((a, b) => a.b.x0 - b.b.x0)) {
        const p = pieces[pieces.length - 1];
        if (p && last && it.b.x0 - last.b.x1 <= 0.9 * Math.max(last.w.font.size, it.w.font.size)) {
          p.text += ` ${it.w.text}`;
          p.x1 = Math.max(p.x1, it.b.x1);
          p.words.push(it.w);
        } else pieces.push({ text: it.w.text, x0: it.b.x0, x1: it.b.x1, y0: r.y0, y1: r.y1, words: [it.w] });
        last = it;
      }
      return pieces;
    });
  // Text in another direction (a sideways page number, vertical CJK) has no place in the grid: its lines follow, in column A.
  for (const l of page.lines) {
    const ws = l.words.filter((w) => !along(w));
    if (ws.length) out.push([{ text: ws.map((w) => w.text).join(' '), x0: -Infinity, x1: -Infinity, y0: Infinity, y1: Infinity, words: ws }]);
  }
  return out;
}

/**
 * x ranges inside [lo, hi] that at most `allowed` rows cover with their pieces (`skip` left out), 1.5 pt wide or more,
 * on a half-point grid. Counted at the ends of the pieces only, not over every half point: a page can be a
 * billion points wide, and the text on it two words.
 */
function gaps(rows: Piece[][], lo: number, _hi: number, allowed: number, skip: Set<Piece> = new Set()): [number, number][] {
  // How many rows start (+1) or stop (-1) covering at each half point.
  const change = new Map<number, number>();
  const cover = ([a, b]: number[]) => {
    change.set(a, (change.get(a) ?? 0) + 1);
    change.set(b + 1, (change.get(b + 1) ?? 0) - 1);
  };
  for (const r of rows) {
    // A row counts once where its pieces overlap or touch: they are joined first.
    const spans = r
      .filter((p) => !skip.has(p))
      .map((p) => [Math.floor((p.x0 - lo) * 2), Math.ceil((p.x1 - lo) * 2)])
      .sort((a, b) => a[0] - b[0]);
    let cur: number[] | undefined;
    for (const s of spans) {
      if (cur && s[0] <= cur[1] + 1) cur[1] = Math.max(cur[1], s[1]);
      else {
        if (cur) cover(cur);
        cur = [...s];
      }
    }
    if (cur) cover(cur);
  }
  const out: [number, number][] = [];
  let covering = 0;
  let start = 0;
  // A run of half points covered by few enough rows counts from where it starts to the first covered one after it;
  // one at the left edge, or running to the right edge, is no gap between columns.
  for (const i of [...change.keys()].sort((a, b) => a - b)) {
    const was = covering <= allowed;
    covering += change.get(i)!;
    const now = covering <= allowed;
    if (was && !now) {
      if (start > 0 && i - 1 - start >= 3) out.push([lo + start / 2, lo + (i - 1) / 2]);
    } else if (!was && now) start = i;
  }
  return out;
}

/**
 * Column boundaries (x positions, ascending) shared by the rows of two or more pieces. First the columns most
 * rows agree on (a tenth of the rows may cross a gap: headers centred over a group of columns); pieces that
 * overlap two or more of those columns are headers spanning them, and the boundaries are the gaps no other
 * piece crosses, which also keeps a column that only a few rows fill (a totals-only column).
 */
export function columnCuts(rows: Piece[][]): number[] {
  const multi = rows.filter((r) => r.length >= 2);
  if (multi.length < 2) return [];
  const lo = Math.floor(Math.min(...multi.flat().map((p) => p.x0)));
  const hi = Math.ceil(Math.max(...multi.flat().map((p) => p.x1)));
  const loose = gaps(multi, lo, hi, Math.floor(multi.length * 0.1));
  const bounds = [lo, ...loose.flat(), hi];
  const dense: [number, number][] = [];
  for (let i = 0; i < bounds.length; i += 2) dense.push([bounds[i], bounds[i + 1]]);
  const spanning = new Set(multi.flat().filter((p) => dense.filter(([a, b]) => Math.min(b, p.x1) - Math.max(a, p.x0) > 0).length >= 2));
  return gaps(multi, lo, hi, 0, spanning).map(([a, b]) => (a + b) / 2);
}

export interface GridCell {
  text: string;
  pieces: Piece[];
  /** Columns of the grid before sparse ones joined their neighbours: where the cell starts and ends. */
  first: number;
  last: number;
}

export interface PageLayout {
  /** Column boundaries, ascending: column c lies between bounds[c] and bounds[c + 1] (frame x, points). */
  bounds: number[];
  /** Each grid row's vertical extent (frame y, points; not finite for text in another direction). */
  rows: { y0: number; y1: number }[];
  /** cells[r][c]; a cell covering several columns (a header over a group) is at its first one and sets `span`. */
  cells: ({ text: string; pieces: Piece[]; span: number } | undefined)[][];
}

/**
 * The page as a grid: rows, columns with their boundaries on the page, cells. A piece that crosses column
 * boundaries (a header centred over several columns, a title) covers the columns it reaches.
 */
export function pageLayout(page: PageModel): PageLayout {
  const rows = rowsOf(page);
  const cuts = columnCuts(rows);
  const colOf = (x: number) => cuts.filter((c) => c < x).length;
  const grid = rows.map((r) => {
    const cells: (GridCell | undefined)[] = Array.from({ length: cuts.length + 1 }, () => undefined);
    for (const p of r) {
      const finite = Number.isFinite(p.x0);
      const spans = finite && cuts.some((c) => c > p.x0 && c < p.x1);
      const col = finite ? (spans ? colOf(p.x0) : colOf((p.x0 + p.x1) / 2)) : 0;
      const last = spans ? colOf(p.x1) : col;
      const cell = cells[col];
      if (cell) {
        cell.text += ` ${p.text}`;
        cell.pieces.push(p);
        cell.last = Math.max(cell.last, last);
      } else cells[col] = { text: p.text, pieces: [p], first: col, last };
    }
    return cells;
  });
  const finite = rows.flat().filter((p) => Number.isFinite(p.x0));
  const lo = Math.min(...finite.map((p) => p.x0), cuts[0] ?? Infinity);
  const hi = Math.max(...finite.map((p) => p.x1), cuts[cuts.length - 1] ?? -Infinity);
  const bounds = Number.isFinite(lo) ? [lo, ...cuts, hi] : [0, ...cuts, 1];
  const removed = mergeSparseColumns(grid);
  // Original column k becomes the number of boundaries before it that are kept.
  const newIndex = (k: number) => bounds.slice(1, k + 1).filter((_, i) => !removed.has(i + 1)).length;
  const width = bounds.length - 1 - removed.size;
  return {
    bounds: bounds.filter((_, i) => !removed.has(i)),
    rows: rows.map((r) => ({ y0: r[0]?.y0 ?? Infinity, y1: r[0]?.y1 ?? Infinity })),
    cells: grid.map((r) => {
      const out: PageLayout['cells'][number] = Array.from({ length: width }, () => undefined);
      for (const cell of r)
        if (cell) out[newIndex(cell.first)] = { text: cell.text, pieces: cell.pieces, span: newIndex(cell.last) - newIndex(cell.first) + 1 };
      return clipSpans(out);
    }),
  };
}

/** The page as a grid of cell texts. */
export function pageGrid(page: PageModel): string[][] {
  return pageLayout(page).cells.map((r) => r.map((c) => c?.text ?? ''));
}

/**
 * A column that only a few rows fill and that shares no row with a neighbour is that neighbour's header (a
 * left-aligned title over right-aligned numbers leaves a gap between them): it joins the neighbour, the
 * right one first. Returns the boundaries (indexes into [lo, ...cuts, hi]) that no longer separate columns.
 */
function mergeSparseColumns(grid: (GridCell | undefined)[][]): Set<number> {
  const width = grid[0]?.length ?? 0;
  const filled = (c: number) => grid.filter((r) => r[c]).length;
  const collide = (a: number, b: number) => grid.some((r) => r[a] && r[b]);
  const limit = Math.max(1, Math.floor(grid.length * 0.1));
  const drop = new Set<number>();
  const removed = new Set<number>();
  for (let c = 0; c < width; c++) {
    if (filled(c) > limit) continue;
    const target = c + 1 < width && !collide(c, c + 1) ? c + 1 : c > 0 && !drop.has(c - 1) && !collide(c, c - 1) ? c - 1 : -1;
    if (target < 0) continue;
    for (const r of grid) if (r[c]) [r[target], r[c]] = [r[c], undefined];
    drop.add(c);
    removed.add(target > c ? c + 1 : c);
  }
  return removed;
}

export interface CellValue {
  value: string | number;
  /** Excel number format when the text had one worth keeping (thousands separators, decimals, currency, percent). */
  format?: string;
}

const CURRENCY = '$€£¥';

/**
 * A number as the PDF shows it: `1,234`, `-12.50`, `(1,234.00)` (negative), `$1,234.56`, `12.5%`, `−3`.
 * `(5)` alone stays text (a label). The decimal point is `.`; `,` or a space only groups thousands (`98 452`) (the en-US convention of the spec's default
 * locale): `1,5` stays text. Leading zeros (`007`, ZIP codes), more than 15 digits and dates stay text.
 */
export function parseNumber(text: string): CellValue {
  let s = text.trim().replace(/\u2212/g, '-');
  let negative = false;
  const parens = /^\(.*\)$/.test(s);
  if (parens) s = s.slice(1, -1).trim();
  const sign = () => {
    if (s[0] === '-' || s[0] === '+') {
      negative = negative !== (s[0] === '-');
      s = s.slice(1);
    }
  };
  sign();
  const currency = CURRENCY.includes(s[0] ?? 'x') ? s[0] : '';
  if (currency) {
    s = s.slice(1).trim();
    if (!negative) sign();
  }
  const pct = s.endsWith('%');
  if (pct) s = s.slice(0, -1).trim();
  const m = /^(\d{1,3}(?:,\d{3})+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+)?(\.\d+)?$/.exec(s);
  if (!m || (!m[1] && !m[2]) || (parens && negative) || (currency && pct)) return { value: text };
  // `(5)` is as often a label as an accounting negative; `(1,234.00)` and `($5)` are not labels.
  if (parens && !currency && !m[2] && !/\D/.test(m[1] ?? '')) return { value: text };
  const [, int = '', frac = ''] = m;
  const digits = int.replace(/[, \u00a0\u202f]/g, '');
  const grouped = digits.length < int.length;
  if (/^0\d/.test(digits) || digits.length + frac.length > 16) return { value: text };
  const value = Number(`${digits || '0'}${frac}`) * (negative || parens ? -1 : 1);
  const decimals = Math.max(0, frac.length - 1);
  const body = `${grouped ? '#,##0' : '0'}${decimals ? `.${'0'.repeat(decimals)}` : ''}`;
  if (pct) return { value: value / 100, format: `${body}%` };
  const unit = currency ? `"${currency}"` : '';
  const format = unit || parens || grouped || decimals ? `${unit}${body}${parens ? `;(${unit}${body})` : ''}` : undefined;
  return format ? { value, format } : { value };
}

const argb = (rgb: number[]) => `FF${colourHex(rgb)}`;
/** Points to Excel's column width unit (characters of the default font's digits: 7 px + 5 px padding at 96 dpi). */
const charWidth = (pt: number) => Math.round(Math.max(0.5, (pt / 0.75 - 5) / 7) * 100) / 100;
const borderStyle = (thickness: number): ExcelJS.BorderStyle => (thickness <= 0.8 ? 'thin' : thickness <= 1.8 ? 'medium' : 'thick');
const excelBorders = (b: Partial<Record<Side, Edge>>): Partial<ExcelJS.Borders> =>
  Object.fromEntries(Object.entries(b).map(([side, e]) => [side, { style: borderStyle(e.width), color: { argb: argb(e.rgb) } }]));

type Align = 'left' | 'center' | 'right';

/**
 * How each column's text is aligned on the page: the edge (or centre) its cells agree on best. Column
 * boundaries are the middles of the gaps between columns, not cell edges, so a single cell cannot tell.
 */
function columnAlignments(layout: PageLayout): (Align | undefined)[] {
  const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
  return layout.bounds.slice(1).map((_, c) => {
    const cells = layout.cells.map((r) => r[c]).filter((it) => it && it.span === 1 && Number.isFinite(it.pieces[0].x0));
    if (cells.length < 2) return undefined;
    const x0 = cells.map((it) => Math.min(...it!.pieces.map((p) => p.x0)));
    const x1 = cells.map((it) => Math.max(...it!.pieces.map((p) => p.x1)));
    const [l, r, m] = [spread(x0), spread(x1), spread(x0.map((x, i) => (x + x1[i]) / 2))];
    if (l <= 1 || l <= Math.min(r, m)) return 'left';
    return r <= m ? 'right' : 'center';
  });
}

/** A cell's alignment: its column's; a cell spanning columns is centred when its text sits in their middle. */
function alignment(bounds: number[], c: number, span: number, pieces: Piece[], column: Align | undefined): Partial<ExcelJS.Alignment> | undefined {
  if (span === 1) return column && column !== 'left' ? { horizontal: column } : undefined;
  const left = Math.min(...pieces.map((p) => p.x0)) - bounds[c];
  const right = bounds[c + span] - Math.max(...pieces.map((p) => p.x1));
  if (!Number.isFinite(left + right)) return undefined;
  return Math.abs(left - right) < 0.15 * (left + right) + 1 && left + right > 4 ? { horizontal: 'center' } : undefined;
}

// Excel's paper sizes (its numbering) with their size in points, smallest first.
const PAPERS: [number, number, number][] = [
  [9, 595, 842],
  [1, 612, 792],
  [5, 612, 1008],
  [3, 792, 1224],
  [8, 842, 1191],
];

/**
 * Printed as the page was: its orientation, the smallest standard paper it fits on, margins where its text
 * starts (so the cells print where the page had them), one sheet on one paper (scaled down only when it does not fit).
 */
function pageSetup(page: PageModel): Partial<ExcelJS.PageSetup> {
  const [short, long] = [Math.min(page.width, page.height), Math.max(page.width, page.height)];
  const paper = PAPERS.find(([, w, h]) => w >= short - 1 && h >= long - 1);
  const words = page.lines.flatMap((l) => l.words);
  const inch = (pt: number) => Math.max(0, Math.round((pt / 72) * 100) / 100);
  return {
    orientation: page.width > page.height ? 'landscape' : 'portrait',
    ...(paper ? { paperSize: paper[0] } : {}),
    fitToPage: true,
    fitToWidth: 1,
    fitToHeight: 1,
    margins: {
      left: inch(words.length ? Math.min(...words.map((w) => w.box.x0)) : 36),
      top: inch(words.length ? Math.min(...words.map((w) => w.box.y0)) : 36),
      right: 0,
      bottom: 0,
      header: 0,
      footer: 0,
    },
  };
}

/**
 * The PDF as a workbook written to `path` as its pages are read: one sheet per page, named `Page N`, each written
 * out (exceljs's streaming writer) before the next batch of pages is read, so memory stays that of a batch of pages
 * whatever the document's length. Cells keep the font, size, weight, slant and colour of their text, the fills and
 * borders the page draws (its line art, traced batch by batch), and headers spanning columns are merged cells;
 * column widths and row heights follow the page. Returns the pages without text.
 */
export async function pdfToXlsx(input: string, pages: number[], path: string, ctx: EngineContext): Promise<number[]> {
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
  book.creator = 'Quire';
  const textless: number[] = [];
  const add = async (name: string, page?: PageModel, art?: PageArt) => {
    const sheet = book.addWorksheet(name, page && { pageSetup: pageSetup(page) });
    if (page) pageSheet(sheet, page, art);
    // Each sheet is in the file before the next is made: the zip takes its entries one at a time, and a sheet it
    // has not taken yet waits in memory (the writer's own 'zipped' only says the sheet was written out to it).
    const zip = (book as unknown as { zip: NodeJS.EventEmitter }).zip;
    const entryName = `xl/worksheets/sheet${sheet.id}.xml`;
    await new Promise<void>((done) => {
      const taken = (entry: { name: string }) => {
        if (!entry.name.endsWith(entryName)) return;
        zip.off('entry', taken);
        done();
      };
      zip.on('entry', taken);
      sheet.commit();
    });
  };
  await readPageBatches(input, pages, ctx, {}, async (batch) => {
    // Line art only places the cells: pages MuPDF cannot trace are converted without it.
    const art = await readPageArt(
      input,
      batch.map((p) => p.page),
      pagesTime(ctx, batch.length),
    ).catch(unlessUnreadable(new Map<number, PageArt>()));
    for (const page of batch) {
      if (!page.lines.length) textless.push(page.page);
      await add(`Page ${page.page}`, page, art.get(page.page));
    }
  });
  if (!pages.length) await add('Page 1');
  await book.commit();
  return textless;
}

/** One page as a sheet: its grid of cells, their style and line art, column widths and row heights. */
function pageSheet(sheet: ExcelJS.Worksheet, page: PageModel, a: PageArt | undefined): void {
  const layout = pageLayout(page);
  const { bounds, rows, cells } = layout;
  const main = mainDir(page);
  const decor =
    a &&
    cellArt(
      layout,
      a.rects.map((f) => ({ ...toFrame([a.toUser({ x: f.x0, y: f.y0 }), a.toUser({ x: f.x1, y: f.y1 })], main), rgb: f.rgb })),
    );
  if (decor) groupHeaders(bounds.length - 1, cells, decor);
  const aligns = columnAlignments(layout);
  cells.forEach((row, r) => {
    row.forEach((it, c) => {
      if (!it) return;
      const cell = sheet.getCell(r + 1, c + 1);
      const v = parseNumber(it.text);
      cell.value = v.value;
      if (v.format) cell.numFmt = v.format;
      const st = styleOf(it.pieces.flatMap((p) => p.words));
      cell.font = { name: st.family, size: Math.round(st.size * 2) / 2 || 11, bold: st.bold, italic: st.italic, color: { argb: `FF${st.color}` } };
      // At the top of the row, as on the page (the row's height includes the space down to the next row).
      cell.alignment = { vertical: 'top', ...alignment(bounds, c, it.span, it.pieces, aligns[c]) };
    });
  });
  if (decor) {
    rows.forEach((row, r) => {
      if (!Number.isFinite(row.y0)) return;
      for (let c = 0; c + 1 < bounds.length; c++) {
        const rgb = decor.fill(r, c);
        const border = decor.edges.get(`${r}|${c}`);
        if (!rgb && !border) continue;
        const cell = sheet.getCell(r + 1, c + 1);
        if (rgb) cell.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: argb(rgb) } };
        if (border) cell.border = excelBorders(border);
      }
    });
  }
  cells.forEach((row, r) => row.forEach((it, c) => it && it.span > 1 && sheet.mergeCells(r + 1, c + 1, r + 1, c + it.span)));
  const widths = bounds.slice(1).map((b, c) => b - bounds[c]);
  // A cell whose text would be cut by a filled neighbour (the stand-in font is wider, or prose read as columns) widens its last column.
  cells.forEach((row) =>
    row.forEach((it, c) => {
      if (!it || !row.slice(c + it.span).some(Boolean)) return;
      const st = styleOf(it.pieces.flatMap((p) => p.words));
      const need = (naturalWidth(it.text, st.family, st.bold, st.italic) ?? 0.5 * [...it.text].length) * st.size + 4;
      const have = widths.slice(c, c + it.span).reduce((a, b) => a + b, 0);
      if (need > have) widths[c + it.span - 1] += need - have;
    }),
  );
  widths.forEach((w, c) => (sheet.getColumn(c + 1).width = Math.min(255, charWidth(w))));
  // Row heights: the page's own spacing to the next row, at least the text's height; the gaps shrink when the
  // rows would not fit on the page's height (one sheet prints on one paper, unscaled when it fits).
  const text = rows.map((row) => (Number.isFinite(row.y0) ? row.y1 - row.y0 : 0));
  const heights = rows.map((row, r) => {
    const next = rows[r + 1] && Number.isFinite(rows[r + 1].y0) ? rows[r + 1].y0 - row.y0 : text[r];
    return Math.max(text[r], Math.min(next, text[r] * 2.5));
  });
  const excess = heights.reduce((a, b) => a + b, 0) - (page.height - (sheet.pageSetup.margins?.top ?? 0) * 72 - 2);
  const slack = heights.reduce((a, h, r) => a + h - text[r], 0);
  // Spreadsheets draw rows in whole pixels (0.75 pt at 96 dpi), rounding each row down: heights are whole
  // pixels, rounded on the running total so that rows further down stay where the page has them.
  let [total, placed] = [0, 0];
  heights.forEach((h, r) => {
    if (!text[r]) return;
    total += excess > 0 && slack > 0 ? h - (h - text[r]) * Math.min(1, excess / slack) : h;
    const bottom = Math.max(placed + 0.75, Math.round(total / 0.75) * 0.75);
    sheet.getRow(r + 1).height = Math.round((bottom - placed) * 100) / 100;
    placed = bottom;
  });
}
