import type { EngineContext } from '../../engines/context.js';
import type { ReadLimits } from '../../engines/qpdf.js';
import { arrangePages, type PageSource } from '../../engines/qpdf-edit.js';
import { pruneDroppedPages } from './prune.js';

export type { PageSource };

/**
 * The pages of `sources`, in order, with `primary` kept as qpdf's primary file: its outline, links, named
 * destinations, form fields and metadata stay for the pages kept, and those that lead only to pages left out are
 * pruned. Consecutive pages of one file go to qpdf as one run.
 */
export async function arrangePdf(primary: string, sources: PageSource[], output: string, limits: ReadLimits, ctx: EngineContext): Promise<void> {
  const runs = sources.reduce<PageSource[]>((runs, s) => {
    const last = runs[runs.length - 1];
    if (last?.path === s.path) last.pages.push(...s.pages);
    else runs.push({ path: s.path, pages: [...s.pages] });
    return runs;
  }, []);
  const arranged = `${output}.arranged.pdf`;
  await arrangePages(primary, runs, arranged, ctx);
  await pruneDroppedPages(arranged, output, limits, ctx);
}

/** The pages of `input` in `order` (1-based; repeats allowed, pages not listed dropped), see arrangePdf. */
export const reorderPdf = (input: string, order: number[], output: string, limits: ReadLimits, ctx: EngineContext) =>
  arrangePdf(input, [{ path: input, pages: order }], output, limits, ctx);
