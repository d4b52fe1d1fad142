import { readFile } from 'node:fs/promises';
import {
  AlignmentType,
  Document,
  HeadingLevel,
  ImageRun,
  LevelFormat,
  Packer,
  PageOrientation,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
  type ISectionOptions,
} from 'docx';
import { toMarkdown, type Box, type PageModel } from '../document/index.js';

/**
 * PDF to an editable Word document. The structure (reading order, headings, paragraphs joined across line
 * breaks, lists, tables) is decided in one place, the Markdown builder of the page model (/markdown); its
 * output is a small fixed grammar that is read back here block by block, so /word and /markdown never
 * disagree. Each PDF page becomes a section with the page's size and orientation and margins taken from
 * where its text sits; images are placed before the first block below them in their column.
 */

export type DocBlock =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; numbered: boolean; start: number; items: string[] }
  | { kind: 'table'; rows: string[][] };

export interface PlacedImage {
  page: number;
  /** Device space of the displayed page, points. */
  box: Box;
  png: string;
}

const TABLE_RULE = /^\|( --- \|)+$/;
const LIST_ITEM = /^(- |(\d+)\. )/;

/** Reads toMarkdown's output (with page-break comments) back into blocks per page. */
export function markdownBlocks(markdown: string, pages: number[]): Map<number, DocBlock[]> {
  const out = new Map<number, DocBlock[]>(pages.map((p) => [p, []]));
  let k = -1;
  for (const chunk of markdown.replace(/\n+$/, '').split('\n\n')) {
    if (k + 1 < pages.length && chunk === `<!--Page ${pages[k + 1]}-->`) {
      k++;
      continue;
    }
    const blocks = out.get(pages[Math.max(0, k)])!;
    const lines = chunk.split('\n');
    const heading = /^(#{1,6}) (.*)$/s.exec(chunk);
    if (lines.length >= 2 && lines.every((l) => l.startsWith('|')) && TABLE_RULE.test(lines[1])) {
      const cells = (l: string) => l.slice(2, -2).split(' | ').map((c) => c.replace(/\\\|/g, '|'));
      blocks.push({ kind: 'table', rows: [lines[0], ...lines.slice(2)].map(cells) });
    } else if (lines.every((l) => LIST_ITEM.test(l))) {
      // Consecutive items are one chunk; a change of marker kind starts a new list.
      for (const [i, l] of lines.entries()) {
        const n = /^(\d+)\. /.exec(l);
        const text = l.replace(LIST_ITEM, '');
        const last = blocks[blocks.length - 1];
        if (i > 0 && last?.kind === 'list' && last.numbered === !!n) last.items.push(text);
        else blocks.push({ kind: 'list', numbered: !!n, start: n ? Number(n[1]) : 1, items: [text] });
      }
    } else if (heading) {
      blocks.push({ kind: 'heading', level: heading[1].length, text: heading[2] });
    } else {
      blocks.push({ kind: 'paragraph', text: chunk.replace(/^\\(?=#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/, '') });
    }
  }
  return out;
}

const HEADINGS = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3, HeadingLevel.HEADING_4, HeadingLevel.HEADING_5, HeadingLevel.HEADING_6];
const twips = (pt: number) => Math.round(pt * 20);
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const blockText = (b: DocBlock) => (b.kind === 'table' ? b.rows.flat().join(' ') : b.kind === 'list' ? b.items.join(' ') : b.text);

/** The size most characters are set in: Word's default text size. */
function bodySize(pages: PageModel[]): number {
  const by = new Map<number, number>();
  for (const l of pages.flatMap((p) => p.lines)) by.set(Math.round(l.size * 2) / 2, (by.get(Math.round(l.size * 2) / 2) ?? 0) + l.text.length);
  return [...by.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 11;
}

/** Index of the block an image goes before: the first block holding the first line below the image in its column. */
function anchorOf(page: PageModel, blocks: DocBlock[], img: Box): number {
  const below = page.lines.find((l) => l.box.y0 >= img.y1 - 2 && l.box.x0 < img.x1 && l.box.x1 > img.x0);
  if (!below) return blocks.length;
  const probe = norm(below.words.slice(0, 4).map((w) => w.text).join(' '));
  const i = blocks.findIndex((b) => norm(blockText(b)).includes(probe));
  return i < 0 ? blocks.length : i;
}

export async function pagesToDocx(pages: PageModel[], images: PlacedImage[]): Promise<Buffer> {
  const blocksByPage = markdownBlocks(toMarkdown(pages, { pageBreakComments: true }), pages.map((p) => p.page));
  const starts = new Set<number>();
  let listCount = 0;
  const sections: ISectionOptions[] = [];
  for (const page of pages) {
    const blocks = blocksByPage.get(page.page) ?? [];
    const lines = page.lines;
    const m = lines.length
      ? { left: Math.min(...lines.map((l) => l.box.x0)), top: Math.min(...lines.map((l) => l.box.y0)), right: page.width - Math.max(...lines.map((l) => l.box.x1)), bottom: page.height - Math.max(...lines.map((l) => l.box.y1)) }
      : { left: 72, top: 72, right: 72, bottom: 72 };
    const margin = (v: number) => twips(clamp(v - 4, 18, 72));
    const usable = page.width - (margin(m.left) + margin(m.right)) / 20;

    const placed = new Map<number, PlacedImage[]>();
    for (const img of images.filter((i) => i.page === page.page).sort((a, b) => a.box.y0 - b.box.y0)) {
      const at = anchorOf(page, blocks, img.box);
      placed.set(at, [...(placed.get(at) ?? []), img]);
    }
    const children: (Paragraph | Table)[] = [];
    const addImages = async (at: number) => {
      for (const img of placed.get(at) ?? []) {
        const scale = Math.min(1, usable / (img.box.x1 - img.box.x0));
        const px = (pt: number) => Math.max(1, Math.round(pt * scale * (96 / 72)));
        children.push(new Paragraph({ children: [new ImageRun({ type: 'png', data: await readFile(img.png), transformation: { width: px(img.box.x1 - img.box.x0), height: px(img.box.y1 - img.box.y0) } })] }));
      }
    };
    for (const [i, b] of blocks.entries()) {
      await addImages(i);
      if (b.kind === 'heading') children.push(new Paragraph({ text: b.text, heading: HEADINGS[b.level - 1] }));
      else if (b.kind === 'paragraph') children.push(new Paragraph({ text: b.text }));
      else if (b.kind === 'list') {
        const instance = ++listCount;
        if (b.numbered) starts.add(b.start);
        for (const item of b.items) {
          children.push(
            b.numbered ? new Paragraph({ text: item, numbering: { reference: `numbered-${b.start}`, level: 0, instance } }) : new Paragraph({ text: item, bullet: { level: 0 } }),
          );
        }
      } else children.push(wordTable(b.rows));
    }
    await addImages(blocks.length);
    if (!children.length) children.push(new Paragraph({}));
    const landscape = page.width > page.height;
    sections.push({
      properties: {
        page: {
          size: { width: twips(Math.min(page.width, page.height)), height: twips(Math.max(page.width, page.height)), orientation: landscape ? PageOrientation.LANDSCAPE : PageOrientation.PORTRAIT },
          margin: { left: margin(m.left), right: margin(m.right), top: margin(m.top), bottom: margin(m.bottom) },
        },
      },
      children,
    });
  }
  const doc = new Document({
    styles: { default: { document: { run: { size: Math.round(clamp(bodySize(pages), 6, 36) * 2) }, paragraph: { spacing: { after: 120 } } } } },
    numbering: {
      config: [...starts].map((start) => ({
        reference: `numbered-${start}`,
        levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', start, alignment: AlignmentType.START, style: { paragraph: { indent: { left: 720, hanging: 360 } } } }],
      })),
    },
    sections,
  });
  return Packer.toBuffer(doc);
}

/** The first row is the header (repeated on each page, bold): the Markdown builder writes tables that way too. */
function wordTable(rows: string[][]): Table {
  const cols = Math.max(...rows.map((r) => r.length));
  return new Table({
    width: { size: 100, type: WidthType.PERCENTAGE },
    rows: rows.map(
      (r, i) =>
        new TableRow({
          tableHeader: i === 0,
          children: Array.from({ length: cols }, (_, c) => new TableCell({ children: [new Paragraph({ children: [new TextRun({ text: r[c] ?? '', bold: i === 0 })] })] })),
        }),
    ),
  });
}
