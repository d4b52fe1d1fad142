import bidiModule from 'bidi-js';

// bidi-js is CommonJS typed as ESM: its default import is the factory at run time, `.default` for TypeScript.
type BidiFactory = typeof bidiModule.default;
const bidiFactory = ((bidiModule as unknown as { default?: BidiFactory }).default ?? bidiModule) as BidiFactory;
/** The Unicode bidirectional algorithm (UAX #9): for drawing right-to-left text, and for reading it back. */
export const bidi = bidiFactory();

const STRONG_RTL = new Set(['R', 'AL']);
/** A letter of a right-to-left script (Hebrew, Arabic...). */
export const isRtlLetter = (c: string) => STRONG_RTL.has(bidi.getBidiCharTypeName(c));
const isMark = (c: string) => bidi.getBidiCharTypeName(c) === 'NSM';
// Arabic presentation forms (the shaped glyphs' code points some producers map to): read as the letters they show.
const PRESENTATION = /[\uFB50-\uFDFF\uFE70-\uFEFF]/;

/** A cheap first look: Hebrew, Arabic and the scripts between, and their presentation forms. */
/** Text mostly of right-to-left letters (of its letters of either direction). */
export function mostlyRtl(text: string): boolean {
  // Most lines have no character mayBeRtl would look at twice: they are told without the per-character look.
  if (!MAY_BE_RTL.test(text)) return false;
  let rtl = 0;
  let ltr = 0;
  for (const c of text) {
    if (!mayBeRtl(c) && !/\p{L}/u.test(c)) continue;
    if (isRtlLetter(c)) rtl++;
    else if (bidi.getBidiCharTypeName(c) === 'L') ltr++;
  }
  return rtl > ltr;
}

const MAY_BE_RTL = /[\u0590-\u08ff\ufb1d-\ufeff]/;
export function mayBeRtl(c: string): boolean {
  const code = c.charCodeAt(0);
  return (code >= 0x0590 && code <= 0x08ff) || (code >= 0xfb1d && code <= 0xfeff);
}

/**
 * A line's characters in logical (reading) order, whatever order the PDF drew them in. `at` gives each
 * character's position along the line's direction. A line with right-to-left letters whose letters follow each
 * other left to right on the page was stored in visual order (Chromium, Word): the bidirectional algorithm is
 * applied to it as seen, which gives back the order it was written in, numbers and Latin words inside kept left
 * to right; a combining mark stays after its letter and a ligature (lam-alef) keeps its letters' order. A line
 * stored in logical order (its letters drawn right to left) and a line without right-to-left letters are left as
 * they are. Presentation forms become the letters they are forms of.
 */
export function logicalOrder<T extends { c: string }>(chars: T[], at: (ch: T) => number, width: (ch: T) => number): T[] {
  if (!chars.some((ch) => isRtlLetter(ch.c) || PRESENTATION.test(ch.c))) return chars;
  const plain = chars.map((ch) => (PRESENTATION.test(ch.c) ? { ...ch, c: ch.c.normalize('NFKC') } : ch));
  // Clusters: a character and the marks drawn after it move together, and so do the characters of one glyph
  // (a glyph mapped to a whole word gives its first character the glyph's width, the others none, all at the
  // glyph's start). A glyph of no width that starts where the glyph after it starts, not where the one before
  // does, is a glyph of its own (LibreOffice draws a lam-alef as an empty alef and the ligature mapped to lam,
  // left to right): the order as seen puts it.
  const start = (ch: T) => at(ch) - Math.abs(width(ch)) / 2;
  const near = (a: T, b: T) => Math.abs(start(a) - start(b)) < 0.01 + 0.05 * Math.abs(width(a));
  const clusters: T[][] = [];
  plain.forEach((ch, i) => {
    const last = clusters.at(-1);
    const next = plain[i + 1];
    const own = next !== undefined && near(next, ch) && !(last && near(last[0], ch));
    if (last && (isMark(ch.c) || (Math.abs(width(ch)) < 0.01 && !own))) last.push(ch);
    else clusters.push([ch]);
  });
  // Which way letters that follow each other in a word go on the page: rightwards is visual order.
  const letter = (cl: T[]) => [...cl[0].c].some(isRtlLetter);
  let forward = 0;
  for (let i = 1; i < clusters.length; i++)
    if (letter(clusters[i]) && letter(clusters[i - 1])) forward += Math.sign(at(clusters[i][0]) - at(clusters[i - 1][0]));
  if (forward <= 0) return plain;
  // As seen: the runs of one line may be drawn in any order (LibreOffice draws a number after the words left of it).
  clusters.sort((a, b) => at(a[0]) - at(b[0]));
  const text = clusters.map((cl) => cl.map((ch) => ch.c).join(''));
  const rtl = text.join('').split('').filter(isRtlLetter).length;
  const ltr = text
    .join('')
    .split('')
    .filter((c) => bidi.getBidiCharTypeName(c) === 'L').length;
  const { levels } = bidi.getEmbeddingLevels(text.join(''), rtl >= ltr ? 'rtl' : 'ltr');
  const level: number[] = [];
  let offset = 0;
  for (const t of text) {
    level.push(levels[offset]);
    offset += t.length;
  }
  // Rule L2: from the highest level down to the lowest odd one, every run at that level or above is reversed.
  const order = clusters.map((_, i) => i);
  const highest = Math.max(...level);
  const lowestOdd = Math.min(...level.filter((l) => l % 2 === 1), highest + 1);
  for (let l = highest; l >= lowestOdd; l--) {
    for (let i = 0; i < order.length; ) {
      if (level[order[i]] < l) {
        i++;
        continue;
      }
      let j = i;
      while (j < order.length && level[order[j]] >= l) j++;
      order.splice(i, j - i, ...order.slice(i, j).reverse());
      i = j;
    }
  }
  return order.flatMap((i) => clusters[i]);
}
