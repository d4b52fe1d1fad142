import { join } from 'node:path';
import { ReadLimitError, readPdfJson, streamData } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError, PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';
import { output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import { pdfaPart } from '../rewrite/index.js';

export const PDFA_PROHIBITS = 'The input PDF claims conformance to a PDF/A version that prohibits file attachments';

/** A key not yet used in the EmbeddedFiles name tree (qpdf refuses duplicates; the old file stays). */
export function freeKey(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n++) if (!taken.has(`${stem} (${n})${ext}`)) return `${stem} (${n})${ext}`;
}

export default operation({
  path: '/pdf-with-added-attachment',
  tag: 'Content insertion',
  summary: 'Embed a file in a PDF',
  description:
    "The file is added to the document's EmbeddedFiles with its name and MIME type. PDF/A-1 and PDF/A-2 inputs are refused (those parts prohibit attachments); PDF/A-3 allows them.",
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    file_to_attach: { idField: 'id_to_attach', kind: 'any', description: 'The file to embed' },
  },
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
    const pdf = inputs.file[0];
    const attachment = inputs.file_to_attach[0];
    const { json } = await readPdfJson(pdf.path, ctx, read).catch((err) => {
      throw inputError(err);
    });
    const objects = new PdfObjects(json);
    const meta = objects.catalog['/Metadata'];
    if (typeof meta === 'string' && /^\d+ \d+ R$/.test(meta)) {
      // Unreadable XMP claims nothing; XMP past MAX_STREAM_MB is refused (422) rather than taken as no claim.
      const xmp = (
        await streamData(pdf.path, meta.replace(/ R$/, ''), ctx, read).catch((err) => {
          if (err instanceof ReadLimitError) throw inputError(err);
          return Buffer.alloc(0);
        })
      ).toString('utf8');
      const part = pdfaPart(xmp);
      if (part === 1 || part === 2) throw new AppError('invalid_input', PDFA_PROHIBITS);
    }
    const taken = new Set(Object.keys(json.attachments ?? {}).map((k) => pdfText(k)));
    const path = join(dir, 'attached.pdf');
    await writePdf(
      pdf.path,
      path,
      {
        attach: [
          { file: attachment.path, key: freeKey(attachment.name, taken), filename: attachment.name, mimetype: attachment.type || 'application/octet-stream' },
        ],
      },
      ctx,
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
