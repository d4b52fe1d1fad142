import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { type QpdfJson, type ReadLimits, readPdfJson } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { Destinations, inputError, isRef, PdfObjects } from '../document/index.js';

/**
 * After qpdf has put pages in a new order with the input as primary file, the catalog still points at the
 * pages left out, which qpdf writes as null objects: outline entries, named destinations, the open action and
 * link annotations that lead there lead nowhere. This removes them; outline entries to kept pages stay in their places (an entry whose page went but whose children
 * stay keeps its title, without a destination).
 */

type Dict = Record<string, unknown>;

/** qpdf JSON updates (`obj:N G R` -> new value) that cut every destination that is not a page of the page tree. */
export function droppedPageUpdates(json: QpdfJson): Record<string, { value: unknown }> {
  const objects = new PdfObjects(json);
  const kept = new Set((json.pages ?? []).map((p) => p.object));
  const updates: Record<string, { value: unknown }> = {};

  const catalogRef = objects.trailer['/Root'];
  const catalog: Dict = { ...objects.catalog };
  const set = (ref: unknown, value: unknown) => {
    if (isRef(ref)) updates[`obj:${ref}`] = { value };
  };

  const dests = new Destinations(objects);
  const destsDict = objects.dict(catalog['/Dests']);
  const target = (v: unknown) => dests.page(v);
  const leadsAway = (v: unknown) => {
    // qpdf writes null in place of a page left out; anything but a kept page is gone.
    const t = target(v);
    return t !== null && !kept.has(t);
  };

  // Named destinations to dropped pages go.
  if (destsDict) {
    const kept = Object.fromEntries(Object.entries(destsDict).filter(([, v]) => !leadsAway(v)));
    if (isRef(catalog['/Dests'])) set(catalog['/Dests'], kept);
    else catalog['/Dests'] = kept;
  }
  for (const { ref, node } of dests.treeNodes) {
    const pairs = objects.array(node['/Names']);
    if (!pairs.length) continue;
    const keptPairs = pairs.flatMap((v, i) => (i % 2 || leadsAway(pairs[i + 1]) ? [] : [v, pairs[i + 1]]));
    if (keptPairs.length === pairs.length) continue;
    if (isRef(ref)) set(ref, { ...node, '/Names': keptPairs });
  }
  if (leadsAway(catalog['/OpenAction'])) delete catalog['/OpenAction'];

  // Links on kept pages that lead to dropped ones.
  for (const page of kept) {
    const dict = objects.dict(page);
    if (!dict?.['/Annots']) continue;
    const annots = objects.array(dict['/Annots']);
    const keptAnnots = annots.filter((a) => {
      const d = objects.dict(a);
      return !(d?.['/Subtype'] === '/Link' && (leadsAway(d['/Dest']) || leadsAway(d['/A'])));
    });
    if (keptAnnots.length === annots.length) continue;
    if (isRef(dict['/Annots'])) set(dict['/Annots'], keptAnnots);
    else set(page, { ...dict, '/Annots': keptAnnots });
  }

  // The outline: entries kept in place, relinked, counts recomputed.
  const outlines = objects.dict(catalog['/Outlines']);
  if (outlines && isRef(catalog['/Outlines'])) {
    const seen = new Set<string>();
    const children = (parent: Dict): string[] => {
      const out: string[] = [];
      for (let ref = parent['/First']; isRef(ref) && !seen.has(ref) && out.length < 100_000; ref = objects.dict(ref)?.['/Next']) {
        seen.add(ref);
        out.push(ref);
      }
      return out;
    };
    /** Relinks `parent`'s kept children; returns how many entries show when it is open. */
    const rebuild = (parentRef: string, parent: Dict, depth: number): { visible: number; keep: boolean } => {
      const kids: { ref: string; dict: Dict }[] = [];
      let visible = 0;
      for (const ref of depth < 64 ? children(parent) : []) {
        const dict: Dict = { ...objects.dict(ref)! };
        const sub = rebuild(ref, dict, depth + 1);
        const away = leadsAway(dict['/Dest']) || leadsAway(dict['/A']);
        if (away && !sub.keep) continue;
        if (away) {
          delete dict['/Dest'];
          delete dict['/A'];
        }
        kids.push({ ref, dict });
        visible += 1 + (Number(objects.resolve(dict['/Count']) ?? 0) > 0 ? Number(dict['/Count']) : 0);
      }
      kids.forEach((k, i) => {
        k.dict['/Parent'] = parentRef;
        if (i > 0) k.dict['/Prev'] = kids[i - 1].ref;
        else delete k.dict['/Prev'];
        if (i < kids.length - 1) k.dict['/Next'] = kids[i + 1].ref;
        else delete k.dict['/Next'];
        set(k.ref, k.dict);
      });
      if (kids.length) {
        parent['/First'] = kids[0].ref;
        parent['/Last'] = kids[kids.length - 1].ref;
        const closed = Number(objects.resolve(parent['/Count']) ?? 0) < 0;
        parent['/Count'] = closed ? -visible : visible;
      } else {
        for (const k of ['/First', '/Last', '/Count']) delete parent[k];
      }
      return { visible, keep: kids.length > 0 };
    };
    const root: Dict = { ...outlines };
    if (rebuild(catalog['/Outlines'], root, 0).keep) set(catalog['/Outlines'], root);
    else delete catalog['/Outlines'];
  }
  set(catalogRef, catalog);
  return updates;
}

/** Writes `input` without destinations outside its page tree (see droppedPageUpdates). */
export async function pruneDroppedPages(input: string, output: string, limits: ReadLimits, ctx: EngineContext): Promise<void> {
  const { json } = await readPdfJson(input, ctx, limits).catch((err) => {
    throw inputError(err);
  });
  const updates = droppedPageUpdates(json);
  const update = join(ctx.cwd, 'prune.json');
  await writeFile(update, JSON.stringify({ qpdf: [json.qpdf![0], updates] }));
  await writePdf(input, output, { updateFromJson: update }, ctx);
}
