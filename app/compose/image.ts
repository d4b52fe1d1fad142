import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { AppError, limitExceeded, outOfRange } from '../errors.js';
import { applyStamps, pageFrames } from './stamp.js';

export const IMAGE_UNREADABLE = 'There was a problem reading the input image';

/**
 * An image placed on one page with its lower-left corner at (x, y) on the page as seen, at its own size and scaled
 * down, never up, when it would run off the page.
 */
export async function placeImage(
  pdf: string,
  imagePath: string,
  at: { page: number; x: number; y: number },
  output: string,
  dir: string,
  maxPixels: number,
  ctx: EngineContext,
): Promise<void> {
  const frames = await pageFrames(pdf, ctx);
  if (at.page > frames.length) throw outOfRange(at.page, `page (the PDF has ${frames.length} page${frames.length > 1 ? 's' : ''})`);
  const frame = frames[at.page - 1];
  if (at.x < 0 || at.x >= frame.width) throw outOfRange(at.x, `x (0 to ${frame.width} on page ${at.page})`);
  if (at.y < 0 || at.y >= frame.height) throw outOfRange(at.y, `y (0 to ${frame.height} on page ${at.page})`);

  const doc = await PDFDocument.create();
  const image = await imagePage(doc, imagePath, dir, maxPixels, ctx);
  const fit = Math.min(1, (frame.width - at.x) / image.width, (frame.height - at.y) / image.height);
  await applyStamps(
    pdf,
    output,
    doc,
    [{ page: at.page, frame, key: 'image' }],
    (page) => page.drawPage(image, { x: at.x, y: at.y, xScale: fit, yScale: fit }),
    false,
    ctx,
  );
}

/**
 * The image as a page of its own (the images-to-PDF engine: DPI size, EXIF orientation, JPEG pass-through,
 * alpha as a soft mask), embedded in the stamp document as a form.
 */
async function imagePage(doc: PDFDocument, path: string, dir: string, maxPixels: number, ctx: EngineContext): Promise<PDFEmbeddedPage> {
  const single = join(dir, 'image.pdf');
  try {
    await imagesToPdf([path], single, { lossless: true, maxDpi: null, maxPixels }, ctx);
    const src = await PDFDocument.load(await readFile(single), { updateMetadata: false });
    return await doc.embedPage(src.getPage(0));
  } catch (err) {
    if (signalled(ctx)) throw err;
    if (err instanceof ImageTooLargeError) throw limitExceeded(`The image_file (${err.width}x${err.height} pixels)`, 'MAX_IMAGE_PIXELS', err.limit);
    throw new AppError('invalid_input', IMAGE_UNREADABLE);
  }
}

const signalled = (ctx: EngineContext) => ctx.signal?.aborted === true;
