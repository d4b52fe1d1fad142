import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
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
import { slideDeckWriter } from './pptx-package.js';
import { naturalWidth, styleOf, type TextStyle } from './text-style.js';

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

/** Runs of consecutive words of the same look, each with that look (styleOf of any of its words). */
function runs(words: Word[]): { text: string; words: Word[]; style: TextStyle }[] {
  const out: { text: string; words: Word[]; style: TextStyle; key: string }[] = [];
  for (const w of words) {
    const style = styleOf([w]);
    const key = `${style.family}|${style.size}|${style.bold}|${style.italic}|${style.color}`;
    const last = out[out.length - 1];
    if (last && last.key === key) {
      last.text += ` ${w.text}`;
      last.words.push(w);
    } else {
      if (last) last.text += ' ';
      out.push({ text: w.text, words: [w], style, key });
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

/**
 * Text boxes in the order the PDF draws its text (its producer's reading order, in most files), which is the
 * order PowerPoint's tab key and screen readers follow; lines the PDF does not list come last.
 */
function drawingOrder(lines: Line[], bboxes: StextLine['bbox'][]): Line[] {
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

/**
 * The PDF as a presentation written to `path` as its pages are read, a batch of pages at a time: each batch's
 * pictures rendered, its slides made and moved into the package on disk before the next batch is read, so memory
 * stays that of a batch whatever the document's length. Returns the pages without text.
 */
export async function pdfToPptx(input: string, pages: number[], path: string, dir: string, ctx: EngineContext): Promise<number[]> {
  const textless: number[] = [];
  let deck: Awaited<ReturnType<typeof slideDeckWriter>> | undefined;
  let first: PageModel | undefined;
  // Failures of reading the PDF are the input's (inputError); those of making slides from what was read are not.
  let making: unknown;
  try {
    const geometry = new Map((await pageGeometry(input, pages, ctx)).map((g) => [g.page, g]));
    await textBatches(
      input,
      pages,
      ctx,
      geometry,
      async () => (p) => ({ page: buildPage(p, geometry.get(p.page), undefined), order: p.lines.map((l) => l.bbox) }),
      async (batch) => {
        try {
          first ??= batch[0].page;
          deck ??= await slideDeckWriter(path, await packed(presentation(first, pages.length)));
          textless.push(...batch.filter((b) => !b.page.lines.length).map((b) => b.page.page));
          const art = await mkdtemp(join(dir, 'slides-'));
          const backgrounds = await slideBackgrounds(
            input,
            batch.map((b) => b.page),
            art,
            ctx,
          );
          const pres = presentation(first);
          for (const { page, order } of batch) addSlide(pres, first!, page, backgrounds.get(page.page), order);
          await deck.add(await packed(pres));
          await rm(art, { recursive: true, force: true });
        } catch (err) {
          making = err;
          throw err;
        }
      },
    );
    if (!deck) {
      // No page to read: one empty slide of a Letter page.
      deck = await slideDeckWriter(path, await packed(presentation({ width: 612, height: 792 }, 1)));
      await deck.add(await packed(presentation({ width: 612, height: 792 }, 1)));
    }
    await deck.close();
    return textless;
  } catch (err) {
    deck?.discard();
    throw err === making ? err : inputError(err);
  }
}

/** A presentation with slides the size of `first` (a presentation has one slide size), and `empty` blank slides. */
function presentation(first: { width: number; height: number }, empty = 0): InstanceType<typeof PptxGenJS> {
  const pres = new PptxGenJS();
  pres.defineLayout({ name: 'PAGE', width: first.width / IN, height: first.height / IN });
  pres.layout = 'PAGE';
  for (let i = 0; i < empty; i++) pres.addSlide();
  return pres;
}

const packed = async (pres: InstanceType<typeof PptxGenJS>) => (await pres.write({ outputType: 'nodebuffer', compression: false })) as Buffer;

/**
 * The page as a slide: its picture without text (`background`, JPEG or PNG) at the back, over it a text box per
 * piece of line, in the order the PDF draws them. A page of another size than `first` is scaled to fit, centred.
 */
function addSlide(
  pres: InstanceType<typeof PptxGenJS>,
  first: { width: number; height: number },
  page: PageModel,
  background: string | undefined,
  order: StextLine['bbox'][],
): void {
  const slide = pres.addSlide();
  const s = Math.min(first.width / page.width, first.height / page.height);
  const ox = (first.width - page.width * s) / 2;
  const oy = (first.height - page.height * s) / 2;
  const at = (x: number, y: number) => ({ x: (ox + x * s) / IN, y: (oy + y * s) / IN });
  if (background) slide.addImage({ path: background, altText: `Page ${page.page}`, ...at(0, 0), w: (page.width * s) / IN, h: (page.height * s) / IN });
  for (const line of drawingOrder(page.lines.flatMap(segments), order)) slide.addText(textRuns(line, s), textBox(line, at, s));
}

/**
 * The line's runs, with character spacing that makes the line as wide as on the page: the family standing in
 * for the PDF's font (Melior drawn as Times New Roman) is narrower or wider, and without it the words at the
 * end of a line drift by a word or more.
 */
function textRuns(line: Line, scale: number): TextProps[] {
  const parts = runs(line.words).map((r) => ({ r, st: r.style }));
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
 * Each page's picture without text, for a slide's back (150 dpi: sharp enough for a slide shown full screen). A file
 * Ghostscript cannot read but Poppler can (a damaged one) gets whole pages instead, text included: the look is
 * kept, and the text boxes lie over their own image.
 */
async function slideBackgrounds(path: string, pages: PageModel[], dir: string, ctx: EngineContext): Promise<Map<number, string>> {
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
