import { readFile } from 'node:fs/promises';
import {
  AlignmentType,
  BorderStyle,
  Document,
  ExternalHyperlink,
  Footer,
  FrameAnchorType,
  FrameWrap,
  Header,
  HeadingLevel,
  HeightRule,
  HorizontalPositionRelativeFrom,
  ImageRun,
  type ISectionOptions,
  LevelFormat,
  LineRuleType,
  PageNumber,
  PageOrientation,
  Paragraph,
  SectionType,
  ShadingType,
  Tab,
  Table,
  TableBorders,
  TableCell,
  TableRow,
  TabStopType,
  TextDirection,
  TextRun,
  TextWrappingType,
  UnderlineType,
  VerticalMergeType,
  VerticalPositionRelativeFrom,
  WidthType,
} from 'docx';
import { ShapeRun } from 'docx/shapes';
import { type BlockLine, type BlockPage, type Box, type Line, median, type PageLink, type PageModel, type TextBlock, type Word } from '../document/index.js';
import { colourHex, type RunStyle, runStyle, sameStyle } from './docx-style.js';
import {
  cellArt,
  clipSpans,
  type Edge,
  groupHeaders,
  invisibleWords,
  isThin,
  type PageArt,
  type Rule,
  rowSpans,
  type Side,
  type SpanCells,
  underlinedWords,
} from './table-art.js';
import { naturalWidth, type ScriptFaces, scriptFonts, textWidth } from './text-style.js';

/**
 * PDF to a Word document that looks like the PDF and edits like a document. The structure (reading order,
 * headings, paragraphs, lists, tables) is the page model's (textBlocks, the one /markdown writes); this file lays
 * it out where the PDF has it: a new-page section per page with its size and margins, continuous sections of
 * Word columns where the text runs in columns (docx-layout), paragraphs with their alignment, indents, exact line
 * pitch, space before and the PDF's line breaks, runs with their font, size, weight, slant and colour
 * (docx-style), the page's line art as table borders, shading and merged cells and as underlines (table-art),
 * running heads and feet as header and footer with a PAGE field, link areas as hyperlinks, and
 * images floating at their place. Word and LibreOffice then set each row where the PDF set it.
 */

export interface PlacedImage {
  page: number;
  /** Device space of the displayed page, points. */
  box: Box;
  png: string;
}

const HEADINGS = [
  HeadingLevel.HEADING_1,
  HeadingLevel.HEADING_2,
  HeadingLevel.HEADING_3,
  HeadingLevel.HEADING_4,
  HeadingLevel.HEADING_5,
  HeadingLevel.HEADING_6,
];
const twips = (pt: number) => Math.round(pt * 20);
const emu = (pt: number) => Math.round(pt * 12700);
/** Points to the 96 dpi pixels docx sizes drawings in. */
const px = (pt: number) => Math.max(1, (pt * 96) / 72);
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
/**
 * A row's glyph box starts about this many ems below the top of its line when LibreOffice and Word set the line
 * at an exact height: the height minus the font's ascent and descent (about 1.1 em for text faces).
 */
const FONT_HEIGHT_EM = 1.1;

type Inline = TextRun | ExternalHyperlink;

/** What a page adds to its words' look: link areas, and the words a drawn rule underlines. */
interface Marks {
  links: PageLink[];
  underlined: Set<Word>;
  /** Words drawn invisibly (an OCR layer, with its scan or without; hidden text): Word's hidden text, not printed. */
  invisible: Set<Word>;
  /** Faces for the characters Word's fonts lack (scriptFaces): named for their scripts, and measured. */
  faces: ScriptFaces;
}

/** Runs of a row's words: consecutive words of one look share a run; words inside a link area become a hyperlink. */
function rowRuns(
  words: Word[],
  { links, underlined, invisible, faces }: Marks,
  opts: { skipFirst?: boolean; pageNumber?: number; trailingSpace?: boolean; tabs?: TabGaps; justified?: boolean; scale?: number } = {},
): Inline[] {
  const out: Inline[] = [];
  const gapAt = opts.tabs ? tabGaps(words, opts.skipFirst) : new Set<number>();
  const fits = rowFits(words, gapAt, { skipFirst: opts.skipFirst, spread: !opts.justified, faces });
  let cur: { style: RunStyle; text: string; uri?: string; fit?: Fit } | null = null;
  const flush = () => {
    if (!cur) return;
    const { style, text, uri, fit } = cur;
    const run = new TextRun({
      text,
      ...runOptions(style),
      ...(fit?.spacing ? { characterSpacing: fit.spacing } : {}),
      ...(fit?.scale ? { scale: fit.scale } : {}),
      ...(uri ? { style: 'Hyperlink' } : {}),
    });
    out.push(uri ? new ExternalHyperlink({ link: uri, children: [run] }) : run);
    cur = null;
  };
  words.forEach((w, i) => {
    if (opts.skipFirst && i === 0) return;
    const style = scaled({ ...runStyle(w, underlined.has(w), invisible.has(w)), ...scriptFonts(w.text, w.bold, faces) }, opts.scale);
    const cx = (w.box.x0 + w.box.x1) / 2;
    const cy = (w.box.y0 + w.box.y1) / 2;
    const uri = links.find((l) => cx >= l.box.x0 && cx <= l.box.x1 && cy >= l.box.y0 && cy <= l.box.y1)?.uri;
    if (gapAt.has(i)) {
      // A wide gap inside a row (columns of figures, a label and its value) is a tab to where the word starts.
      flush();
      out.push(new TextRun({ children: [new Tab()], ...runOptions(style) }));
      opts.tabs!.stops.push(w.box.x0 - opts.tabs!.origin);
      cur = { style, text: w.text, uri, fit: fits[i] };
      return;
    }
    const lead = cur || (opts.skipFirst ? i > 1 : i > 0) ? ' ' : '';
    if (opts.pageNumber === i) {
      if (cur) cur.text += lead;
      flush();
      if (lead && !out.length) out.push(new TextRun({ text: lead, ...runOptions(style) }));
      out.push(new TextRun({ children: [PageNumber.CURRENT], ...runOptions(style) }));
      return;
    }
    if (cur && sameStyle(cur.style, style) && cur.uri === uri) cur.text += lead + w.text;
    else {
      // The space after an underlined phrase is not underlined.
      const leadAfter = !!cur?.style.underline && !style.underline;
      const had = !!cur;
      if (cur && !leadAfter) cur.text += lead;
      flush();
      cur = { style, text: ((out.length && !had) || leadAfter ? lead : '') + w.text, uri, fit: fits[i] };
    }
  });
  // A row that ends in a line break keeps the space after it: words stay apart when the break is deleted.
  if (cur && opts.trailingSpace) (cur as { text: string }).text += ' ';
  flush();
  return out;
}

/**
 * How each word of a row is fitted to the row's width in the PDF (condensing): the whole row, or, in a row with
 * tabs, each piece between them that holds characters the standard fonts lack (narrowed only: the tab stop after
 * it must not be passed).
 */
function rowFits(words: Word[], gapAt: Set<number>, o: { skipFirst?: boolean; spread: boolean; faces: ScriptFaces }): (Fit | undefined)[] {
  const from = o.skipFirst ? 1 : 0;
  if (!gapAt.size) {
    const fit = condensing(words.slice(from), o.spread, o.faces);
    return words.map(() => fit);
  }
  const fits: (Fit | undefined)[] = [];
  for (let i = from; i < words.length; ) {
    let end = i + 1;
    while (end < words.length && !gapAt.has(end)) end++;
    const fit = condensing(words.slice(i, end), false, o.faces);
    for (let k = i; k < end; k++) fits[k] = fit?.scale ? fit : undefined;
    i = end;
  }
  return fits;
}

/** A run's look with its type set `scale` times its size (half-points, 1 pt at least). */
const scaled = (style: RunStyle, scale = 1): RunStyle => (scale === 1 ? style : { ...style, halfPoints: Math.max(2, Math.round(style.halfPoints * scale)) });

/** Where tab stops go: measured from `origin` (the left edge of the frame or column), collected row by row. */
interface TabGaps {
  origin: number;
  stops: number[];
}

/** A gap between two words of a row wider than this many ems is a tab, not a space. */
const TAB_GAP_EM = 1.5;

/**
 * Words of a row that start after a tab: those after a gap wider than TAB_GAP_EM, and every word of a row of
 * short words (3 characters at most: characters or codes spaced out in the cells of a grid, which spaces would
 * pack together; not prose, whose justified rows stretch their spaces) whose gaps (three or more) are all at least
 * twice its font's space and half an em.
 */
function tabGaps(words: Word[], skipFirst?: boolean): Set<number> {
  const from = skipFirst ? 2 : 1;
  const gaps = words.map((w, i) => (i >= from ? w.box.x0 - words[i - 1].box.x1 : NaN));
  const wide = new Set(gaps.flatMap((g, i) => (g > TAB_GAP_EM * words[i].font.size ? [i] : [])));
  const inner = gaps.flatMap((g, i) => (Number.isNaN(g) ? [] : [{ g, i }]));
  if (inner.length < 3 || words.some((w) => [...w.text].length > 3)) return wide;
  const spaced = inner.every(({ g, i }) => {
    const st = runStyle(words[i]);
    const space = (naturalWidth(' ', st.font, st.bold, st.italic) ?? 0.25) * words[i].font.size;
    return g >= 2 * space && g >= 0.5 * words[i].font.size;
  });
  return spaced ? new Set(inner.map(({ i }) => i)) : wide;
}

/** Left tab stops at the collected positions, one per 2 pt. */
const tabStopsOf = (tabs: TabGaps) =>
  [...tabs.stops]
    .sort((a, b) => a - b)
    .filter((x, i, xs) => x > 0 && (!i || x - xs[i - 1] > 2))
    .map((x) => ({ type: TabStopType.LEFT, position: twips(x) }));

/**
 * Twips of character spacing that bring a row set in Word's fonts (their standard metrics, at Word's half-point
 * sizes) back to its width in the PDF: TeX and other typesetters squeeze the spaces of a justified row below their
 * natural width, and a row wider than its frame would wrap; a row narrower than the PDF's puts its words short of
 * their places (`spread`: not in a justified paragraph, which spreads its rows itself). A row with characters the
 * standard fonts lack (one word may be the whole row in a script written without spaces) is measured in the face
 * the machine has for them (a Thai face often runs far wider than the PDF's) and, when wider, narrowed by Word's
 * character scale (w:w, percent), which squeezes where spacing cannot; it is not spread (letters spaced apart
 * read as words of their own). Nothing when it fits and is within 3 % of it, or when the widths are unknown.
 */
function condensing(words: Word[], spread: boolean, faces: ScriptFaces): Fit | undefined {
  // A row set sideways has no width to keep.
  if (!words.length || words.some((w) => w.text.length > 2 && w.box.y1 - w.box.y0 > 1.5 * (w.box.x1 - w.box.x0))) return undefined;
  let natural = 0;
  let chars = 0;
  let scripted = false;
  // Words no face can measure (symbols drawn from a private area): counted at their width in the PDF.
  let unknown = 0;
  for (const [i, w] of words.entries()) {
    const st = runStyle(w);
    const text = i ? ` ${w.text}` : w.text;
    let width = naturalWidth(text, st.font, st.bold, st.italic);
    if (width === undefined) {
      width = textWidth(text, st.font, st.bold, st.italic, faces);
      if (width === undefined) {
        unknown += w.box.x1 - w.box.x0 + (i ? ((naturalWidth(' ', st.font, false, false) ?? 0.25) * st.halfPoints) / 2 : 0);
        continue;
      }
      scripted = true;
    }
    natural += (width * st.halfPoints) / 2;
    chars += [...text].length;
  }
  if (unknown && !scripted) return undefined;
  natural += unknown;
  const room = words[words.length - 1].box.x1 - words[0].box.x0;
  // Any row wider than the PDF's is condensed; one more than 3 % narrower (the PDF's face is wider: a CJK face's
  // Latin letters, letter-spaced headings) is spread to its width too.
  const wider = natural > room + 0.5;
  if (scripted) return wider ? { scale: Math.max(MIN_SCALE, Math.floor((100 * room) / natural)) } : undefined;
  const narrower = spread && natural < room - Math.max(0.5, 0.03 * room);
  if ((!wider && !narrower) || words.length < 2) return undefined;
  const size = runStyle(words[0]).halfPoints / 2;
  // Spread, it stays a little short of the PDF's width: a point too long wraps it or pushes it past a tab stop.
  const target = natural < room ? 0.97 * room : room;
  return { spacing: Math.round(Math.min(0.25 * size, Math.max(-0.15 * size, (target - natural) / chars)) * 20) };
}

/** Character spacing (twips) or Word's character scale (percent) that fits a row to its width in the PDF. */
interface Fit {
  spacing?: number;
  scale?: number;
}

/** Word's character scale (percent) a row is narrowed to at most. */
const MIN_SCALE = 50;

const runOptions = (s: RunStyle) => ({
  font: s.cs ? { ascii: s.font, hAnsi: s.font, eastAsia: s.font, cs: s.cs } : s.font,
  size: s.halfPoints,
  bold: s.bold,
  italics: s.italic,
  color: s.color,
  ...(s.underline ? { underline: { type: UnderlineType.SINGLE } } : {}),
  ...(s.hidden ? { vanish: true } : {}),
});

type Align = (typeof AlignmentType)[keyof typeof AlignmentType];

/** Alignment and indents of a paragraph's rows within its column (points). */
function paragraphShape(lines: Line[], col: { x0: number; x1: number }, textStart?: number) {
  const size = median(lines.map((l) => l.size));
  const tol = Math.max(1.5, 0.4 * size);
  const mid = (col.x0 + col.x1) / 2;
  const x0s = lines.map((l) => l.box.x0);
  const x1s = lines.map((l) => l.box.x1);
  const centred = lines.every((l) => Math.abs((l.box.x0 + l.box.x1) / 2 - mid) < tol) && lines.some((l) => l.box.x0 > col.x0 + 2 * size);
  if (centred && textStart === undefined) return { align: AlignmentType.CENTER as Align, left: 0, right: 0, firstLine: 0 };
  const rest = lines.length > 1 ? lines.slice(1) : lines;
  const left = (textStart ?? Math.min(...rest.map((l) => l.box.x0))) - col.x0;
  const maxX1 = Math.max(...x1s);
  const flushRight = lines.every((l) => Math.abs(l.box.x1 - maxX1) < tol);
  if (flushRight && textStart === undefined && (Math.max(...x0s) - Math.min(...x0s) > 2 * tol || (lines.length === 1 && lines[0].box.x0 > col.x0 + 4 * size))) {
    return { align: AlignmentType.RIGHT as Align, left: 0, right: Math.max(0, col.x1 - maxX1), firstLine: 0 };
  }
  const justified = lines.length > 2 && lines.slice(0, -1).every((l) => Math.abs(l.box.x1 - maxX1) < tol);
  return {
    align: (justified ? AlignmentType.JUSTIFIED : AlignmentType.LEFT) as Align,
    left: Math.max(0, left),
    // A ragged paragraph is not held to its longest row: a narrower substitute font must not wrap earlier.
    right: justified ? Math.max(0, col.x1 - maxX1) : 0,
    firstLine: lines[0].box.x0 - col.x0 - Math.max(0, left),
  };
}

/** The line pitch of a paragraph: the distance between its rows, or the document's usual ratio to the size. */
const pitchOf = (lines: BlockLine[], ratio: number) => {
  const size = Math.max(...lines.map((l) => l.size));
  const gaps = lines
    .slice(1)
    .map((l, i) => l.box.y0 - lines[i].box.y0)
    .filter((g) => g > 0 && g < 3 * size);
  return gaps.length ? Math.max(median(gaps), 0.8 * size) : ratio * size;
};

/** What every page of a document shares in Word, found over all its pages (thin ones: documentShape). */
export interface DocxShape {
  /** The usual pitch of body text relative to its size, for rows that stand alone. */
  ratio: number;
  /** The size most characters are set in: Word's default text size. */
  bodySize: number;
}

/** The document-wide facts of a Word document, from its pages' blocks (textBlocks) and rows. */
export function documentShape(pages: BlockPage<BlockLine>[], blocksByPage: TextBlock<BlockLine>[][]): DocxShape {
  const ratios = blocksByPage.flat().flatMap((b) => (b.kind === 'p' && b.lines.length > 2 ? [pitchOf(b.lines, 1.2) / b.lines[0].size] : []));
  return { ratio: clamp(ratios.length ? median(ratios) : 1.2, 1, 2), bodySize: bodySize(pages) };
}

/** The rows of a page that are its running head and foot (runningLines), and the page number they print. */
export interface PageRunning {
  lines: Set<Line>;
  printed?: { line: Line; word: number; value: number };
}

/**
 * One page as a Word section (a new page with its size and margins, header and footer): its blocks (textBlocks,
 * of the page divided at its cell dividers: dividedPage) laid out where the PDF has them.
 */
export async function pageSection(
  page: PageModel,
  pageBlocks: TextBlock[],
  running: PageRunning,
  o: { shape: DocxShape; lists: Lists; images: PlacedImage[]; links: PageLink[]; art?: PageArt; faces: ScriptFaces },
): Promise<ISectionOptions> {
  const { ratio } = o.shape;
  const { lists, images, links, faces } = o;
  const pageLinks = links.filter((l) => l.page === page.page);
  const rects = o.art?.rects ?? [];
  const words = page.lines.flatMap((l) => l.words);
  const marks: Marks = {
    links: pageLinks,
    underlined: underlinedWords(words, rects),
    invisible: invisibleWords(words, o.art?.invisible ?? [], o.art?.shown),
    faces,
  };
  const own = pageBlocks
    .map((b) => (b.lines.some((l) => running.lines.has(l)) ? { ...b, lines: b.lines.filter((l) => !running.lines.has(l)) } : b))
    .filter((b) => b.lines.length) as TextBlock[];
  // Rows set a quarter turn (a stamp along the margin, a label up a chart's axis, column heads set sideways) are
  // text boxes turned as they are, at their place; in a table the page model found, they stay in its cells.
  const turned = own.flatMap((b) => (b.kind === 'table' ? [] : b.lines.filter(isTurned)));
  let blocks = turned.length
    ? (own.map((b) => (b.kind === 'table' ? b : { ...b, lines: b.lines.filter((l) => !isTurned(l)) })).filter((b) => b.lines.length) as TextBlock[])
    : own;
  // The text area holds the upright rows and the short turned ones between the margins (heads, labels; not a stamp
  // along the page's edge), whether in a table's cells or in text boxes: tables in the flow lie in it.
  const inArea = (l: Line) => isTurned(l) && l.box.y1 - l.box.y0 < page.height / 4 && l.box.x0 > EDGE && l.box.x1 < page.width - EDGE;
  const body = own.flatMap((b) => b.lines).filter((l) => !l.vertical || inArea(l));
  const heads = page.lines.filter((l) => running.lines.has(l));
  const top = heads.filter((l) => l.box.y1 < page.height / 2);
  const feet = heads.filter((l) => l.box.y1 >= page.height / 2);
  const { printed } = running;
  const left = body.length ? Math.min(...body.map((l) => l.box.x0)) : 72;
  const right = body.length ? page.width - Math.max(...body.map((l) => l.box.x1)) : 72;
  const bottomText = body.length ? Math.max(...body.map((l) => l.box.y1)) : page.height - 72;

  // Blocks side by side again and again (a grid the page model did not take for a table): LibreOffice loses
  // text among hundreds of frames, so such a page is written row by row, each row a frame, its pieces at tab stops.
  const beside = blocks.filter((b, i) => i > 0 && b.lines[0].box.y0 < blocks[i - 1].lines[blocks[i - 1].lines.length - 1].box.y1 - 0.5 * b.lines[0].size);
  if (beside.length > 20) {
    // Written row by row, the page has no table cells to turn its turned rows in: they are text boxes too.
    turned.push(...blocks.flatMap((b) => (b.kind === 'table' ? b.lines.filter(isTurned) : [])));
    blocks = blocks.map((b) => (b.kind === 'table' ? { ...b, lines: b.lines.filter((l) => !isTurned(l)) } : b)).filter((b) => b.lines.length);
  }
  const children: (Paragraph | Table)[] = [];
  const col = { x0: left, x1: page.width - right };
  // Tables set in the flow lie between the margins.
  const marginLeft = clamp(left, 0, page.width / 3);
  const marginRight = clamp(right, 0, page.width / 3);
  let pageTop = 72;
  // All the room below the text (down to the running foot), so a row set a little taller than in the PDF does
  // not push the page's last rows onto another page.
  const bottomMargin = clamp(
    Math.min(page.height - bottomText - 2, feet.length ? page.height - Math.min(...feet.map((l) => l.box.y0)) + 2 : 0),
    0,
    page.height / 3,
  );
  if (blocks.length) {
    let frames: Paragraph[] = [];
    let tables: FlowTable[] = [];
    if (beside.length > 20) {
      const grid = tabbedRows(
        blocks.flatMap((b) => b.lines),
        left,
        right,
        ratio,
        marks,
        rects,
        page.width,
      );
      ({ frames, tables } = grid);
      pageTop = flowStart(grid.top, top);
    } else {
      for (const b of blocks) if (b.kind === 'table') tables.push(wordTable(b, col, marks, rects));
      turned.push(...tables.flatMap((t) => t.turned ?? []));
      for (const b of blocks) {
        if (b.kind === 'table') continue;
        for (const piece of framePieces(b.lines)) frames.push(blockParagraph(b, piece, { ratio, marks, lists, page, col }));
      }
      pageTop = flowStart(Math.min(...tables.map((t) => t.top), ...blocks.flatMap((b) => (b.kind === 'table' ? [] : [b.lines[0].box.y0 - 2]))), top);
    }
    // Every text block is a frame at its place on the page: nothing flows, so no row can push the page's text
    // onto another page, whatever the fonts Word substitutes. Tables (LibreOffice does not float them) stay in
    // the flow, each at its height below the one before (rows of exact height). LibreOffice hangs frames on the
    // paragraph after them and loses the page break of a section that starts with one: an empty paragraph
    // before and after.
    // LibreOffice keeps the foot of a page without a bottom margin for its footer (an empty one too): a table
    // ending 8 pt above the page's edge went onto a page of its own.
    const flow = tablesInFlow(tables, pageTop, page.height - Math.max(bottomMargin, PAGE_FOOT));
    // A table beside another (the flow has one at a time) is its rows in frames instead, at their place.
    for (const t of flow.beside) {
      const x0 = Math.min(...t.lines.map((l) => l.box.x0));
      frames.push(...tabbedRows(t.lines, x0, right, ratio, marks, [], page.width).frames);
    }
    children.push(spacer(0), ...frames, ...flow.children, spacer(0));
  }
  // A page without text still needs one paragraph.
  if (!children.length) children.push(new Paragraph({}));
  // Pictures float at their place on the page, behind the text, anchored in the page's first paragraph.
  const pictures: Paragraph[] = [];
  for (const img of images.filter((i) => i.page === page.page)) {
    const w = img.box.x1 - img.box.x0;
    const h = img.box.y1 - img.box.y0;
    pictures.push(
      new Paragraph({
        spacing: { before: 0, after: 0, line: 20, lineRule: LineRuleType.EXACT },
        children: [
          new ImageRun({
            type: 'png',
            data: await readFile(img.png),
            transformation: { width: Math.max(1, Math.round(w * (96 / 72))), height: Math.max(1, Math.round(h * (96 / 72))) },
            floating: {
              horizontalPosition: { relative: HorizontalPositionRelativeFrom.PAGE, offset: emu(img.box.x0) },
              verticalPosition: { relative: VerticalPositionRelativeFrom.PAGE, offset: emu(img.box.y0) },
              behindDocument: true,
              allowOverlap: true,
              wrap: { type: TextWrappingType.NONE },
            },
          }),
        ],
      }),
    );
  }
  if (turned.length) pictures.push(turnedBoxes(turned, page, ratio, marks));
  if (pictures.length) {
    // A 1-twip paragraph carries them, so the text below does not move.
    children.unshift(...pictures);
  }

  const landscape = page.width > page.height;
  const topMargin = clamp(pageTop - pictures.length, 0, page.height - 36);
  const shape = { col: { x0: left, x1: page.width - right }, marks, printed };
  // The header from just above its first row's glyphs; the footer from just below its last row's.
  const head = runningRows(top);
  const headerAt = clamp(head.length ? head[0].y0 - Math.max(0, head[0].pitch - FONT_HEIGHT_EM * head[0].size) : 0, 0, page.height / 3);
  const foot = runningRows(feet);
  const footerAt = clamp(page.height - (feet.length ? Math.max(...feet.map((l) => l.box.y1)) : page.height) - 2, 0, page.height / 3);
  const margin = {
    left: twips(marginLeft),
    right: twips(marginRight),
    top: twips(topMargin),
    bottom: twips(bottomMargin),
    header: twips(headerAt),
    footer: twips(footerAt),
  };
  return {
    properties: {
      type: SectionType.NEXT_PAGE,
      page: {
        size: {
          width: twips(Math.min(page.width, page.height)),
          height: twips(Math.max(page.width, page.height)),
          orientation: landscape ? PageOrientation.LANDSCAPE : PageOrientation.PORTRAIT,
        },
        margin,
        ...(printed ? { pageNumbers: { start: printed.value } } : {}),
      },
    },
    headers: { default: new Header({ children: runningParagraphs(head, topMargin - headerAt - 1, shape) }) },
    footers: { default: new Footer({ children: runningParagraphs(foot, bottomMargin - footerAt - 1, shape) }) },
    children,
  };
}

/** A Word document of `sections` in the document's default look, with the list numberings they use. */
export function docxDocument(sections: ISectionOptions[], shape: DocxShape, lists: Lists): Document {
  return new Document({
    styles: { default: { document: { run: { size: Math.round(clamp(shape.bodySize, 6, 36) * 2) }, paragraph: { spacing: { after: 0 } } } } },
    numbering: {
      config: [...lists.starts].map((start) => ({
        reference: `numbered-${start}`,
        levels: [
          {
            level: 0,
            format: LevelFormat.DECIMAL,
            text: '%1.',
            start,
            alignment: AlignmentType.START,
            style: { paragraph: { indent: { left: 720, hanging: 360 } } },
          },
        ],
      })),
    },
    sections,
  });
}

/** Running heads or feet row by row (pieces side by side on one row are one row), with the PDF's pitch. */
function runningRows(lines: Line[]): { pieces: Line[]; y0: number; size: number; pitch: number }[] {
  const rows: Line[][] = [];
  for (const l of [...lines].sort((p, q) => p.box.y0 - q.box.y0)) {
    const row = rows[rows.length - 1];
    if (row && l.box.y0 < Math.max(...row.map((r) => r.box.y1)) - 0.5 * (l.box.y1 - l.box.y0)) row.push(l);
    else rows.push([l]);
  }
  return rows.map((row, i) => {
    const y0 = Math.min(...row.map((l) => l.box.y0));
    const size = Math.max(...row.map((l) => l.size));
    const next = rows[i + 1] ? Math.min(...rows[i + 1].map((l) => l.box.y0)) - y0 : Infinity;
    return {
      pieces: row.sort((p, q) => p.box.x0 - q.box.x0),
      y0,
      size,
      pitch: Number.isFinite(next) ? clamp(next, 0.8 * size, 2 * FONT_HEIGHT_EM * size) : FONT_HEIGHT_EM * size,
    };
  });
}

/**
 * Header or footer paragraphs, a row each (its pieces at tab stops where they start), at exact pitches squeezed
 * into `room` points: a header or footer taller than the margin it sits in pushes the page's body (LibreOffice
 * grows it), and the body's last rows onto a page of their own.
 */
function runningParagraphs(
  rows: ReturnType<typeof runningRows>,
  room: number,
  o: { col: { x0: number; x1: number }; marks: Marks; printed?: { line: Line; word: number } },
): Paragraph[] {
  const total = rows.reduce((a, r) => a + r.pitch, 0);
  const squeeze = total > room ? Math.max(0, room) / total : 1;
  return rows.map((r) => {
    const runs = (l: Line) => rowRuns(l.words, o.marks, { pageNumber: o.printed?.line === l ? o.printed.word : undefined });
    const spacing = { before: 0, after: 0, line: Math.max(1, twips(r.pitch * squeeze)), lineRule: LineRuleType.EXACT };
    if (r.pieces.length === 1) return new Paragraph({ ...paragraphShapeProps(paragraphShape(r.pieces, o.col)), spacing, children: runs(r.pieces[0]) });
    return new Paragraph({
      indent: { left: twips(Math.max(0, r.pieces[0].box.x0 - o.col.x0)) },
      tabStops: r.pieces.slice(1).map((l) => ({ type: TabStopType.LEFT, position: twips(Math.max(0, l.box.x0 - o.col.x0)) })),
      spacing,
      children: r.pieces.flatMap((l, k) => [...(k ? [new TextRun({ children: [new Tab()] })] : []), ...runs(l)]),
    });
  });
}

/** Word's list numbering: one instance per list, and the numbering formats (by start value) the document needs. */
export interface Lists {
  starts: Set<number>;
  count: number;
}

/**
 * One text block (or the piece of it in one column) as a paragraph in a frame at its place on the page: the
 * PDF's rows and line breaks, alignment and indents, exact line pitch; the frame a little wider than the block,
 * on the side its rows grow to, so a substitute font that runs wider does not wrap them.
 */
function blockParagraph(
  b: TextBlock,
  lines: Line[],
  o: { ratio: number; marks: Marks; lists: Lists; page: PageModel; col: { x0: number; x1: number } },
): Paragraph {
  const size = median(lines.map((l) => l.size));
  const pitch = pitchOf(lines, o.ratio);
  const lineTop = lines[0].box.y0 - (pitch - FONT_HEIGHT_EM * size);
  const sideways = lines.some((l) => l.vertical);
  const x0 = Math.min(...lines.map((l) => l.box.x0));
  const x1 = Math.max(...lines.map((l) => l.box.x1));
  const marker = b.kind === 'li' && lines[0] === b.lines[0];
  // An item's text starts after its marker, or where its wrapped rows start: all the rows of a piece that
  // goes on in the next column (it has no marker row, and may have a single row).
  const wrapped = marker ? lines.slice(1) : lines;
  const textStart = marker && lines[0].words.length > 1 ? lines[0].words[1].box.x0 : wrapped.length ? Math.min(...wrapped.map((l) => l.box.x0)) : undefined;
  // Rows with tabs are set from the left, where their tab stops are: a block of such rows (a grid's cells) whose
  // rows end together is not flush right.
  const tabbed = lines.some((l, i) => !l.vertical && tabGaps(l.words, marker && i === 0 && l.words.length > 1).size > 0);
  const start = b.kind === 'li' ? textStart : tabbed ? Math.min(...(lines.length > 1 ? lines.slice(1) : lines).map((l) => l.box.x0)) : undefined;
  // Centred or flush right as the page's text column sets it; a frame then keeps that alignment around the block.
  const own = paragraphShape(lines, o.col, start);
  // Room for a substitute font that runs a little wider, on the side the rows grow to.
  const slack = Math.max(6, 0.1 * (x1 - x0));
  const frameCol =
    own.align === AlignmentType.CENTER
      ? { x0: x0 - slack / 2, x1: x1 + slack / 2 }
      : own.align === AlignmentType.RIGHT
        ? { x0: x0 - slack, x1 }
        : { x0: x0 - 1, x1: x1 + slack };
  frameCol.x0 = Math.max(0, frameCol.x0);
  frameCol.x1 = Math.min(o.page.width, frameCol.x1);
  const aligned = own.align === AlignmentType.CENTER || own.align === AlignmentType.RIGHT;
  const shape = aligned ? { ...own, left: 0, right: 0, firstLine: 0 } : paragraphShape(lines, frameCol, start);
  // A justified frame's rows reach a little past the PDF's edge: one that comes out a point longer must not wrap.
  if (shape.align === AlignmentType.JUSTIFIED) shape.right = Math.max(0, shape.right - Math.max(3, 0.02 * (x1 - x0)));
  const runs: Inline[] = [];
  const tabs: TabGaps = { origin: frameCol.x0, stops: [] };
  lines.forEach((l, i) => {
    const next = lines[i + 1];
    // Rows end where they ended in the PDF (a hyphen at a row's end stays), so lines break at the same places.
    runs.push(
      ...rowRuns(l.words, o.marks, {
        skipFirst: marker && i === 0 && l.words.length > 1,
        trailingSpace: !!next && !/-$/.test(l.text),
        tabs: l.vertical ? undefined : tabs,
        justified: shape.align === AlignmentType.JUSTIFIED,
      }),
    );
    if (next) runs.push(new TextRun({ break: 1 }));
  });
  const indent = {
    left: twips(shape.left),
    right: twips(shape.right),
    ...(shape.firstLine < 0 ? { hanging: twips(-shape.firstLine) } : { firstLine: twips(shape.firstLine) }),
  };
  const common = {
    children: runs,
    alignment: shape.align,
    indent,
    ...(tabs.stops.length ? { tabStops: tabStopsOf(tabs) } : {}),
    spacing: { before: 0, after: 0, line: twips(pitch), lineRule: LineRuleType.EXACT },
    frame: {
      type: 'absolute' as const,
      position: { x: twips(frameCol.x0), y: twips(sideways ? lines[0].box.y0 : lineTop) },
      // Sideways text is set upright (a Word frame does not turn text), as wide as it needs.
      ...(sideways ? {} : { width: twips(frameCol.x1 - frameCol.x0) }),
      anchor: { horizontal: FrameAnchorType.PAGE, vertical: FrameAnchorType.PAGE },
      wrap: FrameWrap.THROUGH,
    },
    widowControl: false,
    keepNext: false,
    keepLines: false,
  };
  if (b.kind === 'h') return new Paragraph({ ...common, heading: HEADINGS[b.level - 1] });
  if (b.kind === 'li' && marker) {
    const numbered = b.marker !== '-';
    const start = Number(b.marker?.slice(0, -1)) || 1;
    if (numbered) o.lists.starts.add(start);
    const instance = ++o.lists.count;
    return new Paragraph({ ...common, ...(numbered ? { numbering: { reference: `numbered-${start}`, level: 0, instance } } : { bullet: { level: 0 } }) });
  }
  return new Paragraph(common);
}

/** A block's rows cut where they jump up or sideways (a paragraph going on in the next column): one frame each. */
function framePieces(lines: Line[]): Line[][] {
  const pieces: Line[][] = [];
  for (const [i, l] of lines.entries()) {
    const prev = lines[i - 1];
    const jump = prev && (l.box.y0 < prev.box.y0 - 0.5 * l.size || l.box.y0 > prev.box.y1 + 3 * l.size || l.box.x0 > prev.box.x1 || l.box.x1 < prev.box.x0);
    if (!prev || jump) pieces.push([l]);
    else pieces[pieces.length - 1].push(l);
  }
  return pieces;
}

/**
 * Rows of a page as framed paragraphs at their height, each piece of a row at a left tab stop where it starts on the page. Rows that
 * the page's vertical rules run through (two or more, a ruled table the page model did not take for one) are
 * a Word table instead, with the rules' columns, borders, fills and merges (wordTable).
 */
function tabbedRows(
  lines: Line[],
  left: number,
  right: number,
  ratio: number,
  marks: Marks,
  rects: Rule[],
  pageWidth: number,
): { frames: Paragraph[]; tables: FlowTable[]; top: number } {
  const rows: Line[][] = [];
  for (const l of [...lines].sort((a, b) => a.box.y0 - b.box.y0)) {
    const row = rows[rows.length - 1];
    if (row && l.box.y0 < Math.max(...row.map((r) => r.box.y1)) - 0.5 * (l.box.y1 - l.box.y0)) row.push(l);
    else rows.push([l]);
  }
  const verticals = rects.filter((f) => isThin(f) && f.y1 - f.y0 > f.x1 - f.x0);
  const ruled = rows.map((row) => {
    const mid = (Math.min(...row.map((l) => l.box.y0)) + Math.max(...row.map((l) => l.box.y1))) / 2;
    return verticals.filter((f) => f.y0 < mid && f.y1 > mid).length >= 2;
  });
  const children: Paragraph[] = [];
  const tables: FlowTable[] = [];
  let cursor = NaN;
  let top = 72;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    row.sort((a, b) => a.box.x0 - b.box.x0);
    let end = i;
    while (ruled[i] && end + 1 < rows.length && ruled[end + 1]) end++;
    if (end > i) {
      const group = rows.slice(i, end + 1);
      const block: Extract<TextBlock, { kind: 'table' }> = {
        kind: 'table',
        rows: group.map((r) => [r.map((l) => l.text).join(' ')]),
        lines: group.flat(),
        cells: group.map((r) => [r]),
        cuts: [],
      };
      const made = wordTable(block, { x0: left, x1: pageWidth - right }, marks, rects);
      if (Number.isNaN(cursor)) top = made.top;
      tables.push(made);
      cursor = made.top + made.height;
      i = end;
      continue;
    }
    const size = Math.max(...row.map((l) => l.size));
    const y0 = Math.min(...row.map((l) => l.box.y0));
    const next = rows[i + 1] ? Math.min(...rows[i + 1].map((l) => l.box.y0)) - y0 : Infinity;
    const pitch = clamp(next, 0.8 * size, ratio * size);
    const lineTop = y0 - (pitch - FONT_HEIGHT_EM * size);
    if (Number.isNaN(cursor)) top = lineTop;
    cursor = (Number.isNaN(cursor) ? lineTop : Math.max(cursor, lineTop)) + pitch;
    const tabs: TabGaps = { origin: left, stops: row.slice(1).map((l) => l.box.x0 - left) };
    const runs = row.flatMap((l, k) => [...(k ? [new TextRun({ children: [new Tab()] })] : []), ...rowRuns(l.words, marks, { tabs })]);
    children.push(
      new Paragraph({
        // Each row is a frame across the page at its height: a row that runs longer in another font wraps in place.
        frame: {
          type: 'absolute',
          position: { x: twips(left), y: twips(lineTop) },
          width: twips(pageWidth - left),
          anchor: { horizontal: FrameAnchorType.PAGE, vertical: FrameAnchorType.PAGE },
          wrap: FrameWrap.THROUGH,
        },
        indent: { left: twips(Math.max(0, row[0].box.x0 - left)) },
        tabStops: tabStopsOf(tabs),
        spacing: { before: 0, after: 0, line: twips(pitch), lineRule: LineRuleType.EXACT },
        widowControl: false,
        children: runs,
      }),
    );
  }
  return { frames: children, tables, top };
}

const paragraphShapeProps = (s: ReturnType<typeof paragraphShape>) => ({
  alignment: s.align,
  indent: { left: twips(s.left), right: twips(s.right), ...(s.firstLine < 0 ? { hanging: twips(-s.firstLine) } : { firstLine: twips(s.firstLine) }) },
});

/** A table set in the flow of a page whose text is in frames: built when placed, at `top`, `height` tall. */
interface FlowTable {
  /** Turned rows that are not the whole of a cell: set as text boxes over the table. */
  turned?: Line[];
  /** Its rows, for a table set otherwise (in frames) where the flow has no place for it. */
  lines: Line[];
  /** The table, its rows' heights (and their pitches, and past a tenth their type) times `scale`. */
  table: (scale?: number) => Table;
  top: number;
  height: number;
}

/** Points from the page's side within which turned text is a stamp in the margin: it does not set the text area. */
const EDGE = 36;

/** A row set a quarter turn, up or down the page (column heads set sideways, labels along a chart's axis). */
const isTurned = (l: Line) => !!l.dir && Math.abs(l.dir[1]) > 0.9 && l.words.length > 0;

/** Han, kana and Hangul: scripts written without spaces, upright in vertical writing. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** A turned row running up the page (bottom to top), not down it. */
const isUp = (l: Line) => l.dir![1] < 0;

/** Word's direction for a row turned a quarter: up the page (bottom to top) or down it (top to bottom). */
const turnDirection = (l: Line) => (isUp(l) ? TextDirection.BOTTOM_TO_TOP_LEFT_TO_RIGHT : TextDirection.TOP_TO_BOTTOM_RIGHT_TO_LEFT);

/** Turned rows of a cell as its paragraphs, in reading order (text running up the page reads from left to right). */
function turnedParagraphs(lines: Line[], marks: Marks): Paragraph[] {
  const up = lines[0].dir![1] < 0;
  return [...lines]
    .sort((p, q) => (up ? p.box.x0 - q.box.x0 : q.box.x0 - p.box.x0))
    .map(
      (l) =>
        new Paragraph({
          spacing: { before: 0, after: 0, line: twips(Math.max(1, l.box.x1 - l.box.x0)), lineRule: LineRuleType.EXACT },
          widowControl: false,
          children: rowRuns(l.words, marks),
        }),
    );
}

/**
 * The turned rows of a page as text boxes at their place, their text turned as on the page (Word's and
 * LibreOffice's vert270 for rows running up the page, vert for rows running down it), all anchored in one 1 pt
 * paragraph. Rows that follow each other across at a steady pitch, turned alike and in one size (a paragraph set
 * sideways), share a box; its rows keep the PDF's breaks and each starts where it starts on the page. A box reaches
 * a little past its longest row at the end the rows run to, and does not wrap, so a wider substitute font neither
 * wraps a row nor moves it.
 */
function turnedBoxes(lines: Line[], page: PageModel, ratio: number, marks: Marks): Paragraph {
  const boxes: Line[][] = [];
  // Rows running up the page read left to right; rows running down read right to left.
  const across = (l: Line) => (isUp(l) ? l.box.x0 : -l.box.x1);
  const follows = (box: Line[], l: Line) => {
    const last = box[box.length - 1];
    const step = across(l) - across(last);
    const pitch = box.length > 1 ? across(box[1]) - across(box[0]) : step;
    return (
      isUp(l) === isUp(last) &&
      Math.abs(l.size - last.size) < 0.1 * last.size &&
      step > 0.8 * l.size &&
      step < 2 * l.size &&
      Math.abs(step - pitch) < 0.15 * pitch &&
      l.box.y0 < last.box.y1 &&
      last.box.y0 < l.box.y1
    );
  };
  for (const l of [...lines].sort((p, q) => across(p) - across(q))) {
    const box = boxes.find((b) => follows(b, l));
    if (box) box.push(l);
    else boxes.push([l]);
  }
  const runs = boxes.map((rows) => {
    const up = isUp(rows[0]);
    const size = Math.max(...rows.map((l) => l.size));
    const pitch = rows.length > 1 ? Math.abs(across(rows[rows.length - 1]) - across(rows[0])) / (rows.length - 1) : ratio * size;
    // A row's glyphs sit at the foot of its exact line (as upright rows do): its top is on the left when it runs up.
    const lead = Math.max(0, pitch - FONT_HEIGHT_EM * size);
    const x0 = up ? rows[0].box.x0 - lead : rows[0].box.x1 + lead - rows.length * pitch;
    const runY0 = Math.min(...rows.map((l) => l.box.y0));
    const runY1 = Math.max(...rows.map((l) => l.box.y1));
    const slack = Math.max(6, 0.1 * (runY1 - runY0));
    // Up the page, rows start at the box's foot and run to its top; down the page, the other way.
    const y0 = clamp(up ? runY0 - slack : runY0, 0, page.height);
    const y1 = clamp(up ? runY1 : runY1 + slack, y0 + 1, Math.max(page.height, y0 + 1));
    const start = (l: Line) => (up ? y1 - l.box.y1 : l.box.y0 - y0);
    const starts = rows.map(start);
    const aligned = starts.every((v) => Math.abs(v - starts[0]) < 0.5 * size);
    const spacing = { before: 0, after: 0, line: twips(pitch), lineRule: LineRuleType.EXACT };
    // One paragraph with the PDF's row breaks when its rows start together, else a paragraph per row at its start.
    const paragraphs = aligned
      ? [
          new Paragraph({
            indent: { left: twips(Math.max(0, starts[0])) },
            spacing,
            widowControl: false,
            children: rows.flatMap((l, i) => [
              ...(i ? [new TextRun({ break: 1 })] : []),
              // Rows of CJK text are not parted by spaces (LibreOffice pushes a row ending in one far down its box).
              ...rowRuns(l.words, marks, { trailingSpace: i + 1 < rows.length && !/-$/.test(l.text) && !CJK.test(l.text.slice(-1)) }),
            ]),
          }),
        ]
      : rows.map((l, i) => new Paragraph({ indent: { left: twips(Math.max(0, starts[i])) }, spacing, widowControl: false, children: rowRuns(l.words, marks) }));
    return new ShapeRun({
      type: 'rectangle',
      transformation: { width: px(rows.length * pitch), height: px(y1 - y0) },
      fill: 'none',
      line: 'none',
      floating: {
        horizontalPosition: { relative: HorizontalPositionRelativeFrom.PAGE, offset: emu(x0) },
        verticalPosition: { relative: VerticalPositionRelativeFrom.PAGE, offset: emu(y0) },
        allowOverlap: true,
        wrap: { type: TextWrappingType.NONE },
      },
      textOptions: {
        // CJK text running down the page is vertical writing: its characters stand upright, the rest is turned.
        direction: up
          ? 'bottomToTop'
          : rows.every((l) => [...l.text].filter((c) => CJK.test(c)).length > 0.5 * l.text.length)
            ? 'eastAsianVertical'
            : 'topToBottom',
        verticalAlignment: 'top',
        margins: { top: 0, right: 0, bottom: 0, left: 0 },
        wrap: false,
      },
      children: paragraphs,
    });
  });
  return new Paragraph({ spacing: { before: 0, after: 0, line: 20, lineRule: LineRuleType.EXACT }, children: runs });
}

/**
 * Where the flow of a page whose text is in frames starts: near the top of the page (below its running head),
 * not at its first text, so the page keeps a body tall enough for a table low on the page (LibreOffice moves a
 * body squeezed into the last lines of a page up).
 */
const flowStart = (firstTop: number, heads: Line[]) => Math.min(firstTop, Math.max(36, ...heads.map((l) => l.box.y1 + 6)));

/**
 * Points the flow of a page keeps free above the bottom of its body: LibreOffice gives a footer, even an empty
 * one, 1 mm at least; borders, rounding to twips.
 */
const FLOW_SLACK = 3 + 4;
/** Points at the foot of a page that LibreOffice keeps free of a flow whatever the bottom margin. */
const PAGE_FOOT = 9;

/**
 * Tables in the flow of a page whose text is in frames, each at its height: a spacer paragraph fills the gap
 * above it (one also where there is none, since tables that follow each other become one table). The flow
 * starts at `pageTop` after the 1 pt paragraph that opens the page and ends, with the 1 pt paragraph that closes
 * it, above `bottom`: never on another page. Tables that do not fit where they are come up (the gaps above them
 * close); tables taller together than the page's body are set smaller (rows, pitches and, past a tenth, type), not
 * split. A table beside the one before it (the flow holds one at a time) is left to the caller: `beside`.
 */
function tablesInFlow(tables: FlowTable[], pageTop: number, bottom: number): { children: (Paragraph | Table)[]; beside: FlowTable[] } {
  const inFlow: FlowTable[] = [];
  const beside: FlowTable[] = [];
  for (const t of [...tables].sort((p, q) => p.top - q.top)) {
    const last = inFlow[inFlow.length - 1];
    if (last && t.top < last.top + last.height - 2) beside.push(t);
    else inFlow.push(t);
  }
  // The body below the opening paragraph, less the closing paragraph, a 1 pt spacer before each table and slack.
  const room = bottom - FLOW_SLACK - (pageTop + 1) - 1 - inFlow.length;
  const heights = inFlow.reduce((a, t) => a + t.height, 0);
  const scale = heights > room ? Math.max(0.1, room / heights) : 1;
  // Tops from the bottom up: each table at its place or higher, so that it and those below it fit.
  const tops: number[] = [];
  let limit = bottom - FLOW_SLACK - 1;
  for (let i = inFlow.length - 1; i >= 0; i--) {
    tops[i] = Math.min(inFlow[i].top, limit - inFlow[i].height * scale);
    limit = tops[i] - 1;
  }
  const children: (Paragraph | Table)[] = [];
  let cursor = pageTop + 1;
  inFlow.forEach((t, i) => {
    const top = Math.max(cursor + 1, tops[i]);
    children.push(spacer(top - cursor), t.table(scale));
    cursor = top + t.height * scale;
  });
  return { children, beside };
}

/**
 * An empty 1 pt paragraph whose space before fills a gap (a table has no space before of its own); with none, it
 * carries a section's page break, and the frames before it hang on it.
 */
const spacer = (pt: number) =>
  new Paragraph({ spacing: { before: Math.max(0, twips(pt - 1)), after: 0, line: 20, lineRule: LineRuleType.EXACT }, children: [] });

/** The size most characters are set in: Word's default text size. */
function bodySize(pages: BlockPage<BlockLine>[]): number {
  const by = new Map<number, number>();
  for (const l of pages.flatMap((p) => p.lines)) by.set(Math.round(l.size * 2) / 2, (by.get(Math.round(l.size * 2) / 2) ?? 0) + l.text.length);
  return [...by.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 11;
}

/**
 * A table at its place: columns as wide as between the gutters the page model found, rows as tall as their
 * pitch on the page, each cell's rows with their look (numbers flush right stay so). Where the page draws the table (table-art), the rules are the cells' borders (the
 * outer columns and the rows reach out to them), filled rectangles their shading, and a ruled grid merges
 * cells: a header over a group of ruled columns, a cell over rows no rule separates. Without line art the
 * table has no borders: the page model also takes prose set in columns for a table.
 */
function wordTable(b: Extract<TextBlock, { kind: 'table' }>, col: { x0: number; x1: number }, marks: Marks, rects: Rule[]): FlowTable {
  const cells = b.cells ?? b.rows.map((r) => r.map(() => [] as Line[]));
  const textTops = cells.map((r) => Math.min(...r.flat().map((l) => l.box.y0)));
  const textBottoms = cells.map((r) => Math.max(...r.flat().map((l) => l.box.y1)));
  const size = median(b.lines.map((l) => l.size));
  let x0 = Math.min(...b.lines.map((l) => l.box.x0)) - 2;
  let x1 = Math.max(...b.lines.map((l) => l.box.x1)) + 2;
  // The rules around and inside the table.
  const rules = rects.filter(
    (f) => isThin(f) && f.x1 > x0 - 3 * size && f.x0 < x1 + 3 * size && f.y1 > textTops[0] - 2 * size && f.y0 < textBottoms[textBottoms.length - 1] + 2 * size,
  );
  const upright = rules.filter((f) => f.y1 - f.y0 > f.x1 - f.x0);
  const across = (f: Rule, r: number) => f.y0 < (textTops[r] + textBottoms[r]) / 2 && f.y1 > (textTops[r] + textBottoms[r]) / 2;
  // A ruled table: two or more vertical rules run through at least half of its rows. Then every vertical rule
  // through one of its rows is a column boundary (a header or a merged cell interrupts some of them) and the
  // outer columns reach out to the outer rules; otherwise (a ruled table the page model read together with the
  // prose around it, or no rules) the columns are the page model's gutters.
  const boxed = textTops.filter((_, r) => upright.filter((f) => across(f, r)).length >= 2).length >= 0.5 * textTops.length;
  const verticals = boxed ? upright.filter((f) => textTops.some((_, r) => across(f, r))).map((f) => (f.x0 + f.x1) / 2) : [];
  const horizontals = rules.filter((f) => f.x1 - f.x0 >= f.y1 - f.y0 && f.x1 - f.x0 > 0.3 * (x1 - x0)).map((f) => (f.y0 + f.y1) / 2);
  const ruled = verticals
    .filter((x) => x > x0 + 2 && x < x1 - 2)
    .sort((a, c) => a - c)
    .filter((x, i, xs) => !i || x - xs[i - 1] > 2);
  const cuts = ruled.length ? ruled : (b.cuts ?? []);
  x0 = Math.min(x0, ...verticals.filter((x) => x < x0 && x > x0 - 3 * size));
  x1 = Math.max(x1, ...verticals.filter((x) => x > x1 && x < x1 + 3 * size));
  const bounds = [x0, ...cuts, x1];
  const widths = bounds.slice(1).map((x, i) => Math.max(12, x - bounds[i]));
  // A row starts at the rule above its text, if one is drawn between it and the row before; the last one ends at
  // the rule below. Rules above and below a table without vertical rules are as often the page's own (under a
  // running head) as the table's: only a ruled table reaches out to them, and only its own are its borders.
  const tops = textTops.map((t, i) => {
    const above = horizontals.filter((y) => y < t && y > (i ? textBottoms[i - 1] : boxed ? t - 1.5 * size : t));
    // Between two rows, the rule nearest the row above closes it (a footnote's rule further down is not the table's).
    return above.length ? (i ? Math.min(...above) : Math.max(...above)) : t;
  });
  const lastBottom = textBottoms[textBottoms.length - 1];
  const below = horizontals.filter((y) => boxed && y > lastBottom && y < lastBottom + 1.5 * size);
  const heights = tops.map((t, i) => (i + 1 < tops.length ? tops[i + 1] - t : (below.length ? Math.min(...below) : lastBottom + 2) - t));
  const art = rects.length ? cellArt({ bounds, rows: textTops.map((y0, i) => ({ y0, y1: textBottoms[i] })) }, rects) : undefined;
  if (art && !boxed) {
    for (const [k, e] of art.edges) {
      const r = Number(k.split('|')[0]);
      if (r === 0) delete e.top;
      if (r === cells.length - 1) delete e.bottom;
    }
  }
  const ruledAt = (r: number, x: number) => upright.some((f) => f.x0 - 1 <= x && x <= f.x1 + 1 && across(f, r));
  const spans: SpanCells<{ lines: Line[]; span: number }> = ruled.length
    ? recut(cells, cuts, ruledAt)
    : cells.map((r) => widths.map((_, c) => (r[c]?.length ? { lines: r[c], span: 1 } : undefined)));
  if (art) groupHeaders(widths.length, spans, art);
  const down = art ? rowSpans(spans, art) : new Map<string, number>();
  // Grid cells below a cell that reaches down over them, with the number of columns it covers.
  const continued = new Map<string, number>();
  for (const [k, n] of down) {
    const [r, c] = k.split('|').map(Number);
    for (let i = 1; i < n; i++) continued.set(`${r + i}|${c}`, spans[r][c]!.span);
  }
  // Where a column's rows end, for rows of justified prose (a page of columns the page model took for a table).
  const ends = widths.map((_, c) => {
    const count = new Map<number, number>();
    for (const l of spans.flatMap((r) => r[c]?.lines ?? []))
      if (l.words.length >= 4) count.set(Math.round(l.box.x1), (count.get(Math.round(l.box.x1)) ?? 0) + 1);
    return [...count.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? Infinity;
  });
  const look = (r: number, c: number, span: number) => {
    const edge = (side: Side, k: number) => art?.edges.get(`${r}|${k}`)?.[side];
    const cols = Array.from({ length: span }, (_, k) => c + k);
    const sides: [Side, Edge | undefined][] = [
      ['top', cols.map((k) => edge('top', k)).find(Boolean)],
      ['bottom', cols.map((k) => edge('bottom', k)).find(Boolean)],
      ['left', edge('left', c)],
      ['right', edge('right', c + span - 1)],
    ];
    const drawn = sides.filter((s): s is [Side, Edge] => !!s[1]);
    const fill = art?.fill(r, c);
    return {
      ...(drawn.length
        ? {
            borders: Object.fromEntries(
              drawn.map(([side, e]) => [side, { style: BorderStyle.SINGLE, size: clamp(Math.round(e.width * 8), 2, 96), color: colourHex(e.rgb) }]),
            ),
          }
        : {}),
      ...(fill ? { shading: { type: ShadingType.CLEAR, color: 'auto', fill: colourHex(fill) } } : {}),
    };
  };
  const loose: Line[] = [];
  // Type is set smaller only when the rows are a tenth shorter or more: a little less pitch clips nothing.
  const rowsAt = (scale: number) =>
    cells.map((_r, ri) => {
      const type = scale < 0.9 ? scale : 1;
      const children: TableCell[] = [];
      for (let c = 0; c < widths.length; ) {
        const under = continued.get(`${ri}|${c}`);
        if (under) {
          children.push(
            new TableCell({
              columnSpan: under,
              verticalMerge: VerticalMergeType.CONTINUE,
              margins: { left: 0, right: 0, top: 0, bottom: 0 },
              ...look(ri, c, under),
              children: [new Paragraph({})],
            }),
          );
          c += under;
          continue;
        }
        const span = spans[ri][c]?.span ?? 1;
        const right = bounds[c + span];
        // Each row of the cell is a paragraph at its height: a tall cell holds a stretch of prose, top to bottom.
        const all = sameRowJoined(spans[ri][c]?.lines ?? []);
        // A cell's turned rows beside upright ones (a head set sideways over a label) are text boxes over it.
        const mixed = all.some(isTurned) && !all.every(isTurned);
        if (mixed && scale === 1) loose.push(...all.filter(isTurned));
        const lines = mixed ? all.filter((l) => !isTurned(l)) : all;
        const rightAligned = lines.length > 0 && lines.every((l) => right - l.box.x1 < 6 && l.box.x0 - bounds[c] > 12);
        // A cell whose text is set a quarter turn turns it too.
        const turned = lines.length > 0 && lines.every(isTurned);
        const paragraphs = turned
          ? turnedParagraphs(lines, marks)
          : lines.map((l, i) => {
              const tabs: TabGaps = { origin: bounds[c], stops: [] };
              const size = l.size * type;
              const pitch =
                scale *
                (i > 0
                  ? Math.max(1, l.box.y0 - lines[i - 1].box.y0)
                  : lines[1] && lines[1].box.y0 > l.box.y0
                    ? clamp(lines[1].box.y0 - l.box.y0, l.size, 2 * l.size)
                    : FONT_HEIGHT_EM * l.size);
              // A full row of prose is spread to the column's edge, as the PDF set it (its font may be narrower here).
              const spread = span === 1 && !rightAligned && l.words.length >= 4 && Math.abs(ends[c] - l.box.x1) < 1.5;
              return new Paragraph({
                alignment: rightAligned ? AlignmentType.RIGHT : spread ? AlignmentType.DISTRIBUTE : AlignmentType.LEFT,
                indent: {
                  // A header centred over merged columns keeps its place in them.
                  left: rightAligned ? 0 : twips(clamp(l.box.x0 - bounds[c], 0, span > 1 ? Math.max(72, right - bounds[c] - (l.box.x1 - l.box.x0) - 12) : 72)),
                  right: rightAligned || spread ? twips(clamp(right - l.box.x1, 0, 72)) : 0,
                },
                spacing: {
                  before: i === 0 ? twips(Math.max(0, scale * (l.box.y0 - tops[ri]) - (pitch - FONT_HEIGHT_EM * size))) : 0,
                  after: 0,
                  line: twips(pitch),
                  lineRule: LineRuleType.EXACT,
                },
                widowControl: false,
                children: rowRuns(l.words, marks, { tabs, scale: type }),
                ...(tabs.stops.length ? { tabStops: tabStopsOf(tabs) } : {}),
              });
            });
        children.push(
          new TableCell({
            width: { size: twips(widths.slice(c, c + span).reduce((a, w) => a + w, 0)), type: WidthType.DXA },
            margins: { left: 0, right: 0, top: 0, bottom: 0 },
            ...(span > 1 ? { columnSpan: span } : {}),
            ...(down.has(`${ri}|${c}`) ? { verticalMerge: VerticalMergeType.RESTART } : {}),
            ...look(ri, c, span),
            ...(turned ? { textDirection: turnDirection(lines[0]) } : {}),
            children: paragraphs.length ? paragraphs : [new Paragraph({})],
          }),
        );
        c += span;
      }
      // No repeated header row: the table never goes on to another page, and LibreOffice breaks a table with one
      // early (a 31-row timetable after 22 rows, with room left on the page).
      return new TableRow({ height: { value: Math.max(1, twips(heights[ri] * scale)), rule: HeightRule.EXACT }, children });
    });
  const rows = rowsAt(1);
  return {
    lines: b.lines,
    table: (scale = 1) =>
      new Table({
        columnWidths: widths.map(twips),
        width: { size: twips(x1 - x0), type: WidthType.DXA },
        // Cells carry the rules the page draws; none elsewhere.
        borders: TableBorders.NONE,
        indent: { size: twips(Math.max(0, x0 - col.x0)), type: WidthType.DXA },
        rows: scale === 1 ? rows : rowsAt(scale),
      }),
    turned: loose,
    top: tops[0],
    height: heights.reduce((a, h) => a + h, 0),
  };
}

/**
 * A cell's lines top to bottom, those side by side on one row (a cell the table's grid did not split) joined
 * into one, left to right, so they are one paragraph (their gaps become tabs) instead of rows printed over each other.
 */
function sameRowJoined(cellLines: Line[]): Line[] {
  const rows: Line[][] = [];
  for (const l of [...cellLines].sort((p, q) => p.box.y0 - q.box.y0 || p.box.x0 - q.box.x0)) {
    const row = rows[rows.length - 1];
    if (row && !l.vertical && l.box.y0 < Math.max(...row.map((r) => r.box.y1)) - 0.5 * (l.box.y1 - l.box.y0)) row.push(l);
    else rows.push([l]);
  }
  return rows.map((row) => {
    if (row.length === 1) return row[0];
    const parts = row.sort((p, q) => p.box.x0 - q.box.x0);
    const words = parts.flatMap((l) => l.words);
    const box = {
      x0: Math.min(...parts.map((l) => l.box.x0)),
      y0: Math.min(...parts.map((l) => l.box.y0)),
      x1: Math.max(...parts.map((l) => l.box.x1)),
      y1: Math.max(...parts.map((l) => l.box.y1)),
    };
    return { ...parts[0], words, box, size: Math.max(...parts.map((l) => l.size)), text: parts.map((l) => l.text).join(' ') };
  });
}

/**
 * A table's rows cut at the x of its ruled columns: a row's text is split where a rule drawn in that row falls
 * between two of its words; other text (a title over a group of columns) stays whole and spans the columns it reaches.
 */
function recut(cells: Line[][][], cuts: number[], ruledAt: (row: number, x: number) => boolean): SpanCells<{ lines: Line[]; span: number }> {
  const colOf = (x: number) => cuts.filter((c) => c <= x).length;
  return cells.map((row, r) => {
    const out: ({ lines: Line[]; span: number } | undefined)[] = cuts.map(() => undefined).concat(undefined);
    for (const l of row.flat()) {
      const pieces: Word[][] = [[]];
      l.words.forEach((w, i) => {
        if (i && cuts.some((c) => c >= l.words[i - 1].box.x1 && c <= w.box.x0 && ruledAt(r, c))) pieces.push([]);
        pieces[pieces.length - 1].push(w);
      });
      for (const ws of pieces) {
        const box = {
          x0: Math.min(...ws.map((w) => w.box.x0)),
          y0: Math.min(...ws.map((w) => w.box.y0)),
          x1: Math.max(...ws.map((w) => w.box.x1)),
          y1: Math.max(...ws.map((w) => w.box.y1)),
        };
        const line: Line = ws.length === l.words.length ? l : { ...l, words: ws, box, text: ws.map((w) => w.text).join(' ') };
        const [first, last] = [colOf(box.x0), colOf(box.x1)];
        const cell = out[first];
        if (cell) {
          cell.lines.push(line);
          cell.span = Math.max(cell.span, last - first + 1);
        } else out[first] = { lines: [line], span: last - first + 1 };
      }
    }
    return clipSpans(out);
  });
}
