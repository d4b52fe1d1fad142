import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { expectOutput, run } from './run.js';

/**
 * Tesseract as the text recogniser: one page image in, one text-only PDF page out (the glyph-less font in
 * render mode 3, positioned on the words, the page sized from the image's pixels and `dpi`). Always
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
 * `--psm 1` is automatic segmentation with orientation detection: a page whose scan is turned 90, 180 or 270
 * degrees is read upright and its words come out rotated to match the image (measured on the corpus: psm 3
 * reads the 270 and 180 degree pages as garbage, psm 1 reads all four, at ~8% more time per page).
 */
export function recognizeArgs(image: string, outputBase: string, opts: RecognizeOptions): string[] {
  return [image, outputBase, '-l', opts.languages.join('+'), '--dpi', String(opts.dpi), '--psm', '1', '-c', 'textonly_pdf=1', 'pdf'];
}

/** Recognises one page image; returns the text-only PDF (`outputBase`.pdf). */
export async function recognizeToPdf(image: string, outputBase: string, opts: RecognizeOptions, ctx: EngineContext): Promise<string> {
  await run('tesseract', recognizeArgs(image, outputBase, opts), { ...ctx, env: ENV });
  const pdf = `${outputBase}.pdf`;
  await expectOutput('tesseract', pdf);
  return pdf;
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
