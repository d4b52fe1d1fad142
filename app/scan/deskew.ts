import { copyFile, rm } from 'node:fs/promises';
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
  renderBatches,
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
  const results: ScanPage[] = [];
  const untexted: number[] = [];
  const parts: StraightPart[] = [];
  const straighten = async (page: number, file: string, dpi: number, mono: boolean): Promise<string | undefined> => {
    const grey = await readGrey(file, SKEW_WIDTH);
    const skew = measureSkew(grey, (grey.width * 72) / req.boxes[page - 1].width, MAX_SKEW);
    const turn = Math.abs(skew) >= MIN_TURN;
    results.push({ page, skew, changed: turn || cleaning });
    if (!turn && !cleaning) return undefined;
    let img = await rotateImage(file, turn ? -skew : 0, mono || !isColour(req.surveys.get(page)) ? 1 : 3);
    if (cleaning) img = await cleanScan(img, `clean-${page}`, req.clean, ectx);
    return encodePage(img, dpi, mono, join(ctx.dir, `straight-${page}`));
  };
  // A batch at a time (renderBatches): its pages straightened across cores, then made into a part PDF of its own
  // (with text layers where the pages had text). Parts are assembled at the end by qpdf: neither the drawings nor
  // the new pages of the whole document are ever held at once (one PDF of 2,000 new pages built in memory: +1 GB).
  for (const plan of drawPlans(req)) {
    const draw = {
      input: req.input,
      boxes: req.boxes,
      pages: plan.pages,
      format: 'tif',
      colorModel: plan.colour ? 'rgb' : 'gray',
      resolution: plan.dpi,
    } as const;
    await renderBatches(draw, ctx, async (pages, files) => {
      const images = new Map<number, string>();
      const queue = pages.map((page, i) => ({ page, file: files[i] }));
      await inParallel(
        Array.from({ length: Math.min(availableParallelism(), queue.length) }),
        async () => {
          for (let item = queue.shift(); item; item = queue.shift()) {
            const image = await straighten(item.page, item.file, plan.dpi, plan.mono.has(item.page));
            if (image) images.set(item.page, image);
          }
        },
        ctx.signal,
      );
      const changed = pages.filter((p) => images.has(p));
      if (!changed.length) return;
      const part = await straightPart(req, changed, images, join(ctx.dir, `straightened-${parts.length + 1}`), ctx);
      await Promise.all([...images.values()].map((f) => rm(f, { force: true })));
      untexted.push(...part.untexted);
      parts.push(part);
    });
  }
  results.sort((a, b) => a.page - b.page);
  if (!parts.length) return { pages: results, untexted: [] };
  await replacePages(req.input, parts, req.boxes.length, output, ectx);
  return { pages: results, untexted: untexted.sort((a, b) => a - b) };
}

/** A PDF of straightened pages: its page k is `pages[k - 1]` of the input. */
interface StraightPart {
  file: string;
  pages: number[];
  /** Pages whose new text layer Tesseract did not finish within OCR_PAGE_SECONDS. */
  untexted: number[];
}

/** The new pages' images as one PDF, re-OCR'd where the original page had text. */
async function straightPart(req: DeskewRequest, pages: number[], images: Map<number, string>, base: string, ctx: RenderContext): Promise<StraightPart> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const fresh = `${base}.pdf`;
  await imagesToPdf(
    pages.map((p) => images.get(p)!),
    fresh,
    { lossless: false, maxDpi: null, jpegQuality: JPEG_QUALITY },
    ectx,
  );
  const retext = pages.flatMap((p, k) => ((req.surveys.get(p)?.glyphs ?? 0) > 0 ? [k + 1] : []));
  if (!retext.length) return { file: fresh, pages, untexted: [] };
  const { boxes } = await openForRendering(fresh, ectx);
  const surveys = await surveyPages(fresh, retext, ectx);
  // The drawing reports the job's progress; a part's OCR is a share of one batch.
  const { layers, timedOut } = await recognizePages(
    { input: fresh, boxes, pages: retext, surveys, languages: req.languages },
    { ...ctx, progress: () => undefined },
  );
  const untexted = timedOut.map((k) => pages[k - 1]);
  if (!layers.length) return { file: fresh, pages, untexted };
  const file = `${base}-text.pdf`;
  await addTextLayers(fresh, file, layers, ectx);
  await rm(fresh, { force: true });
  return { file, pages, untexted };
}

const isColour = (s: PageSurvey | undefined) => s?.colors === 'rgb';

/** Each page drawn once at its OCR resolution, in the fewest colours that hold it: pages grouped per render. */
function drawPlans(req: DeskewRequest): { dpi: number; colour: boolean; pages: number[]; mono: Set<number> }[] {
  const plans = new Map<string, { dpi: number; colour: boolean; pages: number[]; mono: Set<number> }>();
  for (const page of req.pages) {
    const { dpi, colors } = ocrImage(req.boxes[page - 1], req.surveys.get(page));
    const key = `${dpi}-${colors === 'rgb'}`;
    const plan = plans.get(key) ?? { dpi, colour: colors === 'rgb', pages: [], mono: new Set<number>() };
    plan.pages.push(page);
    if (colors === 'mono' || req.surveys.get(page)?.colors === 'mono') plan.mono.add(page);
    plans.set(key, plan);
  }
  return [...plans.values()];
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

/** qpdf writes the input again with each part's pages in place of the pages they straighten; the rest stays. */
async function replacePages(
  input: string,
  parts: StraightPart[],
  pageCount: number,
  output: string,
  ctx: { cwd: string; signal: AbortSignal; timeoutMs: number },
): Promise<void> {
  const from = new Map<number, { file: string; page: number }>();
  for (const part of parts) part.pages.forEach((p, k) => from.set(p, { file: part.file, page: k + 1 }));
  const runs: { file: string; pages: number[] }[] = [];
  for (let p = 1; p <= pageCount; p++) {
    const { file, page } = from.get(p) ?? { file: input, page: p };
    const last = runs[runs.length - 1];
    if (last?.file === file) last.pages.push(page);
    else runs.push({ file, pages: [page] });
  }
  await runJob({ inputFile: input, outputFile: output, pages: runs.map((r) => ({ file: r.file, range: rangeText(r.pages) })) }, ctx).catch((err) => {
    throw inputError(err);
  });
  await expectOutput('qpdf', output);
}
