import { join } from 'node:path';
import { PRESETS, previewRedactions, type Redaction, redactionsSchema } from '../redact/index.js';
import { json, output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/pdf-with-redacted-text-preview',
  tag: 'Signing, redaction, watermark',
  summary: 'Mark the text to redact with redaction annotations',
  description:
    `redactions: [{"type": "literal|regex|preset|area", "value": ...}]. literal: the exact text (case-sensitive; any white space matches any white space, line breaks included). regex: an RE2 pattern (no look-around or back-references; (?i) for case-insensitive). preset: one of ${PRESETS.join(', ')}. ` +
    'area: a box on one page, {"page": 2, "x": 72, "y": 100, "width": 200, "height": 40} (also as a JSON string), in PDF points from the lower-left corner of the page as seen (trim box, else crop box, after /Rotate), the coordinates /pdf-with-added-shapes and /pdf-with-added-image take: (x, y) is its lower-left corner. Everything under the box is marked, text or not (images, drawings, scanned pages); a page the document lacks, or a box reaching more than a point past the page (its crop box), is a 400 naming the field; characters outside an area whose font boxes reach into it (applying removes them too) are named in the warning, and so is an area over vector drawings (applying paints over them but does not remove them: send the applied result to /rasterized-pdf if they must not survive). ' +
    'Every match or area becomes a standard /Redact annotation (one quad per line a match covers, the matched text as its comment; an area one rectangle with the text under it as its comment) drawn as a translucent red box; the page content is left as it is. Send the output to /pdf-with-redacted-text-applied to remove the marked content: text, and image pixels under the marks. Text is read as MuPDF reads it: scanned pages need /pdf-with-ocr-text first for literal, regex and preset redactions.',
  inputs: pdfInput(),
  fields: { redactions: json(redactionsSchema), output: output() },
  output: 'file',
  engines: ['qpdf', 'mupdf', 'poppler'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const path = join(dir, 'redaction-preview.pdf');
    const warning = await previewRedactions(input.path, fields.redactions as Redaction[], path, { cwd: dir, signal, timeoutMs }, progress);
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
