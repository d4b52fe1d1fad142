import type { EngineContext } from '../../engines/context.js';
import { outlineEntries } from '../../engines/qpdf-outline.js';
import { type BlockLine, type BlockPage, type MarkdownOptions, type OutlineEntry, thinPage, toMarkdown } from './markdown.js';
import { readPageBatches, selectPages } from './read-pdf.js';

/**
 * The pages of a PDF as /markdown needs them, and its outline. Heading levels are ranked across the document: each
 * page is kept thin (its rows' text, size and place) until all are read.
 */
export async function markdownPages(path: string, selected: number[], ctx: EngineContext): Promise<{ pages: BlockPage<BlockLine>[]; outline: OutlineEntry[] }> {
  const outline = await documentOutline(path, ctx);
  const pages: BlockPage<BlockLine>[] = [];
  await readPageBatches(path, selected, ctx, {}, (batch) => {
    for (const p of batch) pages.push(thinPage(p));
  });
  return { pages, outline };
}

/** The outline's entries; a document whose outline qpdf cannot read has none (its headings are found by size). */
async function documentOutline(path: string, ctx: EngineContext): Promise<OutlineEntry[]> {
  try {
    return await outlineEntries(path, ctx);
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    return [];
  }
}

/** The whole document's Markdown (the benchmark's and tests' shortcut to what /markdown answers). */
export async function readMarkdown(path: string, ctx: EngineContext, opts: MarkdownOptions): Promise<string> {
  const { pages, outline } = await markdownPages(path, await selectPages(path, '1-last', ctx), ctx);
  return toMarkdown(pages, { outline, ...opts });
}
