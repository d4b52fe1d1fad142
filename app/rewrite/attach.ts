import type { EngineContext } from '../../engines/context.js';
import { ReadLimitError, readPdfJson, streamData } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError, isRef, PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';
import { pdfaPart } from './pdfa.js';

export const PDFA_PROHIBITS = 'The input PDF claims conformance to a PDF/A version that prohibits file attachments';

/** A key not yet used in the EmbeddedFiles name tree (qpdf refuses duplicates; the old file stays). */
export function freeKey(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n++) if (!taken.has(`${stem} (${n})${ext}`)) return `${stem} (${n})${ext}`;
}

/** A file embedded in the document's EmbeddedFiles by qpdf; PDF/A-1 and PDF/A-2 inputs are refused. */
export async function attachFile(
  pdf: string,
  attachment: { path: string; name: string; type: string },
  output: string,
  read: { maxBytes: number; maxObjects: number },
  ctx: EngineContext,
): Promise<void> {
  const { json } = await readPdfJson(pdf, ctx, read).catch((err) => {
    throw inputError(err);
  });
  const objects = new PdfObjects(json);
  const meta = objects.catalog['/Metadata'];
  if (isRef(meta)) {
    // Unreadable XMP claims nothing; XMP past MAX_STREAM_MB is refused (422) rather than taken as no claim.
    const xmp = (
      await streamData(pdf, meta.replace(/ R$/, ''), ctx, read).catch((err) => {
        if (err instanceof ReadLimitError) throw inputError(err);
        return Buffer.alloc(0);
      })
    ).toString('utf8');
    const part = pdfaPart(xmp);
    if (part === 1 || part === 2) throw new AppError('invalid_input', PDFA_PROHIBITS);
  }
  const taken = new Set(Object.keys(json.attachments ?? {}).map((k) => pdfText(k)));
  await writePdf(
    pdf,
    output,
    {
      attach: [
        { file: attachment.path, key: freeKey(attachment.name, taken), filename: attachment.name, mimetype: attachment.type || 'application/octet-stream' },
      ],
    },
    ctx,
  );
}
