import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { AppError, invalidInput, outOfRange } from '../../errors.js';
import { escapeHtml } from './html.js';
import type { StructuredOptions } from './options.js';

/** Plain text, CSV, JSON and XML -> HTML bodies for the structured-text print CSS (options.ts). */

/** Deeper data is refused before anything walks it recursively. */
const MAX_DEPTH = 100;
/** More columns than this lay a table (`auto` orientation) across a landscape page. */
const WIDE_COLUMNS = 8;

/** reflow: paragraphs (blank-line separated) whose lines are joined and wrapped to the page; preserve: every line as it is. */
export function plainTextHtml(text: string, o: StructuredOptions): string {
  if ((o.plain_text?.line_handling ?? 'preserve') === 'preserve') return `<pre class="text">${escapeHtml(text)}</pre>`;
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${escapeHtml(p.replace(/\s*\r?\n\s*/g, ' '))}</p>`)
    .join('\n');
}

const NUMBER = /^\s*[-+]?[$€£¥]?\s*(\d{1,3}([,.' ]\d{3})*|\d+)([.,]\d+)?\s*%?\s*$/;

/**
 * A table: the first row as its header (unless `first_row_is_header` is false), per-column alignment (columns
 * whose every value is a number are right-aligned unless `csv.columns` says otherwise) and width weights
 * (`csv.columns[].width_weight`, else `style.table.column_width_weights` by position).
 */
export function csvHtml(text: string, name: string, o: StructuredOptions): { html: string; wide: boolean } {
  const c = o.csv ?? {};
  let rows: string[][];
  try {
    rows = parseCsv(text, { delimiter: c.delimiter ?? ',', relax_column_count: true, relax_quotes: true, skip_empty_lines: true, bom: true });
  } catch (err) {
    throw invalidInput(`${name} is not readable CSV (${(err as Error).message.slice(0, 200)})`);
  }
  const columns = rows.reduce((n, r) => Math.max(n, r.length), 0);
  for (const [i, col] of (c.columns ?? []).entries()) {
    if (col.index >= columns) throw outOfRange(col.index, `structured_text_options.csv.columns[${i}].index (the CSV has ${columns} columns)`);
  }
  const header = c.first_row_is_header !== false && rows.length ? rows[0] : null;
  const body = header ? rows.slice(1) : rows;
  const align = Array.from({ length: columns }, (_, i) => {
    const set = c.columns?.find((col) => col.index === i)?.text_align;
    if (set) return set;
    const values = body.map((r) => r[i] ?? '').filter((v) => v.trim());
    return values.length && values.every((v) => NUMBER.test(v)) ? 'right' : 'left';
  });
  const weights = Array.from(
    { length: columns },
    (_, i) => c.columns?.find((col) => col.index === i)?.width_weight ?? o.style?.table?.column_width_weights?.[i],
  );
  const sized = weights.some((w) => w !== undefined);
  const total = weights.reduce<number>((a, w) => a + (w ?? 1), 0);
  const colgroup = sized ? `<colgroup>${weights.map((w) => `<col style="width: ${(((w ?? 1) / total) * 100).toFixed(3)}%">`).join('')}</colgroup>` : '';
  const cells = (r: string[], tag: 'th' | 'td') =>
    align.map((a, i) => `<${tag}${tag === 'th' ? ' scope="col"' : ''} style="text-align: ${a}">${escapeHtml(r[i] ?? '')}</${tag}>`).join('');
  const html = [
    `<table${sized ? ' style="width: 100%; table-layout: fixed"' : ''}>`,
    colgroup,
    header ? `<thead><tr>${cells(header, 'th')}</tr></thead>` : '',
    `<tbody>${body.map((r) => `<tr>${cells(r, 'td')}</tr>`).join('\n')}</tbody>`,
    '</table>',
  ].join('');
  return { html, wide: columns > WIDE_COLUMNS };
}

const presentation = (o: StructuredOptions) => o.data_presentation ?? 'source';
const sourceHtml = (text: string) => `<pre class="code">${escapeHtml(text)}</pre>`;

/** source: the text as written (syntax and indentation kept); hierarchy: nested lists of keys and values. */
export function jsonHtml(text: string, name: string, o: StructuredOptions): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidInput(`${name} is not valid JSON (${(err as Error).message.slice(0, 200)})`);
  }
  checkDepth(value, name, 1);
  if (presentation(o) === 'source') return sourceHtml(text);
  return `<ul class="tree">${jsonItem(null, value)}</ul>`;
}

function jsonItem(key: string | null, v: unknown): string {
  const label = key === null ? '' : `<span class="key">${escapeHtml(key)}</span>`;
  if (v !== null && typeof v === 'object') {
    const entries = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x] as const) : Object.entries(v);
    const inner = entries.length
      ? `<ul>${entries.map(([k, x]) => jsonItem(k, x)).join('')}</ul>`
      : ` <span class="empty">${Array.isArray(v) ? '(empty list)' : '(empty)'}</span>`;
    return key === null && entries.length ? entries.map(([k, x]) => jsonItem(k, x)).join('') : `<li>${label}${inner}</li>`;
  }
  const shown = typeof v === 'string' ? escapeHtml(v) : String(v);
  return `<li>${label}${label ? ': ' : ''}${shown}</li>`;
}

type XmlNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/** XML with a DOCTYPE is refused (entities, external or expanding, are never resolved). */
export function xmlHtml(text: string, name: string, o: StructuredOptions): string {
  if (/<!DOCTYPE/i.test(text)) throw invalidInput(`${name}: XML with a DOCTYPE is not accepted`);
  let nodes: XmlNode[];
  try {
    const valid = XMLValidator.validate(text);
    if (valid !== true) throw invalidInput(`${name} is not well-formed XML (line ${valid.err.line}: ${valid.err.msg.slice(0, 200)})`);
    nodes = new XMLParser({
      preserveOrder: true,
      ignoreAttributes: false,
      attributeNamePrefix: '',
      trimValues: true,
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
    }).parse(text) as XmlNode[];
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw invalidInput(`${name} is not readable XML (${(err as Error).message.slice(0, 200)})`);
  }
  // Each element is an object in its parent's array: two levels per element.
  checkDepth(nodes, name, 2);
  if (presentation(o) === 'source') return sourceHtml(text);
  return `<ul class="tree">${nodes.map(xmlItem).join('')}</ul>`;
}

function xmlItem(node: XmlNode): string {
  if ('#text' in node) return `<li>${escapeHtml(String(node['#text']))}</li>`;
  const tag = Object.keys(node).find((k) => k !== ':@');
  if (!tag) return '';
  const attrs = Object.entries(node[':@'] ?? {})
    .map(([k, v]) => ` <span class="attr">${escapeHtml(k)}="${escapeHtml(String(v))}"</span>`)
    .join('');
  const children = (node[tag] as XmlNode[]) ?? [];
  // An element holding only text reads as `name: text` on one line.
  if (children.length === 1 && '#text' in children[0])
    return `<li><span class="key">${escapeHtml(tag)}</span>${attrs}: ${escapeHtml(String(children[0]['#text']))}</li>`;
  return `<li><span class="key">${escapeHtml(tag)}</span>${attrs}${children.length ? `<ul>${children.map(xmlItem).join('')}</ul>` : ''}</li>`;
}

/** Walked without recursion: that is what a deep document would overflow. */
function checkDepth(value: unknown, name: string, levelsPerLevel: number): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_DEPTH * levelsPerLevel) throw new AppError('invalid_input', `${name} nests more than ${MAX_DEPTH} levels deep`);
    for (const x of Object.values(v)) stack.push([x, depth + 1]);
  }
}
