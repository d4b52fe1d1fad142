import type { EngineContext } from '../../engines/context.js';
import { popplerPageWords } from '../../engines/poppler.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { type PageFrame, pageFrames } from '../compose/index.js';
import { displayedSize, inputError, pagesTime, seenPoint, userPoint } from '../document/index.js';

/** Pages one pdftotext run reads: its XML (~75 kB a dense page) and its words are held until they are packed. */
const CHUNK_PAGES = 50;

/** [x0, y0, x1, y1] in PDF units on the page as seen: origin at the lower-left of its trim box, after /Rotate. */
export type Rect = [number, number, number, number];

/**
 * The texts of the words of both documents, each once: a word is kept as its text's number, so a document of
 * a million words holds a few thousand strings, and the alignment compares numbers.
 */
export class Vocabulary {
  readonly texts: string[] = [];
  private readonly ids = new Map<string, number>();

  idOf(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.texts.push(text) - 1;
      this.ids.set(text, id);
    }
    return id;
  }
}

/**
 * Every word of a document in typed arrays (24 bytes a word, no object per word): word i is text ids[i] of the
 * vocabulary, on the page whose range of words holds i, in the box rects[4i .. 4i+3].
 */
export interface DocWords {
  count: number;
  ids: Int32Array;
  rects: Float32Array;
  /** Page p's words are [starts[p - 1], starts[p]); starts.length is the page count + 1. */
  starts: Int32Array;
  frames: PageFrame[];
  /** Pages with no text at all (scans). */
  textless: number[];
}

/** The page (1-based) of word `i`. */
export function pageOf(doc: DocWords, i: number): number {
  let [lo, hi] = [1, doc.starts.length - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (doc.starts[mid] <= i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Word i's box. */
export const rectOf = (doc: DocWords, i: number): Rect => [doc.rects[4 * i], doc.rects[4 * i + 1], doc.rects[4 * i + 2], doc.rects[4 * i + 3]];

/**
 * Every word of the document in Poppler's reading order (pdftotext's flow: columns one after the other, where
 * the page model read some multi-column pages row by row across the columns), with its box on the page as seen,
 * the frame stamps are drawn in. Read a chunk of pages at a time and packed as it comes.
 */
export async function documentWords(path: string, vocabulary: Vocabulary, ctx: EngineContext): Promise<DocWords> {
  const frames = await pageFrames(path, ctx);
  const pages = frames.map((_, i) => i + 1);
  const geometry = await popplerGeometry(path, frames.length, ctx).catch((err) => {
    throw inputError(err);
  });
  let ids = new Int32Array(1024);
  let rects = new Float32Array(4096);
  let count = 0;
  const starts = new Int32Array(pages.length + 1);
  const textless: number[] = [];
  for (let from = 0; from < pages.length; from += CHUNK_PAGES) {
    const chunk = pages.slice(from, from + CHUNK_PAGES);
    const found = await popplerPageWords(path, chunk, pagesTime(ctx, chunk.length)).catch((err) => {
      throw inputError(err);
    });
    for (const page of chunk) {
      starts[page - 1] = count;
      // pdftotext places words on the media box as displayed (without -cropbox), whatever the crop box shows.
      const { mediaBox, trimBox, rotate } = geometry[page - 1];
      const shown = displayedSize({ mediaBox, cropBox: mediaBox, rotate });
      const onPage = found.get(page) ?? [];
      if (!onPage.length) textless.push(page);
      for (const w of onPage) {
        const text = w.text.normalize('NFKC').trim();
        if (!text) continue;
        const [a, b] = [
          { x: w.box[0], y: shown.height - w.box[3] },
          { x: w.box[2], y: shown.height - w.box[1] },
        ].map((p) => seenPoint(userPoint(p, mediaBox, rotate), trimBox, rotate));
        if (count === ids.length) {
          ids = grown(ids, new Int32Array(2 * ids.length));
          rects = grown(rects, new Float32Array(2 * rects.length));
        }
        ids[count] = vocabulary.idOf(text);
        rects.set([Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y)], 4 * count);
        count++;
      }
    }
  }
  starts[pages.length] = count;
  return { count, ids: ids.slice(0, count), rects: rects.slice(0, 4 * count), starts, frames, textless };
}

function grown<T extends Int32Array | Float32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
