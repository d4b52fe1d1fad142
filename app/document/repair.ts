import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, invalidInput } from '../errors.js';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { isPdfHeader } from './pdf-access.js';
import { countPages, isReadFailure } from './read-chain.js';
import { whyUnreadable } from './unreadable.js';

/**
 * Repair before refusal. A job runs on its inputs as they are; when it fails because an input PDF could not be
 * read (a 400 carrying the engines' failures, or an engine's failure itself), each PDF input is repaired once:
 * qpdf writes it again (cross-reference table rebuilt, streams recovered), else Ghostscript re-writes it. The
 * job then runs again on the repaired copies and says so in a warning. When nothing could be repaired, or the
 * repaired copy fails too, the 400 says why, in words (whyUnreadable).
 */
export async function withRepairedInputs<T>(pdfs: string[], attempt: (pathOf: (original: string) => string) => Promise<T>, ctx: EngineContext): Promise<{ value: T; warning?: string }> {
  try {
    return { value: await attempt((p) => p) };
  } catch (err) {
    const failures = unreadable(err);
    if (!failures || !pdfs.length) throw err;
    const repaired = new Map<string, string>();
    for (const [i, pdf] of pdfs.entries()) {
      const copy = await repairPdf(pdf, join(ctx.cwd, `repaired-${i + 1}.pdf`), ctx, failures);
      if (copy) repaired.set(pdf, copy);
    }
    if (!repaired.size) throw await explained(pdfs, failures, ctx);
    try {
      const value = await attempt((p) => repaired.get(p) ?? p);
      const tools = [...new Set([...repaired.values()].map((p) => (p.endsWith('.gs.pdf') ? 'Ghostscript' : 'qpdf')))];
      return { value, warning: `The input PDF was damaged and could not be read as it is: it was repaired (rewritten by ${tools.join(' and ')}) and the repaired copy was processed. Check the result against the original.` };
    } catch (again) {
      const more = unreadable(again);
      if (!more) throw again;
      throw await explained(pdfs, [...failures, ...more], ctx);
    }
  }
}

/** The engines' failures behind an error that means "this input cannot be read", or null for any other error. */
function unreadable(err: unknown): EngineError[] | null {
  if (isReadFailure(err) && !err.details.timedOut) return [err];
  if (err instanceof AppError && err.code === 'invalid_input' && Array.isArray(err.cause) && err.cause.every((c) => c instanceof EngineError)) return err.cause as EngineError[];
  return null;
}

/** The 400 naming why the first input no engine could read is unreadable. */
async function explained(pdfs: string[], failures: EngineError[], ctx: EngineContext): Promise<AppError> {
  return invalidInput(await whyUnreadable(pdfs[0], failures, ctx));
}

/**
 * A repaired copy of `input` at `output` (qpdf) or `output` with .gs.pdf (Ghostscript) that the page chain can
 * count, or null. Only files with a PDF header: Ghostscript "repairs" an empty or foreign file into a blank page.
 */
async function repairPdf(input: string, output: string, ctx: EngineContext, failures: EngineError[]): Promise<string | null> {
  const head = Buffer.alloc(1024);
  const fd = await open(input, 'r');
  const { bytesRead } = await fd.read(head, 0, head.length, 0).finally(() => fd.close());
  if (!isPdfHeader(head.subarray(0, bytesRead))) return null;
  const attempts: [string, () => Promise<unknown>][] = [
    [output, () => writePdf(input, output, {}, ctx)],
    [output.replace(/\.pdf$/, '.gs.pdf'), async () => rewritePdf(input, output.replace(/\.pdf$/, '.gs.pdf'), {}, { ...ctx, pages: await countPages(input, ctx).catch(() => undefined) })],
  ];
  for (const [copy, write] of attempts) {
    try {
      await write();
      await countPages(copy, ctx);
      return copy;
    } catch (err) {
      if (!isReadFailure(err) && !(err instanceof AppError)) throw err;
      if (err instanceof EngineError) failures.push(err);
    }
  }
  return null;
}
