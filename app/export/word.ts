import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { type ISectionOptions, Paragraph } from 'docx';
import { lineArtPages } from '../../engines/ghostscript-background.js';
import { type DrawnImage, renderRegion } from '../../engines/page-images.js';
import {
  type BlockLine,
  type BlockPage,
  dividedPage,
  type Line,
  noTextWarning,
  type PageLink,
  type PageModel,
  pageLinks,
  pagesTime,
  readBudgets,
  readPageBatches,
  selectPages,
  type TextBlock,
  textBlocks,
  textlessPages,
  thinPage,
  unlessUnreadable,
} from '../document/index.js';
import { unshownFieldRows } from '../forms/index.js';
import { documentShape, docxDocument, type Lists, type PlacedImage, pageSection } from './docx.js';
import { runningLines } from './docx-layout.js';
import { DocxPackage } from './docx-package.js';
import { runStyle } from './docx-style.js';
import { cellDividers, type PageArt, readPageArt } from './table-art.js';
import { scriptFaces } from './text-style.js';

/**
 * Pages that draw text invisibly with no picture under it (an OCR layer whose scan is missing, hidden text): the
 * PDF shows none of it and neither does the Word page, which keeps it as hidden text. Said, so a blank-looking page
 * is not taken for lost text.
 */
function hiddenTextWarning(art: Map<number, PageArt>): string | undefined {
  const pages = [...art].filter(([, a]) => a.invisible.length && !a.images.length).map(([p]) => p);
  if (!pages.length) return undefined;
  const many = pages.length > 1;
  return `Page${many ? 's' : ''} ${pages.join(', ')} draw${many ? '' : 's'} text invisibly with no picture under it (an OCR layer without its scan, or hidden text): it is kept as Word hidden text, searchable but not shown or printed unless Word is set to show hidden text.`;
}

const joinWarnings = (...ws: (string | undefined)[]) => ws.filter(Boolean).join(' ') || undefined;

/** Pictures smaller than this (points) are rules, bullets or specks, not content. */
const MIN_IMAGE_PT = 12;
/** Images rendered per document at most (one pdftoppm each): a bound on time for image-heavy files. */
const MAX_IMAGES = 60;
const IMAGE_DPI = 150;
/** A page drawing fewer paths (a rule under its running head, a box) keeps them as table borders or not at all. */
const MIN_ART_PATHS = 4;
/** Pages whose line art becomes a picture, at most (one Ghostscript page each): a bound on time and size. */
const MAX_ART_PAGES = 200;
/** Pages laid out as Word objects at a time (about 3 MB of them for a dense page), then written to the package. */
const DOCX_BATCH = 10;

/**
 * The whole PDF as a Word document laid out like it (docx.ts), with its pictures, line art and links, written
 * to `dir`/document.docx; `progress` hears how far it got (0-1). A long document is never held whole: its pages
 * are read in batches and kept on disk, in memory only thin (the structure /markdown reads: headings are ranked
 * and running heads found across the document); then each batch is read back, laid out and added to the package
 * (DocxPackage).
 */
export async function pdfToWord(
  input: string,
  dir: string,
  { signal, timeoutMs }: { signal?: AbortSignal; timeoutMs?: number },
  progress: (done: number) => void,
): Promise<{ path: string; warning?: string }> {
  const ectx = { cwd: dir, signal, timeoutMs };
  const pages = await selectPages(input, '1-last', ectx);
  // The trace gives the line art (table rules and fills, underlines) and where the pictures are, in one pass.
  // Line art, links, pictures and unshown form values only enrich the text: a file MuPDF or qpdf cannot trace or
  // list (or not within the pages' time) is still converted, without them.
  const tracing = readPageArt(input, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable(new Map<number, PageArt>()));
  const linking = pageLinks(input, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable([] as PageLink[]));
  const filling = unshownFieldRows(input, pages, ectx).catch(unlessUnreadable(() => [] as Line[]));
  // Folders of their own: a job tries again in the same folder (on a repaired copy of a file first refused).
  const pagesDir = await mkdtemp(join(dir, 'pages-'));
  const stored: string[] = [];
  const thin: BlockPage<BlockLine>[] = [];
  const sizes = new Map<number, { width: number; height: number }>();
  // The faces the machine sets characters in that Word's fonts lack (Thai, CJK...): rows in them keep their width.
  const scripts = new Map<string, { text: string; family: string; bold: boolean }>();
  // Each batch is laid out as it is read (with its unshown form values, each side of a rule dividing a ruled row
  // into cells with rows of their own), kept on disk and made thin at once: made thin from the stored batches read
  // back, the 2,010-page register's page models churned V8's heap to ~600 MB for ~160 MB kept.
  await readPageBatches(input, pages, ectx, {}, async (batch) => {
    const [art, fieldRows] = await Promise.all([tracing, filling]);
    const laid = batch.map((p) => {
      for (const row of fieldRows(p)) {
        p.lines.push(row);
        p.items.push({ kind: 'line', line: row });
      }
      return dividedPage(p, cellDividers(art.get(p.page)?.rects ?? []));
    });
    stored.push(join(pagesDir, `${stored.length}.bin`));
    await writeFile(stored[stored.length - 1], serialize(laid));
    for (const page of laid) {
      thin.push(thinPage(page));
      sizes.set(page.page, { width: page.width, height: page.height });
      for (const w of page.lines.flatMap((l) => l.words)) {
        if (!/[^\x00-\x7f]/.test(w.text)) continue;
        const family = runStyle(w).font;
        const key = `${w.text}|${family}|${w.bold}`;
        if (!scripts.has(key)) scripts.set(key, { text: w.text, family, bold: w.bold });
      }
    }
  });
  const [art, links] = await Promise.all([tracing, linking]);
  const laidOut = async (file: string) => deserialize(await readFile(file)) as PageModel[];
  const warning = joinWarnings(noTextWarning(textlessPages(thin), thin.length), hiddenTextWarning(art));
  const { shape, blocks, heads, printedAt } = rankedSlots(thin);
  const count = thin.length;
  // The thin pages go before the long part: the layout takes the words and text from the full pages.
  thin.length = 0;
  progress(0.4);

  const drawn = [...art.values()].flatMap((a) => a.images);
  const wanted = pictures(drawn, sizes).slice(0, MAX_IMAGES);
  const images: PlacedImage[] = [];
  if (wanted.length) await mkdir(join(dir, 'images'), { recursive: true });
  // One pdftoppm per image, as many at once as there are cores.
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < wanted.length; i = next++) {
      const im = wanted[i];
      const png = await renderRegion(input, im.page, im, IMAGE_DPI, join(dir, 'images', `im${i}`), pagesTime(ectx, 1, 'renderPageMs')).catch(
        unlessUnreadable(null),
      );
      if (png) images[i] = { page: im.page, box: im, png };
    }
  };
  // The line art (rules, shading, charts, diagrams) of each page that draws any, as one transparent picture
  // behind everything else, Word having no shape for most of it; rendered while the pictures are. A page
  // Ghostscript does not draw in time goes without.
  const drawing = pages.filter((p) => (art.get(p)?.paths ?? 0) >= MIN_ART_PATHS).slice(0, MAX_ART_PAGES);
  const lineArt = async () => {
    if (!drawing.length) return [];
    await mkdir(join(dir, 'art'), { recursive: true });
    const files = await lineArtPages(input, join(dir, 'art', 'page-%d.png'), drawing, IMAGE_DPI, { ...ectx, pageMs: readBudgets().renderPageMs }).catch(
      unlessUnreadable([] as string[]),
    );
    return files.map((png, i) => ({ page: drawing[i], box: { x0: 0, y0: 0, x1: sizes.get(drawing[i])!.width, y1: sizes.get(drawing[i])!.height }, png }));
  };
  const [behind, faces] = await Promise.all([
    lineArt(),
    scriptFaces([...scripts.values()], ectx),
    ...Array.from({ length: Math.min(availableParallelism(), wanted.length) }, worker),
  ]);
  // In the order found (not the order rendered), so the same PDF gives the same document.
  const placed = [...behind, ...images.filter(Boolean)];
  progress(0.6);

  const docx = new DocxPackage(await mkdtemp(join(dir, 'docx-')));
  const lists: Lists = { starts: new Set<number>(), count: 0 };
  let index = 0;
  let sections: ISectionOptions[] = [];
  for (const [k, file] of stored.entries()) {
    for (const page of await laidOut(file)) {
      // The page's rows in the same slots as its thin copy's: the blocks and running rows found on the thin pages
      // are this page's rows.
      const full = lineSlots(page);
      const own = (k: number) => full[k] as Line;
      const pageBlocks = blocks[index].map(
        (b): TextBlock =>
          b.kind === 'table' ? { ...b, lines: b.lines.map(own), cells: b.cells?.map((r) => r.map((c) => c.map(own))) } : { ...b, lines: b.lines.map(own) },
      );
      const printed = printedAt.get(index);
      sections.push(
        await pageSection(
          page,
          pageBlocks,
          { lines: new Set(heads[index].map(own)), printed: printed && { ...printed, line: own(printed.line) } },
          {
            shape,
            lists,
            images: placed.filter((i) => i.page === page.page),
            links: links.filter((l) => l.page === page.page),
            art: art.get(page.page),
            faces,
          },
        ),
      );
      index++;
      // Word's objects for a dense page take several times its page model: a few pages of them at a time.
      if (sections.length === DOCX_BATCH || index === count) {
        await docx.add(docxDocument(sections, shape, lists), index === count);
        sections = [];
      }
    }
    await rm(file);
    progress(0.6 + (0.4 * (k + 1)) / stored.length);
  }
  const path = join(dir, 'document.docx');
  await docx.finish(docxDocument([{ children: [new Paragraph({})] }], shape, lists), path);
  return { path, warning };
}

/**
 * The document's blocks and running rows, ranked across its thin pages (heading levels, running heads and feet, the
 * page numbers they print), with each row given by its slot (lineSlots) rather than as the thin row: all the layout
 * needs of the thin pages, which can then go.
 */
function rankedSlots(thin: BlockPage<BlockLine>[]) {
  const slots = new Map<BlockLine, number>();
  for (const t of thin) lineSlots(t).forEach((l, i) => slots.has(l) || slots.set(l, i));
  const slot = (l: BlockLine) => slots.get(l)!;
  const blocks = textBlocks(thin);
  const running = runningLines(thin.map((p) => ({ lines: p.lines, height: p.height ?? 0 })));
  return {
    shape: documentShape(thin, blocks),
    blocks: blocks.map((page) =>
      page.map((b) =>
        b.kind === 'table'
          ? { ...b, lines: b.lines.map(slot), cells: b.cells?.map((r) => r.map((c) => c.map(slot))) }
          : { ...b, text: '', lines: b.lines.map(slot) },
      ),
    ),
    heads: thin.map((p) => p.lines.filter((l) => running.lines.has(l)).map(slot)),
    printedAt: new Map([...running.pageNumber].map(([i, n]) => [i, { ...n, line: slot(n.line) }])),
  };
}

/**
 * A page's rows in a fixed order of slots (its rows, then each table's rows and cells): the page and its thin
 * copy have the same structure, so a row of one and the row of the other in the same slot are the same row.
 */
function lineSlots<L extends BlockLine>(page: BlockPage<L>): L[] {
  return [...page.lines, ...page.items.flatMap((it) => (it.kind === 'line' ? [] : [...it.lines, ...(it.cells ?? []).flat(2)]))];
}

/** Images clipped to their page, without tiny ones and without the same one drawn twice at one place. */
function pictures(drawn: DrawnImage[], pages: Map<number, { width: number; height: number }>): DrawnImage[] {
  const seen = new Set<string>();
  const out: DrawnImage[] = [];
  for (const d of drawn) {
    const p = pages.get(d.page);
    if (!p) continue;
    const im = { page: d.page, x0: Math.max(0, d.x0), y0: Math.max(0, d.y0), x1: Math.min(p.width, d.x1), y1: Math.min(p.height, d.y1) };
    const key = [im.page, im.x0, im.y0, im.x1, im.y1].map(Math.round).join(',');
    if (im.x1 - im.x0 < MIN_IMAGE_PT || im.y1 - im.y0 < MIN_IMAGE_PT || seen.has(key)) continue;
    seen.add(key);
    out.push(im);
  }
  return out;
}
