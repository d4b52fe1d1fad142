import { type Box, isListMarker, type Line, type PageModel, type TableItem } from './layout.js';

/**
 * Markdown from the page model: the blocks every text export shares (headings, paragraphs, lists, tables; /markdown
 * and /word), page furniture, and the Markdown text itself.
 */

export interface MarkdownOptions {
  pageBreakComments: boolean;
}

/**
 * Markdown from the model: headings from size (larger than the body text, levels by size rank) and weight
 * (a short bold line on its own), paragraphs joined across line breaks (hyphenation undone), bulleted and
 * numbered lists, tables as pipe tables.
 */
const LIST_LINE = /^(- |\d+\. )/;

/**
 * A block of text as the Markdown builder (and /word) sees it: a heading (level 1-6), a paragraph, a list item
 * (`marker` is `-` or `N.`), or a table; with the rows it was made of, in reading order.
 */
export type TextBlock<L extends BlockLine = Line> =
  | { kind: 'p' | 'h' | 'li'; level: number; text: string; lines: L[]; marker?: string }
  | (TableItem & { kind: 'table' });

/** What the block builder reads of a row: a Line, or the thin copy of one kept for a whole document (thinPage). */
export interface BlockLine {
  text: string;
  size: number;
  bold: boolean;
  box: Box;
  vertical: boolean;
  words: { text: string }[];
}

/** What the block builder reads of a page: every row (tables' too, for the sizes), and the items in reading order. */
export interface BlockPage<L extends BlockLine = Line> {
  page: number;
  /** The displayed page's height: where its top and bottom bands are (page furniture). */
  height?: number;
  lines: L[];
  items: ({ kind: 'line'; line: L } | TableItem)[];
}

/**
 * A page as Markdown needs it once laid out: rows with their text, size, weight and box, tables with their cells'
 * text. Without the words' corners, fonts and colours it is a tenth of the page model, so a whole document's pages
 * can wait for the sizes of all of them (heading levels are ranked across the document).
 */
export function thinPage(page: PageModel): BlockPage<BlockLine> {
  const thin = (l: Line): BlockLine => ({
    text: l.text,
    size: l.size,
    bold: l.bold,
    box: l.box,
    vertical: l.vertical,
    words: l.words.map((w) => ({ text: w.text })),
  });
  const lines = new Map(page.lines.map((l) => [l, thin(l)]));
  return {
    page: page.page,
    height: page.height,
    lines: [...lines.values()],
    items: page.items.map((it) =>
      it.kind === 'line' ? { kind: 'line', line: lines.get(it.line) ?? thin(it.line) } : { kind: 'table', rows: it.rows, lines: [] },
    ),
  };
}

/** Blocks of each page: headings from size and weight, paragraphs joined across line breaks, list items, tables. */
export function textBlocks<L extends BlockLine>(pages: BlockPage<L>[]): TextBlock<L>[][] {
  const all = pages.flatMap((p) => p.lines);
  const body = bodySize(all);
  const headingSizes = [...new Set(all.filter((l) => l.size >= body * 1.15 && l.text.length > 1).map((l) => Math.round(l.size * 2) / 2))].sort((a, b) => b - a);
  const levelOf = (l: L): number => {
    const s = Math.round(l.size * 2) / 2;
    if (s >= body * 1.15) return Math.min(6, headingSizes.indexOf(s) + 1 || headingSizes.length);
    if (l.bold && l.words.length <= 12 && !/[.,;:]$/.test(l.text) && !isListMarker(l.words[0].text)) return Math.min(6, headingSizes.length + 1);
    return 0;
  };
  const joinText = (a: string, b: string) => (/[A-Za-z]-$/.test(a) && /^[a-z]/.test(b) ? a.slice(0, -1) + b : `${a} ${b}`);
  return pages.map((page) => {
    const out: TextBlock<L>[] = [];
    for (const item of page.items) {
      const prev = out[out.length - 1];
      if (item.kind === 'table') {
        out.push(item);
        continue;
      }
      const line = item.line;
      const level = levelOf(line);
      const first = line.words[0].text;
      const last = prev && prev.kind !== 'table' ? prev.lines[prev.lines.length - 1] : undefined;
      if (level) {
        if (prev?.kind === 'h' && prev.level === level && close(last!, line)) {
          prev.text = `${prev.text} ${line.text}`;
          prev.lines.push(line);
        } else out.push({ kind: 'h', level, text: line.text, lines: [line] });
        continue;
      }
      if (isListMarker(first) && line.words.length > 1) {
        const numbered = /\d|^\(?[a-zA-Z]{1,5}[.)]$/.test(first) && !/^[-–—*•]$/.test(first);
        const n = /(\d+)/.exec(first)?.[1];
        out.push({
          kind: 'li',
          level: 0,
          text: line.words
            .slice(1)
            .map((w) => w.text)
            .join(' '),
          lines: [line],
          marker: numbered ? `${n ?? 1}.` : '-',
        });
        continue;
      }
      if (last && (prev.kind === 'p' || prev.kind === 'li') && continues(last, line, prev.kind === 'li')) {
        prev.text = joinText(prev.text, line.text);
        prev.lines.push(line);
        continue;
      }
      out.push({ kind: 'p', level: 0, text: line.text, lines: [line] });
    }
    return out;
  });
}

export function toMarkdown(pages: BlockPage<BlockLine>[], opts: MarkdownOptions): string {
  return [...markdownParts(pages, opts)].join('');
}

/**
 * Page furniture: rows in the top or bottom tenth of their page whose text, numbers aside, recurs at about the same
 * height on at least half of the pages (and 3 or more): running heads and feet, page numbers ("9", "Page 9 of 20").
 */
export function pageFurniture(pages: BlockPage<BlockLine>[]): Set<BlockLine> {
  const found = new Set<BlockLine>();
  if (pages.length < 3) return found;
  const inBand = (p: BlockPage<BlockLine>, l: BlockLine) => !!p.height && (l.box.y1 < p.height * 0.1 || l.box.y0 > p.height * 0.9);
  const key = (l: BlockLine) => `${Math.round(l.box.y0 / 8)}|${l.text.replace(/\d+/g, '#').trim()}`;
  const count = new Map<string, number>();
  for (const p of pages) {
    for (const k of new Set(p.lines.filter((l) => inBand(p, l)).map(key))) count.set(k, (count.get(k) ?? 0) + 1);
  }
  const enough = Math.max(3, Math.ceil(pages.length / 2));
  for (const p of pages) for (const l of p.lines) if (inBand(p, l) && (count.get(key(l)) ?? 0) >= enough) found.add(l);
  return found;
}

/**
 * toMarkdown in parts, a page's at a time, for writing to a file as they come. Page furniture is left out (with
 * page_break_comments, kept as a comment after the page's).
 */
export function* markdownParts(pages: BlockPage<BlockLine>[], opts: MarkdownOptions): Generator<string> {
  let previous: string | undefined;
  const furniture = pageFurniture(pages);
  const body = furniture.size
    ? pages.map((p) => ({
        ...p,
        lines: p.lines.filter((l) => !furniture.has(l)),
        items: p.items.filter((it) => it.kind !== 'line' || !furniture.has(it.line)),
      }))
    : pages;
  const blocks = textBlocks(body);
  for (const [i, page] of blocks.entries()) {
    const out: string[] = [];
    if (opts.pageBreakComments) {
      out.push(`<!--Page ${pages[i].page}-->`);
      // A comment cannot hold "--".
      for (const l of pages[i].lines.filter((x) => furniture.has(x))) out.push(`<!--Furniture: ${l.text.replace(/-{2,}/g, (d) => d.split('').join(' '))}-->`);
    }
    for (const b of page) {
      if (b.kind === 'table') out.push(tableMarkdown(b.rows));
      else if (b.kind === 'h') out.push(`${'#'.repeat(b.level)} ${b.text}`);
      else if (b.kind === 'li') out.push(`${b.marker} ${b.text}`);
      else out.push(escapeLead(b.text));
    }
    // Blocks apart by a blank line, list items by a line break.
    let part = '';
    for (const b of out) {
      part += previous === undefined ? b : (LIST_LINE.test(b) && LIST_LINE.test(previous) ? '\n' : '\n\n') + b;
      previous = b;
    }
    blocks[i] = [];
    yield part;
  }
  yield '\n';
}

function bodySize(lines: BlockLine[]): number {
  const by = new Map<number, number>();
  for (const l of lines) {
    const s = Math.round(l.size * 2) / 2;
    by.set(s, (by.get(s) ?? 0) + l.text.length);
  }
  return [...by.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10;
}

/** Two rows close enough in the same column to belong to one heading. */
const close = (a: BlockLine, b: BlockLine) => b.box.y0 - a.box.y1 < 0.6 * a.size && b.box.x0 < a.box.x1 && b.box.x1 > a.box.x0;

/** Does `b` continue the paragraph (or list item) that `a` ended? */
function continues(a: BlockLine, b: BlockLine, listItem: boolean): boolean {
  if (b.vertical || a.vertical) return a.vertical === b.vertical && Math.abs(a.size - b.size) < 0.5;
  if (Math.abs(a.size - b.size) > 0.6) return false;
  // A sentence cut by a column break goes on at the top of the next column.
  const nextColumn = b.box.x0 >= a.box.x1 - a.size && b.box.y1 < a.box.y0;
  if (nextColumn) return !/[.!?:]["'”’)]?$/.test(a.text) && /^[\p{Ll}\d(]/u.test(b.text);
  const gap = b.box.y0 - a.box.y1;
  if (gap < -0.5 * a.size || gap > 0.75 * a.size) return false;
  if (b.box.x0 >= a.box.x1 || b.box.x1 <= a.box.x0) return false; // another column
  if (listItem) return b.box.x0 > a.box.x0 + 0.5 * a.size; // a wrapped item is indented past its marker
  // A first-line indent starts a new paragraph.
  if (b.box.x0 > a.box.x0 + 0.8 * a.size && Math.abs(b.box.x1 - a.box.x1) < 2 * a.size && a.box.x1 - a.box.x0 < (b.box.x1 - b.box.x0) * 0.95) return false;
  if (b.box.x0 > a.box.x0 + 0.8 * a.size) return false;
  return true;
}

const escapeLead = (s: string) => s.replace(/^(#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/, '\\$1');

function tableMarkdown(rows: string[][]): string {
  const cols = Math.max(...rows.map((r) => r.length));
  const cell = (s: string | undefined) => (s ?? '').replace(/\|/g, '\\|');
  const line = (r: string[]) => `| ${Array.from({ length: cols }, (_, i) => cell(r[i])).join(' | ')} |`;
  return [line(rows[0]), `|${' --- |'.repeat(cols)}`, ...rows.slice(1).map(line)].join('\n');
}
