import type { LlmConfig } from '../config.js';
import { AppError } from '../errors.js';
import { chunk, complete, estimateTokens, type Message, mapLimit, OVERHEAD_TOKENS } from './llm.js';

/**
 * Summaries by a language model: the formats, what fits its context window, and map-reduce over the parts of a
 * document too long for one request.
 */

export const SUMMARY_FORMATS = [
  'overview',
  'highlight',
  'abstract',
  'bullet_points',
  'numbered_list',
  'table_of_contents',
  'outline',
  'question_answer',
  'action_items',
] as const;
export type SummaryFormat = (typeof SUMMARY_FORMATS)[number];

const WHAT: Record<SummaryFormat, string> = {
  overview: 'a concise overview in prose paragraphs',
  highlight: 'the highlights: the most important points, facts and figures',
  abstract: 'an abstract: one paragraph giving the purpose, the approach, the findings and the conclusions',
  bullet_points: 'a bulleted list of the main points',
  numbered_list: 'a numbered list of the main points',
  table_of_contents: 'a table of contents: the sections and subsections in their order, as a nested list',
  outline: 'a hierarchical outline of the structure and the main ideas',
  question_answer: 'question and answer pairs that cover the main points',
  action_items: 'the action items: tasks, decisions, owners and deadlines it contains (say so if there are none)',
};

export const OUTPUT_FORMATS = ['plaintext', 'markdown'] as const;
export function checkOutputFormat(v: string): asserts v is (typeof OUTPUT_FORMATS)[number] {
  if (!(OUTPUT_FORMATS as readonly string[]).includes(v)) throw new AppError('out_of_range', `${v.slice(0, 100)} is not a valid input for 'output_format'`);
}
export const FORMAT_RULE = {
  markdown: 'Format the answer as Markdown.',
  plaintext:
    'Answer in plain text without any Markdown markup (no #, *, _, |, > or backticks); use plain line breaks, and "1." or "-" at line starts for lists.',
};

const SYSTEM =
  'You summarize documents faithfully. Use only what the document says; keep names, numbers and dates exact; write in the language the document is written in. Answer with the summary itself, without a preamble.';

/** Tokens per English word with some room: the answer's max_tokens for a word target. */
const tokensFor = (words: number) => Math.ceil(words * 1.5) + 50;
/** Partial summaries: long enough to keep the facts, short enough that many fit one reduce request. */
const PART_MAX_WORDS = 400;
const PARALLEL = 2;

export interface Plan {
  /** Prompt tokens of document text per request. */
  budget: number;
  finalTokens: number;
  partTokens: number;
}

/** What fits the context window; a target the window cannot hold is the client's 400 (spec 4.11). */
export function plan(contextTokens: number, targetWords: number): Plan {
  const finalTokens = tokensFor(targetWords);
  const partTokens = Math.min(tokensFor(PART_MAX_WORDS), Math.floor(contextTokens / 4));
  const maxTarget = Math.floor((contextTokens / 2 - 50) / 1.5);
  if (finalTokens > contextTokens / 2) {
    throw new AppError(
      'out_of_range',
      `${targetWords} is not within the acceptable range for target_word_count: the language model's context window allows at most ${maxTarget} words`,
    );
  }
  return { budget: contextTokens - OVERHEAD_TOKENS - Math.max(finalTokens, partTokens), finalTokens, partTokens };
}

/**
 * Map-reduce: a document that fits one request is summarized at once; a longer one is cut into parts, each
 * part summarized, and the part summaries merged (in rounds, while they do not fit one request) before the
 * final summary is written from them in the asked format and length.
 */
export async function summarize(
  llm: LlmConfig,
  blocks: string[],
  opts: { targetWords: number; format: SummaryFormat; outputFormat: 'plaintext' | 'markdown'; signal: AbortSignal; progress: (f: number) => void },
): Promise<{ summary: string; truncated: boolean }> {
  const p = plan(llm.contextTokens, opts.targetWords);
  let truncated = false;
  const ask = async (messages: Message[], maxTokens: number) => {
    const r = await complete(llm, messages, maxTokens, opts.signal);
    truncated ||= r.truncated;
    return r.text;
  };
  let parts = chunk(blocks, p.budget);
  let fromParts = false;
  if (parts.length > 1) {
    const words = Math.max(40, Math.min(PART_MAX_WORDS, Math.floor((p.budget * 0.6) / parts.length), Math.floor((p.partTokens - 50) / 1.5)));
    let done = 0;
    const total = parts.length;
    parts = await mapLimit(parts, PARALLEL, async (part, i) => {
      const text = await ask(partMessages(part, i, total, words), p.partTokens);
      opts.progress((++done / (total + 1)) * 0.9);
      return text;
    });
    // Reduce rounds: merge neighbouring part summaries until all fit one request.
    while (estimateTokens(parts.join('\n\n')) > p.budget) {
      const groups = chunk(parts, p.budget);
      if (groups.length >= parts.length) {
        parts = [parts.join('\n\n').slice(0, p.budget * 3)];
        break;
      }
      parts = await mapLimit(groups, PARALLEL, (g) => ask(mergeMessages(g, words), p.partTokens));
    }
    fromParts = true;
  }
  const summary = await ask(finalMessages(parts.join('\n\n'), fromParts, opts), p.finalTokens);
  opts.progress(1);
  return { summary, truncated };
}

const partMessages = (text: string, i: number, n: number, words: number): Message[] => [
  { role: 'system', content: SYSTEM },
  {
    role: 'user',
    content: `This is part ${i + 1} of ${n} of a longer document. Summarize this part in at most ${words} words, for a later summary of the whole document: keep its key facts, names, figures, dates, decisions and section headings.\n\n<document_part>\n${text}\n</document_part>`,
  },
];

const mergeMessages = (summaries: string, words: number): Message[] => [
  { role: 'system', content: SYSTEM },
  {
    role: 'user',
    content: `These are summaries of consecutive parts of one document. Merge them into one summary of at most ${words} words that keeps their key facts, names, figures, dates, decisions and section headings, in order.\n\n<summaries>\n${summaries}\n</summaries>`,
  },
];

function finalMessages(text: string, fromParts: boolean, o: { targetWords: number; format: SummaryFormat; outputFormat: 'plaintext' | 'markdown' }): Message[] {
  const source = fromParts ? 'the document whose consecutive parts are summarized below' : 'the following document';
  const tag = fromParts ? 'part_summaries' : 'document';
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Write ${WHAT[o.format]} of ${source}, in about ${o.targetWords} words. ${FORMAT_RULE[o.outputFormat]}\n\n<${tag}>\n${text}\n</${tag}>`,
    },
  ];
}
