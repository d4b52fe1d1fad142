import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { cleanPdf } from '../../engines/mupdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { AppError, invalidInput, storageError, TEXT } from '../errors.js';
import { isPdfHeader, readableWithoutPassword, readPdfHead } from './pdf-access.js';
import { countPages, engineNames, isReadFailure, readFailuresOf, withinPageBudget } from './read-chain.js';
import { andList, whyUnreadable } from './unreadable.js';

/**
 * Repair before refusal. A job runs on its inputs as they are; when it fails because an input PDF could not be
 * read (a 400 carrying the engines' failures, or an engine's failure itself), each PDF input is repaired once:
 * qpdf writes it again (cross-reference table rebuilt, streams recovered), else MuPDF, else Ghostscript re-writes it. The
 * job then runs again on the repaired copies and says so in a warning. When nothing could be repaired, or the
 * repaired copy fails too, the 400 says why, in words (whyUnreadable), unless the operation said so itself.
 */
export async function withRepairedInputs<T>(
  pdfs: string[],
  attempt: (pathOf: (original: string) => string) => Promise<T>,
  ctx: EngineContext,
  opts: { writesPdf: (value: T) => boolean },
): Promise<{ value: T; warning?: string }> {
  try {
    return { value: await attempt((p) => p) };
  } catch (err) {
    // A full disk is not a damaged file: repairing would only write more, and then blame the input.
    if (storageError(err)) throw err;
    // Only the plain "password protected" of a read: an operation that changes security says more, and needs the password.
    if (err instanceof AppError && err.code === 'password' && err.message === TEXT.password)
      return withoutAttachmentEncryption(pdfs, attempt, ctx, err, opts.writesPdf);
    const failures = readFailuresOf(err);
    if (!failures || !pdfs.length) throw err;
    // Only files with a PDF header: Ghostscript "repairs" an empty or foreign file into a blank page.
    const repairable = [];
    for (const pdf of pdfs) if (isPdfHeader(await readPdfHead(pdf))) repairable.push(pdf);
    let retried = false;
    // qpdf's copy first (it keeps the document as it is); when the job fails on it too, MuPDF's, then Ghostscript's re-written one.
    for (const repairer of REPAIRERS) {
      const repaired = new Map<string, string>();
      for (const [i, pdf] of repairable.entries()) {
        const copy = await repairPdf(pdf, join(ctx.cwd, `repaired-${repairer.name}-${i + 1}.pdf`), repairer, ctx, failures);
        if (copy) repaired.set(pdf, copy);
      }
      if (!repaired.size) continue;
      try {
        const value = await attempt((p) => repaired.get(p) ?? p);
        return {
          value,
          warning: `The input PDF was damaged and could not be read as it is: it was repaired (rewritten by ${repairer.name}) and the repaired copy was processed. Check the result against the original.`,
        };
      } catch (again) {
        const more = readFailuresOf(again);
        if (!more) throw again;
        failures.push(...more);
        retried = true;
      }
    }
    // An operation's own words (what it could not do, and what to send instead) say more than a reason found here,
    // and a file the readers can count the pages of is not unreadable: what failed was the operation's own work.
    if (err instanceof AppError && err.message !== TEXT.invalidInput) throw err;
    for (const pdf of pdfs)
      if (
        !(await countPages(pdf, ctx).then(
          () => true,
          () => false,
        ))
      )
        throw invalidInput(await whyUnreadable(pdf, failures, ctx));
    // Without a word of its own the refusal says which engines failed (their messages hold the job's paths).
    if (err instanceof EngineError || (err instanceof AppError && err.message === TEXT.invalidInput))
      throw invalidInput(`its pages can be read, but ${andList(engineNames(failures))} failed on it${retried ? ', and on its repaired copies' : ''}`);
    throw err;
  }
}

/**
 * A 401 for an input whose only encryption is of its attachments: the pages open without a password in any
 * reader, so the job runs again on copies without the encryption (readableWithoutPassword), with its warning.
 */
async function withoutAttachmentEncryption<T>(
  pdfs: string[],
  attempt: (pathOf: (original: string) => string) => Promise<T>,
  ctx: EngineContext,
  refusal: AppError,
  writesPdf: (value: T) => boolean,
): Promise<{ value: T; warning?: string }> {
  const copies = new Map<string, string>();
  let warning = '';
  for (const pdf of pdfs) {
    const readable = await readableWithoutPassword(pdf, ctx);
    if (!readable) continue;
    copies.set(pdf, readable.path);
    warning = readable.warning;
  }
  if (!copies.size) throw refusal;
  const value = await attempt((p) => copies.get(p) ?? p);
  // A new PDF made from the copy would carry the attachments' encrypted bytes without their key: lost for good.
  if (writesPdf(value))
    throw new AppError(
      'password',
      `${TEXT.password} Only its embedded files (attachments) are encrypted, and a new PDF written without their password would lose them: decrypt it first with /decrypted-pdf and its current_open_password.`,
    );
  return { value, warning };
}

interface Repairer {
  name: string;
  write: (input: string, output: string, ctx: EngineContext) => Promise<unknown>;
}

const REPAIRERS: Repairer[] = [
  { name: 'qpdf', write: (input, output, ctx) => writePdf(input, output, {}, ctx) },
  // MuPDF's repair keeps the document's objects (forms, outlines) where Ghostscript's re-interpretation drops them.
  { name: 'MuPDF', write: (input, output, ctx) => cleanPdf(input, output, ctx) },
  // Without a page count qpdf agrees with, any page at all (rewritePdf).
  {
    name: 'Ghostscript',
    write: async (input, output, ctx) => {
      const pages = await countPages(input, ctx).catch(() => undefined);
      return withinPageBudget('Repairing', 'writePageMs', ctx, (c) => rewritePdf(input, output, {}, { ...c, pages }));
    },
  },
];

/** A copy of `input` repaired by `repairer` at `output` that the page chain can count, or null. */
async function repairPdf(input: string, output: string, repairer: Repairer, ctx: EngineContext, failures: EngineError[]): Promise<string | null> {
  try {
    await repairer.write(input, output, ctx);
    await countPages(output, ctx);
    return output;
  } catch (err) {
    if (!isReadFailure(err) && !readFailuresOf(err)) throw err;
    failures.push(...(readFailuresOf(err) ?? (err instanceof EngineError ? [err] : [])));
    return null;
  }
}
