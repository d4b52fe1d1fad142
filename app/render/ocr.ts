import { copyFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../engines/errors.js';
import type { PageBox } from '../../engines/mupdf.js';
import {
  addTextLayers,
  drawPageImage,
  IMAGE_EXTENSIONS,
  type PageColors,
  type PageSurvey,
  surveyPages,
  type TextLayer,
} from '../../engines/mupdf-text-layer.js';
import { popplerPageImage } from '../../engines/poppler.js';
import { installedLanguages, type Recognized, recognizeToPdf } from '../../engines/tesseract.js';
import { firstThatReads, inputError, readBudgets, selectedPages } from '../document/index.js';
import { AppError } from '../errors.js';
import { inParallel } from './parallel.js';
import { openForRendering } from './render.js';

/** The spec's language names and the Tesseract pack each one needs (Debian: tesseract-ocr-<code with - for _>). */
export const LANGUAGES = {
  ChineseSimplified: 'chi_sim',
  ChineseTraditional: 'chi_tra',
  Dutch: 'nld',
  English: 'eng',
  French: 'fra',
  German: 'deu',
  Italian: 'ita',
  Japanese: 'jpn',
  Korean: 'kor',
  Portuguese: 'por',
  Spanish: 'spa',
} as const;
export type Language = keyof typeof LANGUAGES;
export const LANGUAGE_NAMES = Object.keys(LANGUAGES) as [Language, ...Language[]];

/**
 * How a page is drawn for Tesseract. A scan at the resolution it was scanned at (as OCRmyPDF does; measured on
 * a 150 dpi scan: the same words as at 300 dpi, ~30% faster), kept between 150 and 300 dpi; a page that is not
 * mostly image (vector art, text as curves) at 300 dpi. A page too large for that is drawn at a lower resolution,
 * so that it stays within MAX_OCR_PIXELS. Colours: the fewest that hold the page's images, as Tesseract reads a
 * 1-bit image ~20% and a grey one ~15% faster than colour (same words on the corpus). 1-bit only at the scan's
 * own resolution (MuPDF dithers what it resamples to 1 bit), and colour for pages that are not mostly image:
 * Tesseract's own conversion keeps coloured text apart from its background better than a grey rendering.
 */
export const OCR_DPI = 300;
const MIN_SCAN_DPI = 150;
/** ~A2 at 250 dpi, A3 at 300. Tesseract's memory grows with the pixels (~170 MB for Letter at 300 dpi in colour). */
export const MAX_OCR_PIXELS = 25_000_000;
/** Leptonica refuses images above 32767 pixels on a side. */
const MAX_SIDE = 30_000;

export function ocrImage(box: PageBox, survey?: Omit<PageSurvey, 'glyphs'>): { dpi: number; colors: PageColors } {
  const scan = survey && survey.ppi > 0 && survey.cover >= 0.5 ? survey : null;
  const wanted = scan ? Math.max(MIN_SCAN_DPI, Math.min(OCR_DPI, Math.round(scan.ppi))) : OCR_DPI;
  const byArea = 72 * Math.sqrt(MAX_OCR_PIXELS / (box.width * box.height));
  const bySide = (72 * MAX_SIDE) / Math.max(box.width, box.height);
  const dpi = Math.max(1, Math.min(wanted, Math.floor(byArea), Math.floor(bySide)));
  if (!scan) return { dpi, colors: 'rgb' };
  const native = Math.abs(dpi - scan.ppi) < 0.5;
  return { dpi, colors: scan.colors === 'mono' && !native ? 'gray' : scan.colors };
}

/** The Tesseract codes for the names asked (in order, once each); 503 naming the package when one is missing. */
export async function tesseractLanguages(names: Language[], ctx: { cwd: string; signal: AbortSignal }): Promise<string[]> {
  const codes = [...new Set(names.length ? names : (['English'] as Language[]))].map((n) => LANGUAGES[n]);
  const have = await installedLanguages(ctx);
  const missing = codes.filter((c) => !have.has(c));
  if (missing.length) {
    throw new AppError(
      'engine_missing',
      `languages: the Tesseract data for ${missing.join(', ')} is not installed on this server (Debian package ${missing.map((c) => `tesseract-ocr-${c.replace('_', '-')}`).join(', ')})`,
    );
  }
  return codes;
}

/**
 * Where OCR time goes, summed over pages and workers since the process started (a benchmark reads and resets it):
 * drawing pages, Tesseract's first reading, its second reading of pages read poorly, and the rest of the request.
 */
export const ocrStageMs = { survey: 0, draw: 0, tesseract: 0, reread: 0, layer: 0 };

/** Runs `fn`, adding its time to `stage`. */
export const timed = async <T>(stage: keyof typeof ocrStageMs, fn: () => Promise<T>): Promise<T> => {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    ocrStageMs[stage] += performance.now() - t0;
  }
};

/** A page read with less than this share of its characters in words Tesseract is sure of is read again with psm 1. */
const POOR_READING = 0.5;

export interface RecognizeRequest {
  input: string;
  boxes: PageBox[];
  pages: number[];
  surveys: Map<number, PageSurvey>;
  languages: string[];
}

export interface RecognizeContext {
  dir: string;
  signal: AbortSignal;
  timeoutMs: number;
  progress: (fraction: number) => void;
}

/**
 * Draws and recognises each page, one Tesseract per core, each worker taking the next page when it is
 * free (pages differ a lot in cost). A page's image is deleted once read. Returns the text layers in page
 * order and the pages that hit the per-page cap.
 */
export async function recognizePages(req: RecognizeRequest, ctx: RecognizeContext): Promise<{ layers: TextLayer[]; timedOut: number[] }> {
  const deadline = Date.now() + ctx.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const queue = [...req.pages];
  const layers: TextLayer[] = [];
  const timedOut: number[] = [];
  // OCR_PAGE_SECONDS per page recognised; drawing the page for Tesseract is a render (RENDER_PAGE_SECONDS).
  const { ocrPageMs, renderPageMs } = readBudgets();
  let done = 0;

  const worker = async (_: unknown, _k: number, signal: AbortSignal) => {
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      const { dpi, colors } = ocrImage(req.boxes[page - 1], req.surveys.get(page));
      const image = join(ctx.dir, `ocr-${page}.${IMAGE_EXTENSIONS[colors]}`);
      try {
        // MuPDF, then Poppler, each within the page's render budget.
        const draw = { cwd: ctx.dir, signal, timeoutMs: left(), pageMs: renderPageMs };
        await timed('draw', () =>
          firstThatReads(
            `Drawing page ${page} for OCR`,
            [
              () => drawPageImage(req.input, page, image, { dpi, colors }, { ...draw, timeoutMs: Math.min(renderPageMs, left()) }),
              () => popplerPageImage(req.input, page, image, { dpi, colors }, draw),
            ],
            'renderPageMs',
          ),
        ).catch((err) => {
          throw inputError(err);
        });
        // Both readings together within the page's cap (OCR_PAGE_SECONDS), unless the job's deadline comes first.
        const pageEnd = Date.now() + ocrPageMs;
        const byPage = pageEnd <= deadline;
        const cap = () => Math.max(1, Math.min(pageEnd, deadline) - Date.now());
        const tesseract = () => ({ cwd: ctx.dir, signal, timeoutMs: cap() });
        const opts = { languages: req.languages, dpi };
        try {
          // Read as upright first; a page that reads poorly may be turned inside its image: read again detecting
          // its orientation, and keep the reading with more characters Tesseract is sure of.
          let best: Recognized = await timed('tesseract', () => recognizeToPdf(image, join(ctx.dir, `ocr-${page}`), { ...opts, psm: 3 }, tesseract()));
          if (best.quality.chars && best.quality.sure < POOR_READING) {
            const again = await timed('reread', () => recognizeToPdf(image, join(ctx.dir, `ocr-${page}-osd`), { ...opts, psm: 1 }, tesseract()));
            if (again.quality.sure * again.quality.chars > best.quality.sure * best.quality.chars) best = again;
          }
          layers.push({ page, pdf: best.pdf });
        } catch (err) {
          // The page's own cap, not the job's deadline: the page keeps no text, the others go on.
          if (!(err instanceof EngineError && err.details.timedOut && byPage)) throw err;
          timedOut.push(page);
        }
      } finally {
        await rm(image, { force: true });
      }
      ctx.progress(++done / req.pages.length);
    }
  };

  await inParallel(Array.from({ length: Math.min(availableParallelism(), req.pages.length) }), worker, ctx.signal);
  return { layers: layers.sort((a, b) => a.page - b.page), timedOut: timedOut.sort((a, b) => a - b) };
}

/**
 * `input` with an invisible text layer on the selected pages that carry no text of their own (scans), recognised
 * in `languages`; a copy when there are none. The warning names the pages left without text by OCR_PAGE_SECONDS.
 */
export async function ocrPdf(
  input: string,
  output: string,
  req: { pages: string; languages: Language[] },
  ctx: RecognizeContext,
): Promise<{ warning?: string }> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const languages = await tesseractLanguages(req.languages, ectx);
  const { boxes } = await openForRendering(input, ectx);
  const selected = selectedPages(req.pages, boxes.length);
  const surveys = await timed('survey', () => surveyPages(input, selected, ectx)).catch((err) => {
    throw inputError(err);
  });
  const scanned = selected.filter((p) => !surveys.get(p)?.glyphs);
  if (!scanned.length) {
    await copyFile(input, output);
    return {};
  }
  const { layers, timedOut } = await recognizePages({ input, boxes, pages: scanned, surveys, languages }, ctx);
  if (layers.length) {
    await timed('layer', () => addTextLayers(input, output, layers, ectx)).catch((err) => {
      throw inputError(err);
    });
  } else {
    await copyFile(input, output);
  }
  const warning = timedOut.length
    ? `Page${timedOut.length > 1 ? 's' : ''} ${timedOut.join(', ')} took longer than ${readBudgets().ocrPageMs / 1000} s (OCR_PAGE_SECONDS) to recognise and ${timedOut.length > 1 ? 'were' : 'was'} left without text.`
    : undefined;
  return { warning };
}
