import { copyFile, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { EngineError } from '../../engines/errors.js';
import { ghostscriptDrawPage, type RasterDevice, renderWithDevice } from '../../engines/ghostscript-raster.js';
import { type ColorModel, decodeToRaw, encodeImage, type ImageFormat, type RawImage } from '../../engines/images.js';
import { type DrawColorspace, type DrawOptions, drawPages, type PageBox, readPageBoxes } from '../../engines/mupdf.js';
import { popplerDrawPage } from '../../engines/poppler.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { chainFailure, countPages, displayedSize, firstThatReads, inputError, isReadFailure, pagesWithFallback, readBudgets } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { inParallel } from './parallel.js';

/**
 * Rendering pages to image files, by the pipeline measured fastest for the format (scripts/bench/render.bench.ts):
 * PNG, GIF, TIFF and CMYK JPEG: MuPDF draws raw pixels, sharp and our own writers encode them (the encoder, not the
 * rasteriser, dominates); BMP and RGB/gray JPEG: Ghostscript's own devices, which draw and encode in one pass.
 * Either way the selected pages are split into contiguous runs, one process per core.
 */

/** The largest page we render, in pixels: ~300 MB of RGB in each of MuPDF's output and the encoder's input. */
export const MAX_PAGE_PIXELS = 100_000_000;
export const PIXEL_CAP_DOC =
  'resolution x page size is capped at 100 megapixels per page (for example Letter up to 1100 dpi, A4 up to 1120 dpi, A0 up to 250 dpi); a larger request is rejected with 400 naming resolution and the highest resolution the document allows.';

/** The pixel size MuPDF gives a page (it rounds the scaled box outwards). */
export const pixelSize = (box: PageBox, dpi: number) => [Math.ceil((box.width * dpi) / 72 - 0.001), Math.ceil((box.height * dpi) / 72 - 0.001)] as const;

export function checkPixelBudget(boxes: PageBox[], pages: number[], resolution: number): void {
  const largest = pages.map((p) => boxes[p - 1]).reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
  const [w, h] = pixelSize(largest, resolution);
  if (w * h <= MAX_PAGE_PIXELS) return;
  const maxDpi = Math.floor(72 * Math.sqrt(MAX_PAGE_PIXELS / (largest.width * largest.height)));
  throw new AppError(
    'out_of_range',
    `${resolution} is not within the acceptable range for resolution: page ${largest.page} would be ${w}x${h} pixels, more than the ${MAX_PAGE_PIXELS / 1e6} megapixel limit per page; this document allows at most ${maxDpi} dpi`,
  );
}

export type Smoothing = 'none' | 'all' | 'text' | 'line' | 'image';

/**
 * `smoothing` to MuPDF's anti-aliasing bits. MuPDF 1.21 takes separate levels (`-A graphics/text`) but its glyphs
 * follow the graphics level (measured: `-A 0/8` draws 2-level text, `-A 8/0` smooth text), so any kind of
 * smoothing turns on all of it, and `none` (the default) none.
 */
export function antiAliasing(smoothing: Smoothing[] | undefined): { graphicsAa: number; textAa: number } {
  const on = (smoothing ?? []).some((s) => s !== 'none');
  return { graphicsAa: on ? 8 : 0, textAa: on ? 8 : 0 };
}

/** What MuPDF draws for each output colour model (Lab is computed from RGB). */
export const drawColorspace = (model: ColorModel): DrawColorspace => (model === 'lab' ? 'rgb' : model);

/** Contiguous runs of about equal length, at most `parts` of them; each item keeps its position in `items`. */
export function splitRuns<T>(items: T[], parts: number): { start: number; items: T[] }[] {
  const n = Math.max(1, Math.min(parts, items.length));
  const runs: { start: number; items: T[] }[] = [];
  for (let i = 0; i < n; i++) {
    const start = Math.floor((i * items.length) / n);
    const end = Math.floor(((i + 1) * items.length) / n);
    if (end > start) runs.push({ start, items: items.slice(start, end) });
  }
  return runs;
}

export interface OpenedPdf {
  boxes: PageBox[];
}

/**
 * Refuses what cannot be rendered: a password is needed (401), or no engine can count the pages or read their
 * boxes (400). Pages are those of the real page tree, never the /Count a file claims; boxes from MuPDF, else Poppler.
 */
export async function openForRendering(input: string, ectx: { cwd: string; signal: AbortSignal; timeoutMs?: number }): Promise<OpenedPdf> {
  let boxes: PageBox[];
  try {
    // qpdf reports a needed password as PasswordError here (inputError: 401).
    const count = await countPages(input, ectx);
    boxes = await firstThatReads('Reading the page boxes', [
      () => readPageBoxes(input, count, ectx),
      async () => (await popplerGeometry(input, count, ectx)).map((g) => ({ page: g.page, rotate: g.rotate, ...displayedSize(g) })),
    ]);
  } catch (err) {
    throw inputError(err);
  }
  const empty = boxes.find((b) => !(b.width > 0 && b.height > 0));
  if (!boxes.length) throw invalidInput('no page of the document could be read');
  if (empty) throw invalidInput(`page ${empty.page} has no area to draw (its crop box or media box is empty)`);
  return { boxes };
}

/** Pixels per RENDER_PAGE_SECONDS: a larger page gets that budget again for each started 25 megapixels. */
const BUDGET_PIXELS = 25_000_000;

/** The time one engine may spend on one page of the request. */
function pageBudgetMs(req: RenderRequest): number {
  const largest = Math.max(
    ...req.pages.map((p) => {
      const [w, h] = pixelSize(req.boxes[p - 1], req.resolution);
      return w * h;
    }),
  );
  return readBudgets().renderPageMs * Math.max(1, Math.ceil(largest / BUDGET_PIXELS));
}

type Engine = 'mupdf' | 'poppler' | 'gs';

/**
 * One page drawn by the next engines of the chain (MuPDF, Poppler, Ghostscript, less the one that already failed),
 * each within the page's budget, as the raw samples the encoders take. All failing: a 422 naming
 * RENDER_PAGE_SECONDS when each was cut by it, else the file's fault.
 */
async function drawPageElsewhere(
  req: RenderRequest,
  page: number,
  engines: Engine[],
  failed: EngineError[],
  ctx: RenderContext & { pageMs: number },
  signal: AbortSignal,
): Promise<RawImage> {
  const colour = drawColorspace(req.colorModel);
  const drawn = colour === 'cmyk' ? 'rgb' : colour;
  const ectx = { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs, pageMs: ctx.pageMs };
  const failures = [...failed];
  for (const engine of engines) {
    try {
      if (engine === 'mupdf') {
        const { graphicsAa, textAa } = antiAliasing(req.smoothing);
        for await (const p of drawPages(req.input, { pages: [page], resolution: req.resolution, colorspace: colour, graphicsAa, textAa }, ectx))
          return { ...p };
      } else if (engine === 'poppler') {
        return await decodeToRaw(await popplerDrawPage(req.input, page, { resolution: req.resolution, colour: drawn }, ectx), colour);
      } else {
        const file = join(ctx.dir, `gs-page-${page}.png`);
        await ghostscriptDrawPage(req.input, page, file, { resolution: req.resolution, colour: drawn }, ectx);
        return await decodeToRaw(file, colour);
      }
    } catch (err) {
      if (!isReadFailure(err)) throw err;
      failures.push(err);
    }
  }
  throw chainFailure(`Drawing page ${page}`, failures, 'renderPageMs');
}

export interface RenderRequest {
  input: string;
  boxes: PageBox[];
  pages: number[];
  format: ImageFormat;
  colorModel: ColorModel;
  resolution: number;
  jpegQuality?: number;
  smoothing?: Smoothing[];
}

export interface RenderContext {
  dir: string;
  signal: AbortSignal;
  timeoutMs: number;
  progress: (fraction: number) => void;
}

/**
 * Where Ghostscript's own device writes the format faster than MuPDF + our encoders (scripts/bench/render.bench.ts).
 * Not CMYK JPEG: jpegcmyk writes no resolution (no JFIF segment), sharp does.
 */
const GS_DEVICES: Partial<Record<ImageFormat, Partial<Record<ColorModel, RasterDevice>>>> = {
  jpg: { rgb: 'jpeg', gray: 'jpeggray' },
  bmp: { rgb: 'bmp16m', gray: 'bmpgray' },
};

/** Whether `smoothing` is honoured kind by kind (Ghostscript) or all together (MuPDF) for this format. */
export const smoothsSeparately = (format: ImageFormat) => format in GS_DEVICES;

/** Renders and encodes every asked page; returns the files in the order of `pages`. */
export async function renderImages(req: RenderRequest, ctx: RenderContext): Promise<string[]> {
  const device = GS_DEVICES[req.format]?.[req.colorModel];
  return device ? renderWithGhostscript(req, device, ctx) : renderWithMupdf(req, ctx);
}

/**
 * Pages per batch of renderBatches: the job dir then holds one batch's images, not the document's (a 2,000-page
 * scan drawn at 150 dpi as RGB TIFF is 4.7 GB). Each batch opens the document once per core.
 */
const BATCH_PAGES = 64;

/**
 * renderImages in batches of pages: each batch's files go to `use` (in the order of its pages) and are removed once
 * it returns, so the pages drawn for measuring a long document never all sit on disk at once.
 */
export async function renderBatches(req: RenderRequest, ctx: RenderContext, use: (pages: number[], files: string[]) => Promise<void>): Promise<void> {
  for (let start = 0; start < req.pages.length; start += BATCH_PAGES) {
    const pages = req.pages.slice(start, start + BATCH_PAGES);
    const progress = (f: number) => ctx.progress((start + f * pages.length) / req.pages.length);
    const files = await renderImages({ ...req, pages }, { ...ctx, progress });
    try {
      await use(pages, files);
    } finally {
      await Promise.all(files.map((f) => rm(f, { force: true })));
    }
  }
}

async function renderWithGhostscript(req: RenderRequest, device: RasterDevice, ctx: RenderContext): Promise<string[]> {
  // Ghostscript takes pages in increasing order only: each distinct page is drawn once, then placed.
  const unique = [...new Set(req.pages)].sort((a, b) => a - b);
  const smoothing = new Set(req.smoothing ?? []);
  const on = (kind: Smoothing) => smoothing.has('all') || smoothing.has(kind);
  const rendered = new Map<number, string>();
  const pageMs = pageBudgetMs(req);
  let done = 0;
  await inParallel(
    splitRuns(unique, availableParallelism()),
    async (run, k, signal) => {
      try {
        const files = await renderWithDevice(
          req.input,
          join(ctx.dir, `gs-${k}-%d.${req.format}`),
          {
            device,
            pages: run.items,
            resolution: req.resolution,
            smoothText: on('text'),
            smoothLines: on('line'),
            smoothImages: on('image'),
            jpegQuality: req.jpegQuality,
          },
          { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs, pageMs, onPage: () => ctx.progress(++done / unique.length) },
        );
        run.items.forEach((page, i) => rendered.set(page, files[i]));
      } catch (err) {
        if (!isReadFailure(err)) throw err;
        // Pages Ghostscript wrote stay; the others are drawn by MuPDF, then Poppler, and encoded by us.
        for (const [i, page] of run.items.entries()) {
          const file = join(ctx.dir, `gs-${k}-${i + 1}.${req.format}`);
          if (i < (err.details.stalledPage !== undefined ? run.items.indexOf(err.details.stalledPage) : 0) && (await stat(file).catch(() => null))?.size) {
            rendered.set(page, file);
            continue;
          }
          const image = await drawPageElsewhere(req, page, ['mupdf', 'poppler'], [err], { ...ctx, pageMs }, signal);
          const out = join(ctx.dir, `fallback-${page}.${req.format}`);
          await encodeImage(image, out, { format: req.format, colorModel: req.colorModel, dpi: req.resolution, jpegQuality: req.jpegQuality });
          rendered.set(page, out);
        }
      }
    },
    ctx.signal,
  ).catch((err) => {
    throw inputError(err);
  });
  const used = new Set<string>();
  return Promise.all(
    req.pages.map(async (page, i) => {
      const file = rendered.get(page)!;
      if (!used.has(file)) {
        used.add(file);
        return file;
      }
      const copy = join(ctx.dir, `page-${i + 1}.${req.format}`);
      await copyFile(file, copy);
      return copy;
    }),
  );
}

async function renderWithMupdf(req: RenderRequest, ctx: RenderContext): Promise<string[]> {
  const files: string[] = new Array(req.pages.length);
  const { graphicsAa, textAa } = antiAliasing(req.smoothing);
  const pageMs = pageBudgetMs(req);
  let done = 0;
  const emit = async (n: number, page: RawImage) => {
    const path = join(ctx.dir, `page-${n + 1}.${req.format}`);
    await encodeImage(page, path, { format: req.format, colorModel: req.colorModel, dpi: req.resolution, jpegQuality: req.jpegQuality });
    files[n] = path;
    ctx.progress(++done / req.pages.length);
  };

  // Positions in req.pages: MuPDF draws a run of them in one process, each page within its budget; the page it
  // fails on goes to Poppler, then Ghostscript, and MuPDF goes on with the pages after it (pagesWithFallback).
  const worker = async (run: { start: number; items: number[] }, _k: number, signal: AbortSignal) =>
    pagesWithFallback(
      run.items.map((_, i) => run.start + i),
      async (pending) => {
        const done = new Set<number>();
        const draw: DrawOptions = {
          pages: pending.map((n) => req.pages[n]),
          resolution: req.resolution,
          colorspace: drawColorspace(req.colorModel),
          graphicsAa,
          textAa,
        };
        try {
          // Each page is encoded before the next is read: the other workers keep the cores busy meanwhile, and the
          // page's memory is reused for the next (one page buffer per worker).
          for await (const page of drawPages(req.input, draw, { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs, pageMs }, true)) {
            await emit(pending[page.index], page);
            done.add(pending[page.index]);
          }
          return { done };
        } catch (err) {
          if (!isReadFailure(err)) throw err;
          return { done, failure: err };
        }
      },
      async (n, failure) => emit(n, await drawPageElsewhere(req, req.pages[n], ['poppler', 'gs'], failure ? [failure] : [], { ...ctx, pageMs }, signal)),
    );

  await inParallel(splitRuns(req.pages, availableParallelism()), worker, ctx.signal).catch((err) => {
    throw inputError(err);
  });
  return files;
}
