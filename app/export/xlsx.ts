import ExcelJS from 'exceljs';
import type { PageModel, Word } from '../document/index.js';

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
 */

export interface Piece {
  text: string;
  x0: number;
  x1: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

type Frame = { x0: number; y0: number; x1: number; y1: number };
type Dir = [number, number];

/** The writing direction of a word in PDF user space, to the nearest quarter turn. */
function dirOf(w: Word): Dir {
  const dx = w.corners.topRight.x - w.corners.topLeft.x;
  const dy = w.corners.topRight.y - w.corners.topLeft.y;
  return Math.abs(dx) >= Math.abs(dy) ? [Math.sign(dx) || 1, 0] : [0, Math.sign(dy)];
}

/** A word's box in the frame where text of direction `u` runs left to right and lines go down. */
function inFrame(w: Word, [ux, uy]: Dir): Frame {
  const pts = Object.values(w.corners).map((p) => ({ x: p.x * ux + p.y * uy, y: p.x * uy - p.y * ux }));
  return { x0: Math.min(...pts.map((p) => p.x)), y0: Math.min(...pts.map((p) => p.y)), x1: Math.max(...pts.map((p) => p.x)), y1: Math.max(...pts.map((p) => p.y)) };
}

/**
 * The page's words grouped into rows (top to bottom) and, within a row, into pieces (left to right), in the
 * frame of the page's main writing direction: a table printed sideways (a /Rotate 90 page, or landscape
 * content turned on a portrait page) reads as it would turned upright.
 */
export function rowsOf(page: PageModel): Piece[][] {
  const all = page.lines.flatMap((l) => l.words);
  const weight = new Map<string, number>();
  for (const w of all) weight.set(String(dirOf(w)), (weight.get(String(dirOf(w))) ?? 0) + w.text.length);
  const main = ([...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '1,0').split(',').map(Number) as Dir;
  const along = (w: Word) => String(dirOf(w)) === String(main);
  const words = all.filter(along).map((w) => ({ w, b: inFrame(w, main) })).sort((a, b) => a.b.y0 - b.b.y0 || a.b.x0 - b.b.x0);
  const rows: { y0: number; y1: number; words: typeof words }[] = [];
  for (const it of words) {
    const { b } = it;
    const h = b.y1 - b.y0;
    // The nearest earlier row this word overlaps by more than half its height.
    let row: (typeof rows)[number] | undefined;
    for (let i = rows.length - 1; i >= 0 && !row; i--) if (Math.min(rows[i].y1, b.y1) - Math.max(rows[i].y0, b.y0) > 0.5 * Math.min(h, rows[i].y1 - rows[i].y0)) row = rows[i];
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
        } else pieces.push({ text: it.w.text, x0: it.b.x0, x1: it.b.x1 });
        last = it;
      }
      return pieces;
    });
  // Text in another direction (a sideways page number, vertical CJK) has no place in the grid: its lines follow, in column A.
  for (const l of page.lines) {
    const text = l.words.filter((w) => !along(w)).map((w) => w.text).join(' ');
    if (text) out.push([{ text, x0: -Infinity, x1: -Infinity }]);
  }
  return out;
}

/** x ranges inside [lo, hi] that at most `allowed` rows cover with their pieces (`skip` left out), 1.5 pt wide or more. */
function gaps(rows: Piece[][], lo: number, hi: number, allowed: number, skip: Set<Piece> = new Set()): [number, number][] {
  const cover = new Uint16Array(Math.ceil((hi - lo) * 2) + 2);
  for (const r of rows) {
    const seen = new Uint8Array(cover.length);
    for (const p of r) if (!skip.has(p)) for (let i = Math.floor((p.x0 - lo) * 2); i <= Math.ceil((p.x1 - lo) * 2); i++) seen[i] = 1;
    seen.forEach((v, i) => (cover[i] += v));
  }
  const out: [number, number][] = [];
  let start = -1;
  for (let i = 0; i < cover.length; i++) {
    if (cover[i] <= allowed) {
      if (start < 0) start = i;
      continue;
    }
    if (start > 0 && i - 1 - start >= 3) out.push([lo + start / 2, lo + (i - 1) / 2]);
    start = -1;
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

/** The page as a grid of cell texts. */
export function pageGrid(page: PageModel): string[][] {
  const rows = rowsOf(page);
  const cuts = columnCuts(rows);
  const colOf = (x: number) => cuts.filter((c) => c < x).length;
  const grid = rows.map((r) => {
    const cells: string[] = Array.from({ length: cuts.length + 1 }, () => '');
    for (const p of r) {
      const mid = (p.x0 + p.x1) / 2;
      const spans = cuts.some((c) => c > p.x0 && c < p.x1);
      const col = Number.isFinite(p.x0) ? (spans ? colOf(p.x0) : colOf(mid)) : 0;
      cells[col] = cells[col] ? `${cells[col]} ${p.text}` : p.text;
    }
    return cells;
  });
  return mergeSparseColumns(grid);
}

/**
 * A column that only a few rows fill and that shares no row with a neighbour is that neighbour's header (a
 * left-aligned title over right-aligned numbers leaves a gap between them): it joins the neighbour, the
 * right one first.
 */
function mergeSparseColumns(grid: string[][]): string[][] {
  const width = grid[0]?.length ?? 0;
  const filled = (c: number) => grid.filter((r) => r[c]).length;
  const collide = (a: number, b: number) => grid.some((r) => r[a] && r[b]);
  const limit = Math.max(1, Math.floor(grid.length * 0.1));
  const drop = new Set<number>();
  for (let c = 0; c < width; c++) {
    if (filled(c) > limit) continue;
    const target = c + 1 < width && !collide(c, c + 1) ? c + 1 : c > 0 && !drop.has(c - 1) && !collide(c, c - 1) ? c - 1 : -1;
    if (target < 0) continue;
    for (const r of grid) if (r[c]) [r[target], r[c]] = [r[c], ''];
    drop.add(c);
  }
  return grid.map((r) => r.filter((_, c) => !drop.has(c)));
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

/** The workbook: one sheet per page, named `Page N`. */
export async function pagesToXlsx(pages: PageModel[]): Promise<Buffer> {
  const book = new ExcelJS.Workbook();
  book.creator = 'Quire';
  for (const page of pages) {
    // Printed as the page was: its orientation, one page wide.
    const sheet = book.addWorksheet(`Page ${page.page}`, { pageSetup: { orientation: page.width > page.height ? 'landscape' : 'portrait', fitToPage: true, fitToWidth: 1, fitToHeight: 0 } });
    const grid = pageGrid(page);
    const widths: number[] = [];
    grid.forEach((cells, r) => {
      cells.forEach((text, c) => {
        if (!text) return;
        const cell = sheet.getCell(r + 1, c + 1);
        const v = parseNumber(text);
        cell.value = v.value;
        if (v.format) cell.numFmt = v.format;
        // Widths follow the rows of the grid: a note or title alone on its row may overflow into the next cells.
        const alone = cells.filter(Boolean).length === 1;
        widths[c] = Math.max(widths[c] ?? 0, alone ? Math.min(text.length, 12) : text.length);
      });
    });
    widths.forEach((w, c) => (sheet.getColumn(c + 1).width = Math.min(60, Math.max(8, w + 2))));
    // A prose page is one long column: widen it so its lines are readable without resizing.
    if (widths.length === 1) sheet.getColumn(1).width = Math.min(120, Math.max(8, median(grid.map((r) => r[0]?.length ?? 0)) + 2));
  }
  if (!pages.length) book.addWorksheet('Page 1');
  return Buffer.from(await book.xlsx.writeBuffer());
}
