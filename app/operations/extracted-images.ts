import { extractImages, selectPages } from '../document/index.js';
import { output, pages } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/extracted-images',
  tag: 'Information and extraction',
  summary: 'Extract the images of a PDF in their original encoding',
  description:
    'Each image once, named <output>-img###-page### (image number, page where it first appears). JPEG and JPEG 2000 keep their stored bytes; CMYK images become TIFF; CCITT fax images become CCITT G4 TIFF; JBIG2 and the other encodings become PNG (with the soft mask as alpha). Read by Poppler; when Poppler cannot read the file or finds no image where MuPDF finds some, MuPDF extracts them (JPEG as stored, the rest as PNG; no inline images). No image: empty outputUrl and outputId and a warning.',
  inputs: pdfInput(),
  fields: { pages: pages(), output: output() },
  output: 'files',
  // As stored: JPEG, JPEG 2000, JBIG2 and others; fax images as TIFF, the rest as PNG.
  produces: ['*'],
  engines: ['qpdf', 'poppler', 'mupdf'],
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const selected = await selectPages(input.path, fields.pages, ctx);
    return extractImages(input.path, selected, { dir, outputName, maxPixels: limits.maxImagePixels, progress }, ctx);
  },
});
