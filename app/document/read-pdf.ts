import type { EngineContext } from '../../engines/context.js';
import type { EngineError } from '../../engines/errors.js';
import { glyphColours, type PageGeometry, type StextChar, type StextLine, type StextPage, structuredTextPages } from '../../engines/mupdf-stext.js';
import { type PopplerWord, popplerPageText, popplerPageWords } from '../../engines/poppler.js';
import { isRtlLetter, mostlyRtl } from './bidi.js';
import { buildPage, displayedSize, median, type PageModel } from './layout.js';
import { selectedPages } from './pages.js';
import { inputError } from './pdf-access.js';
import { readBudgets } from './read-budgets.js';
import { chainFailure, countPages, isReadFailure, pageGeometries, pagesTime, pagesWithFallback, unlessUnreadable } from './read-chain.js';

/**
 * Opens an input PDF for reading: a password-protected file is a 401, a file no engine can count the pages of
 * a 400, and the page selection is resolved against the pages of the real page tree (not the /Count the file
 * claims), sorted, each page once.
 */
export async function selectPages(path: string, spec: string, ctx: EngineContext): Promise<number[]> {
  let count: number;
  try {
    // qpdf reports a needed password as PasswordError here, so no separate encryption probe is run.
    count = await countPages(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  return selectedPages(spec, count);
}

/**
 * The page model of the selected pages; `colours` adds the original colour spaces (one more engine pass, left
 * out when MuPDF cannot trace a page: the words keep their sRGB colours).
 */
export async function readPages(path: string, pages: number[], ctx: EngineContext, opts: { colours?: boolean } = {}): Promise<PageModel[]> {
  const model: PageModel[] = [];
  await readPageBatches(path, pages, ctx, opts, (batch) => {
    for (const p of batch) model.push(p);
  });
  return model;
}

/**
 * readPages for consumers that need one page at a time (text, words): `each` gets the page models of each batch
 * in page order and may let them go, so memory stays that of a batch whatever the document's length.
 */
export function readPageBatches(
  path: string,
  pages: number[],
  ctx: EngineContext,
  opts: { colours?: boolean },
  each: (batch: PageModel[]) => void | Promise<void>,
): Promise<void> {
  return readKeptPages(path, pages, ctx, opts, (p) => p, each);
}

/**
 * readPageBatches for consumers that keep less than the page model (its text, the thin page Markdown ranks):
 * `keep` makes each page into that as soon as it is built, so a batch's page models are never alive together.
 * A page model is ~0.2 MB of small objects (every word's box, corners, font and colour); a batch of them alive
 * until the batch is used is copied by each scavenge of V8's young generation and promoted to the old one, which
 * then collects it: 600 pages made thin this way cost 20% less CPU than thinned from whole batches.
 */
export async function readKeptPages<T>(
  path: string,
  pages: number[],
  ctx: EngineContext,
  opts: { colours?: boolean },
  keep: (page: PageModel) => T,
  each: (batch: T[]) => void | Promise<void>,
): Promise<void> {
  try {
    const count = Math.max(...pages);
    const geometry = new Map((await pageGeometries(path, pages, count, ctx)).map((g) => [g.page, g]));
    await textBatches(
      path,
      pages,
      ctx,
      geometry,
      async (batch) => {
        const traced = opts.colours ? await glyphColours(path, batch, pagesTime(ctx, batch.length)).catch(unlessUnreadable(undefined)) : undefined;
        return (p) => keep(buildPage(p, geometry.get(p.page), traced?.get(p.page), traced !== undefined));
      },
      each,
    );
  } catch (err) {
    throw inputError(err);
  }
}

/**
 * The decoded text of the pages (decodedText) in batches, each page made into what the consumer keeps of it by
 * `build` as soon as it is read (`builder` makes the batch's build, after any reading of its own), and `each`
 * called with each batch in page order.
 */
export async function textBatches<T>(
  path: string,
  pages: number[],
  ctx: EngineContext,
  geometry: Map<number, PageGeometry> | undefined,
  builder: (batch: number[]) => Promise<(page: StextPage) => T>,
  each: (batch: T[]) => void | Promise<void>,
): Promise<void> {
  // In batches: the engines' output (MuPDF's XML is ~0.5 MB per page of text) is read for one batch at a time,
  // each page built as soon as it is parsed, so only the batches' built pages are held, never their characters
  // (parsing then costs the same per page at 2,000 pages as at 20).
  const read = async (batch: number[], onWritten: () => void) => decodedPages(path, batch, ctx, geometry, await builder(batch), onWritten);
  const batches: number[][] = [];
  for (let i = 0; i < pages.length; i += READ_BATCH) batches.push(pages.slice(i, i + READ_BATCH));
  // MuPDF reads batch k+1 as soon as it has written batch k, while we parse and use it: the engine and the
  // layout run side by side, at most READ_AHEAD batches ahead of the consumer.
  const reads: (Promise<T[]> | undefined)[] = [];
  const written: boolean[] = [];
  let using = 0;
  const startNext = () => {
    const k = reads.length;
    if (k >= batches.length || k > using + READ_AHEAD || (k > 0 && !written[k - 1])) return;
    const wrote = () => {
      if (written[k]) return;
      written[k] = true;
      startNext();
    };
    const p = read(batches[k], wrote);
    reads.push(p);
    // A failure is seen when its turn comes, not as an unhandled rejection meanwhile; nothing more is started.
    p.then(wrote, () => {});
  };
  startNext();
  for (; using < batches.length; using++) {
    startNext();
    const built = await reads[using]!;
    reads[using] = undefined;
    await each(built);
  }
}

/** Pages per engine pass of readPages, and how many passes may run ahead of the pages' consumer. */
const READ_BATCH = 50;
const READ_AHEAD = 2;

/**
 * The text of the pages: MuPDF's structured text, each page within TEXT_PAGE_SECONDS; a page MuPDF fails on (or
 * is cut on) is read by Poppler, and MuPDF goes on with the pages after it (pagesWithFallback). Lines MuPDF could
 * not decode are read by Poppler too (see repairLines).
 */
export async function decodedText(path: string, pages: number[], ctx: EngineContext, geometry?: Map<number, PageGeometry>): Promise<StextPage[]> {
  return decodedPages(path, pages, ctx, geometry, (p) => p);
}

/**
 * decodedText with each page made into `T` by `build` as soon as it is final (most pages as MuPDF writes them), so
 * a page's characters are let go at once, not held with the rest of the pages.
 */
async function decodedPages<T>(
  path: string,
  pages: number[],
  ctx: EngineContext,
  geometry: Map<number, PageGeometry> | undefined,
  build: (page: StextPage) => T,
  onWritten?: () => void,
): Promise<T[]> {
  const pageMs = readBudgets().textPageMs;
  const built = new Map<number, T>();
  // A page MuPDF read as empty may be one it could not interpret (an object missing from a broken xref), one whose
  // rows it set many times taller than their text is one whose geometry it got wrong, and one with lines it could
  // not decode needs Poppler's words: such pages wait for Poppler (one pdftotext per run of them).
  const suspect: StextPage[] = [];
  const take = (p: StextPage) => {
    if (!p.lines.length || misplaced(p) || undecoded(p).length) suspect.push(p);
    else built.set(p.page, build(p));
  };
  await pagesWithFallback(
    pages,
    async (pending) => {
      const attempt = await structuredTextPages(path, pending, { ...ctx, pageMs }, take, onWritten);
      if (attempt.failure && !isReadFailure(attempt.failure)) throw attempt.failure;
      return { done: new Set(attempt.done), failure: attempt.failure };
    },
    async (page, failure) => take(await popplerStext(path, page, ctx, pageMs, failure, geometry?.get(page))),
  );
  const second = suspect.filter((p) => !p.lines.length || misplaced(p));
  if (second.length) {
    const found = await popplerPageWords(
      path,
      second.map((p) => p.page),
      pagesTime(ctx, second.length),
    ).catch(unlessUnreadable(new Map<number, PopplerWord[]>()));
    suspect.forEach((p, i) => {
      const words = found.get(p.page);
      if (!words?.length || !(!p.lines.length || misplaced(p))) return;
      // Poppler's boxes of such glyphs are as tall as the broken bounding boxes: the places are Poppler's, the
      // heights at most what MuPDF's font sizes give.
      const mupdfSize = median(p.lines.flatMap((l) => l.spans.map((sp) => sp.size)));
      suspect[i] = stextFromWords(p.page, words, geometry?.get(p.page), mupdfSize ? mupdfSize / 0.8 : Infinity);
    });
  }
  const broken = suspect.filter((p) => undecoded(p).length);
  if (broken.length) {
    const words = await popplerPageWords(
      path,
      broken.map((p) => p.page),
      pagesTime(ctx, broken.length),
    );
    for (const p of broken) repairLines(p, words.get(p.page) ?? []);
  }
  for (const p of suspect) built.set(p.page, build(p));
  return pages.map((p) => built.get(p)!);
}

/**
 * A page's text from Poppler's words, as MuPDF would give it without fonts: one line per run of words on one
 * baseline, each word's characters spread evenly over its box, the size from the box's height.
 */
async function popplerStext(
  path: string,
  page: number,
  ctx: EngineContext,
  pageMs: number,
  mupdfFailure: EngineError | undefined,
  geometry?: PageGeometry,
): Promise<StextPage> {
  try {
    return stextFromWords(page, await popplerPageText(path, page, { ...ctx, pageMs }), geometry);
  } catch (err) {
    if (!isReadFailure(err)) throw err;
    throw chainFailure(`Reading the text of page ${page}`, [...(mupdfFailure ? [mupdfFailure] : []), err], 'textPageMs');
  }
}

/**
 * A page whose upright rows MuPDF mostly sets over four times as tall as their text: Type 3 glyphs with broken
 * bounding boxes, placed 12 pt apart down the page one by one (pdf2docx's demo-text-unnamed-fonts), where Poppler
 * places them right.
 */
function misplaced(p: StextPage): boolean {
  // Rows drawn at no size (a degenerate text matrix) are read as they are elsewhere.
  const rows = p.lines.filter((l) => Math.abs(l.dir[1]) < 0.1 && l.spans.length && Math.max(...l.spans.map((s) => s.size)) >= 1);
  const tall = rows.filter((l) => l.bbox[3] - l.bbox[1] > 4 * Math.max(...l.spans.map((s) => s.size)));
  return rows.length >= 4 && tall.length >= 0.25 * rows.length;
}

/** Poppler's words as a page of structured text (see popplerStext). */
function stextFromWords(page: number, words: PopplerWord[], geometry?: PageGeometry, maxHeight = Infinity): StextPage {
  const { width, height } = geometry ? displayedSize(geometry) : { width: 612, height: 792 };
  const lines: StextLine[] = [];
  for (const w of words) {
    const [x0, top, x1, bottom] = w.box;
    // A box taller than `maxHeight` shrinks to it about its middle.
    const half = Math.min(bottom - top, maxHeight) / 2;
    const [y0, y1] = [(top + bottom) / 2 - half, (top + bottom) / 2 + half];
    const last = lines.at(-1);
    const level = last && Math.abs((last.bbox[1] + last.bbox[3]) / 2 - (y0 + y1) / 2) < (y1 - y0) / 2;
    // Poppler gives words in reading order: a right-to-left line's go leftwards.
    const after = level && x0 >= last.bbox[2];
    const before = level && x1 <= last.bbox[0] && mostlyRtl(w.text);
    const chars: StextChar[] = [];
    if (after) chars.push(charAt(' ', last.bbox[2], x0, y0, y1, '#000000'));
    if (before) chars.push(charAt(' ', x1, last.bbox[0], y0, y1, '#000000'));
    chars.push(...spread(w.text, x0, x1, y0, y1, '#000000'));
    if (after || before) {
      last.spans[0].chars.push(...chars);
      last.bbox = [Math.min(last.bbox[0], x0), Math.min(last.bbox[1], y0), Math.max(last.bbox[2], x1), Math.max(last.bbox[3], y1)];
    } else lines.push({ bbox: [x0, y0, x1, y1], wmode: 0, dir: [1, 0], spans: [{ font: 'Unknown', size: Math.max(1, (y1 - y0) * 0.8), chars }] });
  }
  return { page, width, height, lines };
}

const REPLACEMENT = '\uFFFD';
const undecoded = (page: StextPage) =>
  page.lines.filter((l) => l.wmode === 0 && l.spans.some((s) => s.chars.some((c, i) => c.c === REPLACEMENT && !joining(s.chars, i))));

/**
 * An unmapped glyph inside a right-to-left word (between two of its letters): the stroke that stretches a
 * justified Arabic line (kashida, LibreOffice), which carries no text, not a failure to decode.
 */
function joining(chars: StextChar[], i: number): boolean {
  const letterAt = (step: number) => {
    let k = i + step;
    while (chars[k]?.c === REPLACEMENT) k += step;
    return chars[k] !== undefined && isRtlLetter(chars[k].c);
  };
  return letterAt(-1) && letterAt(1);
}

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
      chars.push(...spread(w.text, wx0, wx1, wy0, wy1, colour));
    });
    line.spans = [{ font: first.font, size: first.size, chars }];
    line.bbox = [Math.min(x0, found[0].box[0]), y0, Math.max(x1, ...found.map((w) => w.box[2])), y1] as StextLine['bbox'];
  }
}

/**
 * A word's characters spread evenly over its box, in reading order: a right-to-left word's from the right, so
 * the layout sees them stored in logical order (logicalOrder leaves them as they are).
 */
function spread(text: string, x0: number, x1: number, y0: number, y1: number, colour: string): StextChar[] {
  const glyphs = [...text];
  const step = (x1 - x0) / Math.max(1, glyphs.length);
  const rtl = glyphs.filter(isRtlLetter).length > glyphs.length / 2;
  return glyphs.map((g, k) =>
    rtl ? charAt(g, x1 - (k + 1) * step, x1 - k * step, y0, y1, colour) : charAt(g, x0 + k * step, x0 + (k + 1) * step, y0, y1, colour),
  );
}

const charAt = (c: string, left: number, right: number, top: number, bottom: number, color: string): StextChar => ({
  c,
  quad: [left, top, right, top, left, bottom, right, bottom],
  x: left,
  y: bottom,
  color,
});

/** Pages (1-based) that carry no text at all: scans, or drawings. */
export const textlessPages = (pages: { page: number; lines: unknown[] }[]) => pages.filter((p) => p.lines.length === 0).map((p) => p.page);

export function noTextWarning(empty: number[], total: number): string | undefined {
  if (!empty.length) return undefined;
  if (empty.length === total)
    return 'No text was found on the selected pages: they may be scanned images. Run /pdf-with-ocr-text first to make the text readable.';
  return `No text was found on page${empty.length > 1 ? 's' : ''} ${empty.join(', ')}: ${empty.length > 1 ? 'they' : 'it'} may be scanned images. Run /pdf-with-ocr-text first to make that text readable.`;
}
