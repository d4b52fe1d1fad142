import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { lineArtPages } from '../../engines/ghostscript-background.js';
import { type DrawnImage, renderRegion } from '../../engines/page-images.js';
import {
  type Line,
  noTextWarning,
  type PageModel,
  pageLinks,
  pagesTime,
  readBudgets,
  readPages,
  selectPages,
  textlessPages,
  unlessUnreadable,
} from '../document/index.js';
import { unshownFieldRows } from '../forms/index.js';
import { type PlacedImage, pagesToDocx } from './docx.js';
import { runStyle } from './docx-style.js';
import { type PageArt, readPageArt } from './table-art.js';
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

/**
 * The whole PDF as a Word document laid out like it (pagesToDocx), with its pictures, line art and links, written
 * to `dir`/document.docx; `progress` hears how far it got (0-1).
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
  // Line art, links and pictures only enrich the text: a file MuPDF or qpdf cannot trace or list (or not within
  // the pages' time) is still converted, without them.
  const [model, art, links] = await Promise.all([
    readPages(input, pages, ectx).then((m) => withFieldValues(input, m, ectx)),
    readPageArt(input, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable(new Map<number, PageArt>())),
    pageLinks(input, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable([])),
  ]);
  const drawn = [...art.values()].flatMap((a) => a.images);
  progress(0.4);
  const sizes = new Map(model.map((p) => [p.page, p]));
  const wanted = pictures(drawn, sizes).slice(0, MAX_IMAGES);
  const images: PlacedImage[] = [];
  if (wanted.length) await mkdir(join(dir, 'images'));
  // One pdftoppm per image, as many at once as there are cores.
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < wanted.length; i = next++) {
      const im = wanted[i];
      const png = await renderRegion(input, im.page, im, IMAGE_DPI, join(dir, 'images', `im${i}`), pagesTime(ectx, 1, 'renderPageMs')).catch(
        unlessUnreadable(null),
      );
      if (png) images.push({ page: im.page, box: im, png });
    }
  };
  // The line art (rules, shading, charts, diagrams) of each page that draws any, as one transparent picture
  // behind everything else, Word having no shape for most of it; rendered while the pictures are. A page
  // Ghostscript does not draw in time goes without.
  const drawing = pages.filter((p) => (art.get(p)?.paths ?? 0) >= MIN_ART_PATHS).slice(0, MAX_ART_PAGES);
  const lineArt = async () => {
    if (!drawing.length) return [];
    await mkdir(join(dir, 'art'));
    const files = await lineArtPages(input, join(dir, 'art', 'page-%d.png'), drawing, IMAGE_DPI, { ...ectx, pageMs: readBudgets().renderPageMs }).catch(
      unlessUnreadable([] as string[]),
    );
    return files.map((png, i) => ({ page: drawing[i], box: { x0: 0, y0: 0, x1: sizes.get(drawing[i])!.width, y1: sizes.get(drawing[i])!.height }, png }));
  };
  // The faces the machine sets characters in that Word's fonts lack (Thai, CJK...): rows in them keep their width.
  const words = model.flatMap((p) => p.lines.flatMap((l) => l.words)).map((w) => ({ text: w.text, family: runStyle(w).font, bold: w.bold }));
  const [behind, faces] = await Promise.all([
    lineArt(),
    scriptFaces(words, ectx),
    ...Array.from({ length: Math.min(availableParallelism(), wanted.length) }, worker),
  ]);
  progress(0.8);
  const path = join(dir, 'document.docx');
  await writeFile(path, await pagesToDocx(model, [...behind, ...images], links, art, faces));
  return { path, warning: joinWarnings(noTextWarning(textlessPages(model), model.length), hiddenTextWarning(art)) };
}

/**
 * The page model with the values of form fields its pages do not draw (a form filled without appearances) as rows
 * at their fields' places, after the page's own rows.
 */
async function withFieldValues(input: string, model: PageModel[], ctx: { cwd: string; signal?: AbortSignal; timeoutMs?: number }): Promise<PageModel[]> {
  const rows = await unshownFieldRows(input, model, ctx).catch(unlessUnreadable([] as Line[]));
  for (const row of rows) {
    const page = model.find((p) => p.page === row.page)!;
    page.lines.push(row);
    page.items.push({ kind: 'line', line: row });
  }
  return model;
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
