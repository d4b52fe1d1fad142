import { apertiumModes, apertiumTranslateHtml } from '../../engines/apertium.js';
import type { EngineContext } from '../../engines/context.js';
import { AppError } from '../errors.js';

/**
 * Translation without a language model: Apertium, for the pairs installed. Markdown structure survives because
 * only text runs are translated: each line's markup (heading marks, list markers, table pipes, code) stays out
 * of the translated text, inline emphasis and links travel as HTML tags Apertium keeps in place, and code spans
 * and URLs as empty placeholder tags.
 */

export interface OfflinePair {
  from: string;
  to: string;
  mode: string;
}

/** `eng-spa` -> en/es; variant modes (`eng-cat_valencia`, `en-eo-bytecode`) are left out. */
export async function offlinePairs(): Promise<OfflinePair[]> {
  const pairs: OfflinePair[] = [];
  for (const mode of await apertiumModes()) {
    const m = /^([a-z]{2,3})-([a-z]{2,3})$/.exec(mode);
    if (!m) continue;
    const [from, to] = [canonical(m[1]), canonical(m[2])];
    if (from && to && !pairs.some((p) => p.from === from && p.to === to)) pairs.push({ from, to, mode });
  }
  return pairs.sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}

function canonical(code: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(code)[0];
  } catch {
    return undefined;
  }
}

export const describePairs = (pairs: OfflinePair[]) =>
  pairs.length ? pairs.map((p) => `${p.from}->${p.to}`).join(', ') : 'none (no Apertium language pair is installed)';

/** The Apertium pair from `source` to the language of `target` (a tag such as es-419), or a 503 naming LLM_URL. */
export async function offlinePair(source: string | undefined, target: string): Promise<OfflinePair> {
  const pairs = await offlinePairs();
  const to = target.split('-')[0].toLowerCase();
  const pair = source && pairs.find((p) => p.from === source && p.to === to);
  if (pair) return pair;
  const what = source ? `from ${source} to ${to}` : 'for a document whose language could not be detected';
  throw new AppError(
    'engine_missing',
    `No language model is configured (LLM_URL), and offline translation ${what} is not available. Offline pairs (Apertium): ${describePairs(pairs)}`,
  );
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const unescapeHtml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Inline Markdown -> HTML Apertium keeps: code and URLs become placeholders restored afterwards. */
function toHtml(text: string, kept: string[]): string {
  const hold = (s: string) => `\u0000${kept.push(s) - 1}\u0000`;
  const held = text
    // The placeholder marks below must not occur in the text itself.
    .replace(/[\u0000-\u0003]/g, '')
    .replace(/`[^`]+`/g, (c) => hold(c))
    .replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (_, label: string, url: string) => `\u0001${label}\u0002${hold(url)}\u0003`)
    .replace(/https?:\/\/\S+/g, (u) => hold(u));
  return escapeHtml(held)
    .replace(/\*\*(\S(?:.*?\S)?)\*\*/g, '<b>$1</b>')
    .replace(/(^|[\s(])[*_](\S(?:.*?\S)?)[*_](?=$|[\s).,;:!?])/g, '$1<i>$2</i>')
    .replace(/\u0001(.*?)\u0002\u0000(\d+)\u0000\u0003/g, '<a href="#q$2">$1</a>')
    .replace(/\u0000(\d+)\u0000/g, '<br data-q="$1">');
}

function fromHtml(html: string, kept: string[]): string {
  return unescapeHtml(
    html
      .replace(/<a href="#q(\d+)">([\s\S]*?)<\/a>/g, (_, i: string, label: string) => `[${label.trim()}](${kept[Number(i)]})`)
      .replace(/<br data-q="(\d+)">/g, (_, i: string) => kept[Number(i)])
      .replace(/<b>([\s\S]*?)<\/b>/g, '**$1**')
      .replace(/<i>([\s\S]*?)<\/i>/g, '*$1*')
      .replace(/<[^>]+>/g, ''),
  )
    .replace(/\s+/g, ' ')
    .trim();
}

interface Line {
  /** Text runs of the line, each with the markup before it; `tail` is the markup after the last one. */
  parts: { before: string; text: string }[];
  tail: string;
}

/** Splits a Markdown line into markup and text runs. */
function parseLine(line: string, inFence: boolean): Line {
  const verbatim = { parts: [], tail: line };
  if (
    inFence ||
    !line.trim() ||
    /^\s*(```|~~~)/.test(line) ||
    /^\s*\|?[\s:|-]+\|[\s:|-]*$/.test(line) ||
    /^\s*([-*_]\s*){3,}$/.test(line) ||
    /^\s*<!--.*-->\s*$/.test(line)
  )
    return verbatim;
  if (line.trim().startsWith('|')) {
    const cells = line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|');
    return { parts: cells.map((c, i) => ({ before: i ? ' | ' : '| ', text: c.trim() })), tail: ' |' };
  }
  const m = /^(\s*(?:#{1,6}\s+|>\s*|[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)*)(.*)$/.exec(line)!;
  return { parts: [{ before: m[1], text: m[2] }], tail: '' };
}

/**
 * Text runs per Apertium call: its cost per line grows with the length of its input (2,000 lines 1.1 ms a line of
 * CPU, 17,000 lines 1.4 ms), and a whole book in one call would also be one file of it in and out at once.
 */
const PART_RUNS = 2000;

/**
 * Translates Markdown (or plain text) through Apertium, line structure kept. Every text run is a <p> of an HTML
 * document of at most PART_RUNS runs, translated one part after the other, read back in order. One part at a
 * time: a pipeline's stages are one process each and already run side by side (1.4 cores busy for one part of
 * 2,000 runs), and each pipeline holds ~240 MB (eight processes with their dictionaries), which a second one at
 * once would add to the job's peak.
 */
export async function translateOffline(markdown: string, pair: OfflinePair, ctx: EngineContext): Promise<string> {
  let fence = false;
  const lines = markdown.split('\n').map((l) => {
    const parsed = parseLine(l, fence);
    if (/^\s*(```|~~~)/.test(l)) fence = !fence;
    return parsed;
  });
  const kept: string[] = [];
  const runs = lines.flatMap((l) => l.parts.filter((p) => p.text).map((p) => `<p>${toHtml(p.text, kept)}</p>`));
  if (!runs.length) return markdown;
  const parts: string[][] = [];
  for (let i = 0; i < runs.length; i += PART_RUNS) parts.push(runs.slice(i, i + PART_RUNS));
  const translated: string[] = [];
  for (const part of parts) {
    const out = await apertiumTranslateHtml(pair.mode, part.join('\n'), ctx);
    for (const m of out.matchAll(/<p>([\s\S]*?)<\/p>/g)) translated.push(fromHtml(m[1], kept));
  }
  if (translated.length !== runs.length) throw new Error(`apertium returned ${translated.length} of ${runs.length} text runs`);
  let next = 0;
  return lines.map((l) => l.parts.map((p) => p.before + (p.text ? translated[next++] : '')).join('') + l.tail).join('\n');
}

/** Markdown markup removed, for output_format=plaintext: headings as lines, table cells separated by tabs. */
export function markdownToPlain(md: string): string {
  return md
    .split('\n')
    .filter((l) => !/^\s*\|?[\s:|-]+\|[\s:|-]*$/.test(l))
    .map((l) =>
      (l.trim().startsWith('|')
        ? l
            .trim()
            .replace(/^\|\s*|\s*\|$/g, '')
            .split(/\s*\|\s*/)
            .join('\t')
        : l.replace(/^(\s*)#{1,6}\s+/, '$1').replace(/^(\s*)>\s?/, '$1')
      )
        .replace(/\*\*|__|`/g, '')
        .replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, '$1 ($2)'),
    )
    .join('\n');
}
