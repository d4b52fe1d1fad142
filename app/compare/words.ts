import type { EngineContext } from '../../engines/context.js';
import { popplerPageWords } from '../../engines/poppler.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { type PageFrame, pageFrames } from '../compose/index.js';
import { displayedSize, inputError, pagesTime, seenPoint, userPoint } from '../document/index.js';
import { AppError } from '../errors.js';

/** Words one comparison reads from each document (about 400 pages of prose): the diff's time grows with them. */
export const MAX_COMPARE_WORDS = 200_000;

const CHUNK_PAGES = 100;

/** [x0, y0, x1, y1] in PDF units on the page as seen: origin at the lower-left of its trim box, after /Rotate. */
export type Rect = [number, number, number, number];

export interface DocWord {
  text: string;
  page: number;
  rect: Rect;
}

export interface DocWords {
  words: DocWord[];
  frames: PageFrame[];
  /** Pages with no text at all (scans). */
  textless: number[];
}

/**
 * Every word of the document in Poppler's reading order (pdftotext's flow: columns one after the other, where
 * the page model read some multi-column pages row by row across the columns), with its box on the page as seen,
 * the frame stamps are drawn in. More than MAX_COMPARE_WORDS is a 422 naming the input.
 */
export async function documentWords(path: string, which: string, ctx: EngineContext): Promise<DocWords> {
  const frames = await pageFrames(path, ctx);
  const pages = frames.map((_, i) => i + 1);
  const geometry = await popplerGeometry(path, frames.length, ctx).catch((err) => {
    throw inputError(err);
  });
  const words: DocWord[] = [];
  const textless: number[] = [];
  // A chunk of pages at a time, so a document far over the limit is cut after the chunk that crosses it.
  for (let from = 0; from < pages.length; from += CHUNK_PAGES) {
    const chunk = pages.slice(from, from + CHUNK_PAGES);
    const found = await popplerPageWords(path, chunk, pagesTime(ctx, chunk.length)).catch((err) => {
      throw inputError(err);
    });
    for (const page of chunk) {
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
        ]
          .map((p) => seenPoint(userPoint(p, mediaBox, rotate), trimBox, rotate))
          .map((p) => ({ x: round(p.x), y: round(p.y) }));
        words.push({ text, page, rect: [Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y)] });
      }
    }
    if (words.length > MAX_COMPARE_WORDS) {
      throw new AppError(
        'limit',
        `The ${which} has more than ${MAX_COMPARE_WORDS} words, the most one comparison reads from a document: compare it in parts (/split-pdf).`,
      );
    }
  }
  return { words, frames, textless };
}

const round = (n: number) => Math.round(n * 1000) / 1000;
