import { join } from 'node:path';
import { noTextWarning, selectPages } from '../document/index.js';
import { limitExceeded } from '../errors.js';
import { pdfToPptx } from '../export/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/powerpoint',
  tag: 'Conversion',
  summary: 'Convert a PDF to a PowerPoint presentation (.pptx)',
  description:
    "One slide per page: the page's images, drawings and shading as one picture at the back (rendered at 150 dpi without its text), and over it the text as editable text boxes, one per line at its place, with its font family (mapped to a standard family: Times, Helvetica and Courier become Times New Roman, Arial and Courier New), size, bold, italic and colour. The slide size is that of the first page (a presentation has one slide size); pages of another size are scaled to fit it, centred; a /Rotate page gives a slide as the page is displayed. Text the PDF draws as curves, or a scan, stays in the picture (with a warning when a page has no text): run /pdf-with-ocr-text first. Pages are converted 50 at a time and written into the file as they are done, so a long document needs no more memory than a short one; a PDF of more than OFFICE_MAX_PAGES pages is refused (422), since every slide carries its page's picture.",
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  produces: ['pptx'],
  engines: ['qpdf', 'mupdf', 'ghostscript'],
  thread: import.meta.url,
  run: async ({ input, dir, signal, timeoutMs, limits }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ectx);
    // Memory does not grow with the pages (written a batch at a time); the deck's size and time do, a picture per
    // slide (~0.1 MB for a page of text): refused before anything is rendered.
    if (pages.length > limits.officeMaxPages) throw limitExceeded('The number of pages to convert to slides', 'OFFICE_MAX_PAGES', limits.officeMaxPages);
    const path = join(dir, 'presentation.pptx');
    const textless = await pdfToPptx(input.path, pages, path, dir, ectx);
    return { files: [{ path, ext: 'pptx' }], warning: noTextWarning(textless, pages.length) };
  },
});
