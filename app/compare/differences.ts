import { BlendMode, PDFDocument, rgb } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { applyStamps, type StampTarget } from '../compose/index.js';
import type { Hunk } from './align.js';
import type { DocWord, DocWords, Rect } from './words.js';

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
 * show them on the second document.
 */
export function describe(hunks: Hunk[], first: DocWord[], second: DocWord[]): { differences: Difference[]; marks: Mark[] } {
  const differences: Difference[] = [];
  const marks: Mark[] = [];
  for (const h of hunks) {
    const removed = first.slice(h.aFrom, h.aTo);
    const added = second.slice(h.bFrom, h.bTo);
    if (!added.length) {
      // Deleted: shown as a bar where the words were, at the next word of the second document (or the last one).
      const next = second[h.bFrom] ?? second[h.bFrom - 1];
      for (const part of byPage(removed))
        differences.push({ kind: 'deleted', page: part[0].page, text: textOf(part), box: boxOf(part), other_page: next?.page });
      if (next) marks.push({ page: next.page, rect: edge(next.rect, second[h.bFrom] === next), kind: 'deleted' });
      continue;
    }
    const kind: DifferenceKind = removed.length ? 'changed' : 'inserted';
    const there = removed[0] ?? first[h.aFrom] ?? first[h.aFrom - 1];
    // What runs on past the page where the replaced words stood is inserted (a changed line, then new pages).
    byPage(added).forEach((part, n) => {
      const piece = kind === 'changed' && n === 0 ? { kind, replaced_text: textOf(removed) } : { kind: 'inserted' as const };
      differences.push({ ...piece, page: part[0].page, text: textOf(part), box: boxOf(part), other_page: there?.page });
      for (const w of part) {
        const last = marks.at(-1);
        if (last && last.kind === piece.kind && last.page === w.page && sameRow(last.rect, w.rect)) last.rect = union(last.rect, w.rect);
        else marks.push({ page: w.page, rect: [...w.rect], kind: piece.kind });
      }
    });
  }
  return { differences, marks };
}

const textOf = (words: DocWord[]) => words.map((w) => w.text).join(' ');
const r2 = (n: number) => Math.round(n * 100) / 100;

function byPage(words: DocWord[]): DocWord[][] {
  const parts: DocWord[][] = [];
  for (const w of words) {
    const last = parts.at(-1);
    if (last && last[0].page === w.page) last.push(w);
    else parts.push([w]);
  }
  return parts;
}

function boxOf(words: DocWord[]): Difference['box'] {
  const x0 = Math.min(...words.map((w) => w.rect[0]));
  const y0 = Math.min(...words.map((w) => w.rect[1]));
  const x1 = Math.max(...words.map((w) => w.rect[2]));
  const y1 = Math.max(...words.map((w) => w.rect[3]));
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

const COLOURS = { inserted: rgb(0.55, 0.95, 0.55), changed: rgb(1, 0.85, 0.2), deleted: rgb(0.9, 0.1, 0.1) };

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
      for (const m of byTarget.get(t.page)!) {
        const [x0, y0, x1, y1] = m.rect;
        page.drawRectangle({ x: x0 - 0.5, y: y0 - 0.5, width: x1 - x0 + 1, height: y1 - y0 + 1, color: COLOURS[m.kind], blendMode: BlendMode.Multiply });
      }
    },
    false,
    ctx,
  );
}
