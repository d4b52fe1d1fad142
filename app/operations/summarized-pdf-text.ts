import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  chunk,
  complete,
  documentText,
  EXTRACTIVE_FORMATS,
  EXTRACTIVE_WARNING,
  type ExtractiveFormat,
  estimateTokens,
  extractiveSummary,
  isExtractiveFormat,
  type Message,
  mapLimit,
  OVERHEAD_TOKENS,
  TRUNCATED_WARNING,
} from '../ai/index.js';
import type { LlmConfig } from '../config.js';
import { AppError } from '../errors.js';
import { int, oneOf, output, pages } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

const SUMMARY_FORMATS = [
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
type SummaryFormat = (typeof SUMMARY_FORMATS)[number];

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
/** Plain text, checked in `check`: clients match "<value> is not a valid input for 'output_format'" (CLIENTS.md). */
export const outputFormat = () =>
  z
    .preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string().trim().optional().default('markdown'))
    .meta({ type: 'string', enum: [...OUTPUT_FORMATS], default: 'markdown' });
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

export default operation({
  path: '/summarized-pdf-text',
  tag: 'AI text operations',
  summary: 'Summarize a document (with a language model, or extractively without one)',
  description:
    'Input: a PDF (the pages selected, read in reading order as Markdown), a Markdown (.md) or a text (.txt) file (pages do not apply). With a language model (LLM_URL, LLM_MODEL): the text goes to that OpenAI-compatible model; a document longer than its context window (LLM_CONTEXT_TOKENS) is summarized in parts whose summaries are then merged; target_word_count must fit the window (400 otherwise); when the model cannot be reached or fails, the answer is 503. Without LLM_URL: an extractive summary, the document\'s own sentences chosen by LexRank sentence scoring and kept in document order, within target_word_count, for summary_format overview, highlight, bullet_points, numbered_list (lists of sentences), table_of_contents (the headings found on the pages) and outline (headings with their sections\' best sentences); abstract, question_answer and action_items answer 503 naming LLM_URL. target_word_count is a target, not an exact count (extractive: an upper bound). JSON: {summary, engine} where engine is "llm" or "extractive" (the latter with a warning saying so); output_type=file stores a .md file and still returns engine.',
  inputs: { file: { idField: 'id', kind: 'any', description: 'A PDF, Markdown (.md) or text (.txt) file' } },
  fields: {
    target_word_count: int(1, 1_000_000, 400),
    summary_format: oneOf(SUMMARY_FORMATS, 'overview'),
    pages: pages(),
    output_format: outputFormat(),
    output_type: oneOf(['json', 'file'], 'json'),
    output: output(),
  },
  check: (f) => checkOutputFormat(f.output_format),
  output: 'json-or-file',
  produces: ['md'],
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, progress, llm }) => {
    if (llm) plan(llm.contextTokens, fields.target_word_count);
    else if (!isExtractiveFormat(fields.summary_format)) {
      throw new AppError(
        'engine_missing',
        `summary_format ${fields.summary_format} needs a language model, which this server does not have: set LLM_URL (an OpenAI-compatible chat-completions endpoint) and LLM_MODEL. Without one: ${EXTRACTIVE_FORMATS.join(', ')}`,
      );
    }
    const doc = await documentText(input, fields.pages, { cwd: dir, signal, timeoutMs });
    const outputFormat = fields.output_format as 'plaintext' | 'markdown';
    let summary: string;
    let notes: (string | undefined)[];
    if (llm) {
      const r = await summarize(llm, doc.blocks, { targetWords: fields.target_word_count, format: fields.summary_format, outputFormat, signal, progress });
      summary = r.summary;
      notes = [doc.warning, r.truncated ? TRUNCATED_WARNING : undefined];
    } else {
      summary = extractiveSummary(doc.blocks, { targetWords: fields.target_word_count, format: fields.summary_format as ExtractiveFormat }, doc.tables);
      notes = [EXTRACTIVE_WARNING, doc.warning];
    }
    const engine = llm ? 'llm' : 'extractive';
    const warning = notes.filter(Boolean).join(' ') || undefined;
    if (fields.output_type === 'json') return { json: { summary, engine }, warning };
    const path = join(dir, 'summary.md');
    await writeFile(path, summary);
    return { files: [{ path, ext: 'md' }], json: { engine }, warning };
  },
});
