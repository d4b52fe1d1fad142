import { join } from 'node:path';
import { placeImage } from '../compose/index.js';
import { int, num, output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

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
    const path = join(dir, 'with-image.pdf');
    await placeImage(inputs.file[0].path, inputs.image_file[0].path, fields, path, dir, limits.maxImagePixels, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
