import { join } from 'node:path';
import { readBudgets } from '../document/index.js';
import { LANGUAGE_NAMES, MAX_OCR_PIXELS } from '../render/index.js';
import { list, onOff, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';
import { deskewDocument, MAX_SKEW, MIN_TURN } from '../scan/index.js';

const listed = (pages: number[]) => `${pages.length > 1 ? 'Pages' : 'Page'} ${pages.join(', ')}`;

export default operation({
  path: '/deskewed-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Straighten scanned pages',
  description: [
    `Each scanned page in \`pages\` (a page mostly covered by images) is drawn at its scan's resolution (150 to 300 dpi, at most ${MAX_OCR_PIXELS / 1e6} megapixels), its skew measured from the rows of its content (projection profiles, up to ${MAX_SKEW} degrees either way, to 0.02 degrees) and the image turned back on a white ground; the page is replaced by the straightened image at the same size (1-bit scans stay 1-bit, others become JPEG).`,
    `A page skewed by less than ${MIN_TURN} degrees is left as it is unless it is cleaned. \`despeckle\` removes isolated specks and \`remove_borders\` solid dark areas along the edges (unpaper's noise and black filters; both off by default).`,
    "A page that carried a text layer (an OCR'd scan) gets a new one from Tesseract in `languages` (default English), so the text lies on the straightened words; other pages get none. Pages that are not scans (vector text and graphics) are left untouched and named in `warning`.",
    "The answer lists each scanned page's measured skew in `skew` ([{page, angle, corrected}], degrees, positive when the content was turned clockwise).",
  ].join(' '),
  inputs: pdfInput(),
  fields: {
    despeckle: onOff(false),
    remove_borders: onOff(false),
    languages: list(LANGUAGE_NAMES)
      .optional()
      .default(['English'])
      .meta({ description: 'Languages of pages whose text layer is made again: a comma-separated list or an array.', default: ['English'] }),
    pages: pages(),
    output: output(),
  },
  output: 'file',
  engines: ['mupdf', 'qpdf', 'tesseract', 'unpaper'],
  cost: perCore,
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName }) => {
    const path = join(dir, 'deskewed.pdf');
    const clean = { despeckle: fields.despeckle, removeBorders: fields.remove_borders };
    const {
      pages: measured,
      untexted,
      others,
    } = await deskewDocument(input.path, fields.pages, clean, fields.languages, path, { dir, signal, timeoutMs, progress });
    const warnings = [
      others.length
        ? `${listed(others)} ${others.length > 1 ? 'are' : 'is'} not scanned (not mostly images) and ${others.length > 1 ? 'were' : 'was'} left as ${others.length > 1 ? 'they were' : 'it was'}.`
        : '',
      untexted.length
        ? `${listed(untexted)} took longer than ${readBudgets().ocrPageMs / 1000} s (OCR_PAGE_SECONDS) to recognise again and lost ${untexted.length > 1 ? 'their' : 'its'} text layer.`
        : '',
    ].filter(Boolean);
    const warning = warnings.length ? warnings.join(' ') : undefined;
    return {
      files: [{ path, name: `${outputName}.pdf` }],
      json: { skew: measured.map((m) => ({ page: m.page, angle: m.skew, corrected: m.changed })) },
      warning,
    };
  },
});
