import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import {
  checkOutputFormat,
  chunk,
  complete,
  detectLanguages,
  documentText,
  FORMAT_RULE,
  type Message,
  mapLimit,
  markdownToPlain,
  OVERHEAD_TOKENS,
  offlinePair,
  TRUNCATED_WARNING,
  translateOffline,
} from '../ai/index.js';
import { AppError } from '../errors.js';
import { oneOf, output, pages } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import { outputFormat } from './summarized-pdf-text.js';

/** Spec 4.11: ISO 639 code of 2-3 letters, then optionally a 4-letter script, a 2-letter or a 3-digit region. */
const LANGUAGE_TAG = /^[a-z]{2,3}(-([a-z]{4}|[a-z]{2}|\d{3}))?$/i;
const NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** The canonical tag (`EN-us` -> `en-US`) and its English name for the prompt; an unknown code is a 400. */
export function outputLanguage(value: string): { tag: string; name: string } {
  const v = value.trim();
  let tag: string | undefined;
  if (LANGUAGE_TAG.test(v)) {
    try {
      tag = Intl.getCanonicalLocales(v)[0];
    } catch {
      tag = undefined;
    }
  }
  const name = tag && NAMES.of(tag);
  if (!tag || !name)
    throw new AppError(
      'out_of_range',
      `${v.slice(0, 100)} is not within the acceptable range for output_language: use an ISO 639 language code such as fr, de-CH, zh-Hant or es-419`,
    );
  return { tag, name };
}

/** Translations run longer than their source in many language pairs: the answer may take 1.5x the part. */
const PART_SHARE = 0.4;
const PARALLEL = 2;
const SOURCE_LINE = /^\s*SOURCE:\s*([^\n]*)\n?/i;

const messages = (text: string, lang: { tag: string; name: string }, format: 'plaintext' | 'markdown', part: [number, number]): Message[] => [
  {
    role: 'system',
    content: `You are a professional translator. Translate the user's text into ${lang.name} (${lang.tag}). Translate all of it faithfully; keep names, numbers and the structure (headings, lists, tables, line breaks); add no comments or explanations. ${FORMAT_RULE[format]}`,
  },
  {
    role: 'user',
    content: `${part[1] > 1 ? `This is part ${part[0]} of ${part[1]} of a longer document. ` : ''}First write one line "SOURCE: " followed by the ISO 639-1 codes of the language(s) the text is written in, comma-separated; then an empty line; then the translation only.\n\n<text>\n${text}\n</text>`,
  },
];

/** Splits the model's answer into the source-language line and the translation. */
export function parseAnswer(answer: string): { languages: string[]; text: string } {
  const m = SOURCE_LINE.exec(answer);
  if (!m) return { languages: [], text: answer.trim() };
  const languages = m[1]
    .split(/[,;\s]+/)
    .map((s) => s.trim().toLowerCase())
    .filter((s) => /^[a-z]{2,3}(-[a-z0-9]{2,4})?$/.test(s));
  return { languages, text: answer.slice(m[0].length).trim() };
}

export default operation({
  path: '/translated-pdf-text',
  tag: 'AI text operations',
  summary: 'Translate the text of a document (with a language model, or Apertium without one)',
  description:
    'Input: a PDF (the pages selected, read in reading order as Markdown), a Markdown (.md) or a text (.txt) file (pages ignored). source_languages: ISO 639-1 codes of the languages the text is written in, the main one first (detected by Quire, offline, per paragraph; a language is listed from a tenth of the letters). output_language: an ISO 639 code, optionally with a script or region (fr, pt-BR, zh-Hant, es-419). With a language model (LLM_URL, LLM_MODEL): the text goes, in parts that fit its context window (LLM_CONTEXT_TOKENS), to that OpenAI-compatible model; when it cannot be reached or fails, the answer is 503. Without LLM_URL: Apertium translates, for the language pairs installed on the server (from the main source language to output_language\'s language; Markdown headings, lists, tables, emphasis, links and code kept); other pairs answer 503 naming LLM_URL and listing the offline pairs. Without LLM_URL, a document already in output_language\'s language comes back as it is (engine "none", with a warning). JSON: {translated_text, output_language, source_languages, engine} where engine is "llm", "apertium" or "none" (the offline ones with a warning saying so); output_type=file stores a .txt file and still returns output_language, source_languages and engine.',
  inputs: { file: { idField: 'id', kind: 'any', description: 'A PDF, Markdown (.md) or text (.txt) file' } },
  fields: {
    output_language: z
      .preprocess((v) => (Array.isArray(v) ? v[0] : v), z.string().trim().min(1))
      .meta({ type: 'string', examples: ['fr', 'de-CH', 'zh-Hant', 'es-419'] }),
    pages: pages(),
    output_format: outputFormat(),
    output_type: oneOf(['json', 'file'], 'json'),
    output: output(),
  },
  check: (f) => {
    outputLanguage(f.output_language);
    checkOutputFormat(f.output_format);
  },
  output: 'json-or-file',
  produces: ['txt'],
  engines: ['qpdf', 'mupdf'],
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, progress, llm }) => {
    const lang = outputLanguage(fields.output_language);
    const format = fields.output_format as 'plaintext' | 'markdown';
    const doc = await documentText(input, fields.pages, { cwd: dir, signal, timeoutMs });
    const detected = await detectLanguages(doc.blocks);
    let translated: string;
    let sources = detected;
    let notes: (string | undefined)[];
    let engine: 'llm' | 'apertium' | 'none' = 'llm';
    if (llm) {
      const partTokens = Math.floor((llm.contextTokens - OVERHEAD_TOKENS) * PART_SHARE);
      const parts = chunk(doc.blocks, partTokens);
      let done = 0;
      const answers = await mapLimit(parts, PARALLEL, async (part, i) => {
        const r = await complete(llm, messages(part, lang, format, [i + 1, parts.length]), llm.contextTokens - OVERHEAD_TOKENS - partTokens, signal);
        progress(++done / parts.length);
        return { ...parseAnswer(r.text), truncated: r.truncated };
      });
      translated = answers.map((a) => a.text).join('\n\n');
      // The model's own answer only when the detector could tell nothing (a few symbols, an unknown script).
      if (!sources.length) sources = [...new Set(answers.flatMap((a) => a.languages))];
      notes = [doc.warning, answers.some((a) => a.truncated) ? TRUNCATED_WARNING : undefined];
    } else if (detected[0] === lang.tag.split('-')[0].toLowerCase()) {
      engine = 'none';
      translated = doc.blocks.join('\n\n');
      if (format === 'plaintext') translated = markdownToPlain(translated);
      notes = [`The document is already in ${detected[0]}: its text is returned as it is (no language model is configured, LLM_URL).`, doc.warning];
    } else {
      const pair = await offlinePair(detected[0], lang.tag);
      engine = 'apertium';
      translated = await translateOffline(doc.blocks.join('\n\n'), pair, { cwd: dir, signal, timeoutMs });
      if (format === 'plaintext') translated = markdownToPlain(translated);
      const others = detected.slice(1);
      notes = [
        `Translated without a language model (LLM_URL is not set) by Apertium's rule-based ${pair.from}->${pair.to} pair.`,
        others.length ? `Text in ${others.join(', ')} was translated as if it were ${pair.from}.` : undefined,
        doc.warning,
      ];
    }
    const warning = notes.filter(Boolean).join(' ') || undefined;
    const meta = { output_language: lang.tag, source_languages: sources, engine };
    if (fields.output_type === 'json') return { json: { translated_text: translated, ...meta }, warning };
    const path = join(dir, 'translation.txt');
    await writeFile(path, translated);
    return { files: [{ path, ext: 'txt' }], json: meta, warning };
  },
});
