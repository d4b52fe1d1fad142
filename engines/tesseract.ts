import { readFile, rm } from 'node:fs/promises';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { expectOutput, run } from './run.js';

/**
 * Tesseract as the text recogniser: one page image in, one text-only PDF page out (the glyph-less font in render
 * mode 3, positioned on the words, the page sized from the image's pixels and `dpi`) and a TSV of its words. Always
 * OMP_THREAD_LIMIT=1: Tesseract's own threads are ~4x slower here than one process per core.
 */

const ENV = { OMP_THREAD_LIMIT: '1' };

export interface RecognizeOptions {
  /** Tesseract pack codes (`eng`, `chi_sim`), the first one primary. */
  languages: string[];
  /** The image's resolution: it sets the size of the output page (points = pixels * 72 / dpi). */
  dpi: number;
}

/**
 * `--psm 3` is automatic segmentation without orientation detection (as OCRmyPDF runs it): the detection costs
 * 10-30% of a page's time (measured on the corpus: 0.5 s of 5 on the 300 ppi Linn scan, 0.55 s of 1.95 on the
 * 150 ppi Huckleberry Finn page) and most pages are upright. `--psm 1` adds it: a page turned 90, 180 or 270
 * degrees inside the image is read upright, its words rotated to match the image. The TSV beside the PDF gives
 * each word's confidence, which tells a page read upside down (see readQuality).
 */
export function recognizeArgs(image: string, outputBase: string, opts: RecognizeOptions & { psm: 1 | 3 }): string[] {
  return [image, outputBase, '-l', opts.languages.join('+'), '--dpi', String(opts.dpi), '--psm', String(opts.psm), '-c', 'textonly_pdf=1', 'pdf', 'tsv'];
}

export interface Recognized {
  /** The text-only PDF (`outputBase`.pdf). */
  pdf: string;
  /** See readQuality. */
  quality: Quality;
}

/** Recognises one page image into a text-only PDF and the quality of its reading. */
export async function recognizeToPdf(image: string, outputBase: string, opts: RecognizeOptions & { psm: 1 | 3 }, ctx: EngineContext): Promise<Recognized> {
  await run('tesseract', recognizeArgs(image, outputBase, opts), { ...ctx, env: ENV });
  const pdf = `${outputBase}.pdf`;
  await expectOutput('tesseract', pdf);
  const tsv = `${outputBase}.tsv`;
  await expectOutput('tesseract', tsv);
  const quality = readQuality(await readFile(tsv, 'utf8'));
  await rm(tsv, { force: true });
  return { pdf, quality };
}

export interface Quality {
  /** Characters in recognised words. */
  chars: number;
  /** The share of them in words Tesseract is fairly sure of (confidence 60 or more, out of 100). */
  sure: number;
}

/**
 * How well a page was read, from Tesseract's TSV (one row per word, level 5, its confidence in column 11).
 * Measured on the corpus's six scans drawn upright and upside down: 90-100% of the characters of an upright
 * page are in words of confidence 60+, 14-21% of a page read upside down.
 */
export function readQuality(tsv: string): Quality {
  let chars = 0;
  let sure = 0;
  for (const line of tsv.split('\n')) {
    const f = line.split('\t');
    if (f[0] !== '5' || f.length < 12) continue;
    const n = f[11].trim().length;
    const conf = Number(f[10]);
    if (!n || !(conf >= 0)) continue;
    chars += n;
    if (conf >= 60) sure += n;
  }
  return { chars, sure: chars ? sure / chars : 0 };
}

let installed: Promise<Set<string>> | null = null;

/** The installed language packs (`tesseract --list-langs`), read once per process. */
export function installedLanguages(ctx: EngineContext): Promise<Set<string>> {
  installed ??= run('tesseract', ['--list-langs'], { ...ctx, env: ENV }).then(
    // A header line, then one code per line.
    (r) =>
      new Set(
        r.stdout
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => /^[\w/]+$/.test(l)),
      ),
    (err) => {
      installed = null;
      throw err;
    },
  );
  return installed;
}

export interface Orientation {
  /** Clockwise turn (0, 90, 180, 270) that makes the page's text upright. */
  rotate: number;
  /** Tesseract's orientation confidence (arbitrary units; OCRmyPDF trusts it from 14 up by default). */
  confidence: number;
}

/**
 * Tesseract's orientation and script detection (`--psm 0`, the osd pack) on one page image. Null when the page
 * holds too little text to tell (Tesseract exits 1 saying "Too few characters").
 */
export async function detectOrientation(image: string, dpi: number, ctx: EngineContext): Promise<Orientation | null> {
  try {
    const r = await run('tesseract', [image, 'stdout', '--dpi', String(dpi), '--psm', '0'], { ...ctx, env: ENV });
    return parseOrientation(r.stdout);
  } catch (err) {
    if (err instanceof EngineError && err.details.exitCode === 1 && /Too few characters/i.test(err.details.stderr ?? '')) return null;
    throw err;
  }
}

export function parseOrientation(out: string): Orientation | null {
  const rotate = /^Rotate:\s*(\d+)/m.exec(out);
  const confidence = /^Orientation confidence:\s*([\d.]+)/m.exec(out);
  return rotate && confidence ? { rotate: Number(rotate[1]) % 360, confidence: Number(confidence[1]) } : null;
}
