import sharp from 'sharp';
import type { PageBox } from '../../engines/mupdf.js';
import { MAX_OCR_PIXELS, type RenderContext, renderBatches } from '../render/index.js';

/** A grey page image: one byte per pixel, 0 black, rows top to bottom. */
export interface GreyImage {
  width: number;
  height: number;
  data: Buffer;
}

/**
 * Draws pages as grey TIFFs through the render chain (MuPDF, then Poppler, then Ghostscript; pages across
 * cores; each page within RENDER_PAGE_SECONDS), a batch at a time: `use` gets each batch's pages and files, removed
 * after it. TIFF because our writer is the fastest encoder sharp reads back.
 */
export async function eachGreyBatch(
  input: string,
  boxes: PageBox[],
  pages: number[],
  dpi: number,
  ctx: RenderContext,
  use: (pages: number[], files: string[]) => Promise<void>,
): Promise<void> {
  await renderBatches({ input, boxes, pages, format: 'tif', colorModel: 'gray', resolution: dpi }, ctx, use);
}

/** An image file as grey samples, optionally scaled down to fit `width` pixels across and twice that down. */
export async function readGrey(file: string, width?: number): Promise<GreyImage> {
  let img = sharp(file, { limitInputPixels: false }).greyscale();
  if (width) img = img.resize({ width, height: 2 * width, fit: 'inside', kernel: 'linear', withoutEnlargement: true });
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

/**
 * `wanted` dpi, or less where the largest of `pages` would exceed `pixels` (by default MAX_OCR_PIXELS, the budget
 * of a page drawn for reading): a huge page is read coarser rather than drawn at any size.
 */
export function cappedDpi(boxes: PageBox[], pages: number[], wanted: number, pixels = MAX_OCR_PIXELS): number {
  const largest = Math.max(...pages.map((p) => boxes[p - 1].width * boxes[p - 1].height));
  return Math.max(1, Math.min(wanted, Math.floor(72 * Math.sqrt(pixels / largest))));
}
