import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { AppError, invalidInput, passwordProtected } from '../../errors.js';
import { encodeImage, type ColorModel, type ImageFormat } from '../../../engines/images.js';
import { drawPages, readPageBoxes, type DrawColorspace, type PageBox } from '../../../engines/mupdf.js';
import { encryptionOf } from '../../../engines/qpdf.js';
import { inputError } from './pdf-access.js';

/**
 * Rendering pages to image files: MuPDF draws raw pixels (fast), sharp and our own writers encode them (the
 * encoder, not the rasteriser, dominates), with the selected pages split into contiguous runs, one `mutool`
 * process per core, each streaming its pages to the encoder as they are drawn.
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

/** Raw pixels one mutool process hands over at once. */
const BATCH_BYTES = 32 * 1024 * 1024;

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

/** Refuses what cannot be rendered: a password is needed (401), or MuPDF cannot read the file (400). */
export async function openForRendering(input: string, ectx: { cwd: string; signal: AbortSignal; timeoutMs?: number }): Promise<OpenedPdf> {
  if ((await encryptionOf(input, ectx)) === 'needs-password') throw passwordProtected();
  let boxes: PageBox[];
  try {
    boxes = await readPageBoxes(input, ectx);
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

/** Renders and encodes every asked page; returns the files in the order of `pages`. */
export async function renderImages(req: RenderRequest, ctx: RenderContext): Promise<string[]> {
  const files: string[] = new Array(req.pages.length);
  const { graphicsAa, textAa } = antiAliasing(req.smoothing);
  const channels = { gray: 1, rgb: 3, lab: 3, rgba: 4, cmyk: 4 }[req.colorModel];
  const largest = Math.max(...req.pages.map((p) => pixelSize(req.boxes[p - 1], req.resolution).reduce((a, b) => a * b)));
  // Pages per mutool process: few processes for small pages, one page at a time for large ones (memory).
  const batch = Math.max(1, Math.min(32, Math.floor(BATCH_BYTES / (largest * channels))));
  // One worker failing stops the others: they would only burn CPU for a request that already failed.
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const ectx = { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs };
  let done = 0;

  const worker = async (run: { start: number; items: number[] }) => {
    const draw = { batch, pages: run.items, resolution: req.resolution, colorspace: drawColorspace(req.colorModel), graphicsAa, textAa };
    let pending: Promise<void> | null = null;
    const encode = async (page: { index: number; width: number; height: number; channels: number; data: Buffer }) => {
      const n = run.start + page.index;
      const path = join(ctx.dir, `page-${n + 1}.${req.format}`);
      await encodeImage(page, path, { format: req.format, colorModel: req.colorModel, dpi: req.resolution, jpegQuality: req.jpegQuality });
      files[n] = path;
      done++;
      ctx.progress(done / req.pages.length);
    };
    // One page encodes while MuPDF draws the next.
    for await (const page of drawPages(req.input, draw, ectx)) {
      if (pending) await pending;
      pending = encode(page);
      pending.catch(() => {});
    }
    if (pending) await pending;
  };

  const runs = splitRuns(req.pages, availableParallelism());
  let first: unknown = null;
  await Promise.allSettled(
    runs.map((r) =>
      worker(r).catch((err) => {
        first ??= err;
        stop.abort();
      }),
    ),
  );
  ctx.signal.throwIfAborted();
  if (first) throw first;
  return files;
}
