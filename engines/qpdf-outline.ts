import type { EngineContext } from './context.js';
import { run } from './run.js';

/** One entry of a PDF's outline (bookmarks): its title, depth (1 at the top) and page (1-based, when it has one). */
export interface OutlineEntry {
  title: string;
  level: number;
  page?: number;
}

interface QpdfOutline {
  title?: string;
  destpageposfrom1?: number | null;
  kids?: QpdfOutline[];
}

/** The outline in document order (qpdf --json's outlines), at most `max` entries. */
export async function outlineEntries(input: string, ctx: EngineContext, max = 5000): Promise<OutlineEntry[]> {
  // qpdf exits 3 when it succeeded with warnings (a damaged file it could recover).
  const r = await run('qpdf', ['--json', '--json-key=outlines', '--json-stream-data=none', '--', input], { ...ctx, okExitCodes: [3], maxBuffer: 64 << 20 });
  const out: OutlineEntry[] = [];
  const walk = (items: QpdfOutline[] | undefined, level: number) => {
    for (const it of items ?? []) {
      if (out.length >= max) return;
      const page = it.destpageposfrom1 ?? undefined;
      if (typeof it.title === 'string' && it.title.trim()) out.push({ title: it.title.trim(), level, ...(page ? { page } : {}) });
      walk(it.kids, level + 1);
    }
  };
  walk((JSON.parse(r.stdout) as { outlines?: QpdfOutline[] }).outlines, 1);
  return out;
}
