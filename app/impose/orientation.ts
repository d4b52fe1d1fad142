import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../engines/errors.js';
import type { PageBox } from '../../engines/mupdf.js';
import { drawPageImage } from '../../engines/mupdf-text-layer.js';
import { popplerPageImage } from '../../engines/poppler.js';
import { detectOrientation, type Orientation } from '../../engines/tesseract.js';
import { firstThatReads, inputError, readBudgets } from '../document/index.js';
import { inParallel, MAX_OCR_PIXELS } from '../render/index.js';

/**
 * Orientation detection draws pages in grey at 200 dpi: measured on the corpus's four-way turned Linn scan,
 * Tesseract's confidence is 12-19 at 150 dpi, 24-29 at 200 and 32-35 at 300, for the same time (~2.5 s a page,
 * mostly the detector itself).
 */
const ORIENTATION_DPI = 200;
/** OCRmyPDF's default for --rotate-pages-threshold: below it a page is left as it is. */
export const MIN_ORIENTATION_CONFIDENCE = 14;

export interface PageOrientation {
  page: number;
  /** null: too little text to tell, or Tesseract ran out of OCR_PAGE_SECONDS on it. */
  found: Orientation | null;
}

export interface DetectContext {
  dir: string;
  signal: AbortSignal;
  timeoutMs: number;
  progress: (fraction: number) => void;
}

/** Each page's text orientation, one Tesseract per core, each drawn page deleted once read; in page order. */
export async function detectOrientations(input: string, boxes: PageBox[], pages: number[], ctx: DetectContext): Promise<PageOrientation[]> {
  const deadline = Date.now() + ctx.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const { renderPageMs, ocrPageMs } = readBudgets();
  const queue = [...pages];
  const found: PageOrientation[] = [];
  const worker = async (_: unknown, _k: number, signal: AbortSignal) => {
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      const box = boxes[page - 1];
      const dpi = Math.max(1, Math.min(ORIENTATION_DPI, Math.floor(72 * Math.sqrt(MAX_OCR_PIXELS / (box.width * box.height)))));
      const image = join(ctx.dir, `osd-${page}.pgm`);
      try {
        const draw = { cwd: ctx.dir, signal, timeoutMs: left(), pageMs: renderPageMs };
        await firstThatReads(
          `Drawing page ${page} for orientation detection`,
          [
            () => drawPageImage(input, page, image, { dpi, colors: 'gray' }, { ...draw, timeoutMs: Math.min(renderPageMs, left()) }),
            () => popplerPageImage(input, page, image, { dpi, colors: 'gray' }, draw),
          ],
          'renderPageMs',
        ).catch((err) => {
          throw inputError(err);
        });
        const cap = Math.min(ocrPageMs, left());
        try {
          found.push({ page, found: await detectOrientation(image, dpi, { cwd: ctx.dir, signal, timeoutMs: cap }) });
        } catch (err) {
          // The page's own cap, not the job's deadline: the page is left as it is, the others go on.
          if (!(err instanceof EngineError && err.details.timedOut && cap === ocrPageMs)) throw err;
          found.push({ page, found: null });
        }
      } finally {
        await rm(image, { force: true });
      }
      ctx.progress(found.length / pages.length);
    }
  };
  await inParallel(Array.from({ length: Math.min(availableParallelism(), pages.length) }), worker, ctx.signal);
  return found.sort((a, b) => a.page - b.page);
}
