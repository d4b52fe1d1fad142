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
  s.replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(parseInt(h, 16))).replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
/** Words compare by letters and digits only: quotes, dashes and ligatures differ between fonts. */
const key = (s: string) => s.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** Words of every page (device space) from MuPDF's structured text, as an independent reader sees them. */
export async function stextWords(pdf: string): Promise<MPage[]> {
  const { stdout } = await sh('mutool', ['draw', '-F', 'stext', '-o', '-', pdf], { maxBuffer: 1 << 30 });
  const pages: MPage[] = [];
  for (const pm of stdout.matchAll(/<page [^>]*>[\s\S]*?<\/page>/g)) {
    const head = /<page [^>]*>/.exec(pm[0])![0];
    const page: MPage = { width: Number(attr(head, 'width')), height: Number(attr(head, 'height')), words: [] };
    for (const lm of pm[0].matchAll(/<line [^>]*>[\s\S]*?<\/line>/g)) {
      let cur: { text: string; x0: number; y0: number; x1: number; y1: number; size: number; font: string } | null = null;
      const flush = () => {
        if (cur && key(cur.text)) {
          page.words.push({ text: key(cur.text), cx: (cur.x0 + cur.x1) / 2, cy: (cur.y0 + cur.y1) / 2, size: cur.size, bold: BOLD.test(cur.font), italic: ITALIC.test(cur.font) });
        }
        cur = null;
      };
      for (const fm of lm[0].matchAll(/<font ([^>]*)>([\s\S]*?)<\/font>/g)) {
        const font = attr(fm[1], 'name');
        const size = Number(attr(fm[1], 'size'));
        for (const cm of fm[2].matchAll(/<char ([^>]*)\/>/g)) {
          const c = unxml(attr(cm[1], 'c'));
          if (/^\s*$/u.test(c)) {
            flush();
            continue;
          }
          const q = attr(cm[1], 'quad').split(' ').map(Number);
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
 * Matches the round trip's words to the original's page by page: a longest common subsequence of the word
 * texts in stext order first, then words left over on both sides with the same text, nearest first (a block
 * the export moved keeps its words, in another order).
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
    const pairs = lcs(a.map((w) => w.text), b.map((w) => w.text));
    const usedA = new Set(pairs.map(([i]) => i));
    const usedB = new Set(pairs.map(([, j]) => j));
    const rest: [number, number, number][] = [];
    for (let i = 0; i < a.length; i++) {
      if (usedA.has(i)) continue;
      for (let j = 0; j < b.length; j++) if (!usedB.has(j) && a[i].text === b[j].text) rest.push([Math.hypot(a[i].cx - b[j].cx, a[i].cy - b[j].cy), i, j]);
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
      if (Math.abs(o.cx - r.cx) <= 0.03 * page.width && Math.abs(o.cy - r.cy) <= 0.03 * page.height) {
        out.inPlace++;
        if (sized) out.sized++;
      }
      if (sized && o.bold === r.bold && o.italic === r.italic) out.styled++;
    }
  });
  return out;
}

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
  await sh('soffice', [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, input], { cwd: dir, timeout: 600_000 });
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
