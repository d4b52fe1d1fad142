import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { markRedactions } from '../../engines/mupdf-redact.js';
import { decodedText, inputError, selectPages } from '../document/index.js';
import { json, output } from '../http/fields.js';
import { operation, pdfInput } from '../http/operation.js';
import { findMarks, PRESETS, redactionsSchema } from '../redact/index.js';

export default operation({
  path: '/pdf-with-redacted-text-preview',
  tag: 'Signing, redaction, watermark',
  summary: 'Mark the text to redact with redaction annotations',
  description:
    `redactions: [{"type": "literal|regex|preset", "value": "..."}]. literal: the exact text (case-sensitive; any white space matches any white space, line breaks included). regex: an RE2 pattern (no look-around or back-references; (?i) for case-insensitive). preset: one of ${PRESETS.join(', ')}. ` +
    'Every match becomes a standard /Redact annotation (one quad per line it covers, the matched text as its comment) drawn as a translucent red box; the page content is left as it is. Send the output to /pdf-with-redacted-text-applied to remove the marked content. Text is read as MuPDF reads it: scanned pages need /pdf-with-ocr-text first.',
  inputs: pdfInput(),
  fields: { redactions: json(redactionsSchema), output: output() },
  output: 'file',
  engines: ['qpdf', 'mupdf'],
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ctx);
    const stext = await decodedText(input.path, pages, ctx).catch((err) => {
      throw inputError(err);
    });
    progress(0.5);
    const plan = stext.map((page) => ({ page: page.page, marks: findMarks(page, fields.redactions) }));
    const path = join(dir, 'redaction-preview.pdf');
    const name = `${outputName}.pdf`;
    if (!plan.some((p) => p.marks.length)) {
      await copyFile(input.path, path);
      const textless = stext.every((p) => !p.lines.length);
      return {
        files: [{ path, name }],
        warning: textless
          ? 'No text was found in this document: it may be scanned images. Run /pdf-with-ocr-text first, then preview the redactions.'
          : 'Nothing in the document matched the redactions: the output has no redaction marks.',
      };
    }
    await markRedactions(input.path, path, plan, ctx).catch((err) => {
      throw inputError(err);
    });
    return { files: [{ path, name }] };
  },
});
