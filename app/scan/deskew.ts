import { copyFile, mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { imagesToPdf } from '../../engines/image-pdf.js';
import type { PageBox } from '../../engines/mupdf.js';
import { addTextLayers, type PageSurvey, surveyPages } from '../../engines/mupdf-text-layer.js';
import { rangeText, runJob } from '../../engines/qpdf-edit.js';
import { expectOutput } from '../../engines/run.js';
import { type CleanOptions, cleanScan } from '../../engines/unpaper.js';
import { inputError, selectedPages } from '../document/index.js';
import {
  inParallel,
  type Language,
  ocrImage,
  openForRendering,
  type RenderContext,
  recognizePages,
  renderImages,
  tesseractLanguages,
} from '../render/index.js';
import { readGrey } from './pixels.js';
import { MAX_SKEW, measureSkew, rotateImage, SKEW_WIDTH } from './skew.js';

/**
 * Straightening scanned pages: each page drawn at its scan's resolution (as for OCR), its skew measured, the
 * image turned back and optionally cleaned by unpaper, and the page replaced by the new image at the same size.
 * A page that carried a text layer gets a new one from Tesseract, so its text lies on the straightened words.
 */

/** Below this skew (degrees) a page is left as it is: turning it again would only blur it. */
export const MIN_TURN = 0.2;
const JPEG_QUALITY = 85;

export interface ScanPage {
  page: number;
  /** The skew measured, degrees clockwise as seen (the page was turned back by as much). */
  skew: number;
  /** Re-drawn (turned or cleaned); false: left as it was. */
  changed: boolean;
}

export interface DeskewRequest {
  input: string;
  boxes: PageBox[];
  /** Scanned pages to straighten, ascending. */
  pages: number[];
  surveys: Map<number, PageSurvey>;
  clean: CleanOptions;
  /** Tesseract codes for pages whose text layer is made again. */
  languages: string[];
}

/**
 * The scans among the `selection` (pages mostly covered by images, the same test as OCR's) straightened into
 * `output`; a page with a text layer gets a new one in `languageNames`. Also returns the selected pages that are
 * not scans (left as they were). Without a page to change, `output` is a copy of the input.
 */
export async function deskewDocument(
  input: string,
  selection: Parameters<typeof selectedPages>[0],
  clean: CleanOptions,
  languageNames: Language[],
  output: string,
  ctx: RenderContext,
): Promise<{ pages: ScanPage[]; untexted: number[]; others: number[] }> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const { boxes } = await openForRendering(input, ectx);
  const selected = selectedPages(selection, boxes.length);
  const surveys = await surveyPages(input, selected, ectx).catch((err) => {
    throw inputError(err);
  });
  const scans = selected.filter((p) => surveys.get(p)!.cover >= 0.5);
  const others = selected.filter((p) => surveys.get(p)!.cover < 0.5);
  const languages = scans.some((p) => surveys.get(p)!.glyphs > 0) ? await tesseractLanguages(languageNames, ectx) : [];
  const { pages, untexted } = scans.length
    ? await deskewPages({ input, boxes, pages: scans, surveys, clean, languages }, output, ctx)
    : { pages: [], untexted: [] };
  if (!pages.some((m) => m.changed)) await copyFile(input, output);
  return { pages, untexted, others };
}

/**
 * Writes `output`: the input with its straightened pages replaced. Returns what was measured per page, and the
 * pages whose new text layer Tesseract did not finish within OCR_PAGE_SECONDS (left without text).
 */
export async function deskewPages(req: DeskewRequest, output: string, ctx: RenderContext): Promise<{ pages: ScanPage[]; untexted: number[] }> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const cleaning = req.clean.despeckle || req.clean.removeBorders;
  const drawn = await drawScans(req, ctx);
  const results: ScanPage[] = [];
  const images = new Map<number, string>();
  const queue = [...req.pages];
  await inParallel(
    Array.from({ length: Math.min(availableParallelism(), queue.length) }),
    async () => {
      for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
        const { file, dpi, mono } = drawn.get(page)!;
        const grey = await readGrey(file, SKEW_WIDTH);
        const skew = measureSkew(grey, (grey.width * 72) / req.boxes[page - 1].width, MAX_SKEW);
        const turn = Math.abs(skew) >= MIN_TURN;
        results.push({ page, skew, changed: turn || cleaning });
        if (!turn && !cleaning) continue;
        let img = await rotateImage(file, turn ? -skew : 0, mono || !isColour(req.surveys.get(page)) ? 1 : 3);
        if (cleaning) img = await cleanScan(img, `clean-${page}`, req.clean, ectx);
        images.set(page, await encodePage(img, dpi, mono, join(ctx.dir, `straight-${page}`)));
      }
    },
    ctx.signal,
  );
  results.sort((a, b) => a.page - b.page);
  const changed = results.filter((r) => r.changed).map((r) => r.page);
  if (!changed.length) return { pages: results, untexted: [] };

  // One PDF of the new pages (page k = changed[k - 1]), re-OCR'd where the original page had text.
  const fresh = join(ctx.dir, 'straightened.pdf');
  await imagesToPdf(
    changed.map((p) => images.get(p)!),
    fresh,
    { lossless: false, maxDpi: null, jpegQuality: JPEG_QUALITY },
    ectx,
  );
  const retext = changed.flatMap((p, k) => ((req.surveys.get(p)?.glyphs ?? 0) > 0 ? [k + 1] : []));
  let pagesFrom = fresh;
  let untexted: number[] = [];
  if (retext.length) {
    const { boxes } = await openForRendering(fresh, ectx);
    const surveys = await surveyPages(fresh, retext, ectx);
    const { layers, timedOut } = await recognizePages({ input: fresh, boxes, pages: retext, surveys, languages: req.languages }, ctx);
    untexted = timedOut.map((k) => changed[k - 1]);
    if (layers.length) {
      pagesFrom = join(ctx.dir, 'straightened-text.pdf');
      await addTextLayers(fresh, pagesFrom, layers, ectx);
    }
  }
  await replacePages(req.input, pagesFrom, changed, req.boxes.length, output, ectx);
  return { pages: results, untexted };
}

const isColour = (s: PageSurvey | undefined) => s?.colors === 'rgb';

/** Each page drawn once at its OCR resolution, in the fewest colours that hold it (pages grouped per render). */
async function drawScans(req: DeskewRequest, ctx: RenderContext): Promise<Map<number, { file: string; dpi: number; mono: boolean }>> {
  const plans = new Map<string, { dpi: number; colour: boolean; pages: number[] }>();
  const mono = new Set<number>();
  for (const page of req.pages) {
    const { dpi, colors } = ocrImage(req.boxes[page - 1], req.surveys.get(page));
    if (colors === 'mono' || req.surveys.get(page)?.colors === 'mono') mono.add(page);
    const key = `${dpi}-${colors === 'rgb'}`;
    const plan = plans.get(key) ?? { dpi, colour: colors === 'rgb', pages: [] };
    plan.pages.push(page);
    plans.set(key, plan);
  }
  const drawn = new Map<number, { file: string; dpi: number; mono: boolean }>();
  for (const [k, plan] of [...plans.values()].entries()) {
    // Each render names its files by position: one folder per render.
    const dir = join(ctx.dir, `scans-${k}`);
    await mkdir(dir);
    const files = await renderImages(
      { input: req.input, boxes: req.boxes, pages: plan.pages, format: 'tif', colorModel: plan.colour ? 'rgb' : 'gray', resolution: plan.dpi },
      { ...ctx, dir },
    );
    plan.pages.forEach((p, i) => drawn.set(p, { file: files[i], dpi: plan.dpi, mono: mono.has(p) }));
  }
  return drawn;
}

/** A 1-bit scan stays 1-bit (CCITT G4 TIFF, embedded as 1-bit by imagesToPdf); grey and colour become JPEG. */
async function encodePage(img: { width: number; height: number; channels: number; data: Buffer }, dpi: number, mono: boolean, base: string): Promise<string> {
  const pixels = sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels as 1 | 3 }, limitInputPixels: false });
  if (mono) {
    const file = `${base}.tif`;
    await pixels.threshold(128).toColourspace('b-w').withDensity(dpi).tiff({ bitdepth: 1, compression: 'ccittfax4' }).toFile(file);
    return file;
  }
  const file = `${base}.jpg`;
  await (img.channels === 1 ? pixels.toColourspace('b-w') : pixels).withDensity(dpi).jpeg({ quality: JPEG_QUALITY }).toFile(file);
  return file;
}

/** qpdf writes the input again with `changed` pages taken from `from` (its page k is changed[k - 1]); the rest stays. */
async function replacePages(
  input: string,
  from: string,
  changed: number[],
  pageCount: number,
  output: string,
  ctx: { cwd: string; signal: AbortSignal; timeoutMs: number },
): Promise<void> {
  const index = new Map(changed.map((p, k) => [p, k + 1]));
  const runs: { file: string; pages: number[] }[] = [];
  for (let p = 1; p <= pageCount; p++) {
    const file = index.has(p) ? from : input;
    const page = index.get(p) ?? p;
    const last = runs[runs.length - 1];
    if (last?.file === file) last.pages.push(page);
    else runs.push({ file, pages: [page] });
  }
  await runJob({ inputFile: input, outputFile: output, pages: runs.map((r) => ({ file: r.file, range: rangeText(r.pages) })) }, ctx).catch((err) => {
    throw inputError(err);
  });
  await expectOutput('qpdf', output);
}
