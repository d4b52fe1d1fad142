import type { BlockLine } from '../document/index.js';

/** What runningLines reads of a page: its rows and its height (a page model, or the thin copy of one). */
interface RunningPage<L extends BlockLine> {
  lines: L[];
  height: number;
}

/**
 * Running heads and feet (text repeated at the top or bottom of the pages) and the printed page numbers in them,
 * which a Word document keeps as its header and footer. Pure geometry on the page model; device space, points.
 */

export interface Running<L extends BlockLine> {
  /** Rows that are running heads or feet, with the page number they print (if any) by word index. */
  lines: Set<L>;
  /** The printed number of each page (index in the document) when its running text numbers the pages. */
  pageNumber: Map<number, { line: L; word: number; value: number }>;
}

const BAND = 0.1;
const shape = (l: BlockLine) => l.text.replace(/\d+/g, '#');

/**
 * Rows in the top or bottom tenth of the page whose text (digits aside) comes back at about the same height on
 * other pages, and rows that are nothing but a page number. A number that counts up with the pages is the page
 * number (a PAGE field in Word).
 */
export function runningLines<L extends BlockLine>(pages: RunningPage<L>[]): Running<L> {
  const out: Running<L> = { lines: new Set(), pageNumber: new Map() };
  if (pages.length < 2) return out;
  const inBand = (p: RunningPage<L>, l: L) => !l.vertical && (l.box.y1 < BAND * p.height || l.box.y0 > (1 - BAND) * p.height);
  const seen = new Map<string, number[]>();
  pages.forEach((p, i) => {
    for (const l of p.lines.filter((l) => inBand(p, l))) {
      const k = `${shape(l)}@${Math.round(l.box.y0 / 6)}`;
      seen.set(k, [...(seen.get(k) ?? []), i]);
    }
  });
  const offsets = new Map<number, number>();
  const candidates: { page: number; line: L; word: number; value: number }[] = [];
  pages.forEach((p, i) => {
    const found = p.lines.filter((l) => {
      if (!inBand(p, l)) return false;
      const repeated = (seen.get(`${shape(l)}@${Math.round(l.box.y0 / 6)}`)?.length ?? 0) >= 2;
      // A running head or foot has a few pieces side by side at most (left, centre, right): not a table's row.
      const beside = p.lines.filter((o) => o.box.y0 < l.box.y1 && l.box.y0 < o.box.y1 && !o.vertical).length;
      return (repeated || /^(page\s+)?\d{1,6}$/i.test(l.text.trim())) && beside <= 3;
    });
    for (const l of outsideBody(p, found)) {
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

/**
 * Of the rows found repeating at a page's top or bottom, those that are a band above (or below) all its other
 * rows: a repeated row beside or below body text (the first row of a form, whose labels come back on each page)
 * is part of the page, and as a Word header it would push the page's body down, onto a page of its own.
 */
function outsideBody<L extends BlockLine>(p: RunningPage<L>, found: L[]): L[] {
  let kept = new Set(found);
  for (;;) {
    const body = p.lines.filter((l) => !kept.has(l) && !l.vertical);
    const top = Math.min(...body.map((l) => l.box.y0));
    const bottom = Math.max(...body.map((l) => l.box.y1));
    const next = new Set([...kept].filter((l) => (l.box.y1 < p.height / 2 ? l.box.y1 <= top + 0.5 : l.box.y0 >= bottom - 0.5)));
    if (next.size === kept.size) return [...kept];
    kept = next;
  }
}
