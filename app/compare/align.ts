import { type ChangeObject, diffArrays } from 'diff';

/**
 * Word alignment of two documents with jsdiff's Myers diff, made to scale. Its cost grows with the square of the
 * edits it finds (measured: 5,000 inserted words in 100,000 took 3.8 s, 20,000 took 80 s), so an inserted chapter
 * would hold a worker for minutes. The documents are therefore cut first at the pages they share whole, then
 * between those at anchors, words that occur exactly once in each (as patience diff does): the anchors common to
 * both, in the same order (a diff of the anchor lists, whose edits are only moved or changed unique words), split
 * both documents into small gaps, and each gap is diffed on its own; one that differs in more than MAX_GAP_EDITS
 * words is cut again at the words unique within it, and reported as replaced whole only when it has none.
 */

/** The most edits one diff may find before its part is called replaced whole (about 0.2 s of diffing). */
export const MAX_GAP_EDITS = 1000;

/** A place where the documents differ: words [aFrom, aTo) of the first replaced by [bFrom, bTo) of the second. */
export interface Hunk {
  aFrom: number;
  aTo: number;
  bFrom: number;
  bTo: number;
}

/** The hunks that turn word list `a` into word list `b`, in document order. */
export function alignWords(a: string[], b: string[]): Hunk[] {
  // Words as numbers: the diff compares them with ===, and the anchor counts key on them.
  const ids = new Map<string, number>();
  const idOf = (w: string) => ids.get(w) ?? ids.set(w, ids.size).get(w)!;
  const [x, y] = [Int32Array.from(a, idOf), Int32Array.from(b, idOf)];
  return alignDocuments({ ids: x, starts: Int32Array.of(0, x.length) }, { ids: y, starts: Int32Array.of(0, y.length) });
}

/** A document's words as text numbers, and where each page's words start (as DocWords holds them). */
export interface WordIds {
  ids: Int32Array;
  starts: Int32Array;
}

/**
 * The hunks between two documents of numbered words. Pages whose words are the same in both, in the same order,
 * are matched first (a diff of the pages as tokens): a document made of a text repeated has no word unique in
 * it, so without them the pages between two changes far apart would be one gap too different for one diff,
 * reported as replaced whole; this way only the pages that differ are aligned word by word. A page diff past
 * MAX_GAP_EDITS (most pages differ: text reflowed) matches no page, and the words are aligned as one gap.
 */
export function alignDocuments(a: WordIds, b: WordIds): Hunk[] {
  const hunks: Hunk[] = [];
  let [i, j] = [0, 0];
  for (const [pa, pb] of [...samePages(a, b), [a.starts.length - 1, b.starts.length - 1]]) {
    betweenAnchors(a.ids, b.ids, i, a.starts[pa], j, b.starts[pb], hunks);
    [i, j] = [a.starts[pa + 1], b.starts[pb + 1]];
  }
  return hunks;
}

/** Pages [pa, pb] (0-based) with the same words, in the order both documents have them; pages with no words match none. */
function samePages(a: WordIds, b: WordIds): [number, number][] {
  // A page as one number: its words' hash as the key of the pages seen, confirmed word by word.
  const kinds = new Map<string, number>();
  let lone = -1;
  const tokens = ({ ids, starts }: WordIds) =>
    Array.from({ length: starts.length - 1 }, (_, p) => {
      if (starts[p] === starts[p + 1]) return lone--;
      const key = pageKey(ids, starts[p], starts[p + 1]);
      return kinds.get(key) ?? kinds.set(key, kinds.size).get(key)!;
    });
  const [ta, tb] = [tokens(a), tokens(b)];
  const changes = diffArrays(ta, tb, { maxEditLength: MAX_GAP_EDITS });
  if (!changes) return [];
  const pairs: [number, number][] = [];
  let [p, q] = [0, 0];
  for (const c of changes) {
    if (!c.added && !c.removed) for (let k = 0; k < c.count; k++) if (samePage(a, b, p + k, q + k)) pairs.push([p + k, q + k]);
    if (!c.added) p += c.count;
    if (!c.removed) q += c.count;
  }
  return pairs;
}

/** Two 32-bit hashes of the page's words (FNV-1a and a multiply-shift one) and their count: pages compared by key, then confirmed. */
function pageKey(ids: Int32Array, from: number, to: number): string {
  let [h, g] = [0x811c9dc5, 0x01000193];
  for (let k = from; k < to; k++) {
    h = Math.imul(h ^ ids[k], 0x01000193);
    g = Math.imul(g ^ ids[k], 0x5bd1e995) ^ (g >>> 15);
  }
  return `${h >>> 0}:${g >>> 0}:${to - from}`;
}

function samePage(a: WordIds, b: WordIds, pa: number, pb: number): boolean {
  const [i, j, n] = [a.starts[pa], b.starts[pb], a.starts[pa + 1] - a.starts[pa]];
  if (n !== b.starts[pb + 1] - j) return false;
  for (let k = 0; k < n; k++) if (a.ids[i + k] !== b.ids[j + k]) return false;
  return true;
}

/** Cuts x[i0, i1) and y[j0, j1) at their common anchors and diffs each gap between them. */
function betweenAnchors(x: Int32Array, y: Int32Array, i0: number, i1: number, j0: number, j1: number, out: Hunk[]): void {
  let [i, j] = [i0, j0];
  for (const [ai, bj] of [...commonAnchors(x, y, i0, i1, j0, j1), [i1, j1]]) {
    diffGap(x, y, i, ai, j, bj, out);
    [i, j] = [ai + 1, bj + 1];
  }
}

/** Positions [i, j] of the words unique in both ranges that stay in the same order. */
function commonAnchors(x: Int32Array, y: Int32Array, i0: number, i1: number, j0: number, j1: number): [number, number][] {
  const count = (s: Int32Array, from: number, to: number) => {
    const c = new Map<number, number>();
    for (let k = from; k < to; k++) c.set(s[k], (c.get(s[k]) ?? 0) + 1);
    return c;
  };
  const [cx, cy] = [count(x, i0, i1), count(y, j0, j1)];
  const unique = (v: number) => cx.get(v) === 1 && cy.get(v) === 1;
  const ax: number[] = [];
  const ay: number[] = [];
  for (let k = i0; k < i1; k++) if (unique(x[k])) ax.push(k);
  for (let k = j0; k < j1; k++) if (unique(y[k])) ay.push(k);
  const changes = diffArrays(
    ax.map((i) => x[i]),
    ay.map((j) => y[j]),
    { maxEditLength: MAX_GAP_EDITS },
  );
  // Unique words moved about in large numbers: no anchors, the ranges are one gap.
  if (!changes) return [];
  const pairs: [number, number][] = [];
  let [p, q] = [0, 0];
  for (const c of changes) {
    if (!c.added && !c.removed) for (let k = 0; k < c.count; k++) pairs.push([ax[p + k], ay[q + k]]);
    if (!c.added) p += c.count;
    if (!c.removed) q += c.count;
  }
  return pairs;
}

/**
 * Diffs x[i0, i1) against y[j0, j1) and appends its hunks. A gap that differs too much for one diff is cut again
 * at the words unique within it (patience diff's recursion), and only a gap without any is replaced whole.
 */
function diffGap(x: Int32Array, y: Int32Array, i0: number, i1: number, j0: number, j1: number, out: Hunk[]): void {
  // The words the gap starts and ends with in both are kept out: what is left of a pure insertion or deletion
  // (whole pages) is one side only, however long, and needs no diff.
  while (i0 < i1 && j0 < j1 && x[i0] === y[j0]) [i0, j0] = [i0 + 1, j0 + 1];
  while (i0 < i1 && j0 < j1 && x[i1 - 1] === y[j1 - 1]) [i1, j1] = [i1 - 1, j1 - 1];
  if (i0 === i1 && j0 === j1) return;
  const whole = { aFrom: i0, aTo: i1, bFrom: j0, bTo: j1 };
  if (i0 === i1 || j0 === j1) return void out.push(whole);
  const changes = diffArrays(Array.from(x.subarray(i0, i1)), Array.from(y.subarray(j0, j1)), { maxEditLength: MAX_GAP_EDITS });
  if (changes) return void out.push(...hunksOf(changes, i0, j0));
  if (commonAnchors(x, y, i0, i1, j0, j1).length) betweenAnchors(x, y, i0, i1, j0, j1, out);
  else out.push(whole);
}

/** jsdiff's changes as hunks: removed and added runs with no equal words between them form one hunk. */
function hunksOf(changes: ChangeObject<number[]>[], i: number, j: number): Hunk[] {
  const hunks: Hunk[] = [];
  let open: Hunk | undefined;
  for (const c of changes) {
    if (!c.added && !c.removed) {
      open = undefined;
      i += c.count;
      j += c.count;
      continue;
    }
    if (!open) hunks.push((open = { aFrom: i, aTo: i, bFrom: j, bTo: j }));
    if (c.removed) open.aTo = i += c.count;
    else open.bTo = j += c.count;
  }
  return hunks;
}
