import { join } from 'node:path';
import JSZip from 'jszip';
import PptxGenModule from 'pptxgenjs';
import type { EngineContext } from '../../engines/context.js';
import { textlessPages } from '../../engines/ghostscript-background.js';
import { pageGeometry, type StextLine } from '../../engines/mupdf-stext.js';
import { renderRegion } from '../../engines/page-images.js';
import {
  buildPage,
  inputError,
  isReadFailure,
  type Line,
  type PageModel,
  pagesTime,
  readBudgets,
  textBatches,
  unlessUnreadable,
  type Word,
} from '../document/index.js';
import { naturalWidth, styleOf } from './text-style.js';

/**
 * PDF to slides: one slide per page, the page's graphics as a picture at the back (rendered without text) and
 * over it one editable text box per line, at the line's place, in its font family, size, weight, slant and
 * colour. The slide size is the first page's (a presentation has one); other pages are scaled to fit it, centred.
 */

// The package's types describe its CommonJS build (a `default` property); Node's import loads its ES build, whose default is the class.
const PptxGenJS = PptxGenModule as unknown as typeof PptxGenModule.default;
type TextProps = PptxGenModule.default.TextProps;
type TextPropsOptions = PptxGenModule.default.TextPropsOptions;

const IN = 72;

/** Runs of consecutive words of the same look. */
function runs(words: Word[]): { text: string; words: Word[] }[] {
  const out: { text: string; words: Word[]; key: string }[] = [];
  for (const w of words) {
    const s = styleOf([w]);
    const key = `${s.family}|${s.size}|${s.bold}|${s.italic}|${s.color}`;
    const last = out[out.length - 1];
    if (last && last.key === key) {
      last.text += ` ${w.text}`;
      last.words.push(w);
    } else {
      if (last) last.text += ' ';
      out.push({ text: w.text, words: [w], key });
    }
  }
  return out;
}

/**
 * A row's pieces apart by more than an em (table cells, a date at the right margin) are boxes of their own:
 * each keeps its place, and the spacing that fits a box to its width stays that of ordinary text.
 */
function segments(line: Line): Line[] {
  if (line.vertical) return [line];
  const out: Word[][] = [];
  for (const w of line.words) {
    const cur = out[out.length - 1];
    const prev = cur?.[cur.length - 1];
    if (prev && w.box.x0 - prev.box.x1 <= Math.max(prev.font.size, w.font.size)) cur.push(w);
    else out.push([w]);
  }
  return out.map((words) => ({
    ...line,
    words,
    text: words.map((w) => w.text).join(' '),
    box: {
      x0: Math.min(...words.map((w) => w.box.x0)),
      y0: Math.min(...words.map((w) => w.box.y0)),
      x1: Math.max(...words.map((w) => w.box.x1)),
      y1: Math.max(...words.map((w) => w.box.y1)),
    },
  }));
}

/** The page model and, per page, the bounding boxes of MuPDF's text lines in content-stream order. */
export interface SlideText {
  pages: PageModel[];
  order: Map<number, StextLine['bbox'][]>;
}

/** Reads the pages like readPages, keeping the order in which the PDF draws its lines. */
export async function readSlideText(path: string, pages: number[], ctx: EngineContext): Promise<SlideText> {
  try {
    const geometry = new Map((await pageGeometry(path, pages, ctx)).map((g) => [g.page, g]));
    // In batches, each page laid out as it is read: the characters of a long document are never held at once.
    const read: { model: PageModel; order: StextLine['bbox'][] }[] = [];
    await textBatches(
      path,
      pages,
      ctx,
      geometry,
      async () => (p) => ({ model: buildPage(p, geometry.get(p.page), undefined), order: p.lines.map((l) => l.bbox) }),
      (batch) => void read.push(...batch),
    );
    return { pages: read.map((r) => r.model), order: new Map(read.map((r) => [r.model.page, r.order])) };
  } catch (err) {
    throw inputError(err);
  }
}

/**
 * Text boxes in the order the PDF draws its text (its producer's reading order, in most files), which is the
 * order PowerPoint's tab key and screen readers follow; lines the PDF does not list come last.
 */
function drawingOrder(lines: Line[], bboxes: StextLine['bbox'][] = []): Line[] {
  const rank = (l: Line) => {
    const w = l.words[0];
    const [x, y] = [(w.box.x0 + w.box.x1) / 2, (w.box.y0 + w.box.y1) / 2];
    const i = bboxes.findIndex(([x0, y0, x1, y1]) => x >= x0 && x <= x1 && y >= y0 && y <= y1);
    return i < 0 ? Infinity : i;
  };
  return lines
    .map((l) => ({ l, r: rank(l) }))
    .sort((a, b) => a.r - b.r || a.l.box.x0 - b.l.box.x0)
    .map((x) => x.l);
}

/** `backgrounds`: each page's picture without text (JPEG), by page number; a page without one has only its text. */
export async function pagesToPptx({ pages, order }: SlideText, backgrounds: Map<number, string>): Promise<Buffer> {
  const pres = new PptxGenJS();
  const first = pages[0] ?? { width: 612, height: 792 };
  pres.defineLayout({ name: 'PAGE', width: first.width / IN, height: first.height / IN });
  pres.layout = 'PAGE';
  for (const page of pages) {
    const slide = pres.addSlide();
    const s = Math.min(first.width / page.width, first.height / page.height);
    const ox = (first.width - page.width * s) / 2;
    const oy = (first.height - page.height * s) / 2;
    const at = (x: number, y: number) => ({ x: (ox + x * s) / IN, y: (oy + y * s) / IN });
    const bg = backgrounds.get(page.page);
    if (bg) slide.addImage({ path: bg, altText: `Page ${page.page}`, ...at(0, 0), w: (page.width * s) / IN, h: (page.height * s) / IN });
    for (const line of drawingOrder(page.lines.flatMap(segments), order.get(page.page))) slide.addText(textRuns(line, s), textBox(line, at, s));
  }
  if (!pages.length) pres.addSlide();
  return officeOrder((await pres.write({ outputType: 'nodebuffer' })) as Buffer);
}

const CONTENT_TYPES = '[Content_Types].xml';

/**
 * The package repacked the way Office writes it: [Content_Types].xml first, no folder entries. Type sniffers
 * (file(1), libmagic, mail and upload gateways) recognise OOXML by that first entry; pptxgenjs (JSZip) writes its
 * folders first, so its files were taken for plain ZIP archives.
 */
async function officeOrder(pptx: Buffer): Promise<Buffer> {
  const src = await JSZip.loadAsync(pptx);
  const names = Object.keys(src.files).filter((n) => !src.files[n].dir);
  const out = new JSZip();
  for (const name of [CONTENT_TYPES, ...names.filter((n) => n !== CONTENT_TYPES)]) {
    out.file(name, await src.files[name].async('nodebuffer'), { createFolders: false });
  }
  return out.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/**
 * The line's runs, with character spacing that makes the line as wide as on the page: the family standing in
 * for the PDF's font (Melior drawn as Times New Roman) is narrower or wider, and without it the words at the
 * end of a line drift by a word or more.
 */
function textRuns(line: Line, scale: number): TextProps[] {
  const parts = runs(line.words).map((r) => ({ r, st: styleOf(r.words) }));
  let natural = 0;
  let chars = 0;
  for (const { r, st } of parts) {
    const w = naturalWidth(r.text, st.family, st.bold, st.italic);
    natural = w === undefined || !Number.isFinite(natural) ? NaN : natural + w * st.size;
    chars += [...r.text].length;
  }
  const size = Math.min(...parts.map((p) => p.st.size));
  const spacing =
    line.vertical || !Number.isFinite(natural) || chars < 2 ? 0 : Math.max(-0.15 * size, Math.min(0.25 * size, (line.box.x1 - line.box.x0 - natural) / chars));
  return parts.map(({ r, st }) => ({
    text: r.text,
    options: {
      fontFace: st.family,
      fontSize: Math.round(st.size * scale * 100) / 100 || 1,
      bold: st.bold,
      italic: st.italic,
      color: st.color,
      ...(Math.abs(spacing) >= 0.01 ? { charSpacing: Math.round(spacing * scale * 100) / 100 } : {}),
    },
  }));
}

function textBox(line: Line, at: (x: number, y: number) => { x: number; y: number }, scale: number): TextPropsOptions {
  const { x0, y0, x1, y1 } = line.box;
  // No wrapping and no autofit: a substituted font a little wider than the PDF's must not push words onto a second line.
  return {
    ...at(x0, y0),
    w: Math.max(1, (x1 - x0) * scale) / IN,
    h: Math.max(1, (y1 - y0) * scale) / IN,
    margin: 0,
    valign: 'top',
    wrap: false,
    fit: 'none',
    ...(line.vertical ? { vert: upward(line) ? ('vert270' as const) : ('eaVert' as const) } : {}),
  };
}

/** A vertical line read bottom to top (a margin note turned sideways), rather than top to bottom (CJK). */
function upward(line: Line): boolean {
  const [a, b] = [line.words[0], line.words[line.words.length - 1]];
  if (a !== b) return b.box.y0 < a.box.y0;
  return a.corners.topRight.y > a.corners.topLeft.y;
}

/**
 * Each page's picture without text, for pagesToPptx (150 dpi: sharp enough for a slide shown full screen). A file
 * Ghostscript cannot read but Poppler can (a damaged one) gets whole pages instead, text included: the look is
 * kept, and the text boxes lie over their own image.
 */
export async function slideBackgrounds(path: string, pages: PageModel[], dir: string, ctx: EngineContext): Promise<Map<number, string>> {
  const numbers = pages.map((p) => p.page);
  const pageMs = readBudgets().renderPageMs;
  try {
    const files = await textlessPages(path, join(dir, 'slide-%d.jpg'), numbers, 150, { ...ctx, pageMs });
    return new Map(numbers.map((p, i) => [p, files[i]]));
  } catch (err) {
    // Ghostscript failed on the file, or spent RENDER_PAGE_SECONDS on one page: Poppler draws each page within its
    // budget, and a page it cannot draw either keeps only its text.
    if (!isReadFailure(err)) throw err;
    const out = new Map<number, string>();
    for (const p of pages) {
      const png = await renderRegion(
        path,
        p.page,
        { x0: 0, y0: 0, x1: p.width, y1: p.height },
        150,
        join(dir, `page-${p.page}`),
        pagesTime(ctx, 1, 'renderPageMs'),
      ).catch(unlessUnreadable(null));
      if (png) out.set(p.page, png);
    }
    return out;
  }
}
