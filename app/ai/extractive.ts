import type { Line } from '../document/index.js';
import { AppError } from '../errors.js';

/**
 * The summary a server without a language model can still give honestly: the document's own sentences, chosen
 * by LexRank (TF-IDF cosine similarity between sentences, PageRank over that graph: a sentence that many others
 * resemble is central), kept in document order within the word target; and the headings the page model found,
 * for a table of contents or an outline. Nothing is rewritten, so formats that need writing (abstract,
 * question_answer, action_items) are left to the model.
 */

export const EXTRACTIVE_FORMATS = ['overview', 'highlight', 'bullet_points', 'numbered_list', 'table_of_contents', 'outline'] as const;
export type ExtractiveFormat = (typeof EXTRACTIVE_FORMATS)[number];
export const isExtractiveFormat = (f: string): f is ExtractiveFormat => (EXTRACTIVE_FORMATS as readonly string[]).includes(f);

export const EXTRACTIVE_WARNING =
  "Summarized without a language model (LLM_URL is not set): the summary is made of the document's own sentences chosen by LexRank sentence scoring, not written.";

interface Unit {
  kind: 'h' | 'p';
  level: number;
  text: string;
}

interface Sentence {
  text: string;
  unit: number;
  words: number;
  terms: Map<string, number>;
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
/** Whitespace-separated words, and each CJK character as one (those scripts put no spaces between words). */
export const countWords = (s: string) => (s.replace(CJK, ' ').match(/\S+/g)?.length ?? 0) + (s.match(CJK)?.length ?? 0);

const inline = (s: string) =>
  s
    .replace(/\*\*|__|`/g, '')
    .replace(/(^|\s)[*_](\S[^*_]*\S|\S)[*_](?=\s|[.,;:!?]|$)/g, '$1$2')
    // A word cut at a line end and joined back by the page model or the table unrolling.
    .replace(/(\p{Ll})- (\p{Ll})/gu, '$1$2')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * A table's text read down each column, word by word: the page model reports multi-column prose it cannot
 * separate (three-column pages such as the Federal Register's) as a table whose rows mix lines of neighbouring
 * columns, and down a column is the way that text reads. Columns start where lines start (left edges further
 * apart than two font sizes); each word goes to the column its left edge is in.
 */
export function tableColumns(lines: Line[]): string[] {
  const words = lines.flatMap((l) => l.words.map((w) => ({ w, line: l })));
  if (!words.length) return [];
  const size = lines.map((l) => l.size).sort((a, b) => a - b)[Math.floor(lines.length / 2)] || 10;
  const starts: number[] = [];
  for (const x of lines.map((l) => l.box.x0).sort((a, b) => a - b)) if (!starts.length || x - starts[starts.length - 1] > 2 * size) starts.push(x);
  const columns = starts.map(() => new Map<Line, string[]>());
  for (const { w, line } of words) {
    let c = 0;
    while (c + 1 < starts.length && w.box.x0 >= starts[c + 1] - size / 2) c++;
    const row = columns[c].get(line) ?? [];
    row.push(w.text);
    columns[c].set(line, row);
  }
  return columns.map((col) =>
    [...col]
      .sort(([a], [b]) => a.box.y0 - b.box.y0 || a.box.x0 - b.box.x0)
      .map(([, ws]) => ws.join(' '))
      .join(' '),
  );
}

/** A Markdown pipe table: every line starts with `|`. */
export const isTableBlock = (block: string) => block.split('\n').every((l) => l.trim().startsWith('|'));

/**
 * Markdown blocks (as `documentText` gives them) as headings and prose units. A table is read column by column
 * (`tables`, from the page model, for PDFs; otherwise its cells down each column): a real table's cells seldom
 * make sentences, which are all that is kept.
 */
function units(blocks: string[], tables: (string[] | null)[] = []): Unit[] {
  const out: Unit[] = [];
  let table = 0;
  for (const block of blocks) {
    const h = /^(#{1,6})\s+(.+)$/.exec(block);
    if (h && !block.includes('\n')) {
      out.push({ kind: 'h', level: h[1].length, text: inline(h[2]) });
      continue;
    }
    const lines = block.split('\n');
    if (isTableBlock(block)) {
      const read = tables[table++];
      if (read) {
        for (const text of read) out.push({ kind: 'p', level: 0, text: inline(text) });
        continue;
      }
      const rows = lines
        .filter((l) => !/^\|[\s|:-]+\|$/.test(l.trim()))
        .map((l) =>
          l
            .trim()
            .replace(/^\||\|$/g, '')
            .split('|')
            .map((c) => c.trim()),
        );
      const columns = Math.max(...rows.map((r) => r.length));
      for (let c = 0; c < columns; c++)
        out.push({
          kind: 'p',
          level: 0,
          text: inline(
            rows
              .map((r) => r[c] ?? '')
              .filter(Boolean)
              .join(' '),
          ),
        });
      continue;
    }
    if (lines.every((l) => /^\s*([-*+]|\d+[.)])\s/.test(l))) {
      for (const l of lines) out.push({ kind: 'p', level: 0, text: inline(l.replace(/^\s*([-*+]|\d+[.)])\s+/, '')) });
      continue;
    }
    out.push({ kind: 'p', level: 0, text: inline(lines.join(' ')) });
  }
  return out.filter((u) => u.text);
}

const segmenter = new Intl.Segmenter('und', { granularity: 'sentence' });
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Whole sentences only: a terminal mark, not starting in lower case (the tail of a sentence cut by a page or
 * column break), some words, mostly letters (not a running header or a table row).
 */
function isSentence(s: string, words: number): boolean {
  if (!/[.!?。！？]["'”’)\]]*$/u.test(s) || /^["'“‘(]?\p{Ll}/u.test(s) || spliced(s)) return false;
  const cjk = s.match(CJK)?.length ?? 0;
  if (cjk ? cjk < 8 : words < 6 || words > 90) return false;
  const letters = s.match(/\p{L}/gu)?.length ?? 0;
  return letters / s.length > 0.6;
}

/** Abbreviations after which a lower-case word goes on the same sentence. */
const ABBREVIATION = /^(etc|al|vs|cf|approx|incl|esp|fig|figs|no|nos|vol|pp|ca|resp|viz)$/i;

/**
 * A sentence end followed by a lower-case word inside one "sentence": the sentence segmenter does not cut there,
 * but in a PDF it is the mark of text from another column or page joined in (a table read in the wrong order).
 */
function spliced(s: string): boolean {
  for (const m of s.matchAll(/([\p{L})\]”"'’]{2,})[.!?]["'”’)]*\s+\p{Ll}/gu)) {
    if (!ABBREVIATION.test(m[1].replace(/[^\p{L}]/gu, ''))) return true;
  }
  return false;
}

function terms(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const lower = s.toLowerCase();
  // CJK: character bigrams stand for words.
  const cjk = lower.match(CJK) ?? [];
  const tokens = (lower.replace(CJK, ' ').match(WORD) ?? []).filter((w) => w.length > 1 && !/^\d+$/.test(w));
  for (let i = 0; i + 1 < cjk.length; i++) tokens.push(cjk[i] + cjk[i + 1]);
  for (const t of tokens) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** Sentences by Unicode's rules, kept whole across an abbreviation's period ("Docket No. FAA-2020-0686"). */
function segments(text: string): string[] {
  const out: string[] = [];
  let carry = '';
  for (const { segment } of segmenter.segment(text)) {
    carry += segment;
    if (ABBREVIATION.test(/(\p{L}+)\.\s*$/u.exec(carry)?.[1] ?? '')) continue;
    out.push(carry.trim());
    carry = '';
  }
  if (carry.trim()) out.push(carry.trim());
  return out;
}

function sentences(us: Unit[]): Sentence[] {
  const out: Sentence[] = [];
  const seen = new Set<string>();
  us.forEach((u, i) => {
    if (u.kind === 'h') return;
    for (const text of segments(u.text)) {
      const words = countWords(text);
      // A sentence repeated (a running head, blind text) counts once.
      if (!isSentence(text, words) || seen.has(text)) continue;
      seen.add(text);
      out.push({ text, unit: i, words, terms: terms(text) });
    }
  });
  return out;
}

/** Sentences beyond this are scored against the document's centroid instead of each other (linear, not quadratic). */
const MAX_GRAPH = 1500;

/** LexRank scores (continuous variant: edges weighted by similarity). */
function lexRank(ss: Sentence[]): number[] {
  const df = new Map<string, number>();
  for (const s of ss) for (const t of s.terms.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const vectors = ss.map((s) => {
    const v = new Map<string, number>();
    let norm = 0;
    for (const [t, tf] of s.terms) {
      const w = tf * Math.log(ss.length / df.get(t)!);
      if (w > 0) {
        v.set(t, w);
        norm += w * w;
      }
    }
    norm = Math.sqrt(norm) || 1;
    for (const [t, w] of v) v.set(t, w / norm);
    return v;
  });
  const dot = (a: Map<string, number>, b: Map<string, number>) => {
    if (a.size > b.size) [a, b] = [b, a];
    let sum = 0;
    for (const [t, w] of a) sum += w * (b.get(t) ?? 0);
    return sum;
  };
  const n = ss.length;
  if (n > MAX_GRAPH) {
    const centroid = new Map<string, number>();
    for (const v of vectors) for (const [t, w] of v) centroid.set(t, (centroid.get(t) ?? 0) + w);
    return vectors.map((v) => dot(v, centroid));
  }
  // Sparse graph: each sentence's neighbours and the share of its weight each gets.
  const edges: { j: number; w: number }[][] = vectors.map(() => []);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const w = dot(vectors[i], vectors[j]);
      if (w > 0.05) {
        edges[i].push({ j, w });
        edges[j].push({ j: i, w });
      }
    }
  }
  const out = edges.map((e) => e.reduce((a, b) => a + b.w, 0));
  const d = 0.85;
  let score = new Float64Array(n).fill(1 / n);
  for (let iter = 0; iter < 50; iter++) {
    let dangling = 0;
    for (let j = 0; j < n; j++) if (!out[j]) dangling += score[j];
    const next = new Float64Array(n).fill((1 - d) / n + (d * dangling) / n);
    for (let j = 0; j < n; j++) for (const { j: i, w } of edges[j]) next[i] += (d * w * score[j]) / out[j];
    let delta = 0;
    for (let i = 0; i < n; i++) delta += Math.abs(next[i] - score[i]);
    score = next;
    if (delta < 1e-6) break;
  }
  return [...score];
}

/** The best sentences (not near-duplicates of one already taken) within `budget` words, in document order. */
function pick(ss: Sentence[], scores: number[], budget: number): Sentence[] {
  const order = ss.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  const chosen: number[] = [];
  let words = 0;
  for (const i of order) {
    if (words + ss[i].words > budget) continue;
    const a = ss[i].terms;
    const dup = chosen.some((j) => {
      const b = ss[j].terms;
      let common = 0;
      for (const t of a.keys()) if (b.has(t)) common++;
      return common / Math.min(a.size, b.size) > 0.7;
    });
    if (dup) continue;
    chosen.push(i);
    words += ss[i].words;
  }
  return chosen.sort((a, b) => a - b).map((i) => ss[i]);
}

/** The headings worth listing: not page numbers, not running heads (the same text three times or more). */
function headings(us: Unit[]): { index: number; level: number; text: string }[] {
  const count = new Map<string, number>();
  for (const u of us) if (u.kind === 'h') count.set(u.text, (count.get(u.text) ?? 0) + 1);
  return us.flatMap((u, index) => (u.kind === 'h' && /\p{L}{2}/u.test(u.text) && count.get(u.text)! < 3 ? [{ index, level: u.level, text: u.text }] : []));
}

export interface ExtractiveOptions {
  targetWords: number;
  /** Lists use "-" and "1." at line starts, which plain text shares with Markdown. */
  format: ExtractiveFormat;
}

/** `tables`: as `documentText` gives them for PDFs. */
export function extractiveSummary(blocks: string[], o: ExtractiveOptions, tables?: (string[] | null)[]): string {
  const us = units(blocks, tables);
  const hs = headings(us);
  const list = (lines: { depth: number; text: string }[], numbered = false) => {
    // A list nests one level at a time: a level-2 heading before any level 1 is not indented twice.
    let prev = -1;
    return lines
      .map((l, i) => {
        prev = Math.min(l.depth, prev + 1);
        return `${'  '.repeat(prev)}${numbered ? `${i + 1}.` : '-'} ${l.text}`;
      })
      .join('\n');
  };
  const minLevel = Math.min(...hs.map((h) => h.level));

  if (o.format === 'table_of_contents') {
    if (!hs.length) throw noHeadings();
    let words = 0;
    const kept = hs.filter((h) => (words += countWords(h.text)) <= o.targetWords);
    return list(kept.map((h) => ({ depth: h.level - minLevel, text: h.text })));
  }

  const ss = sentences(us);
  if (!ss.length) {
    throw new AppError(
      'invalid_input',
      'No whole sentences were found in the document for an extractive summary; a server with a language model (LLM_URL) can summarize it',
    );
  }
  const scores = lexRank(ss);

  if (o.format === 'outline') {
    if (!hs.length) throw noHeadings();
    // Headings first (the structure), then each section's best sentences while words remain.
    let words = 0;
    const kept = hs.filter((h) => (words += countWords(h.text)) <= o.targetWords);
    const chosen = pick(ss, scores, Math.max(0, o.targetWords - words));
    const lines: { depth: number; text: string }[] = [];
    for (const s of chosen.filter((c) => c.unit < (kept[0]?.index ?? Infinity))) lines.push({ depth: 0, text: s.text });
    kept.forEach((h, k) => {
      lines.push({ depth: h.level - minLevel, text: h.text });
      const end = kept[k + 1]?.index ?? Infinity;
      for (const s of chosen) if (s.unit > h.index && s.unit < end) lines.push({ depth: h.level - minLevel + 1, text: s.text });
    });
    return list(lines);
  }

  const chosen = pick(ss, scores, o.targetWords);
  if (!chosen.length) {
    // No sentence fits the target: the best one's first words, marked as cut.
    const best = ss[scores.indexOf(Math.max(...scores))];
    return `${best.text.split(/\s+/).slice(0, Math.max(1, o.targetWords)).join(' ')}…`;
  }
  if (o.format === 'overview') {
    // Prose: sentences of one source paragraph stay together.
    const paras: string[] = [];
    let last = -1;
    for (const s of chosen) {
      if (s.unit === last) paras[paras.length - 1] += ` ${s.text}`;
      else paras.push(s.text);
      last = s.unit;
    }
    return paras.join('\n\n');
  }
  return list(
    chosen.map((s) => ({ depth: 0, text: s.text })),
    o.format === 'numbered_list',
  );
}

const noHeadings = () =>
  new AppError(
    'invalid_input',
    'The document has no headings to list: without a language model (LLM_URL) table_of_contents and outline are built from the headings found on its pages; use overview, highlight, bullet_points or numbered_list',
  );
