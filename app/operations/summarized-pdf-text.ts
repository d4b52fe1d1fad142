import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  checkOutputFormat,
  documentText,
  EXTRACTIVE_FORMATS,
  EXTRACTIVE_WARNING,
  type ExtractiveFormat,
  extractiveSummary,
  isExtractiveFormat,
  OUTPUT_FORMATS,
  plan,
  SUMMARY_FORMATS,
  summarize,
  TRUNCATED_WARNING,
} from '../ai/index.js';
import { AppError } from '../errors.js';
import { int, oneOf, output, pages } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

/** Plain text, checked in `check`: clients match "<value> is not a valid input for 'output_format'" (CLIENTS.md). */
export const outputFormat = () =>
  z
    .preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string().trim().optional().default('markdown'))
    .meta({ type: 'string', enum: [...OUTPUT_FORMATS], default: 'markdown' });

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
