import type { EngineContext } from '../../engines/context.js';
import { type BlockLine, type BlockPage, type MarkdownOptions, thinPage, toMarkdown } from './markdown.js';
import { readPageBatches, selectPages } from './read-pdf.js';

/**
 * The pages of a PDF as /markdown needs them. Heading levels are ranked across the document: each page is kept
 * thin (its rows' text, size and place) until all are read.
 */
export async function markdownPages(path: string, selected: number[], ctx: EngineContext): Promise<BlockPage<BlockLine>[]> {
  const pages: BlockPage<BlockLine>[] = [];
  await readPageBatches(path, selected, ctx, {}, (batch) => {
    for (const p of batch) pages.push(thinPage(p));
  });
  return pages;
}

/** The whole document's Markdown (the benchmark's and tests' shortcut to what /markdown answers). */
export async function readMarkdown(path: string, ctx: EngineContext, opts: MarkdownOptions): Promise<string> {
  const pages = await markdownPages(path, await selectPages(path, '1-last', ctx), ctx);
  return toMarkdown(pages, opts);
}
