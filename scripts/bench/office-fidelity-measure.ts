// How much of a PDF's look an office export keeps: the export is rendered back to PDF with LibreOffice and
// the words of the round trip are matched to the original's words on the same page. Independent of the app:
// words, boxes, sizes and styles come from `mutool draw -F stext` of both PDFs. Used by
// office-fidelity.bench.ts and test/word-fidelity.test.ts.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const sh = promisify(execFile);

export interface MWord {
  text: string;
  cx: number;
  cy: number;
  size: number;
  bold: boolean;
  italic: boolean;
}
export interface MPage {
  width: number;
  height: number;
  words: MWord[];
}

const BOLD = /bold|black|heavy|semibold|demi|CMBX|SFBX|CMB\d|-B$|,B$|Bd$/i;
const ITALIC = /italic|oblique|CMTI|CMSL|SFTI|-It$|,I$/i;
const attr = (s: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(s)?.[1] ?? '';
const unxml = (s: string) =>
  s
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
/** Words compare by letters and digits only: quotes, dashes and ligatures differ between fonts. */
const key = (s: string) =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * A glyph's quad, or where the glyph is when the quad cannot say: MuPDF 1.21 takes a Type 3 glyph's box from its
 * /FontBBox and d1 operands, and where those are broken the quad runs many times the font size from the baseline
 * (pdf2docx's demo-text-unnamed-fonts: 120 pt down the page below 10 pt glyphs, while the page draws them above
 * their baseline, where Poppler's boxes are too). Such a quad (more than 4 times as tall as the font size) is
 * replaced by the usual one, from the glyph's origin: its advance along the baseline, 0.8 of the size above it
 * and 0.2 below, turned as the quad is.
 */
function plausible(q: number[], x: number, y: number, size: number): number[] {
  const [ulx, uly, urx, ury, llx, lly] = q;
  const tall = Math.hypot(llx - ulx, lly - uly);
  if (!(size > 0) || !(tall > 4 * size) || !Number.isFinite(x + y)) return q;
  const advance = Math.hypot(urx - ulx, ury - uly);
  // The writing direction from the quad's top edge; "up" is a quarter turn from it (device space, y down).
  const [dx, dy] = advance > 0 ? [(urx - ulx) / advance, (ury - uly) / advance] : [1, 0];
  const [upx, upy] = [dy, -dx];
  const top = [x + 0.8 * size * upx, y + 0.8 * size * upy];
  const bottom = [x - 0.2 * size * upx, y - 0.2 * size * upy];
  return [top[0], top[1], top[0] + advance * dx, top[1] + advance * dy, bottom[0], bottom[1], bottom[0] + advance * dx, bottom[1] + advance * dy];
}

/**
 * Where each page draws glyphs invisibly (text render mode 3, the OCR layer under a scan): MuPDF's structured text
 * has them like any other, its trace lists them apart (ignore_text), with their origins in text space.
 */
async function invisibleOrigins(pdf: string): Promise<[number, number][][]> {
  const { stdout } = await sh('mutool', ['trace', pdf], { maxBuffer: 1 << 30 });
  const pages: [number, number][][] = [];
  let m: number[] | null = null;
  for (const t of stdout.matchAll(/<(\/?)(page|ignore_text|g)\b([^>]*)>/g)) {
    if (t[2] === 'page') {
      if (!t[1]) pages.push([]);
    } else if (t[2] === 'ignore_text') m = t[1] ? null : attr(t[3], 'transform').split(' ').map(Number);
    else if (m && pages.length) {
      const [x, y] = [Number(attr(t[3], 'x')), Number(attr(t[3], 'y'))];
      pages[pages.length - 1].push([x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]]);
    }
  }
  return pages;
}

/**
 * Words of every page (device space) from MuPDF's structured text, as an independent reader sees them; text the
 * page draws invisibly is not part of its look and is left out.
 */
export async function stextWords(pdf: string): Promise<MPage[]> {
  const [{ stdout }, hidden] = await Promise.all([sh('mutool', ['draw', '-F', 'stext', '-o', '-', pdf], { maxBuffer: 1 << 30 }), invisibleOrigins(pdf)]);
  const pages: MPage[] = [];
  for (const pm of stdout.matchAll(/<page [^>]*>[\s\S]*?<\/page>/g)) {
    const invisible = hidden[pages.length] ?? [];
    const head = /<page [^>]*>/.exec(pm[0])![0];
    const page: MPage = { width: Number(attr(head, 'width')), height: Number(attr(head, 'height')), words: [] };
    for (const lm of pm[0].matchAll(/<line [^>]*>[\s\S]*?<\/line>/g)) {
      let cur: { text: string; x0: number; y0: number; x1: number; y1: number; size: number; font: string } | null = null;
      const flush = () => {
        if (cur && key(cur.text)) {
          page.words.push({
            text: key(cur.text),
            cx: (cur.x0 + cur.x1) / 2,
            cy: (cur.y0 + cur.y1) / 2,
            size: cur.size,
            bold: BOLD.test(cur.font),
            italic: ITALIC.test(cur.font),
          });
        }
        cur = null;
      };
      for (const fm of lm[0].matchAll(/<font ([^>]*)>([\s\S]*?)<\/font>/g)) {
        const font = attr(fm[1], 'name');
        const size = Number(attr(fm[1], 'size'));
        for (const cm of fm[2].matchAll(/<char ([^>]*)\/>/g)) {
          const c = unxml(attr(cm[1], 'c'));
          const [ox, oy] = [Number(attr(cm[1], 'x')), Number(attr(cm[1], 'y'))];
          if (/^\s*$/u.test(c) || invisible.some(([x, y]) => Math.abs(x - ox) < 0.5 && Math.abs(y - oy) < 0.5)) {
            flush();
            continue;
          }
          const q = plausible(attr(cm[1], 'quad').split(' ').map(Number), ox, oy, size);
          const xs = [q[0], q[2], q[4], q[6]];
          const ys = [q[1], q[3], q[5], q[7]];
          cur ??= { text: '', x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity, size, font };
          cur.text += c;
          cur.x0 = Math.min(cur.x0, ...xs);
          cur.y0 = Math.min(cur.y0, ...ys);
          cur.x1 = Math.max(cur.x1, ...xs);
          cur.y1 = Math.max(cur.y1, ...ys);
        }
      }
      flush();
    }
    pages.push(page);
  }
  return pages;
}

export interface Fidelity {
  words: number;
  /** Original words found anywhere in the round trip (as a bag of words). */
  anywhere: number;
  /** Found on their own page. */
  found: number;
  inPlace: number;
  /** In place and at their size (within 10 %). */
  sized: number;
  styled: number;
}

/**
 * Matches the round trip's words to the original's page by page, by place first. A word whose text the page has
 * once in both files pairs with its copy (an anchor). A word the page repeats (a caption over three pictures, a
 * date down a table's column) pairs with the copy where the anchors around it say it went: its place moved as the
 * nearest anchors moved (the median of five), its copy within 3 % of the page of there, as many pairs as can be
 * made one to one (a maximum matching). So a line printed three times is matched copy for copy whatever order the
 * two files draw them in, and a block the export moved does not count as in place because another copy of its
 * words happens to be where it was. The words left over on both sides are matched as found: a longest common
 * subsequence of their texts in stext order, then words with the same text, nearest first. In place: within 3 % of
 * the page of the original's place.
 */
export function compare(original: MPage[], roundTrip: MPage[]): Fidelity {
  const out: Fidelity = { words: 0, anywhere: 0, found: 0, inPlace: 0, sized: 0, styled: 0 };
  const bag = new Map<string, number>();
  for (const w of roundTrip.flatMap((p) => p.words)) bag.set(w.text, (bag.get(w.text) ?? 0) + 1);
  for (const w of original.flatMap((p) => p.words)) {
    const n = bag.get(w.text) ?? 0;
    if (n > 0) {
      bag.set(w.text, n - 1);
      out.anywhere++;
    }
  }
  original.forEach((page, p) => {
    const a = page.words;
    const b = roundTrip[p]?.words ?? [];
    out.words += a.length;
    const window = { x: 0.03 * page.width, y: 0.03 * page.height };
    const pairs = placePairs(a, b, window);
    const usedA = new Set(pairs.map(([i]) => i));
    const usedB = new Set(pairs.map(([, j]) => j));
    const restA = a.map((_, i) => i).filter((i) => !usedA.has(i));
    const restB = b.map((_, j) => j).filter((j) => !usedB.has(j));
    const inOrder = lcs(
      restA.map((i) => a[i].text),
      restB.map((j) => b[j].text),
    ).map(([x, y]): [number, number] => [restA[x], restB[y]]);
    for (const [i, j] of inOrder) {
      usedA.add(i);
      usedB.add(j);
      pairs.push([i, j]);
    }
    const rest: [number, number, number][] = [];
    for (const i of restA) {
      if (usedA.has(i)) continue;
      for (const j of restB) if (!usedB.has(j) && a[i].text === b[j].text) rest.push([Math.hypot(a[i].cx - b[j].cx, a[i].cy - b[j].cy), i, j]);
    }
    for (const [, i, j] of rest.sort((x, y) => x[0] - y[0])) {
      if (usedA.has(i) || usedB.has(j)) continue;
      usedA.add(i);
      usedB.add(j);
      pairs.push([i, j]);
    }
    for (const [i, j] of pairs) {
      const o = a[i];
      const r = b[j];
      out.found++;
      const sized = Math.abs(o.size - r.size) <= 0.1 * o.size;
      if (Math.abs(o.cx - r.cx) <= window.x && Math.abs(o.cy - r.cy) <= window.y) {
        out.inPlace++;
        if (sized) out.sized++;
      }
      if (sized && o.bold === r.bold && o.italic === r.italic) out.styled++;
    }
  });
  return out;
}

/** Anchors (a text once on each side) and the copies of repeated words where their anchors say they went (see compare). */
function placePairs(a: MWord[], b: MWord[], window: { x: number; y: number }): [number, number][] {
  const index = (ws: MWord[]) => {
    const m = new Map<string, number[]>();
    ws.forEach((w, k) => (m.get(w.text) ?? m.set(w.text, []).get(w.text)!).push(k));
    return m;
  };
  const [inA, inB] = [index(a), index(b)];
  const anchors: [number, number][] = [];
  for (const [text, is] of inA) {
    const js = inB.get(text);
    if (is.length === 1 && js?.length === 1) anchors.push([is[0], js[0]]);
  }
  const anchored = new Set(anchors.map(([i]) => i));
  // Where a word is expected in the round trip: moved as the five anchors nearest to it moved (none: not moved).
  const expected = (i: number) => {
    const near = anchors
      .map(([k, j]) => ({ d: Math.hypot(a[k].cx - a[i].cx, a[k].cy - a[i].cy), dx: b[j].cx - a[k].cx, dy: b[j].cy - a[k].cy }))
      .sort((p, q) => p.d - q.d)
      .slice(0, 5);
    return { x: a[i].cx + median(near.map((n) => n.dx)), y: a[i].cy + median(near.map((n) => n.dy)) };
  };
  const candidates = a.map((o, i) => {
    const js = inB.get(o.text);
    if (anchored.has(i) || !js) return [];
    const e = expected(i);
    const off = (j: number) => Math.hypot(b[j].cx - e.x, b[j].cy - e.y);
    return js.filter((j) => Math.abs(b[j].cx - e.x) <= window.x && Math.abs(b[j].cy - e.y) <= window.y).sort((x, y) => off(x) - off(y));
  });
  // Kuhn's augmenting paths: the most words paired with a copy where expected, one to one.
  const owner = new Map<number, number>();
  const augment = (i: number, seen: Set<number>): boolean => {
    for (const j of candidates[i]) {
      if (seen.has(j)) continue;
      seen.add(j);
      const k = owner.get(j);
      if (k === undefined || augment(k, seen)) {
        owner.set(j, i);
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < a.length; i++) if (candidates[i].length) augment(i, new Set());
  return [...anchors, ...[...owner].map(([j, i]): [number, number] => [i, j])];
}

const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Index pairs of a longest common subsequence (dynamic programming; pages hold a few thousand words at most). */
function lcs(a: string[], b: string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  if (!n || !m) return [];
  const t = new Uint16Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const k = i * (m + 1) + j;
      t[k] = a[i] === b[j] ? t[k + m + 2] + 1 : Math.max(t[k + m + 1], t[k + 1]);
    }
  }
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) out.push([i++, j++]);
    else if (t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) i++;
    else j++;
  }
  return out;
}

/** An office document rendered to PDF by a fresh LibreOffice with a private profile. */
export async function officeToPdf(file: string, ext: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'qfid-'));
  const input = join(dir, `input.${ext}`);
  copyFileSync(file, input);
  await sh('soffice', [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, input], {
    cwd: dir,
    timeout: 600_000,
  });
  const pdf = readdirSync(dir).find((f) => f.endsWith('.pdf'));
  if (!pdf) throw new Error(`LibreOffice did not render ${file}`);
  return join(dir, pdf);
}

/** Fidelity of one export against its original PDF; the rendered round trip is removed afterwards. */
export async function fidelity(originalPdf: string, exported: string, ext: string): Promise<Fidelity> {
  const rendered = await officeToPdf(exported, ext);
  try {
    const [a, b] = await Promise.all([stextWords(originalPdf), stextWords(rendered)]);
    return compare(a, b);
  } finally {
    rmSync(join(rendered, '..'), { recursive: true, force: true });
  }
}
