import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { applyStamps, pageFrames } from '../compose/index.js';
import { AppError, limitExceeded, outOfRange } from '../errors.js';
import { int, num, output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

export const IMAGE_UNREADABLE = 'There was a problem reading the input image';

export default operation({
  path: '/pdf-with-added-image',
  tag: 'Content insertion',
  summary: 'Place an image on a page',
  description:
    'The image (JPEG, PNG, TIFF or GIF; also WebP and BMP) is placed with its lower-left corner at (x, y), in PDF units from the lower-left corner of the page as seen (trim box, after /Rotate), at its own size (its DPI, else 72: one pixel per unit), turned upright by its EXIF orientation, and scaled down, never up, when it would run off the page. JPEGs are embedded byte for byte (CMYK included); other formats losslessly, with transparency kept. The first frame of a multi-page TIFF or animated GIF is used.',
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    image_file: { idField: 'image_id', kind: 'any', description: 'The image to place' },
  },
  fields: {
    x: num(-100000, 100000),
    y: num(-100000, 100000),
    page: int(1, 1000000),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  run: async ({ fields, inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pdf = inputs.file[0];
    const frames = await pageFrames(pdf.path, ctx);
    if (fields.page > frames.length) throw outOfRange(fields.page, `page (the PDF has ${frames.length} page${frames.length > 1 ? 's' : ''})`);
    const frame = frames[fields.page - 1];
    if (fields.x < 0 || fields.x >= frame.width) throw outOfRange(fields.x, `x (0 to ${frame.width} on page ${fields.page})`);
    if (fields.y < 0 || fields.y >= frame.height) throw outOfRange(fields.y, `y (0 to ${frame.height} on page ${fields.page})`);

    const doc = await PDFDocument.create();
    const image = await imagePage(doc, inputs.image_file[0].path, dir, limits.maxImagePixels, ctx);
    const fit = Math.min(1, (frame.width - fields.x) / image.width, (frame.height - fields.y) / image.height);
    const path = join(dir, 'with-image.pdf');
    await applyStamps(
      pdf.path,
      path,
      doc,
      [{ page: fields.page, frame, key: 'image' }],
      (page) => page.drawPage(image, { x: fields.x, y: fields.y, xScale: fit, yScale: fit }),
      false,
      ctx,
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});

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
