import { AppError } from '../errors.js';

/**
 * Where pages go on sheets: grids for n-up (the grid and sheet orientation that print the pages largest), the
 * order cells are filled in, saddle-stitch booklet order, and fitting a page into a cell keeping its aspect.
 */

/** A rectangle in points, origin at the sheet's lower-left corner. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const CELL_ORDERS = ['across', 'down', 'across_rtl', 'down_rtl'] as const;
/** across: left to right, then down; down: top to bottom, then across; _rtl: columns from the right. */
export type CellOrder = (typeof CELL_ORDERS)[number];

export interface GridOptions {
  margin: number;
  spacing: number;
  order: CellOrder;
}

export interface SheetLayout {
  size: [number, number];
  /** The cells in the order pages fill them. */
  cells: Rect[];
}

/** The two ways to split `n` cells into columns x rows that n-up uses (2: 2x1 or 1x2, 6: 3x2 or 2x3...). */
function shapes(n: number): [number, number][] {
  const out: [number, number][] = [];
  for (let c = 1; c <= n; c++) if (n % c === 0) out.push([c, n / c]);
  // Only the squarest splits: a 16-up of 16x1 is nobody's n-up.
  const best = Math.min(...out.map(([c, r]) => Math.abs(c - r)));
  return out.filter(([c, r]) => Math.abs(c - r) === best);
}

/**
 * The grid for `n` pages of (visible) size `page` on `sheet`: of the squarest column x row splits and, when
 * `turnable`, both orientations of the sheet, the one where the page comes out largest (A4 2-up: landscape,
 * two columns; 4-up: portrait 2x2; 6-up: landscape 3x2). Margins or spacing that leave no room are a 400.
 */
export function gridLayout(n: number, page: [number, number], sheet: [number, number], turnable: boolean, o: GridOptions): SheetLayout {
  const sizes: [number, number][] = turnable && sheet[0] !== sheet[1] ? [sheet, [sheet[1], sheet[0]]] : [sheet];
  let best: { size: [number, number]; cols: number; rows: number; scale: number } | null = null;
  for (const size of sizes) {
    for (const [cols, rows] of shapes(n)) {
      const cw = (size[0] - 2 * o.margin - (cols - 1) * o.spacing) / cols;
      const ch = (size[1] - 2 * o.margin - (rows - 1) * o.spacing) / rows;
      if (cw < 1 || ch < 1) continue;
      const scale = Math.min(cw / page[0], ch / page[1]);
      if (!best || scale > best.scale + 1e-9) best = { size, cols, rows, scale };
    }
  }
  if (!best)
    throw new AppError(
      'out_of_range',
      `${o.margin} is not within the acceptable range for margin: with spacing ${o.spacing}, the margins leave no room for ${n} pages on a ${round(sheet[0])} x ${round(sheet[1])} sheet`,
    );
  const { size, cols, rows } = best;
  const cw = (size[0] - 2 * o.margin - (cols - 1) * o.spacing) / cols;
  const ch = (size[1] - 2 * o.margin - (rows - 1) * o.spacing) / rows;
  const cells: Rect[] = [];
  for (let i = 0; i < n; i++) {
    const down = o.order === 'down' || o.order === 'down_rtl';
    let col = down ? Math.floor(i / rows) : i % cols;
    const row = down ? i % rows : Math.floor(i / cols);
    if (o.order.endsWith('_rtl')) col = cols - 1 - col;
    cells.push({ x: o.margin + col * (cw + o.spacing), y: size[1] - o.margin - (row + 1) * ch - row * o.spacing, width: cw, height: ch });
  }
  return { size, cells };
}

/**
 * Saddle-stitch order for 2-up booklets: pages padded with blanks (null) to a multiple of 4, then each sheet's
 * front (last, first) and back (second, second to last), so a duplex print folded in the middle reads in order.
 * 8 pages: 8,1 / 2,7 / 6,3 / 4,5.
 */
export function bookletOrder(pages: number[]): (number | null)[] {
  const padded: (number | null)[] = [...pages];
  while (padded.length % 4) padded.push(null);
  const n = padded.length;
  const out: (number | null)[] = [];
  for (let s = 0; s < n / 4; s++) out.push(padded[n - 1 - 2 * s], padded[2 * s], padded[2 * s + 1], padded[n - 2 - 2 * s]);
  return out;
}

/** A page of visible size `page` scaled to fit `cell` keeping its aspect, centred. */
export function fitInto(page: [number, number], cell: Rect): Rect {
  const scale = Math.min(cell.width / page[0], cell.height / page[1]);
  const [w, h] = [page[0] * scale, page[1] * scale];
  return { x: cell.x + (cell.width - w) / 2, y: cell.y + (cell.height - h) / 2, width: w, height: h };
}

const round = (n: number) => Math.round(n * 100) / 100;
