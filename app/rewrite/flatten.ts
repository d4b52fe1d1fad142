import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { type FlattenOptions, flattenPdf, generateAppearances } from '../../engines/ghostscript-flatten.js';
import { inputError, openPdf } from '../document/index.js';

export type { FlattenOptions };

/** Flattening: open (401 / 400), fresh field appearances from qpdf when asked, then one Ghostscript pdfwrite pass. */
export async function flattenDocument(
  input: string,
  output: string,
  opts: FlattenOptions,
  appearances: boolean,
  dir: string,
  ctx: EngineContext,
): Promise<void> {
  const { pageCount } = await openPdf(input, ctx);
  let source = input;
  if (appearances) {
    source = join(dir, 'appearances.pdf');
    await generateAppearances(input, source, ctx).catch((err) => {
      throw inputError(err);
    });
  }
  await flattenPdf(source, output, opts, { ...ctx, pages: pageCount }).catch((err) => {
    throw inputError(err);
  });
}
