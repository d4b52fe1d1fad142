import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { addTextLayers, surveyPages } from '../../engines/mupdf-text-layer.js';
import { inputError, readBudgets, selectedPages } from '../document/index.js';
import { LANGUAGE_NAMES, MAX_OCR_PIXELS, OCR_DPI, openForRendering, recognizePages, tesseractLanguages, timed } from '../render/index.js';
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
    const ectx = { cwd: dir, signal, timeoutMs };
    const languages = await tesseractLanguages(fields.languages, ectx);
    const { boxes } = await openForRendering(input.path, ectx);
    const selected = selectedPages(fields.pages, boxes.length);
    const surveys = await timed('survey', () => surveyPages(input.path, selected, ectx)).catch((err) => {
      throw inputError(err);
    });
    const scanned = selected.filter((p) => !surveys.get(p)?.glyphs);
    const path = join(dir, 'ocr.pdf');
    if (!scanned.length) {
      await copyFile(input.path, path);
      return { files: [{ path, name: `${outputName}.pdf` }] };
    }
    const { layers, timedOut } = await recognizePages({ input: input.path, boxes, pages: scanned, surveys, languages }, { dir, signal, timeoutMs, progress });
    if (layers.length) {
      await timed('layer', () => addTextLayers(input.path, path, layers, ectx)).catch((err) => {
        throw inputError(err);
      });
    } else {
      await copyFile(input.path, path);
    }
    const warning = timedOut.length
      ? `Page${timedOut.length > 1 ? 's' : ''} ${timedOut.join(', ')} took longer than ${readBudgets().ocrPageMs / 1000} s (OCR_PAGE_SECONDS) to recognise and ${timedOut.length > 1 ? 'were' : 'was'} left without text.`
      : undefined;
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
