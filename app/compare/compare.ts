import { copyFile } from 'node:fs/promises';
import type { EngineContext } from '../../engines/context.js';
import { runInThread, threadModule } from '../threads.js';
import { alignWords, type Hunk } from './align.js';
import { type Difference, describe, highlightDifferences } from './differences.js';
import { documentWords } from './words.js';

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
  const [a, b] = await Promise.all([documentWords(first, 'first document (file)', ctx), documentWords(second, 'second document (compare_file)', ctx)]);
  progress(0.5);
  const [ta, tb] = [a.words.map((w) => w.text), b.words.map((w) => w.text)];
  // Thousands of words of diffing would hold the event loop that answers other requests; the signal ends the thread.
  const hunks =
    ta.length + tb.length <= INLINE_WORDS
      ? alignWords(ta, tb)
      : await runInThread<Hunk[]>(WORKER, { a: ta, b: tb }, { what: 'comparison', signal: ctx.signal });
  progress(0.8);
  const { differences, marks } = describe(hunks, a.words, b.words);
  if (marks.length) await highlightDifferences(second, output, b, marks, ctx);
  else await copyFile(second, output);
  return { differences, warning: textWarning(a.textless.length === a.frames.length, b.textless.length === b.frames.length) };
}

function textWarning(firstEmpty: boolean, secondEmpty: boolean): string | undefined {
  const which = firstEmpty && secondEmpty ? 'either document' : firstEmpty ? 'the first document' : secondEmpty ? 'the second document' : '';
  return which ? `No text was found in ${which}: scanned pages need /pdf-with-ocr-text first, or their differences cannot be seen.` : undefined;
}
