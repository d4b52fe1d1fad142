import { join } from 'node:path';
import { z } from 'zod';
import { applyRedactionMarks } from '../redact/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

/** `rgb_color`: three integers 0-255, comma-separated ("0, 0, 0") or a JSON array. */
export const rgbColor = z.preprocess(
  (v) => {
    const s = Array.isArray(v) && v.length === 1 ? v[0] : v;
    const parts = Array.isArray(s) ? s.map(String) : typeof s === 'string' ? s.split(',') : [String(s)];
    const n = parts.map((p) => (/^\s*\d{1,3}\s*$/.test(p) ? Number(p) : NaN));
    return n.length === 3 && n.every((x) => x >= 0 && x <= 255) ? n : v;
  },
  z.tuple([z.number(), z.number(), z.number()]),
);

export default operation({
  path: '/pdf-with-redacted-text-applied',
  tag: 'Signing, redaction, watermark',
  summary: 'Apply the redaction annotations of a preview: remove the content for good',
  description:
    'The input is the output of /pdf-with-redacted-text-preview (any PDF with /Redact annotations is accepted). Under each annotation (a matched text or an area) MuPDF removes the text from the content streams (every character whose font box touches it) and replaces image pixels; vector art is left as it is, only painted over (MuPDF 1.21). The areas are then painted in rgb_color ("r, g, b", 0-255, default black) and the annotations removed. Document information entries and an XMP packet that contain a redacted text are removed too; the file is rewritten whole, so no earlier revision or unused object keeps the removed content. An input without redaction annotations is refused (400).',
  inputs: pdfInput('The preview PDF'),
  fields: { rgb_color: rgbColor.optional().default([0, 0, 0]).meta({ type: 'string', default: '0, 0, 0' }), output: output() },
  output: 'file',
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const path = join(dir, 'redacted.pdf');
    await applyRedactionMarks(input.path, path, fields.rgb_color as [number, number, number], { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
