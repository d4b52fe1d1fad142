import type { EngineContext } from '../../engines/context.js';
import { applyRedactions } from '../../engines/mupdf-redact.js';
import { inputError, selectPages } from '../document/index.js';
import { AppError } from '../errors.js';

/** The ordering rule of the spec (section 3): the input of this step is the preview's output. */
export const NO_MARKS =
  'The input PDF has no redaction annotations to apply. Send the document to /pdf-with-redacted-text-preview first and apply its output here.';

/** The /Redact annotations of a preview applied by MuPDF, their areas painted in `color`; refused without any. */
export async function applyRedactionMarks(input: string, output: string, color: [number, number, number], ctx: EngineContext): Promise<void> {
  await selectPages(input, '1-last', ctx);
  const applied = await applyRedactions(input, output, color, ctx).catch((err) => {
    throw inputError(err);
  });
  if (!applied.areas) throw new AppError('invalid_input', NO_MARKS);
}
