import { join } from 'node:path';
import { inputError, openPdf } from '../document/index.js';
import { AppError } from '../errors.js';
import { onOff, output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { sanitizePdf } from '../rewrite/index.js';

export default operation({
  path: '/sanitized-pdf',
  tag: 'Security',
  summary: 'Remove active and hidden content from a PDF',
  description:
    'Removes what a reader may run, open, send or show without the user asking: JavaScript (document scripts, open action, additional actions of the document, pages, annotations and fields, link and button actions), launch, submit-form, import-data, remote and embedded go-to actions, viewer commands other than page navigation, every additional action and any open action other than a go-to, rich media, screen, movie, sound and 3D annotations, embedded files (attachments, file attachment annotations, associated files, portfolios), XFA forms, thumbnails, and optional content hidden in the default view (its page content, XObjects and annotations). ' +
    '`remove_links=on` also removes links to web pages (URI actions; kept by default), `remove_metadata=on` the XMP metadata, PieceInfo and the Info dictionary. ' +
    'qpdf writes the document again with only the objects still in use (earlier revisions are not kept); pages, text, form fields and other links stay. ' +
    'The JSON answer adds `removed`: one `{kind, count}` per kind of thing removed (empty when the PDF was clean). ' +
    'A signed PDF is refused (400): sanitizing changes the bytes its signatures cover, so they would no longer verify; with `remove_signatures=on` it is sanitized and its signature values, certification and validation data are removed (kind `signature`).',
  inputs: pdfInput(),
  fields: {
    remove_links: onOff(false),
    remove_metadata: onOff(false),
    remove_signatures: onOff(false),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ input, fields, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    await openPdf(input.path, ctx); // 401 for a password-protected file, 400 for a broken one
    const path = join(dir, 'sanitized.pdf');
    const result = await sanitizePdf(
      input.path,
      path,
      { removeLinks: fields.remove_links, removeMetadata: fields.remove_metadata, removeSignatures: fields.remove_signatures },
      ctx,
      { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects },
      (n) => {
        if (!fields.remove_signatures)
          throw new AppError(
            'invalid_input',
            `This PDF is signed (${n} signature${n > 1 ? 's' : ''}): sanitizing changes the bytes a signature covers, so it would no longer verify. Send remove_signatures=on to sanitize it anyway (the signatures are removed), or check them first with /pdf-signatures.`,
          );
      },
    ).catch((err) => {
      throw inputError(err);
    });
    const warning = result.signatures
      ? `The input was signed: its ${result.signatures} signature${result.signatures > 1 ? 's were' : ' was'} removed, since sanitizing changes the signed bytes.`
      : undefined;
    return { files: [{ path, name: `${outputName}.pdf` }], json: { removed: result.removed }, warning };
  },
});
