import { availableParallelism } from 'node:os';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, invalidInput } from '../errors.js';
import { encodeImage, type ColorModel, type ImageFormat } from '../../engines/images.js';
import { renderWithDevice, type RasterDevice } from '../../engines/ghostscript-raster.js';
import { drawPages, readPageBoxes, type DrawColorspace, type PageBox } from '../../engines/mupdf.js';
import { pageCount } from '../../engines/qpdf.js';
import { inParallel } from './parallel.js';
import { inputError } from '../document/index.js';

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
 * Refuses what cannot be rendered: a password is needed (401), or qpdf or MuPDF cannot read the file (400).
 * Pages are those of the real page tree, never the /Count a file claims.
 */
export async function openForRendering(input: string, ectx: { cwd: string; signal: AbortSignal; timeoutMs?: number }): Promise<OpenedPdf> {
  let boxes: PageBox[];
  try {
    // qpdf reports a needed password as PasswordError here (inputError: 401).
    const count = await pageCount(input, ectx);
    if (count < 1) throw invalidInput();
    boxes = await readPageBoxes(input, count, ectx);
  } catch (err) {
    throw inputError(err);
  }
  if (!boxes.length || boxes.some((b) => !(b.width > 0 && b.height > 0))) throw invalidInput();
  return { boxes };
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

async function renderWithGhostscript(req: RenderRequest, device: RasterDevice, ctx: RenderContext): Promise<string[]> {
  // Ghostscript takes pages in increasing order only: each distinct page is drawn once, then placed.
  const unique = [...new Set(req.pages)].sort((a, b) => a - b);
  const smoothing = new Set(req.smoothing ?? []);
  const on = (kind: Smoothing) => smoothing.has('all') || smoothing.has(kind);
  const rendered = new Map<number, string>();
  let done = 0;
  await inParallel(
    splitRuns(unique, availableParallelism()),
    async (run, k, signal) => {
      const files = await renderWithDevice(
        req.input,
        join(ctx.dir, `gs-${k}-%d.${req.format}`),
        { device, pages: run.items, resolution: req.resolution, smoothText: on('text'), smoothLines: on('line'), smoothImages: on('image'), jpegQuality: req.jpegQuality },
        { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs, onPage: () => ctx.progress(++done / unique.length) },
      );
      run.items.forEach((page, i) => rendered.set(page, files[i]));
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
  let done = 0;

  const worker = async (run: { start: number; items: number[] }, _k: number, signal: AbortSignal) => {
    const draw = { pages: run.items, resolution: req.resolution, colorspace: drawColorspace(req.colorModel), graphicsAa, textAa };
    // Each page is encoded before the next is read: the other workers keep the cores busy meanwhile, and the
    // page's memory is reused for the next (one page buffer per worker).
    for await (const page of drawPages(req.input, draw, { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs }, true)) {
      const n = run.start + page.index;
      const path = join(ctx.dir, `page-${n + 1}.${req.format}`);
      await encodeImage(page, path, { format: req.format, colorModel: req.colorModel, dpi: req.resolution, jpegQuality: req.jpegQuality });
      files[n] = path;
      ctx.progress(++done / req.pages.length);
    }
  };

  await inParallel(splitRuns(req.pages, availableParallelism()), worker, ctx.signal);
  return files;
}
