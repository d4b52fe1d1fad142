import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  clip,
  endPath,
  LineCapStyle,
  type PDFDocument,
  type PDFEmbeddedPage,
  type PDFPage,
  popGraphicsState,
  pushGraphicsState,
  rectangle,
} from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { rangeText, runJob } from '../../engines/qpdf-edit.js';
import { expectOutput } from '../../engines/run.js';
import { AppError } from '../errors.js';
import { type FontSet, resolveFont } from './fonts.js';
import { type ContentTag, markedContent } from './shapes.js';
import { colorOf, layStamps, type PageFrame } from './stamp.js';
import { drawLines, LINE_SPACING, type Line, wrapText } from './text-block.js';

/**
 * Tables drawn on pages (/pdf-with-added-tables): columns, rows with wrapped text or images, column and row
 * spans, styles inherited table -> column -> row -> cell, and page breaks. A table starts at its (x, y) top-left
 * corner and flows down; rows that do not fit above the bottom margin continue on new pages of the same size
 * inserted right after the table's page (header rows repeated), so the original pages are only overlaid.
 */

type Sides<T> = { top?: T; right?: T; bottom?: T; left?: T };
export interface BorderSide {
  width?: number;
  color_rgb?: number[];
  color_cmyk?: number[];
  opacity?: number;
}
export interface CellStyle {
  font?: string;
  text_size?: number;
  text_align?: 'left' | 'center' | 'right';
  vertical_align?: 'top' | 'middle' | 'bottom';
  text_color_rgb?: number[];
  text_color_cmyk?: number[];
  background_color_rgb?: number[];
  background_color_cmyk?: number[];
  opacity?: number;
  padding?: Sides<number>;
  border?: Sides<BorderSide>;
}
export interface CellImage {
  image_index: number;
  width?: number;
  height?: number;
  tag_alt_text?: string;
  tag_is_artifact?: boolean;
  tag_structure_type?: 'Figure';
}
export interface CellSpec {
  text?: string;
  image?: CellImage;
  col_span?: number;
  row_span?: number;
  min_height?: number;
  fixed_height?: number;
  no_wrap?: boolean;
  is_rtl?: boolean;
  style?: CellStyle;
  tag_actual_text?: string;
  tag_structure_type?: 'TH' | 'TD';
}
export interface RowSpec {
  cells: CellSpec[];
  min_height?: number;
  style?: CellStyle;
}
export interface TableSpec {
  page: number;
  x?: number;
  y: number;
  width?: number;
  width_percentage?: number;
  width_mode?: 'fixed' | 'relative';
  horizontal_align?: 'left' | 'center' | 'right';
  is_rtl?: boolean;
  keep_table_block_together?: boolean;
  spacing_before?: number;
  spacing_after?: number;
  continuation_page_top_margin?: number;
  page_bottom_margin?: number;
  final_page_bottom_margin?: number;
  overflow_behavior?: 'move-row' | 'split-row' | 'fail';
  row_split_behavior?: 'split-when-needed' | 'prefer-next-page';
  repeat_header_on_overflow?: boolean;
  repeat_footer_on_overflow?: boolean;
  show_header_on_first_page?: boolean;
  show_footer_on_last_page?: boolean;
  columns: { width: number; style?: CellStyle }[];
  header_rows?: RowSpec[];
  rows: RowSpec[];
  footer_rows?: RowSpec[];
  style?: CellStyle;
  tag_is_artifact?: boolean;
  tag_structure_type?: 'Table';
}

export const TABLE_DEFAULTS = { font: 'Helvetica', textSize: 10, padding: 4, margin: 36 };

type Section = 'header' | 'body' | 'footer';

interface Style {
  font: string;
  size: number;
  align: 'left' | 'center' | 'right';
  valign: 'top' | 'middle' | 'bottom';
  text?: number[][];
  background?: number[][];
  opacity: number;
  padding: Required<Sides<number>>;
  border: Sides<BorderSide>;
}

interface Cell {
  spec: CellSpec;
  col: number;
  cols: number;
  rows: number;
  style: Style;
  lines?: Line[];
  image?: { page: PDFEmbeddedPage; width: number; height: number };
  height: number;
}

interface Row {
  section: Section;
  index: number;
  height: number;
  /** Cells starting in this row. */
  cells: Cell[];
  /** Rows from here on that must stay on one page with it (row spans): 1 when none. */
  block: number;
}

export interface TableLayout {
  left: number;
  widths: number[];
  rtl: boolean;
  header: Row[];
  body: Row[];
  footer: Row[];
}

/** The rows one page of a table shows, from `top` down. `repeated` rows are running headers and footers. */
export interface TableSlice {
  table: TableLayout;
  top: number;
  rows: { row: Row; repeated: boolean }[];
}

const mergeStyle = (base: Style, s: CellStyle | undefined): Style => {
  if (!s) return base;
  const color = (rgb?: number[], cmyk?: number[], old?: number[][]) => (rgb || cmyk ? [rgb ?? [], cmyk ?? []] : old);
  return {
    font: s.font ?? base.font,
    size: s.text_size ?? base.size,
    align: s.text_align ?? base.align,
    valign: s.vertical_align ?? base.valign,
    text: color(s.text_color_rgb, s.text_color_cmyk, base.text),
    background: color(s.background_color_rgb, s.background_color_cmyk, base.background),
    opacity: s.opacity ?? base.opacity,
    padding: { ...base.padding, ...s.padding },
    border: { ...base.border, ...s.border },
  };
};
const colorFrom = (c: number[][] | undefined) => colorOf(c?.[0].length ? c[0] : undefined, c?.[1].length ? c[1] : undefined);

const rowsOf = (t: TableSpec, s: Section) => (s === 'header' ? (t.header_rows ?? []) : s === 'footer' ? (t.footer_rows ?? []) : t.rows);

/** The table's cells in their grid: each row must fill the columns exactly; row spans stay in their section. */
function grid(t: TableSpec, section: Section, where: string): { col: number; spec: CellSpec }[][] {
  const n = t.columns.length;
  let busy = new Array<number>(n).fill(0);
  const out = rowsOf(t, section).map((row, r) => {
    const taken = busy.map((b) => b > 0);
    const next = busy.map((b) => Math.max(0, b - 1));
    let col = 0;
    const placed = row.cells.map((spec) => {
      while (col < n && taken[col]) col++;
      const span = spec.col_span ?? 1;
      if (col + span > n || taken.slice(col, col + span).some(Boolean))
        throw new AppError('out_of_range', `${where}.${sectionKey(section)}[${r}].cells contains an overlapping or out-of-range span`);
      for (let k = col; k < col + span; k++) {
        taken[k] = true;
        next[k] = (spec.row_span ?? 1) - 1;
      }
      const at = { col, spec };
      col += span;
      return at;
    });
    if (taken.some((x) => !x)) throw new AppError('out_of_range', `${where}.${sectionKey(section)}[${r}].cells must resolve to exactly ${n} columns`);
    busy = next;
    return placed;
  });
  if (busy.some((b) => b > 0)) throw new AppError('out_of_range', `${where}.${sectionKey(section)} contains a row span that crosses its table section`);
  return out;
}
const sectionKey = (s: Section) => (s === 'body' ? 'rows' : `${s}_rows`);

/** The table's width and left edge on a page `frame` wide. */
function placement(t: TableSpec, frame: PageFrame, where: string): { left: number; width: number; widths: number[] } {
  const total = t.columns.reduce((a, c) => a + c.width, 0);
  const relative = t.width_mode === 'relative' || t.width_percentage !== undefined;
  const width = t.width_percentage !== undefined ? (frame.width * t.width_percentage) / 100 : (t.width ?? total);
  if (!relative && Math.abs(total - width) > 0.01)
    throw new AppError('out_of_range', `${where}: fixed column widths must total the table width (${total} given for ${width})`);
  const widths = t.columns.map((c) => (c.width * width) / total);
  const left = t.horizontal_align === 'center' ? (frame.width - width) / 2 : t.horizontal_align === 'right' ? frame.width - width - (t.x ?? 0) : (t.x ?? 0);
  return { left, width, widths };
}

/**
 * Lays out one table: column widths, each cell's style, wrapped lines or image size, and row heights (a cell
 * spanning rows that needs more room than they have grows the last of them).
 */
export async function layoutTable(t: TableSpec, frame: PageFrame, fonts: FontSet, images: PDFEmbeddedPage[], where: string): Promise<TableLayout> {
  const { left, widths } = placement(t, frame, where);
  const base: Style = {
    font: TABLE_DEFAULTS.font,
    size: TABLE_DEFAULTS.textSize,
    align: 'left',
    valign: 'top',
    opacity: 1,
    padding: { top: TABLE_DEFAULTS.padding, right: TABLE_DEFAULTS.padding, bottom: TABLE_DEFAULTS.padding, left: TABLE_DEFAULTS.padding },
    border: {},
  };
  const tableStyle = mergeStyle(base, t.style);
  const section = async (s: Section): Promise<Row[]> => {
    const cells = grid(t, s, where);
    const rows: Row[] = [];
    for (const [r, placed] of cells.entries()) {
      if (r % 100 === 99) await breather();
      const spec = rowsOf(t, s)[r];
      const row: Row = { section: s, index: r, height: spec.min_height ?? 0, cells: [], block: 1 };
      for (const { col, spec: c } of placed) {
        const cols = c.col_span ?? 1;
        const style = mergeStyle(mergeStyle(mergeStyle(tableStyle, t.columns[col].style), spec.style), c.style);
        const inner = widths.slice(col, col + cols).reduce((a, w) => a + w, 0) - style.padding.left - style.padding.right;
        const cell: Cell = { spec: c, col, cols, rows: c.row_span ?? 1, style, height: 0 };
        let content = 0;
        if (c.image) {
          const page = images[c.image.image_index];
          // Its own size (scaled down to the cell's width) unless given; one dimension given keeps the aspect ratio.
          const ratio = page.height / page.width;
          const { width, height } = c.image;
          const w = width ?? (height !== undefined ? height / ratio : Math.min(page.width, Math.max(1, inner)));
          cell.image = { page, width: w, height: height ?? w * ratio };
          content = cell.image.height;
        } else if (c.text) {
          const chars = [...c.text.replace(/\r\n?/g, '\n')];
          const f = await fonts.fontsFor(chars, resolveFont(style.font));
          cell.lines = wrapText(chars, f, style.size, c.no_wrap ? Infinity : Math.max(1, inner));
          content = cell.lines.length * style.size * LINE_SPACING;
        }
        cell.height = c.fixed_height ?? Math.max(c.min_height ?? 0, content + style.padding.top + style.padding.bottom);
        if (cell.rows === 1) row.height = Math.max(row.height, cell.height);
        row.cells.push(cell);
      }
      rows.push(row);
    }
    rows.forEach((row, r) => {
      for (const cell of row.cells.filter((c) => c.rows > 1)) {
        const spanned = rows.slice(r, r + cell.rows);
        const have = spanned.reduce((a, x) => a + x.height, 0);
        if (have < cell.height) spanned[spanned.length - 1].height += cell.height - have;
        row.block = Math.max(row.block, cell.rows);
      }
    });
    // A span reaching past a block's end extends it: blocks are the units pages break between.
    for (let r = 0; r < rows.length; r++) {
      let end = r + rows[r].block;
      for (let k = r + 1; k < end; k++) end = Math.max(end, k + rows[k].block);
      rows[r].block = end - r;
      for (let k = r + 1; k < end; k++) rows[k].block = 0;
      r = end - 1;
    }
    return rows;
  };
  return { left, widths, rtl: t.is_rtl ?? false, header: await section('header'), body: await section('body'), footer: await section('footer') };
}

const heightOf = (rows: Row[]) => rows.reduce((a, r) => a + r.height, 0);

/**
 * Splits a laid-out table into pages: the first slice on the table's page (possibly empty, when the table
 * moves on whole or its first rows do not fit), then one per continuation page. Rows break only between
 * blocks (rows joined by a row span); a block taller than a whole page is refused.
 */
export function paginate(t: TableSpec, layout: TableLayout, frame: PageFrame, where: string): TableSlice[] {
  const bottom = t.page_bottom_margin ?? TABLE_DEFAULTS.margin;
  const final = Math.max(bottom, t.final_page_bottom_margin ?? bottom);
  const firstTop = t.y - (t.spacing_before ?? 0);
  const nextTop = frame.height - (t.continuation_page_top_margin ?? TABLE_DEFAULTS.margin);
  const headFirst = t.show_header_on_first_page ?? true;
  const headNext = t.repeat_header_on_overflow ?? true;
  const footLast = t.show_footer_on_last_page ?? true;
  const footNext = t.repeat_footer_on_overflow ?? false;
  const headerH = heightOf(layout.header);
  const footerH = heightOf(layout.footer);
  const blocks: Row[][] = [];
  layout.body.forEach((r, i) => {
    if (r.block) blocks.push(layout.body.slice(i, i + r.block));
  });

  const slices: TableSlice[] = [];
  const open = (first: boolean) => {
    const head = first ? headFirst : headNext;
    const slice: TableSlice = { table: layout, top: first ? firstTop : nextTop, rows: head ? layout.header.map((row) => ({ row, repeated: !first })) : [] };
    slices.push(slice);
    return { slice, cursor: slice.top - (head ? headerH : 0), body: 0 };
  };
  const whole = headerH + heightOf(layout.body) + footerH;
  let page = open(true);
  if (t.keep_table_block_together && whole > firstTop - final && whole <= nextTop - final) {
    page.slice.rows = [];
    page = open(false);
  }
  const split = t.overflow_behavior === 'split-row';
  const splitEarly = (t.row_split_behavior ?? 'split-when-needed') === 'split-when-needed';
  const reserve = bottom + (footNext ? footerH : 0);
  const freshRoom = nextTop - (headNext ? headerH : 0) - reserve;
  const place = (block: Row[]) => {
    page.slice.rows.push(...block.map((row) => ({ row, repeated: false })));
    page.cursor -= heightOf(block);
    page.body++;
  };
  const queue = [...blocks];
  while (queue.length) {
    const block = queue.shift()!;
    const last = queue.length === 0;
    const h = heightOf(block);
    const fits = (p: typeof page) => p.cursor - h >= reserve && (!last || p.cursor - h - (footLast ? footerH : 0) >= final);
    // split-row: a row that does not fit is cut between lines, here (split-when-needed) or only when even a new page could not hold it.
    const cut = () => (split && block.length === 1 && (splitEarly || h > freshRoom) ? splitRow(block[0], page.cursor - reserve) : undefined);
    if (!fits(page)) {
      if (t.overflow_behavior === 'fail') throw new AppError('out_of_range', `${where} does not fit on page ${t.page} (overflow_behavior is fail)`);
      const parts = cut();
      if (parts) {
        place([parts[0]]);
        queue.unshift([parts[1]]);
        continue;
      }
      if (page.body > 0 || slices.length === 1) {
        if (footNext && page.body > 0) page.slice.rows.push(...layout.footer.map((row) => ({ row, repeated: true })));
        if (page.body === 0) page.slice.rows = [];
        page = open(false);
      }
      if (!fits(page)) {
        const rest = cut();
        if (!rest)
          throw new AppError(
            'out_of_range',
            `${where}: a row is taller than the room a page has for the table (${Math.round(h)} units)${split ? '' : '; overflow_behavior split-row would split it'}`,
          );
        place([rest[0]]);
        queue.unshift([rest[1]]);
        continue;
      }
    }
    place(block);
  }
  if (footLast) page.slice.rows.push(...layout.footer.map((row) => ({ row, repeated: false })));
  // Header rows are running headers (artifacts when tagged) on every page but the first one showing the table.
  const shown = slices.find((s) => s.rows.length);
  for (const r of shown?.rows ?? []) if (r.row.section === 'header') r.repeated = false;
  if (slices.length > 1 && t.overflow_behavior === 'fail')
    throw new AppError('out_of_range', `${where} does not fit on page ${t.page} (overflow_behavior is fail)`);
  return slices;
}

/**
 * A row cut between text lines so that its first part is at most `room` high, or undefined when it cannot be
 * (row spans, images, fixed heights, or no room for one line of every cell that has text).
 */
function splitRow(row: Row, room: number): [Row, Row] | undefined {
  if (row.block !== 1 || row.cells.some((c) => c.rows > 1 || c.image || c.spec.fixed_height !== undefined)) return undefined;
  const pad = (c: Cell) => c.style.padding.top + c.style.padding.bottom;
  const keep = row.cells.map((c) => Math.min(c.lines?.length ?? 0, Math.floor((room - pad(c)) / (c.style.size * LINE_SPACING) + 1e-9)));
  if (row.cells.some((c, i) => (c.lines?.length ?? 0) > 0 && keep[i] < 1) || row.cells.every((c, i) => keep[i] >= (c.lines?.length ?? 0))) return undefined;
  const part = (pick: (c: Cell, i: number) => Line[]): Row => {
    const cells = row.cells.map((c, i) => {
      const lines = pick(c, i);
      return { ...c, lines, height: lines.length * c.style.size * LINE_SPACING + pad(c) };
    });
    return { ...row, cells, height: Math.max(...cells.map((c) => c.height)) };
  };
  return [part((c, i) => c.lines?.slice(0, keep[i]) ?? []), part((c, i) => c.lines?.slice(keep[i]) ?? [])];
}

export interface TableTagging {
  /** Tag languages (BCP 47) of cell text. */
  lang?: string;
  artifact: boolean;
}

/** Draws one slice: backgrounds, then cell content (clipped to the cell), then borders over them. */
export function drawSlice(page: PDFPage, slice: TableSlice, tagging: TableTagging | undefined): void {
  const { table } = slice;
  const starts: number[] = [];
  table.widths.reduce((x, w, i) => ((starts[i] = x), x + w), 0);
  const total = table.widths.reduce((a, w) => a + w, 0);
  const boxes: { cell: Cell; repeated: boolean; header: boolean; x: number; y: number; w: number; h: number }[] = [];
  let top = slice.top;
  slice.rows.forEach(({ row, repeated }, i) => {
    for (const cell of row.cells) {
      const w = table.widths.slice(cell.col, cell.col + cell.cols).reduce((a, x) => a + x, 0);
      const h = slice.rows.slice(i, i + cell.rows).reduce((a, r) => a + r.row.height, 0);
      const from = table.rtl ? total - starts[cell.col] - w : starts[cell.col];
      boxes.push({ cell, repeated, header: row.section === 'header', x: table.left + from, y: top - h, w, h });
    }
    top -= row.height;
  });
  const artifact: ContentTag | undefined = tagging ? { artifact: true } : undefined;
  markedContent(page, artifact, () => {
    for (const b of boxes) {
      if (b.cell.style.background)
        page.drawRectangle({
          x: b.x,
          y: b.y,
          width: b.w,
          height: b.h,
          color: colorFrom(b.cell.style.background),
          opacity: b.cell.style.opacity,
          borderWidth: 0,
        });
    }
  });
  for (const b of boxes) {
    const { cell } = b;
    const s = cell.style;
    const innerW = b.w - s.padding.left - s.padding.right;
    const innerH = b.h - s.padding.top - s.padding.bottom;
    const contentH = cell.image ? cell.image.height : (cell.lines?.length ?? 0) * s.size * LINE_SPACING;
    const drop = s.valign === 'top' ? 0 : s.valign === 'bottom' ? innerH - contentH : (innerH - contentH) / 2;
    const contentTop = b.y + b.h - s.padding.top - drop;
    const tag: ContentTag | undefined = !tagging ? undefined : tagging.artifact || b.repeated ? { artifact: true } : cellTag(cell, b.header, tagging.lang);
    if (!cell.lines?.length && !cell.image) continue;
    page.pushOperators(pushGraphicsState(), rectangle(b.x, b.y, b.w, b.h), clip(), endPath());
    markedContent(page, tag, () => {
      if (cell.image) {
        const dx = s.align === 'left' ? 0 : s.align === 'right' ? innerW - cell.image.width : (innerW - cell.image.width) / 2;
        page.drawPage(cell.image.page, {
          x: b.x + s.padding.left + dx,
          y: contentTop - cell.image.height,
          width: cell.image.width,
          height: cell.image.height,
          opacity: s.opacity,
        });
      } else if (cell.lines) {
        // The first baseline sits in its line box as in drawLines' callers: ascent below the box's top.
        const rtl = cell.spec.is_rtl ?? table.rtl;
        drawLines(page, cell.lines, { x: b.x + s.padding.left, y: contentTop - s.size * 0.9 }, innerW, s.align, {
          size: s.size,
          color: colorFrom(s.text),
          opacity: s.opacity,
          rotation: 0,
          rtl,
        });
      }
    });
    page.pushOperators(popGraphicsState());
  }
  markedContent(page, artifact, () => {
    for (const b of boxes) drawBorders(page, b.cell.style.border, b.x, b.y, b.w, b.h);
  });
}

function cellTag(cell: Cell, header: boolean, lang: string | undefined): ContentTag {
  if (cell.image) {
    if (cell.spec.image?.tag_is_artifact) return { artifact: true };
    return { type: 'Figure', alt: cell.spec.image?.tag_alt_text, actualText: cell.spec.tag_actual_text };
  }
  return { type: cell.spec.tag_structure_type ?? (header ? 'TH' : 'TD'), actualText: cell.spec.tag_actual_text, lang };
}

function drawBorders(page: PDFPage, border: Sides<BorderSide>, x: number, y: number, w: number, h: number): void {
  const sides: [BorderSide | undefined, number, number, number, number][] = [
    [border.top, x, y + h, x + w, y + h],
    [border.right, x + w, y, x + w, y + h],
    [border.bottom, x, y, x + w, y],
    [border.left, x, y, x, y + h],
  ];
  for (const [side, x1, y1, x2, y2] of sides) {
    if (!side || !(side.width ?? 1)) continue;
    // Projecting caps close the corners where two sides meet.
    page.drawLine({
      start: { x: x1, y: y1 },
      end: { x: x2, y: y2 },
      thickness: side.width ?? 1,
      color: colorOf(side.color_rgb, side.color_cmyk),
      opacity: side.opacity ?? 1,
      lineCap: LineCapStyle.Projecting,
    });
  }
}

/** One table's pages: its slice drawn over page `page`, continuation slices as new pages after it. */
export interface PlacedTable {
  page: number;
  slices: TableSlice[];
  tagging?: TableTagging;
}

/**
 * Draws the tables into `doc` and writes `output`: first slices go on stamp pages laid over the input's pages
 * (qpdf --overlay, originals untouched), continuation slices on pages of the frame's size that qpdf then
 * inserts after their table's page (the input stays the primary file, so its catalog is kept).
 */
export async function writeTables(
  input: string,
  output: string,
  doc: PDFDocument,
  frames: PageFrame[],
  tables: PlacedTable[],
  ctx: EngineContext,
): Promise<void> {
  const onPage = new Map<number, PlacedTable[]>();
  for (const t of tables) onPage.set(t.page, [...(onPage.get(t.page) ?? []), t]);
  const pages = [...onPage.keys()].sort((a, b) => a - b);
  const to: number[] = [];
  const from: number[] = [];
  const inserts = new Map<number, number[]>();
  for (const p of pages) {
    const frame = frames[p - 1];
    const list = onPage.get(p)!;
    if (list.some((t) => t.slices[0].rows.length)) {
      const stamp = doc.addPage([frame.width, frame.height]);
      for (const t of list) drawSlice(stamp, t.slices[0], t.tagging);
      to.push(p);
      from.push(doc.getPageCount());
    }
    for (const t of list) {
      for (const slice of t.slices.slice(1)) {
        await breather();
        drawSlice(doc.addPage([frame.width, frame.height]), slice, t.tagging);
        inserts.set(p, [...(inserts.get(p) ?? []), doc.getPageCount()]);
      }
    }
  }
  const stamp = join(ctx.cwd, 'tables.pdf');
  await writeFile(stamp, await doc.save());
  const overlaid = !to.length ? input : inserts.size ? join(ctx.cwd, 'overlaid.pdf') : output;
  if (to.length) await layStamps(input, stamp, overlaid, { to, from, behind: false }, ctx);
  if (!inserts.size) return;
  const parts: { file: string; range: string }[] = [];
  let next = 1;
  for (const p of [...inserts.keys()].sort((a, b) => a - b)) {
    parts.push({ file: '.', range: rangeText(range(next, p)) }, { file: stamp, range: rangeText(inserts.get(p)!) });
    next = p + 1;
  }
  if (next <= frames.length) parts.push({ file: '.', range: rangeText(range(next, frames.length)) });
  await runJob({ inputFile: overlaid, outputFile: output, pages: parts }, ctx);
  await expectOutput('qpdf', output);
}

/** Lets other requests' I/O through between pages and rows: a 20000-cell table takes seconds of drawing. */
const breather = () => new Promise<void>((resolve) => setImmediate(resolve));

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
