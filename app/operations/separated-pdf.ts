import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { assemblePages } from '../../engines/qpdf-edit.js';
import { inputError, selectedPages } from '../document/index.js';
import { invalidInput } from '../errors.js';
import { inParallel, openForRendering, splitRuns } from '../render/index.js';
import { num, oneOf, output, pages, text } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';
import { BARCODE_DPI, BLANK_THRESHOLD, blankPages, compileBarcodePattern, pagesBetween, readPageBarcodes, separatorPages } from '../scan/index.js';

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
  check: (f) => {
    if (f.barcode_text !== undefined) compileBarcodePattern(f.barcode_text);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const rctx = { dir, signal, timeoutMs, progress };
    const { boxes } = await openForRendering(input.path, ectx);
    const candidates = selectedPages(fields.pages, boxes.length);
    const barcodes = fields.separator === 'barcode' ? await readPageBarcodes(input.path, boxes, candidates, rctx) : [];
    const separators =
      fields.separator === 'barcode'
        ? separatorPages(barcodes, fields.barcode_text === undefined ? undefined : compileBarcodePattern(fields.barcode_text))
        : await blankPages(input.path, boxes, candidates, fields.threshold, rctx);
    const groups = pagesBetween(boxes.length, separators);
    if (!groups.length) throw invalidInput(`every page is a separator sheet (pages ${separators.join(', ')}), so no document is left`);
    // One qpdf per output, the outputs spread over the cores (the job holds them all: perCore).
    const files = groups.map((_, i) => ({ path: join(dir, `part-${i + 1}.pdf`), name: `${outputName}_${i + 1}.pdf` }));
    await inParallel(
      splitRuns(
        groups.map((_, i) => i),
        availableParallelism(),
      ),
      async (run, _k, runSignal) => {
        for (const i of run.items) await assemblePages([{ path: input.path, pages: groups[i] }], files[i].path, { ...ectx, signal: runSignal });
      },
      signal,
    ).catch((err) => {
      throw inputError(err);
    });
    const json: Record<string, unknown> = { separatorPages: separators };
    if (fields.separator === 'barcode') json.barcodes = barcodes;
    const warning = separators.length
      ? undefined
      : `No separator sheet was found (separator=${fields.separator}${fields.barcode_text !== undefined ? `, barcode_text=${fields.barcode_text}` : ''}): the document comes back whole.`;
    return { files, json, warning };
  },
});
