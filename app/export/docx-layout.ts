import type { Box, Line, PageModel, TextBlock } from '../document/index.js';

/**
 * Where the text of a page sits, in the terms a Word section knows: the page's text is cut into sections of one
 * or more columns (a full-width title over two columns is two sections), and every block keeps the column it
 * is in. Also finds running heads and feet (text repeated at the top or bottom of the pages) and the printed
 * page numbers in them. Pure geometry on the page model; device space, points.
 */

export interface Column {
  x0: number;
  x1: number;
}

/** A piece of a block that lies in one column of one section. */
export interface Piece {
  block: TextBlock;
  lines: Line[];
  /** Index of the column in its section; a piece with `breakBefore` starts that column. */
  column: number;
  breakBefore: boolean;
}

export interface Section {
  columns: Column[];
  pieces: Piece[];
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.floor(q * (s.length - 1))))] ?? 0;
};
const unitBox = (lines: Line[]): Box => ({
  x0: Math.min(...lines.map((l) => l.box.x0)),
  y0: Math.min(...lines.map((l) => l.box.y0)),
  x1: Math.max(...lines.map((l) => l.box.x1)),
  y1: Math.max(...lines.map((l) => l.box.y1)),
});

interface Unit {
  block: TextBlock;
  lines: Line[];
  box: Box;
  size: number;
}

/**
 * The page's sections. The blocks come in reading order (columns one after the other), so the text jumps up
 * and to the right where a column ends: those jumps cut the page into column runs. A row that reaches into
 * another run's column (a title, an author line, a running head) is full-width and gets a one-column section.
 */
export function pageSections(blocks: TextBlock[]): Section[] {
  const units: Unit[] = [];
  for (const block of blocks) {
    if (block.kind === 'table') units.push({ block, lines: block.lines, box: unitBox(block.lines), size: block.lines[0]?.size ?? 10 });
    else for (const l of block.lines) units.push({ block, lines: [l], box: l.box, size: l.size });
  }
  if (!units.length) return [];
  // Column runs: split where the text moves up and right.
  const runs: Unit[][] = [[units[0]]];
  for (let i = 1; i < units.length; i++) {
    const a = units[i - 1].box;
    const b = units[i].box;
    const jump = b.y0 < a.y0 - 0.5 * units[i - 1].size && b.x0 >= a.x0 + 2 * units[i - 1].size;
    if (jump) runs.push([units[i]]);
    else runs[runs.length - 1].push(units[i]);
  }
  const cores = runs.map((r) => ({ x0: pct(r.map((u) => u.box.x0), 0.1), x1: pct(r.map((u) => u.box.x1), 0.9) }));
  const crossing = (u: Unit, run: number) => cores.some((c, k) => k !== run && Math.min(u.box.x1, c.x1) - Math.max(u.box.x0, c.x0) > 1);
  // Pieces in reading order: each run cut where units change from full-width to column text.
  type Part = { wide: boolean; units: Unit[]; startsRun: boolean };
  const parts: Part[] = [];
  runs.forEach((run, k) => {
    for (const [i, u] of run.entries()) {
      const wide = runs.length > 1 && crossing(u, k);
      const last = parts[parts.length - 1];
      if (i > 0 && last.wide === wide) last.units.push(u);
      else parts.push({ wide, units: [u], startsRun: i === 0 });
    }
  });
  // Sections: a full-width part alone; column parts joined while each next one starts a new run.
  const groups: Part[][] = [];
  for (const p of parts) {
    const g = groups[groups.length - 1];
    const last = g?.[g.length - 1];
    if (last && ((last.wide && p.wide) || (!last.wide && !p.wide && p.startsRun))) g.push(p);
    else groups.push([p]);
  }
  // Sideways text (a stamp in the margin) does not set the text's width.
  const upright = units.filter((u) => !u.lines.some((l) => l.vertical));
  const left = Math.min(...(upright.length ? upright : units).map((u) => u.box.x0));
  const right = Math.max(...(upright.length ? upright : units).map((u) => u.box.x1));
  return groups.map((g) => {
    const columns = g[0].wide || g.length === 1 ? null : columnsOf(g.map((p) => unitBox(p.units.flatMap((u) => u.lines))), left, right);
    const pieces: Piece[] = [];
    g.forEach((p, k) => {
      for (const [i, u] of p.units.entries()) {
        const prev = pieces[pieces.length - 1];
        const breakBefore = !!columns && k > 0 && i === 0;
        if (prev && prev.block === u.block && !breakBefore) prev.lines.push(...u.lines);
        else pieces.push({ block: u.block, lines: [...u.lines], column: columns ? k : 0, breakBefore });
      }
    });
    return { columns: columns ?? [{ x0: left, x1: right }], pieces };
  });
}

/** Column extents that tile the text width, or null when the runs overlap (then it is one column). */
function columnsOf(boxes: Box[], left: number, right: number): Column[] | null {
  if (boxes.length > 6) return null;
  const cols = boxes.map((b, k) => ({ x0: k === 0 ? left : b.x0, x1: k === boxes.length - 1 ? right : b.x1 }));
  for (let k = 0; k < cols.length; k++) {
    if (cols[k].x1 - cols[k].x0 < 36) return null;
    if (k > 0 && cols[k].x0 - cols[k - 1].x1 < 2) return null;
  }
  return cols;
}

// ---------------------------------------------------------------- running heads and feet

export interface Running {
  /** Rows that are running heads or feet, with the page number they print (if any) by word index. */
  lines: Set<Line>;
  /** The printed number of each page (index in the document) when its running text numbers the pages. */
  pageNumber: Map<number, { line: Line; word: number; value: number }>;
}

const BAND = 0.1;
const shape = (l: Line) => l.text.replace(/\d+/g, '#');

/**
 * Rows in the top or bottom tenth of the page whose text (digits aside) comes back at about the same height on
 * other pages, and rows that are nothing but a page number. A number that counts up with the pages is the page
 * number (a PAGE field in Word).
 */
export function runningLines(pages: PageModel[]): Running {
  const out: Running = { lines: new Set(), pageNumber: new Map() };
  if (pages.length < 2) return out;
  const inBand = (p: PageModel, l: Line) => !l.vertical && (l.box.y1 < BAND * p.height || l.box.y0 > (1 - BAND) * p.height);
  const seen = new Map<string, number[]>();
  pages.forEach((p, i) => {
    for (const l of p.lines.filter((l) => inBand(p, l))) {
      const k = `${shape(l)}@${Math.round(l.box.y0 / 6)}`;
      seen.set(k, [...(seen.get(k) ?? []), i]);
    }
  });
  const offsets = new Map<number, number>();
  const candidates: { page: number; line: Line; word: number; value: number }[] = [];
  pages.forEach((p, i) => {
    for (const l of p.lines.filter((l) => inBand(p, l))) {
      const repeated = (seen.get(`${shape(l)}@${Math.round(l.box.y0 / 6)}`)?.length ?? 0) >= 2;
      const bare = /^(page\s+)?\d{1,6}$/i.test(l.text.trim());
      if (!repeated && !bare) continue;
      out.lines.add(l);
      l.words.forEach((w, k) => {
        if (!/^\d{1,6}$/.test(w.text)) return;
        const value = Number(w.text);
        candidates.push({ page: i, line: l, word: k, value });
        offsets.set(value - i, (offsets.get(value - i) ?? 0) + 1);
      });
    }
  });
  const best = [...offsets.entries()].sort((a, b) => b[1] - a[1])[0];
  if (best && best[1] >= 2) {
    for (const c of candidates) if (c.value - c.page === best[0] && !out.pageNumber.has(c.page)) out.pageNumber.set(c.page, c);
  }
  return out;
}
