import type { EngineContext } from '../../engines/context.js';
import { type DrawnPath, drawnPaths } from '../../engines/mupdf-paths.js';
import { outlineEntries } from '../../engines/qpdf-outline.js';
import { isListMarker } from './layout.js';
import { type BlockLine, type BlockPage, type MarkdownOptions, type OutlineEntry, thinPage, toMarkdown } from './markdown.js';
import { pagesTime, unlessUnreadable } from './read-chain.js';
import { readKeptPages, selectPages } from './read-pdf.js';

/**
 * The pages of a PDF as /markdown needs them, and its outline. Heading levels are ranked across the document: each
 * page is kept thin (its rows' text, size and place) until all are read.
 */
export async function markdownPages(path: string, selected: number[], ctx: EngineContext): Promise<{ pages: BlockPage<BlockLine>[]; outline: OutlineEntry[] }> {
  const outline = await documentOutline(path, ctx);
  const pages: BlockPage<BlockLine>[] = [];
  await readKeptPages(path, selected, ctx, {}, thinPage, (batch) => {
    for (const p of batch) pages.push(p);
  });
  await markBullets(path, pages, ctx);
  return { pages, outline };
}

/**
 * Bullets drawn as shapes, with no character (Chromium draws a list's discs and circles as paths): a small shape
 * just before the start of a row, within its height, makes the row a list item ("•" before its words). Only pages
 * with two rows in a row set in from the page's edge alike, by a list's indent (up to 8 em; a paragraph indents
 * one row, a column starts further in) are traced, in one MuPDF trace; a page that cannot be traced keeps its rows
 * as they are.
 */
async function markBullets(path: string, pages: BlockPage<BlockLine>[], ctx: EngineContext): Promise<void> {
  const start = (l: BlockLine) => (l.rtl ? -l.box.x1 : l.box.x0);
  const rows = (p: BlockPage<BlockLine>) => p.items.flatMap((it) => (it.kind === 'line' && !it.line.vertical ? [it.line] : []));
  const indented = pages.filter((p) => {
    const ls = rows(p);
    // The edge rows of each direction start from (a right-to-left row starts at its right end).
    const edge = (rtl: boolean) => Math.min(...ls.filter((l) => !!l.rtl === rtl).map(start));
    const edges = [edge(false), edge(true)];
    // Set in by a list's indent, not by a column's width.
    const inset = (l: BlockLine) => start(l) > edges[+!!l.rtl] + 0.8 * l.size && start(l) < edges[+!!l.rtl] + 8 * l.size;
    return ls.some((l, i) => i > 0 && inset(l) && Math.abs(start(l) - start(ls[i - 1])) < 1);
  });
  if (!indented.length) return;
  const paths = await drawnPaths(
    path,
    indented.map((p) => p.page),
    pagesTime(ctx, indented.length),
  ).catch(unlessUnreadable([] as DrawnPath[]));
  const byPage = new Map<number, DrawnPath[]>();
  for (const d of paths) (byPage.get(d.page) ?? byPage.set(d.page, []).get(d.page)!).push(d);
  for (const p of indented) {
    const shapes = byPage.get(p.page) ?? [];
    const marks = new Map<BlockLine, DrawnPath>();
    for (const l of rows(p)) {
      if (!l.words.length || isListMarker(l.words[0].text)) continue;
      const em = l.size;
      const mark = shapes.find((d) => {
        const [w, h] = [d.x1 - d.x0, d.y1 - d.y0];
        const gap = l.rtl ? d.x0 - l.box.x1 : l.box.x0 - d.x1;
        const middle = (d.y0 + d.y1) / 2;
        return w > 0.1 * em && h > 0.1 * em && w < 0.5 * em && h < 0.5 * em && gap > 0 && gap < 2 * em && middle > l.box.y0 && middle < l.box.y1;
      });
      if (mark) marks.set(l, mark);
    }
    // Bullets come in columns: a shape no other one stands above or below (an icon, a radio button) is no list's.
    const all = [...marks.values()];
    for (const [l, d] of marks) {
      if (!all.some((o) => o !== d && Math.abs(o.x0 - d.x0) < 0.5 && Math.abs(o.x1 - o.x0 - (d.x1 - d.x0)) < 0.5)) continue;
      l.words = [{ text: '•' }, ...l.words];
      l.text = `• ${l.text}`;
    }
  }
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
