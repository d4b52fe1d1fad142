import { PDFDocument } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { applyStamps, type StampTarget } from '../compose/index.js';
import type { Hunk } from './align.js';
import { type DocWords, pageOf, type Rect, rectOf } from './words.js';

export type DifferenceKind = 'inserted' | 'deleted' | 'changed';

export interface Difference {
  kind: DifferenceKind;
  /** The page of the second document (inserted, changed) or of the first (deleted). */
  page: number;
  /** The words inserted, deleted, or put in place of replaced_text. */
  text: string;
  /** changed: the words of the first document they replace. */
  replaced_text?: string;
  /** Around the words on `page`, in PDF units from the lower-left corner of the page as seen (trim box, after /Rotate). */
  box: { x: number; y: number; width: number; height: number };
  /** Where the same place is in the other document, when it has words there. */
  other_page?: number;
}

/** A word of the second document to mark, or a deletion's place (a bar at a word's left or right edge). */
interface Mark {
  page: number;
  rect: Rect;
  kind: DifferenceKind;
}

/**
 * The differences as listed to clients (one per hunk and page of the document it refers to) and the marks that
 * show them on the second document. Only the words of the hunks are looked at, by their place in the documents.
 */
export function describe(hunks: Hunk[], first: DocWords, second: DocWords, texts: string[]): { differences: Difference[]; marks: Mark[] } {
  const differences: Difference[] = [];
  const marks: Mark[] = [];
  const textOf = (doc: DocWords, from: number, to: number) => Array.from(doc.ids.subarray(from, to), (id) => texts[id]).join(' ');
  for (const h of hunks) {
    if (h.bFrom === h.bTo) {
      // Deleted: shown as a bar where the words were, at the next word of the second document (or the last one).
      const next = h.bFrom < second.count ? h.bFrom : h.bFrom - 1;
      const nextPage = next >= 0 ? pageOf(second, next) : undefined;
      for (const [from, to, page] of byPage(first, h.aFrom, h.aTo))
        differences.push({ kind: 'deleted', page, text: textOf(first, from, to), box: boxOf(first, from, to), other_page: nextPage });
      if (next >= 0) marks.push({ page: nextPage!, rect: edge(rectOf(second, next), next === h.bFrom), kind: 'deleted' });
      continue;
    }
    const kind: DifferenceKind = h.aTo > h.aFrom ? 'changed' : 'inserted';
    const there = h.aFrom < first.count ? h.aFrom : h.aFrom - 1;
    const otherPage = there >= 0 ? pageOf(first, there) : undefined;
    // What runs on past the page where the replaced words stood is inserted (a changed line, then new pages).
    byPage(second, h.bFrom, h.bTo).forEach(([from, to, page], n) => {
      const piece = kind === 'changed' && n === 0 ? { kind, replaced_text: textOf(first, h.aFrom, h.aTo) } : { kind: 'inserted' as const };
      differences.push({ ...piece, page, text: textOf(second, from, to), box: boxOf(second, from, to), other_page: otherPage });
      for (let w = from; w < to; w++) {
        const rect = rectOf(second, w);
        const last = marks.at(-1);
        if (last && last.kind === piece.kind && last.page === page && sameRow(last.rect, rect)) last.rect = union(last.rect, rect);
        else marks.push({ page, rect, kind: piece.kind });
      }
    });
  }
  return { differences, marks };
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/** Words [from, to) as runs [from, to, page] of one page each. */
function byPage(doc: DocWords, from: number, to: number): [number, number, number][] {
  const parts: [number, number, number][] = [];
  while (from < to) {
    const page = pageOf(doc, from);
    const end = Math.min(to, doc.starts[page]);
    parts.push([from, end, page]);
    from = end;
  }
  return parts;
}

function boxOf(doc: DocWords, from: number, to: number): Difference['box'] {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let k = 4 * from; k < 4 * to; k += 4) {
    x0 = Math.min(x0, doc.rects[k]);
    y0 = Math.min(y0, doc.rects[k + 1]);
    x1 = Math.max(x1, doc.rects[k + 2]);
    y1 = Math.max(y1, doc.rects[k + 3]);
  }
  return { x: r2(x0), y: r2(y0), width: r2(x1 - x0), height: r2(y1 - y0) };
}

/** Words side by side on one row: marked as one box, without white gaps between them. */
function sameRow(a: Rect, b: Rect): boolean {
  const overlap = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  const height = Math.min(a[3] - a[1], b[3] - b[1]);
  return overlap > 0.5 * height && b[0] >= a[0] && b[0] - a[2] <= 1.5 * height;
}

const union = (a: Rect, b: Rect): Rect => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];

/** A thin bar at a word's left edge (text deleted before it) or right edge (deleted after it). */
const edge = ([x0, y0, x1, y1]: Rect, before: boolean): Rect => (before ? [x0 - 1.5, y0, x0, y1] : [x1, y0, x1 + 1.5, y1]);

const COLOURS: Record<DifferenceKind, [number, number, number]> = { inserted: [0.55, 0.95, 0.55], changed: [1, 0.85, 0.2], deleted: [0.9, 0.1, 0.1] };

/**
 * The second document with its differences marked: inserted words green, changed words yellow (a highlighter:
 * multiplied over the page, so the text stays black), deletions a red bar where the words were.
 */
export async function highlightDifferences(input: string, output: string, second: DocWords, marks: Mark[], ctx: EngineContext): Promise<void> {
  const byTarget = new Map<number, Mark[]>();
  for (const m of marks) (byTarget.get(m.page) ?? byTarget.set(m.page, []).get(m.page)!).push(m);
  const targets: StampTarget[] = [...byTarget.keys()].map((page) => ({ page, frame: second.frames[page - 1], key: String(page) }));
  const doc = await PDFDocument.create();
  await applyStamps(
    input,
    output,
    doc,
    targets,
    (page, t) => {
      // One content stream of plain operators per page: a page may hold hundreds of boxes, and pdf-lib's
      // drawRectangle adds a graphics state per box (operator objects per box cost twice the time of this).
      const multiply = page.node.newExtGState('GS', doc.context.obj({ Type: 'ExtGState', BM: 'Multiply' }));
      const ops = [`q ${multiply} gs`];
      for (const kind of Object.keys(COLOURS) as DifferenceKind[]) {
        const boxes = byTarget.get(t.page)!.filter((m) => m.kind === kind);
        if (!boxes.length) continue;
        ops.push(`${COLOURS[kind].join(' ')} rg`);
        for (const {
          rect: [x0, y0, x1, y1],
        } of boxes)
          ops.push(`${r2(x0 - 0.5)} ${r2(y0 - 0.5)} ${r2(x1 - x0 + 1)} ${r2(y1 - y0 + 1)} re`);
        ops.push('f');
      }
      ops.push('Q');
      page.node.addContentStream(doc.context.register(doc.context.flateStream(ops.join('\n'))));
    },
    false,
    ctx,
  );
}
