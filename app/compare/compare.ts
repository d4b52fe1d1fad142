import { copyFile } from 'node:fs/promises';
import type { EngineContext } from '../../engines/context.js';
import { runInThread, threadModule } from '../threads.js';
import { alignDocuments, type Hunk } from './align.js';
import { type Difference, describe, highlightDifferences } from './differences.js';
import { documentWords, Vocabulary } from './words.js';

const WORKER = threadModule('./align-worker', import.meta.url);

/** Below this many words in all, the alignment runs here: a thread's start costs more (about 50 ms). */
const INLINE_WORDS = 20_000;

export interface Comparison {
  differences: Difference[];
  warning?: string;
}

/**
 * Compares the text of two PDFs word by word and writes the second with its differences marked to `output`
 * (a copy of it when there are none).
 */
export async function compareDocuments(
  first: string,
  second: string,
  output: string,
  ctx: EngineContext,
  progress: (f: number) => void = () => {},
): Promise<Comparison> {
  // One vocabulary for both: a word is the same number in either document.
  const vocabulary = new Vocabulary();
  const [a, b] = await Promise.all([documentWords(first, vocabulary, ctx), documentWords(second, vocabulary, ctx)]);
  progress(0.5);
  const [wa, wb] = [
    { ids: a.ids, starts: a.starts },
    { ids: b.ids, starts: b.starts },
  ];
  // Thousands of words of diffing would hold the event loop that answers other requests; the signal ends the thread.
  const hunks =
    a.count + b.count <= INLINE_WORDS
      ? alignDocuments(wa, wb)
      : await runInThread<Hunk[]>(WORKER, { a: wa, b: wb }, { what: 'comparison', signal: ctx.signal });
  progress(0.8);
  const { differences, marks } = describe(hunks, a, b, vocabulary.texts);
  if (marks.length) await highlightDifferences(second, output, b, marks, ctx);
  else await copyFile(second, output);
  return { differences, warning: textWarning(a.textless.length === a.frames.length, b.textless.length === b.frames.length) };
}

function textWarning(firstEmpty: boolean, secondEmpty: boolean): string | undefined {
  const which = firstEmpty && secondEmpty ? 'either document' : firstEmpty ? 'the first document' : secondEmpty ? 'the second document' : '';
  return which ? `No text was found in ${which}: scanned pages need /pdf-with-ocr-text first, or their differences cannot be seen.` : undefined;
}
