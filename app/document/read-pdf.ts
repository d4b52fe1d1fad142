import { invalidInput } from '../errors.js';
import { inputError } from './pdf-access.js';
import type { EngineContext } from '../../engines/context.js';
import { glyphColours, pageGeometry, structuredText, type StextChar, type StextLine, type StextPage } from '../../engines/mupdf-stext.js';
import { popplerPageWords, type PopplerWord } from '../../engines/poppler.js';
import { pageCount } from '../../engines/qpdf.js';
import { buildPages, type PageModel } from './layout.js';
import { selectedPages } from './pages.js';

/**
 * Opens an input PDF for reading: a password-protected file is a 401, a file qpdf cannot read at all is a
 * 400, and the page selection is resolved against the pages of the real page tree (not the /Count the file
 * claims), sorted, each page once.
 */
export async function selectPages(path: string, spec: string, ctx: EngineContext): Promise<number[]> {
  let count: number;
  try {
    // qpdf reports a needed password as PasswordError here, so no separate encryption probe is run.
    count = await pageCount(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  if (!Number.isFinite(count) || count < 1) throw invalidInput();
  return selectedPages(spec, count);
}

/** The page model of the selected pages; `colours` adds the original colour spaces (one more engine pass). */
export async function readPages(path: string, pages: number[], ctx: EngineContext, opts: { colours?: boolean } = {}): Promise<PageModel[]> {
  try {
    const [stext, geometry, traced] = await Promise.all([
      decodedText(path, pages, ctx),
      pageGeometry(path, pages, ctx),
      opts.colours ? glyphColours(path, pages, ctx) : Promise.resolve(undefined),
    ]);
    return buildPages(stext, geometry, traced);
  } catch (err) {
    throw inputError(err);
  }
}

/** MuPDF's structured text of the pages, with the lines it could not decode read by Poppler (see repairLines). */
export async function decodedText(path: string, pages: number[], ctx: EngineContext): Promise<StextPage[]> {
  const stext = await structuredText(path, pages, ctx);
  const broken = stext.filter((p) => undecoded(p).length);
  if (!broken.length) return stext;
  // One pdftotext per run of such pages, not one per page at once (a process and two abort listeners each).
  const words = await popplerPageWords(path, broken.map((p) => p.page), ctx);
  for (const p of broken) repairLines(p, words.get(p.page) ?? []);
  return stext;
}

const REPLACEMENT = '\uFFFD';
const undecoded = (page: StextPage) => page.lines.filter((l) => l.wmode === 0 && l.spans.some((s) => s.chars.some((c) => c.c === REPLACEMENT)));

/**
 * MuPDF 1.21 cannot decode some text (a non-embedded font with a Shift-JIS CMap comes out as U+FFFD and Latin-1
 * debris) that Poppler decodes. Such horizontal lines take Poppler's words found at the same place, spread
 * evenly over each word's box, with the font, size and colour MuPDF saw.
 */
function repairLines(page: StextPage, words: PopplerWord[]): void {
  for (const line of undecoded(page)) {
    const [x0, y0, x1, y1] = line.bbox;
    const found = words
      .filter((w) => (w.box[1] + w.box[3]) / 2 >= y0 && (w.box[1] + w.box[3]) / 2 <= y1 && w.box[0] < x1 && w.box[2] > x0)
      .sort((a, b) => a.box[0] - b.box[0]);
    if (!found.length) continue;
    const first = line.spans[0];
    const colour = first.chars[0]?.color ?? '#000000';
    const chars: StextChar[] = [];
    found.forEach((w, i) => {
      const [wx0, wy0, wx1, wy1] = w.box;
      if (i > 0) chars.push(charAt(' ', found[i - 1].box[2], wx0, wy0, wy1, colour));
      const glyphs = [...w.text];
      const step = (wx1 - wx0) / glyphs.length;
      glyphs.forEach((g, k) => chars.push(charAt(g, wx0 + k * step, wx0 + (k + 1) * step, wy0, wy1, colour)));
    });
    line.spans = [{ font: first.font, size: first.size, chars }];
    line.bbox = [Math.min(x0, found[0].box[0]), y0, Math.max(x1, ...found.map((w) => w.box[2])), y1] as StextLine['bbox'];
  }
}

const charAt = (c: string, left: number, right: number, top: number, bottom: number, color: string): StextChar => ({
  c,
  quad: [left, top, right, top, left, bottom, right, bottom],
  x: left,
  y: bottom,
  color,
});

/** Pages (1-based) that carry no text at all: scans, or drawings. */
export const textlessPages = (pages: PageModel[]) => pages.filter((p) => p.lines.length === 0).map((p) => p.page);

export function noTextWarning(empty: number[], total: number): string | undefined {
  if (!empty.length) return undefined;
  if (empty.length === total) return 'No text was found on the selected pages: they may be scanned images. Run /pdf-with-ocr-text first to make the text readable.';
  return `No text was found on page${empty.length > 1 ? 's' : ''} ${empty.join(', ')}: ${empty.length > 1 ? 'they' : 'it'} may be scanned images. Run /pdf-with-ocr-text first to make that text readable.`;
}
