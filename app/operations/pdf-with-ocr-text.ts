import { join } from 'node:path';
import { LANGUAGE_NAMES, MAX_OCR_PIXELS, OCR_DPI, ocrPdf } from '../render/index.js';
import { list, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';

export default operation({
  path: '/pdf-with-ocr-text',
  tag: 'Information and extraction',
  summary: 'Make a scanned PDF searchable with an invisible layer of recognised text',
  description: [
    `Each selected page is drawn (a scan at its own resolution between 150 and ${OCR_DPI} dpi, other pages at ${OCR_DPI} dpi) and read by Tesseract in the given languages (several at once, e.g. \`German,French\`; more languages, CJK above all, take longer).`,
    'The recognised words are laid on the original page as invisible text (render mode 3) at the place of the words in the image, so the page looks exactly as before and its text can be selected, searched and extracted. The original content streams are kept unchanged; crop box, /Rotate and scans turned by 90, 180 or 270 degrees are handled.',
    "A page that already carries text (any character in its own content, visible or invisible, so also a page OCR'd before) is left as it is, as are pages outside `pages`: mixed documents keep their real text and only their scanned pages are recognised.",
    `A page that would be larger than ${MAX_OCR_PIXELS / 1e6} megapixels is read at a lower resolution; a page that takes more than OCR_PAGE_SECONDS (default 180) to recognise is left without text and named in \`warning\`.`,
  ].join(' '),
  inputs: pdfInput(),
  fields: {
    languages: list(LANGUAGE_NAMES)
      .optional()
      .default(['English'])
      .meta({ description: 'The languages of the text: a comma-separated list (`German,French`) or an array.', default: ['English'] }),
    pages: pages(),
    output: output(),
  },
  output: 'file',
  engines: ['mupdf', 'qpdf', 'tesseract'],
  cost: perCore,
  run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName }) => {
    const path = join(dir, 'ocr.pdf');
    const { warning } = await ocrPdf(input.path, path, fields, { dir, signal, timeoutMs, progress });
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
