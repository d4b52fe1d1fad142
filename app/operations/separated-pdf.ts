import { num, oneOf, output, pages, text } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';
import { BARCODE_DPI, BLANK_THRESHOLD, compileBarcodePattern, separateDocument } from '../scan/index.js';

export default operation({
  path: '/separated-pdf',
  tag: 'Assembly and creation',
  summary: 'Split a PDF at separator sheets',
  description: [
    'The document is cut at each separator sheet and the sheets are left out: the pages between two separators become one PDF, named output_1.pdf, output_2.pdf, ... as /split-pdf names them (runs that would be empty, such as two separators in a row, give no file).',
    `separator=blank: a separator is a blank page, measured as /pdf-without-blank-pages does (ink below \`threshold\`, default ${BLANK_THRESHOLD}).`,
    `separator=barcode: a separator is a page with a barcode, read by zbar on the page drawn at ${BARCODE_DPI} dpi (QR Code, Code 128, Code 39, Code 93, EAN-13/8, UPC-A/E, Interleaved 2 of 5, Codabar, DataBar); with \`barcode_text\`, only a barcode whose text the RE2 regular expression finds (anywhere in the text: anchor it with ^ and $; (?i) for case-insensitive) makes a separator.`,
    'Only pages in `pages` can be separators. The answer lists the separator pages in `separatorPages` and, for barcodes, every code read in `barcodes` ([{page, type, text}]). A document without a separator comes back whole, with a warning; one made only of separators is refused with 400.',
  ].join(' '),
  inputs: pdfInput(),
  fields: {
    separator: oneOf(['blank', 'barcode'], 'barcode'),
    barcode_text: text({ min: 1, max: 1000 })
      .optional()
      .meta({ description: "RE2 regular expression a separator barcode's text must contain a match of (default: any barcode)." }),
    threshold: num(0, 1, BLANK_THRESHOLD).meta({
      description: `separator=blank: share of the page (0 to 1) below which a page is blank; default ${BLANK_THRESHOLD}.`,
    }),
    pages: pages(),
    output: output(),
  },
  output: 'files',
  engines: ['mupdf', 'qpdf', 'zbar'],
  cost: perCore,
  thread: import.meta.url,
  check: (f) => {
    if (f.barcode_text !== undefined) compileBarcodePattern(f.barcode_text);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName }) => {
    const pattern = fields.barcode_text === undefined ? undefined : compileBarcodePattern(fields.barcode_text);
    const { paths, separators, barcodes } = await separateDocument(
      input.path,
      { separator: fields.separator, pattern, threshold: fields.threshold, selection: fields.pages },
      { dir, signal, timeoutMs, progress },
    );
    const files = paths.map((path, i) => ({ path, name: `${outputName}_${i + 1}.pdf` }));
    const json: Record<string, unknown> = { separatorPages: separators };
    if (fields.separator === 'barcode') json.barcodes = barcodes;
    const warning = separators.length
      ? undefined
      : `No separator sheet was found (separator=${fields.separator}${fields.barcode_text !== undefined ? `, barcode_text=${fields.barcode_text}` : ''}): the document comes back whole.`;
    return { files, json, warning };
  },
});
