import { mostlyRtl } from './bidi.js';
import { type Box, isListMarker, type Line, type PageModel } from './layout.js';

/**
 * Markdown from the page model: the blocks every text export shares (headings, paragraphs, lists, tables; /markdown
 * and /word), page furniture, and the Markdown text itself.
 */

export interface MarkdownOptions {
  pageBreakComments: boolean;
  /** The document's outline (bookmarks): where present, heading levels come from it. */
  outline?: OutlineEntry[];
}

/** One outline entry as the block builder uses it (engines/qpdf-outline reads them). */
export interface OutlineEntry {
  title: string;
  level: number;
  page?: number;
}

const LIST_LINE = /^\s*(- |\d+\. )/;

/**
 * A block of text as the Markdown builder (and /word) sees it: a heading (level 1-6), a paragraph, a list item
 * (`marker` is `-` or `N.`, `level` its nesting from 0), a code block (monospaced rows, one line each), or a
 * table; with the rows it was made of, in reading order.
 */
export type TextBlock<L extends BlockLine = Line> =
  | { kind: 'p' | 'h' | 'li' | 'code'; level: number; text: string; lines: L[]; marker?: string }
  | (BlockTable<L> & { kind: 'table' });

/** What the block builder reads of a row: a Line, or the thin copy of one kept for a whole document (thinPage). */
export interface BlockLine {
  text: string;
  size: number;
  bold: boolean;
  box: Box;
  vertical: boolean;
  words: { text: string; font?: { name: string } }[];
  /** Mostly right-to-left letters (thinPage says; otherwise read from the text). */
  rtl?: boolean;
  /** Every word in a monospaced font (thinPage says; otherwise read from the words' fonts). */
  mono?: boolean;
}

/** A table as the block builder reads it: the text of each cell, and (when kept) the rows of each cell. */
export interface BlockTable<L extends BlockLine = Line> {
  kind: 'table';
  rows: string[][];
  lines: L[];
  cells?: L[][][];
  cuts?: number[];
}

/** What the block builder reads of a page: every row (tables' too, for the sizes), and the items in reading order. */
export interface BlockPage<L extends BlockLine = Line> {
  page: number;
  /** The displayed page's height: where its top and bottom bands are (page furniture). */
  height?: number;
  lines: L[];
  items: ({ kind: 'line'; line: L } | BlockTable<L>)[];
}

const MONO = /mono|courier|consol|menlo|inconsolata|typewriter|code|CMTT|SFTT|LMMono|Fixed/i;
const isRtl = (l: BlockLine) => l.rtl ?? mostlyRtl(l.text);
const isMono = (l: BlockLine) => l.mono ?? (l.words.length > 0 && l.words.every((w) => !!w.font && MONO.test(w.font.name)));

/**
 * A row of a thin page. Its words are read for a few rows only (heading candidates, list items, running heads), so
 * they are kept as one string and made into objects when first read: a word object and its own string cost ~56
 * bytes, ~110 MB for the 2 million words of a 2,010-page register, which /word and /markdown hold until every
 * page is read. A row's text is its words joined by spaces (layout.ts) and then shares the text's string.
 */
class ThinLine implements BlockLine {
  text: string;
  size: number;
  bold: boolean;
  box: Box;
  vertical: boolean;
  rtl: boolean;
  mono: boolean;
  #packed: string;
  #sep: string;
  #words?: BlockLine['words'];

  constructor(l: Line) {
    this.text = l.text;
    this.size = l.size;
    this.bold = l.bold;
    this.box = l.box;
    this.vertical = l.vertical;
    this.rtl = mostlyRtl(l.text);
    this.mono = isMono(l);
    const texts = l.words.map((w) => w.text);
    const spaced = texts.every((t) => !t.includes(' ')) && texts.join(' ') === l.text;
    this.#sep = spaced ? ' ' : '\0';
    this.#packed = spaced ? l.text : texts.join('\0');
    if (!texts.length) this.#words = [];
  }

  get words(): BlockLine['words'] {
    this.#words ??= this.#packed.split(this.#sep).map((text) => ({ text }));
    return this.#words;
  }

  set words(words: BlockLine['words']) {
    this.#words = words;
    this.#packed = '';
  }
}

/**
 * A page as Markdown needs it once laid out: rows with their text, size, weight, box, direction and whether they
 * are monospaced, tables with their cells. Without the words' corners, fonts and colours it is a tenth of the page
 * model, so a whole document's pages can wait for the sizes of all of them (heading levels are ranked across the
 * document).
 */
export function thinPage(page: PageModel): BlockPage<BlockLine> {
  const thin = (l: Line): BlockLine => new ThinLine(l);
  const lines = new Map(page.lines.map((l) => [l, thin(l)]));
  const own = (l: Line) => lines.get(l) ?? thin(l);
  return {
    page: page.page,
    height: page.height,
    lines: [...lines.values()],
    items: page.items.map((it) =>
      it.kind === 'line'
        ? { kind: 'line', line: own(it.line) }
        : { kind: 'table', rows: it.rows, lines: it.lines.map(own), cells: it.cells?.map((r) => r.map((c) => c.map(own))), cuts: it.cuts },
    ),
  };
}

// A numbered section head ("5", "5.1", "5.1.2." then a word): its depth is the count of numbers.
const NUMBERED = /^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+\S/u;
const numberDepth = (text: string) => {
  const m = NUMBERED.exec(text);
  return m ? m[1].split('.').length : 0;
};
// A caption opens a paragraph of its own, above or below its table or figure.
const CAPTION = /^(Table|Tab\.|Figure|Fig\.|Chart|Listing|Exhibit)\s*[\dIVXivx]+[.:\s]/;
const sizeKey = (s: number) => Math.round(s * 2) / 2;
const norm = (s: string) =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/(\p{L})(\p{N})|(\p{N})(\p{L})/gu, '$1$3 $2$4')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
// The same words in any order: an outline title some producers store in visual order ("2026תוכנית ... לשנת").
const bag = (key: string) => key.split(' ').sort().join(' ');

/**
 * A table whose last (or first) row is one cell of a numbered section head, or of larger type than the rest, took
 * in the heading after (or before) it: that row is given back as rows of text.
 */
function splitTable<L extends BlockLine>(t: BlockTable<L>): { before: L[]; table: BlockTable<L>; after: L[] } {
  const none = { before: [] as L[], table: t, after: [] as L[] };
  if (!t.cells || t.cells.length < 3) return none;
  const cells = t.cells;
  const sizes = cells.flat(2).map((l) => l.size);
  const typical = sizes.sort((a, b) => a - b)[Math.floor(sizes.length / 2)] ?? 0;
  const loose = (row: L[][]) => {
    const filled = row.filter((c) => c.length);
    if (filled.length !== 1) return false;
    const text = filled[0].map((l) => l.text).join(' ');
    return numberDepth(text) > 0 || Math.min(...filled[0].map((l) => l.size)) >= typical * 1.15;
  };
  let from = 0;
  let to = cells.length;
  if (loose(cells[0])) from = 1;
  if (loose(cells[to - 1])) to--;
  if ((from === 0 && to === cells.length) || to - from < 2) return none;
  const rowsOf = (rs: L[][][]) => rs.flatMap((r) => r.flat());
  const kept = new Set(rowsOf(cells.slice(from, to)));
  return {
    before: rowsOf(cells.slice(0, from)),
    table: { ...t, rows: t.rows.slice(from, to), cells: cells.slice(from, to), lines: t.lines.filter((l) => kept.has(l)) },
    after: rowsOf(cells.slice(to)),
  };
}

/**
 * Blocks of each page: headings (levels from the outline when it names the row, else from section numbering and
 * size ranks across the document), paragraphs joined across line breaks, list items with their nesting, code
 * blocks, tables.
 */
export function textBlocks<L extends BlockLine>(pages: BlockPage<L>[], outline: OutlineEntry[] = []): TextBlock<L>[][] {
  const all = pages.flatMap((p) => p.lines);
  const body = bodySize(all);
  const candidate = (l: L) =>
    l.text.length > 1 && (sizeKey(l.size) >= body * 1.15 || (l.bold && l.words.length <= 12 && !/[.,;:]$/.test(l.text) && !isListMarker(l.words[0].text)));
  const candidates = all.filter(candidate);
  // Section numbering: each size of numbered heads takes the depth most of them have.
  const depthBySize = new Map<number, Map<number, number>>();
  for (const l of candidates) {
    const d = numberDepth(l.text);
    if (!d) continue;
    const by = depthBySize.get(sizeKey(l.size)) ?? new Map<number, number>();
    by.set(d, (by.get(d) ?? 0) + 1);
    depthBySize.set(sizeKey(l.size), by);
  }
  const numbered = candidates.filter((l) => numberDepth(l.text)).length >= 2;
  const largestNumbered = Math.max(0, ...[...depthBySize.keys()]);
  // Unnumbered heads larger than every numbered one (a title) rank above them.
  const above = [...new Set(candidates.filter((l) => sizeKey(l.size) > largestNumbered && sizeKey(l.size) >= body * 1.15).map((l) => sizeKey(l.size)))].sort(
    (a, b) => b - a,
  );
  const base = numbered ? above.length : 0;
  // Numbering gives ranks, not levels: the shallowest numbered heads ("4.1" when no "4" is set as a head) come
  // right below the unnumbered ones above them.
  const depths = candidates.map((l) => numberDepth(l.text)).filter(Boolean);
  const shallowest = Math.min(...depths) - 1;
  const deepest = Math.max(0, ...depths) - shallowest;
  const headingSizes = [...new Set(candidates.filter((l) => sizeKey(l.size) >= body * 1.15).map((l) => sizeKey(l.size)))].sort((a, b) => b - a);
  const sizeLevel = (l: L): number => {
    const s = sizeKey(l.size);
    if (numbered) {
      const d = numberDepth(l.text);
      if (d) return Math.min(6, base + d - shallowest);
      if (s > largestNumbered && s >= body * 1.15) return Math.min(6, above.indexOf(s) + 1);
      const by = depthBySize.get(s);
      if (by) return Math.min(6, base + [...by.entries()].sort((a, b) => b[1] - a[1])[0][0] - shallowest);
      return Math.min(6, base + deepest + 1);
    }
    if (s >= body * 1.15) return Math.min(6, headingSizes.indexOf(s) + 1 || headingSizes.length);
    return Math.min(6, headingSizes.length + 1);
  };
  // The outline names the headings when most of its entries are found on their pages: each entry names the first
  // row (or two rows) of its page with its title, a section number before it allowed. Rows it does not name are
  // headings only when larger than the body text: at the level of the named rows of their size, else below them.
  const named = new Map<L, number>();
  const left = outline.map((e) => ({ level: Math.min(6, Math.max(1, e.level)), page: e.page, key: norm(e.title), bag: bag(norm(e.title)) }));
  const same = (e: (typeof left)[number], k: string) => !!k && (e.key === k || e.bag === bag(k) || e.key === k.replace(/^(\d+ )+/, ''));
  for (const p of pages) {
    const rows = p.items.flatMap((it) => (it.kind === 'line' ? [it.line] : []));
    for (let i = 0; i < rows.length && left.length; i++) {
      const k = norm(rows[i].text);
      const two = i + 1 < rows.length && candidate(rows[i]) ? norm(`${rows[i].text} ${rows[i + 1].text}`) : '';
      const at = left.findIndex((e) => (e.page === undefined || e.page === p.page) && (same(e, k) || same(e, two)));
      if (at < 0) continue;
      const [e] = left.splice(at, 1);
      named.set(rows[i], e.level);
      if (!same(e, k)) named.set(rows[++i], e.level);
    }
  }
  const listed = new Set(pages.map((p) => p.page));
  const onPages = (es: { page?: number }[]) => es.filter((e) => e.page === undefined || listed.has(e.page)).length;
  const useOutline = named.size > 0 && (onPages(outline) - onPages(left)) * 2 >= onPages(outline);
  const namedLevels = new Map<number, Map<number, number>>();
  for (const [l, level] of named) {
    const by = namedLevels.get(sizeKey(l.size)) ?? new Map<number, number>();
    by.set(level, (by.get(level) ?? 0) + 1);
    namedLevels.set(sizeKey(l.size), by);
  }
  const namedDeepest = Math.max(0, ...named.values());
  const levelOf = (l: L): number => {
    if (!useOutline) return candidate(l) ? sizeLevel(l) : 0;
    const level = named.get(l);
    if (level) return level;
    if (l.text.length < 2 || sizeKey(l.size) < body * 1.15) return 0;
    const by = namedLevels.get(sizeKey(l.size));
    return by ? [...by.entries()].sort((x, y) => y[1] - x[1])[0][0] : Math.min(6, namedDeepest + 1);
  };
  // A document set in a monospaced font throughout (a typescript) has no code blocks: it is all text.
  const monoChars = all.filter(isMono).reduce((n, l) => n + l.text.length, 0);
  const codeFont = monoChars * 2 < all.reduce((n, l) => n + l.text.length, 0);
  const joinText = (a: string, b: string) => (/[A-Za-z]-$/.test(a) && /^[a-z]/.test(b) ? a.slice(0, -1) + b : `${a} ${b}`);
  return pages.map((page) => {
    const out: TextBlock<L>[] = [];
    const addLine = (line: L) => {
      const prev = out[out.length - 1];
      const last = prev && prev.kind !== 'table' ? prev.lines[prev.lines.length - 1] : undefined;
      if (codeFont && isMono(line)) {
        if (prev?.kind === 'code' && last && line.box.y0 - last.box.y1 < 1.2 * last.size) {
          prev.lines.push(line);
          prev.text = codeText(prev.lines);
        } else out.push({ kind: 'code', level: 0, text: line.text, lines: [line] });
        return;
      }
      const level = levelOf(line);
      if (level) {
        if (prev?.kind === 'h' && prev.level === level && close(last!, line)) {
          prev.text = `${prev.text} ${line.text}`;
          prev.lines.push(line);
        } else out.push({ kind: 'h', level, text: line.text, lines: [line] });
        return;
      }
      const item = listItem(line);
      if (item) {
        out.push({ kind: 'li', level: 0, text: item.text, lines: [line], marker: item.marker });
        return;
      }
      if (last && (prev.kind === 'p' || prev.kind === 'li') && !CAPTION.test(line.text) && continues(last, line, prev.kind === 'li')) {
        prev.text = joinText(prev.text, line.text);
        prev.lines.push(line);
        return;
      }
      out.push({ kind: 'p', level: 0, text: line.text, lines: [line] });
    };
    for (const item of page.items) {
      if (item.kind === 'line') {
        addLine(item.line);
        continue;
      }
      const { before, table, after } = splitTable(item);
      for (const l of before) addLine(l);
      out.push(table);
      for (const l of after) addLine(l);
    }
    nestLists(out);
    return out;
  });
}

/** A list item's marker and text: a marker word, or one set against its text ("1.מעבר", "●تحسن"). */
function listItem(line: BlockLine): { marker: string; text: string } | undefined {
  const first = line.words[0].text;
  let rest = line.words
    .slice(1)
    .map((w) => w.text)
    .join(' ');
  let marker = first;
  if (!(isListMarker(first) && line.words.length > 1)) {
    const glued = /^([•◦▪●○■□➢➤►▶‣⁃∙·\uf0b7\uf0a7]|\d{1,3}[.)])(\p{L}.*)$/u.exec(first);
    if (!glued) return undefined;
    marker = glued[1];
    rest = rest ? `${glued[2]} ${rest}` : glued[2];
  }
  const numbered = /\d|^\(?[a-zA-Z]{1,5}[.)]$/.test(marker) && !/^[-–—*•]$/.test(marker);
  const n = /(\d+)/.exec(marker)?.[1];
  return { marker: numbered ? `${n ?? 1}.` : '-', text: rest };
}

/** Nesting of each run of list items: the distinct indents of their markers, outermost first (0). */
function nestLists<L extends BlockLine>(blocks: TextBlock<L>[]) {
  for (let i = 0; i < blocks.length; ) {
    if (blocks[i].kind !== 'li') {
      i++;
      continue;
    }
    let j = i;
    while (j < blocks.length && blocks[j].kind === 'li') j++;
    const run = blocks.slice(i, j) as Exclude<TextBlock<L>, { kind: 'table' }>[];
    // Where the marker starts: the left edge, or the right one for right-to-left rows.
    const start = (b: (typeof run)[number]) => (isRtl(b.lines[0]) ? -b.lines[0].box.x1 : b.lines[0].box.x0);
    const em = Math.max(...run.map((b) => b.lines[0].size));
    const indents: number[] = [];
    for (const x of run.map(start).sort((a, b) => a - b)) if (!indents.length || x - indents[indents.length - 1] > 0.8 * em) indents.push(x);
    for (const b of run) b.level = Math.min(5, indents.filter((x) => x <= start(b) + 0.8 * em).length - 1);
    i = j;
  }
}

/** The rows of a code block, each on its own line, indented as set (a monospaced character is about 0.6 em). */
function codeText(lines: BlockLine[]): string {
  const rtl = lines.some(isRtl);
  const left = Math.min(...lines.map((l) => l.box.x0));
  return lines.map((l) => (rtl ? '' : ' '.repeat(Math.max(0, Math.round((l.box.x0 - left) / (0.6 * l.size))))) + l.text).join('\n');
}

export function toMarkdown(pages: BlockPage<BlockLine>[], opts: MarkdownOptions): string {
  return [...markdownParts(pages, opts)].join('');
}

/**
 * Page furniture: rows in the top or bottom tenth of their page whose text, numbers aside, recurs at about the same
 * height on at least half of the pages (and 3 or more): running heads and feet, page numbers ("9", "Page 9 of 20").
 * On any number of pages, a row there that is only a page number ("9", "- 9 -", "Page 9 of 20", "9/20"), or a
 * browser's print stamp (a lone address, a date and time), is furniture too; so are the rows beside a print stamp. A
 * page number must be the page's first or last row.
 */
export function pageFurniture(pages: BlockPage<BlockLine>[]): Set<BlockLine> {
  const found = new Set<BlockLine>();
  const inBand = (p: BlockPage<BlockLine>, l: BlockLine) => !!p.height && (l.box.y1 < p.height * 0.1 || l.box.y0 > p.height * 0.9);
  const beside = (a: BlockLine, b: BlockLine) =>
    Math.min(a.box.y1, b.box.y1) - Math.max(a.box.y0, b.box.y0) > 0.5 * Math.min(a.box.y1 - a.box.y0, b.box.y1 - b.box.y0);
  for (const p of pages) {
    const band = p.lines.filter((l) => inBand(p, l));
    const top = Math.min(...p.lines.map((l) => l.box.y0));
    const bottom = Math.max(...p.lines.map((l) => l.box.y1));
    // A page number is the page's first or last row (a number in a table near the edge is not).
    const outer = (l: BlockLine) => l.box.y0 < top + 0.5 * (l.box.y1 - l.box.y0) || l.box.y1 > bottom - 0.5 * (l.box.y1 - l.box.y0);
    const stamps = band.filter((l) => PRINT_STAMP.test(l.text.trim()) || (PAGE_NUMBER.test(l.text.trim()) && outer(l)));
    // A head or foot row is set in one line: what stands beside a print stamp belongs to it.
    for (const l of band) if (stamps.includes(l) || stamps.some((f) => PRINT_STAMP.test(f.text.trim()) && beside(f, l))) found.add(l);
  }
  if (pages.length < 3) {
    // Too few pages to see a row recur with its numbers changing. A running head is still told on two pages by
    // recurring word for word at the same height, and on any page by standing alone at its top: the first row, in
    // the top band, set no larger than the body text and not bold, a blank line or more above the rest, and further
    // from it than its rows are from each other (a form's rows all a line apart are not a head and the rest).
    const body = bodySize(pages.flatMap((p) => p.lines));
    const same = (a: BlockLine, b: BlockLine) => a.text.trim() === b.text.trim() && Math.abs(a.box.y0 - b.box.y0) < 0.5 * (a.box.y1 - a.box.y0);
    for (const p of pages) {
      const band = p.lines.filter((l) => inBand(p, l));
      if (pages.length === 2) for (const l of band) if (pages.every((o) => o.lines.some((m) => inBand(o, m) && same(l, m)))) found.add(l);
      const rows = [...p.lines].sort((a, b) => a.box.y0 - b.box.y0);
      const first = rows.filter((l) => beside(l, rows[0]));
      const next = rows.find((l) => !first.includes(l));
      const height = Math.max(...first.map((l) => l.box.y1 - l.box.y0));
      const bottom = Math.max(...first.map((l) => l.box.y1));
      const plain = first.every((l) => inBand(p, l) && !l.bold && sizeKey(l.size) <= body);
      if (!next || !plain || next.box.y0 - bottom < height) continue;
      const gaps: number[] = [];
      let end = next.box.y1;
      for (const l of rows.slice(rows.indexOf(next) + 1)) {
        if (l.box.y0 > end) gaps.push(l.box.y0 - end);
        end = Math.max(end, l.box.y1);
      }
      const usual = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? Infinity;
      if (next.box.y0 - bottom > 2 * usual) for (const l of first) found.add(l);
    }
    return found;
  }
  const key = (l: BlockLine) => `${Math.round(l.box.y0 / 8)}|${l.text.replace(/\d+/g, '#').trim()}`;
  const count = new Map<string, number>();
  for (const p of pages) {
    for (const k of new Set(p.lines.filter((l) => inBand(p, l)).map(key))) count.set(k, (count.get(k) ?? 0) + 1);
  }
  const enough = Math.max(3, Math.ceil(pages.length / 2));
  for (const p of pages) for (const l of p.lines) if (inBand(p, l) && (count.get(key(l)) ?? 0) >= enough) found.add(l);
  return found;
}

const PAGE_WORD = String.raw`(?:page|p\.|pg\.|seite|página|pagina|страница|صفحة|الصفحة|עמוד|sayfa|페이지|ページ)`;
const OF_WORD = '(?:of|/|von|de|di|из|من|מתוך|sur)';
const PAGE_NUMBER = new RegExp(String.raw`^(?:[-–—]\s*)?(?:${PAGE_WORD}\s*)?(\d{1,5}|[ivxlc]{1,7})(?:\s*${OF_WORD}\s*\d{1,5})?(?:\s*[-–—])?$`, 'iu');
const PRINT_STAMP = /^(?:(?:file|https?):\/\/\S+|\d{1,4}[./-]\d{1,2}[./-]\d{1,4},?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?)$/i;

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
  const blocks = textBlocks(body, opts.outline);
  // The indent of each open list level: the width of the markers of the items it is nested in.
  let indents: string[] = [];
  for (const [i, page] of blocks.entries()) {
    const out: string[] = [];
    if (opts.pageBreakComments) {
      out.push(`<!--Page ${pages[i].page}-->`);
      // A comment cannot hold "--".
      for (const l of pages[i].lines.filter((x) => furniture.has(x))) out.push(`<!--Furniture: ${l.text.replace(/-{2,}/g, (d) => d.split('').join(' '))}-->`);
    }
    for (const b of page) {
      if (b.kind !== 'li') indents = [];
      if (b.kind === 'table') out.push(tableMarkdown(b.rows));
      else if (b.kind === 'h') out.push(`${'#'.repeat(b.level)} ${b.text}`);
      else if (b.kind === 'code') out.push(`\`\`\`\n${b.text.replace(/^```/gm, ' ```')}\n\`\`\``);
      else if (b.kind === 'li') {
        const level = Math.min(b.level, indents.length);
        indents = indents.slice(0, level);
        const pad = indents.join('');
        indents.push(' '.repeat(b.marker!.length + 1));
        out.push(`${pad}${b.marker} ${b.text}`);
      } else out.push(escapeLead(b.text));
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

/** A row seen in a mirror: a right-to-left row starts at its right edge, as a left-to-right one at its left. */
// The words by a getter: a thin row's are not an own property (a spread leaves them out) and are made only when read.
const mirrored = (l: BlockLine): BlockLine => ({
  ...l,
  get words() {
    return l.words;
  },
  box: { ...l.box, x0: -l.box.x1, x1: -l.box.x0 },
});

/** Does `b` continue the paragraph (or list item) that `a` ended? Right-to-left rows are read in a mirror. */
function continues(a: BlockLine, b: BlockLine, listItem: boolean): boolean {
  if (!a.vertical && !b.vertical && isRtl(a) && isRtl(b)) return continuesLtr(mirrored(a), mirrored(b), listItem);
  return continuesLtr(a, b, listItem);
}

function continuesLtr(a: BlockLine, b: BlockLine, listItem: boolean): boolean {
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

const escapeLead = (s: string) => s.replace(/^(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|```)/, '\\$1');

/**
 * A pipe table. Its first row is the header row (GitHub-flavoured Markdown has no table without one). A cell
 * spanning several columns stands in the first of them, the others left empty. A right-to-left table's columns are
 * written in reading order, its rightmost first.
 */
function tableMarkdown(rows: string[][]): string {
  const cols = Math.max(...rows.map((r) => r.length));
  const rtl = mostlyRtl(rows.flat().join(' '));
  const cell = (s: string | undefined) => (s ?? '').replace(/\|/g, '\\|');
  const line = (r: string[]) => {
    const cells = Array.from({ length: cols }, (_, i) => cell(r[i]));
    return `| ${(rtl ? cells.reverse() : cells).join(' | ')} |`;
  };
  return [line(rows[0]), `|${' --- |'.repeat(cols)}`, ...rows.slice(1).map(line)].join('\n');
}
