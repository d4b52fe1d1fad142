import type { EngineContext } from '../../engines/context.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError } from '../document/index.js';

/** The document rewritten by qpdf so that a viewer can show the first page before the rest has arrived. */
export async function linearizePdf(input: string, output: string, ctx: EngineContext): Promise<void> {
  await writePdf(input, output, { linearize: true }, ctx).catch((err) => {
    throw inputError(err);
  });
}
