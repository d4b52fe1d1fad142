import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import type { ReadLimits } from '../../engines/qpdf.js';
import { arrangePages, assemblePages, type PageSource, splitPages } from '../../engines/qpdf-edit.js';
import { openPdf, resolvePages } from '../document/index.js';
import { pruneDroppedPages } from './prune.js';

export type { PageSource };

/**
 * The pages of `sources`, in order, with `primary` kept as qpdf's primary file: its outline, links, named
 * destinations, form fields and metadata stay for the pages kept, and those that lead only to pages left out are
 * pruned. Consecutive pages of one file go to qpdf as one run.
 */
export async function arrangePdf(
  primary: string,
  sources: PageSource[],
  output: string,
  limits: ReadLimits,
  ctx: EngineContext,
  primaryPages?: number,
): Promise<void> {
  const runs = sources.reduce<PageSource[]>((runs, s) => {
    const last = runs[runs.length - 1];
    if (last?.path === s.path) last.pages.push(...s.pages);
    else runs.push({ path: s.path, pages: [...s.pages] });
    return runs;
  }, []);
  // With every page of the primary kept, nothing leads to a page left out: the prune pass (a qpdf JSON read and a
  // rewrite of the whole file, 2.5x qpdf's own reordering at 2,010 pages) has nothing to do.
  const kept = new Set(sources.filter((s) => s.path === primary).flatMap((s) => s.pages));
  if (primaryPages !== undefined && kept.size === primaryPages) return arrangePages(primary, runs, output, ctx);
  const arranged = `${output}.arranged.pdf`;
  await arrangePages(primary, runs, arranged, ctx);
  await pruneDroppedPages(arranged, output, limits, ctx);
}

/** The pages of `input` (of `pageCount` pages) in `order` (1-based; repeats allowed, pages not listed dropped), see arrangePdf. */
export const reorderPdf = (input: string, order: number[], output: string, limits: ReadLimits, ctx: EngineContext, pageCount?: number) =>
  arrangePdf(input, [{ path: input, pages: order }], output, limits, ctx, pageCount);

/** The page grammar of merge and split: ranges, reversed ranges, even and odd. */
export const ORDER_GRAMMAR = { reverse: true, parity: true };
const GRAMMAR = ORDER_GRAMMAR;
const INSPECT_AT_ONCE = 4;

/** One new PDF of the `pages` selection (the page grammar) of each input, in order; a file may come more than once. */
export async function mergePdfs(parts: { path: string; pages: string }[], output: string, ctx: EngineContext): Promise<void> {
  // One inspection per distinct file (even when a file is merged twice), a few at a time.
  const paths = [...new Set(parts.map((f) => f.path))];
  const counts = new Map<string, number>();
  for (let i = 0; i < paths.length; i += INSPECT_AT_ONCE) {
    await Promise.all(paths.slice(i, i + INSPECT_AT_ONCE).map(async (p) => counts.set(p, (await openPdf(p, ctx)).pageCount)));
  }
  const sources = parts.map((f) => ({ path: f.path, pages: resolvePages(f.pages, counts.get(f.path)!, GRAMMAR) }));
  await assemblePages(sources, output, ctx);
}

/**
 * Groups of equal size go through one qpdf run (`--pages` then `--split-pages=size`): one single-page
 * PDF per page of a 1000-page file is one process, and any pages[] list costs one run per distinct size.
 */
export function runsBySize(groups: number[][]): { size: number; members: number[] }[] {
  const bySize = new Map<number, number[]>();
  groups.forEach((g, i) => bySize.set(g.length, [...(bySize.get(g.length) ?? []), i]));
  return [...bySize].map(([size, members]) => ({ size, members }));
}

/** One PDF per `specs` entry (the page grammar), or per page without specs; the written files in that order. */
export async function splitPdf(input: string, specs: string[] | undefined, dir: string, progress: (f: number) => void, ctx: EngineContext): Promise<string[]> {
  const { pageCount } = await openPdf(input, ctx);
  const groups = specs ? specs.map((spec) => resolvePages(spec, pageCount, GRAMMAR)) : Array.from({ length: pageCount }, (_, i) => [i + 1]);
  const paths: string[] = new Array(groups.length);
  const runs = runsBySize(groups);
  for (const [r, { size, members }] of runs.entries()) {
    const sub = join(dir, `split-${r}`);
    await mkdir(sub);
    const parts = await splitPages({ path: input, pages: members.flatMap((m) => groups[m]) }, join(sub, 'part-%d.pdf'), size, ctx);
    members.forEach((m, k) => (paths[m] = parts[k]));
    progress((r + 1) / runs.length);
  }
  return paths;
}
