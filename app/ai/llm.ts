import { readFile } from 'node:fs/promises';
import type { LlmConfig } from '../config.js';
import { isPdfHeader, noTextWarning, type PageModel, readKeptPages, readPdfHead, selectPages, toMarkdown } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { isTableBlock, tableColumns } from './extractive.js';

/**
 * The AI text operations' shared half: the document's text (a PDF read by our own layout model, as
 * /markdown gives it, or a .md / .txt file), cut into parts that fit the model's context window, and one
 * client for any OpenAI-compatible `/chat/completions` server (LLM_URL).
 *
 * Failures of that server are not the client's fault and are retryable, so they are 503 (clients retry 5xx
 * with backoff), with Retry-After when the server sent one; only a request the model cannot take because the
 * document or the asked length is too large for its context is the client's 400.
 */

export interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface Completion {
  text: string;
  /** The model stopped at max_tokens: the answer is cut. */
  truncated: boolean;
}

/** Prompt tokens that instructions and message framing take, beside the document. */
export const OVERHEAD_TOKENS = 400;

/**
 * A safe over-estimate of tokens without the model's tokenizer: one per 3 UTF-8 bytes (English runs about
 * 4 characters a token, CJK about one 3-byte character a token).
 */
export const estimateTokens = (text: string) => Math.ceil(Buffer.byteLength(text, 'utf8') / 3);

export interface DocumentText {
  /** Paragraph-sized blocks in reading order (Markdown for PDFs), never split inside. */
  blocks: string[];
  /** PDFs: the text of each table block (see isTableBlock) read down its columns (see tableColumns), or null. */
  tables?: (string[] | null)[];
  warning?: string;
}

/** The stored input as the AI operations need it. */
export interface TextSource {
  name: string;
  type: string;
  path: string;
}

/** PDF (pages selected) or .md / .txt (pages do not apply) as text blocks. */
export async function documentText(input: TextSource, pages: string, ctx: { cwd: string; signal: AbortSignal; timeoutMs: number }): Promise<DocumentText> {
  // Only a text file is read whole: a PDF is read page by page (a 2,000-page scan is ~330 MB).
  if (isPdfHeader(await readPdfHead(input.path))) {
    const selected = await selectPages(input.path, pages, ctx);
    const blocks: string[] = [];
    const tables: (string[] | null)[] = [];
    const empty: number[] = [];
    // Page by page: each page's blocks are kept, its model let go.
    const keep = (page: PageModel) => {
      const own = splitBlocks(toMarkdown([page], { pageBreakComments: false }));
      const items = page.items.flatMap((it) => (it.kind === 'table' ? [it] : []));
      // Each table item is one pipe-table block of the page; should they ever not pair up, none is used.
      const pipes = own.filter(isTableBlock).length;
      return {
        page: page.page,
        empty: !page.lines.length,
        own,
        tables: pipes === items.length ? items.map((it) => tableColumns(it.lines)) : Array<null>(pipes).fill(null),
      };
    };
    await readKeptPages(input.path, selected, ctx, {}, keep, (batch) => {
      for (const page of batch) {
        if (page.empty) empty.push(page.page);
        blocks.push(...page.own);
        tables.push(...page.tables);
      }
    });
    if (empty.length === selected.length) throw new AppError('invalid_input', noTextWarning(empty, selected.length)!);
    return { blocks, tables, warning: noTextWarning(empty, selected.length) };
  }
  const ext = /\.([^.]+)$/.exec(input.name)?.[1].toLowerCase() ?? '';
  if (!['md', 'markdown', 'txt', 'text'].includes(ext) && !input.type.startsWith('text/')) {
    throw invalidInput(`${input.name} is not a PDF, Markdown (.md) or text (.txt) file`);
  }
  const bytes = await readFile(input.path);
  if (bytes.subarray(0, 4096).includes(0)) throw invalidInput(`${input.name} is not a text file`);
  const blocks = splitBlocks(decodeText(bytes));
  if (!blocks.length) throw invalidInput(`${input.name} holds no text`);
  return { blocks };
}

/** UTF-8, or Windows-1252 for older text files that are not valid UTF-8. */
function decodeText(bytes: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes);
  }
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

const splitBlocks = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((b) => b.trim())
    .filter(Boolean);

/**
 * Greedy packing of blocks into parts of at most `maxTokens` (estimated); a block larger than that is cut
 * at sentence ends, then at spaces, then anywhere.
 */
export function chunk(blocks: string[], maxTokens: number): string[] {
  const parts: string[] = [];
  let current = '';
  const push = (piece: string) => {
    const next = current ? `${current}\n\n${piece}` : piece;
    if (estimateTokens(next) <= maxTokens) current = next;
    else {
      if (current) parts.push(current);
      current = piece;
    }
  };
  for (const block of blocks) {
    if (estimateTokens(block) <= maxTokens) push(block);
    else for (const piece of cut(block, maxTokens)) push(piece);
  }
  if (current) parts.push(current);
  return parts;
}

function cut(text: string, maxTokens: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const unit of text.split(/(?<=[.!?。！？])\s+|(?<=\s)/u)) {
    if (estimateTokens(line + unit) <= maxTokens) {
      line += line && !/\s$/.test(line) ? ` ${unit}` : unit;
      continue;
    }
    if (line) out.push(line.trim());
    line = unit;
    while (estimateTokens(line) > maxTokens) {
      // A run with no space (CJK, a long token): cut by characters, never inside a surrogate pair.
      const chars = [...line];
      const take = Math.max(1, Math.floor((maxTokens * 3) / 4));
      out.push(chars.slice(0, take).join(''));
      line = chars.slice(take).join('');
    }
  }
  if (line.trim()) out.push(line.trim());
  return out;
}

/** Runs `fn` over items, `limit` at a time, results in order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** One chat completion. `signal` is the job's: a cancelled job stops waiting for the model. */
export async function complete(llm: LlmConfig, messages: Message[], maxTokens: number, signal: AbortSignal): Promise<Completion> {
  const timeout = AbortSignal.timeout(llm.timeoutMs);
  let res: Response;
  try {
    res = await fetch(`${llm.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(llm.apiKey ? { authorization: `Bearer ${llm.apiKey}` } : {}) },
      body: JSON.stringify({ model: llm.model, messages, max_tokens: maxTokens, temperature: 0.2, stream: false }),
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch {
    signal.throwIfAborted();
    if (timeout.aborted) throw unavailable(`did not answer within ${llm.timeoutMs / 1000} s (LLM_TIMEOUT_SECONDS)`);
    throw unavailable('cannot be reached');
  }
  const raw = await res.text().catch(() => '');
  if (!res.ok) {
    const detail = upstreamMessage(raw);
    if (res.status === 400 && /context|too long|maximum|tokens/i.test(detail)) {
      throw new AppError('out_of_range', "The request is too large for the language model's context window: select fewer pages or a smaller target_word_count");
    }
    const retry = res.headers.get('retry-after');
    const hint = res.status === 401 || res.status === 403 ? ': check LLM_API_KEY' : res.status === 404 ? ': check LLM_URL and LLM_MODEL' : '';
    // The upstream's own text stays out: it may name internals or echo part of the key.
    throw unavailable(`answered HTTP ${res.status}${hint}`, retry);
  }
  let body: { choices?: { message?: { content?: unknown }; finish_reason?: string }[] };
  try {
    body = JSON.parse(raw);
  } catch {
    throw unavailable('answered with something that is not chat-completions JSON');
  }
  const choice = body.choices?.[0];
  if (typeof choice?.message?.content !== 'string') throw unavailable('answered without a message (choices[0].message.content)');
  return { text: choice.message.content.trim(), truncated: choice.finish_reason === 'length' };
}

const unavailable = (what: string, retryAfter?: string | null) =>
  new AppError('engine_missing', `The language model at LLM_URL ${what}. Try again later.`, retryAfter ? { 'retry-after': retryAfter } : {});

/** OpenAI-style `{error: {message}}`, or the text itself. */
function upstreamMessage(raw: string): string {
  try {
    const j = JSON.parse(raw);
    const m = j?.error?.message ?? j?.error ?? j?.message;
    return typeof m === 'string' ? m : '';
  } catch {
    return raw.replace(/\s+/g, ' ').trim().slice(0, 200);
  }
}

export const TRUNCATED_WARNING = 'The language model stopped at its length limit, so the text may be cut short.';
