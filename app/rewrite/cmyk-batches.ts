import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { type PdfwriteOptions, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { readPdfJson } from '../../engines/qpdf.js';
import { arrangePages, type PageSource } from '../../engines/qpdf-edit.js';
import { Destinations, inputError, isRef, PdfObjects } from '../document/index.js';
import { updateObjects } from './standards.js';

type Dict = Record<string, unknown>;

/**
 * Pages Ghostscript converts to CMYK in one run. Ghostscript 10.00's pdfwrite keeps ~1.4 MB for every page it
 * converts to CMYK until it ends, whatever the page holds (152 pages of text: 262 MB, against 36-46 MB converting
 * to RGB or grey; 2,010 pages: +3.1 GB), so longer documents are written in runs of this many pages (~320 MB each)
 * and joined with qpdf. Each run embeds its own subsets of the fonts it uses.
 */
export const CMYK_BATCH_PAGES = 200;

/**
 * `rewritePdf` for any length: a CMYK conversion of more than `batchPages` pages is written in runs of pages
 * joined with qpdf (the first run's catalog, Info and OutputIntent kept). A run drops the outline entries and
 * links that lead to pages outside it, so the runs write no outline; the input's outline is rebuilt over the
 * joined pages, and the links that led across runs are put back, both pointing at the same places as before.
 */
export async function rewriteAnyLength(
  input: string,
  output: string,
  opts: PdfwriteOptions,
  ctx: EngineContext & { pages: number },
  batchPages = CMYK_BATCH_PAGES,
): Promise<{ stderr: string }> {
  if (opts.colorConversion !== 'CMYK' || ctx.pages <= batchPages) return rewritePdf(input, output, opts, ctx);
  const parts: PageSource[] = [];
  let stderr = '';
  try {
    for (let first = 1; first <= ctx.pages; first += batchPages) {
      const last = Math.min(ctx.pages, first + batchPages - 1);
      const path = join(ctx.cwd, `cmyk-${first}.pdf`);
      parts.push({ path, pages: Array.from({ length: last - first + 1 }, (_, i) => i + 1) });
      const r = await rewritePdf(input, path, { ...opts, dropOutlines: true, firstPage: first, lastPage: last }, { ...ctx, pages: last - first + 1 });
      stderr += r.stderr;
    }
    const joined = join(ctx.cwd, 'cmyk-joined.pdf');
    await arrangePages(parts[0].path, parts, joined, ctx);
    await updateObjects(joined, output, await acrossBatches(input, joined, ctx), ctx);
    await rm(joined, { force: true });
  } finally {
    for (const p of parts) await rm(p.path, { force: true });
  }
  return { stderr };
}

/** The outline of `input` and its links between pages, as qpdf JSON updates of `joined` (the same pages, written in runs). */
async function acrossBatches(input: string, joined: string, ctx: EngineContext): Promise<Record<string, unknown>> {
  const [from, to] = await Promise.all([readPdfJson(input, ctx), readPdfJson(joined, ctx)]).catch((err) => {
    throw inputError(err);
  });
  const src = new PdfObjects(from.json);
  const out = new PdfObjects(to.json);
  const dests = new Destinations(src);
  const srcPages = (from.json.pages ?? []).map((p) => p.object);
  const outPages = (to.json.pages ?? []).map((p) => p.object);
  const index = new Map(srcPages.map((ref, i) => [ref, i]));
  let next = (to.json.qpdf?.[0].maxobjectid ?? 0) + 1;
  const newRef = () => `${next++} 0 R`;
  const updates: Record<string, unknown> = {};

  /** `v`'s destination pointing at the joined page at the same place, with its view (/XYZ left top zoom...). */
  const moved = (v: unknown): unknown[] | null => {
    const d = dests.explicit(v);
    const i = d && isRef(d[0]) ? index.get(d[0]) : undefined;
    if (!d || i === undefined || !outPages[i]) return null;
    return [outPages[i], ...d.slice(1).map((x) => src.resolve(x))];
  };
  const direct = (v: unknown) => {
    const r = src.resolve(v);
    return typeof r === 'object' && r !== null && !Array.isArray(r) ? undefined : Array.isArray(r) ? r.map((x) => src.resolve(x)) : r;
  };

  // The outline, entry for entry: title, colour, style, open or closed, and where it leads.
  const catalog: Dict = { ...out.catalog };
  delete catalog['/Outlines'];
  const root = src.dict(src.catalog['/Outlines']);
  const seen = new Set<string>();
  let entries = 0;
  const copy = (first: unknown, parent: string, depth: number): { first?: string; last?: string } => {
    let prev: { ref: string; dict: Dict } | undefined;
    let head: string | undefined;
    for (let ref = first; isRef(ref) && !seen.has(ref) && depth < 64 && entries < 100_000; ref = src.dict(ref)?.['/Next']) {
      seen.add(ref);
      entries++;
      const item = src.dict(ref) ?? {};
      const dict: Dict = { '/Title': direct(item['/Title']) ?? '', '/Parent': parent };
      for (const k of ['/C', '/F', '/Count']) if (direct(item[k]) !== undefined) dict[k] = direct(item[k]);
      const action = src.dict(item['/A']);
      const dest = moved(item['/Dest'] ?? (action?.['/S'] === '/GoTo' ? action : undefined));
      if (dest) dict['/Dest'] = dest;
      else if (action?.['/S'] === '/URI' && typeof direct(action['/URI']) === 'string') dict['/A'] = { '/S': '/URI', '/URI': direct(action['/URI']) };
      const me = newRef();
      const kids = copy(item['/First'], me, depth + 1);
      if (kids.first) Object.assign(dict, { '/First': kids.first, '/Last': kids.last });
      else delete dict['/Count'];
      if (prev) {
        prev.dict['/Next'] = me;
        dict['/Prev'] = prev.ref;
      }
      head ??= me;
      updates[me] = dict;
      prev = { ref: me, dict };
    }
    return { first: head, last: prev?.ref };
  };
  if (root) {
    const rootRef = newRef();
    const top = copy(root['/First'], rootRef, 0);
    if (top.first) {
      updates[rootRef] = { '/Type': '/Outlines', '/First': top.first, '/Last': top.last, '/Count': direct(root['/Count']) ?? entries };
      catalog['/Outlines'] = rootRef;
      if (src.catalog['/PageMode'] === '/UseOutlines') catalog['/PageMode'] = '/UseOutlines';
    }
  }
  updates[String(out.trailer['/Root'])] = catalog;

  // Links between pages: Ghostscript drops those that lead out of its run, and qpdf, copying a run's pages, leaves
  // those that lead to a later page of the same run pointing at nothing. Each is set (or added) from the input's.
  const outDests = new Destinations(out);
  const pageSet = new Set(outPages);
  const sameRect = (a: unknown[], b: unknown[]) => a.length === 4 && b.length === 4 && a.every((v, k) => Math.abs(Number(v) - Number(b[k])) < 0.01);
  srcPages.forEach((pageRef, i) => {
    const outRef = outPages[i];
    if (!outRef) return;
    const outPage = out.dict(outRef) ?? {};
    const annots = out.array(outPage['/Annots']);
    const links = annots.flatMap((ref) => {
      const d = out.dict(ref);
      return d?.['/Subtype'] === '/Link' ? [{ ref, dict: d, rect: out.array(d['/Rect']).map((v) => out.resolve(v)) }] : [];
    });
    const added: string[] = [];
    for (const a of src.array(src.dict(pageRef)?.['/Annots'])) {
      const link = src.dict(a);
      if (link?.['/Subtype'] !== '/Link') continue;
      const dest = moved(link['/Dest'] ?? link['/A']);
      if (!dest) continue;
      const rect = (direct(link['/Rect']) ?? []) as unknown[];
      const written = links.find((k) => sameRect(k.rect, rect));
      if (written) {
        const to = outDests.page(written.dict['/Dest'] ?? written.dict['/A']);
        if ((to && pageSet.has(to)) || !isRef(written.ref)) continue;
        const { '/A': _, ...rest } = written.dict;
        updates[written.ref] = { ...rest, '/Dest': dest };
        continue;
      }
      const ref = newRef();
      updates[ref] = { '/Type': '/Annot', '/Subtype': '/Link', '/Rect': rect, '/Border': direct(link['/Border']) ?? [0, 0, 0], '/Dest': dest };
      added.push(ref);
    }
    if (added.length) updates[outRef] = { ...outPage, '/Annots': [...annots, ...added] };
  });
  return updates;
}
