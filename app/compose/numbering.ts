import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Color, PDFDocument, type PDFFont, PDFName } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { drawTextIncrementally } from '../../engines/mupdf-stamp.js';
import { AppError, outOfRange } from '../errors.js';
import { type FontChoice, FontSet } from './fonts.js';
import { applyStamps, type PageFrame, type StampTarget } from './stamp.js';
import { drawLines, LINE_SPACING, lineOperators, wrapText } from './text-block.js';

/**
 * Page numbers and Bates numbers: a template (`Page {page} of {pages}`, `ABC-{page:06}`) filled in for each
 * numbered page and drawn as real text on a stamp page, so it is selectable and extractable. Positions are those
 * of the page as seen (see stamp.ts): the number sits at the bottom of a rotated page as it is displayed.
 */

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = /^(page|pages)(?::0(\d{1,2}))?$/;

/** Throws a 400 naming `field` when the template holds braces that are not one of its placeholders. */
export function checkNumberTemplate(template: string, field = 'text'): void {
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.test(m[1]))
      throw new AppError(
        'out_of_range',
        `${m[0]} is not within the acceptable range for ${field}: the placeholders are {page}, {pages} and their zero-padded forms such as {page:06}`,
      );
  }
  if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) throw outOfRange(template, `${field}: a brace that opens or closes no placeholder`);
}

/** The template for one page: `{page}` its number, `{pages}` the last page's number, `:0N` pads with zeros to N digits. */
export function fillNumberTemplate(template: string, page: number, pages: number): string {
  return template.replace(PLACEHOLDER, (_, inner: string) => {
    const m = KNOWN.exec(inner)!;
    return String(m[1] === 'page' ? page : pages).padStart(m[2] ? Number(m[2]) : 0, '0');
  });
}

export interface NumberPlacement {
  font: FontChoice;
  size: number;
  color: Color;
  horizontal: 'left' | 'center' | 'right';
  vertical: 'top' | 'bottom';
  /** Points from the left or right edge to the text (unused when centred). */
  marginX: number;
  /** Points from the top or bottom edge to the text's box (ascent to descent). */
  marginY: number;
}

/**
 * Draws `labels[i]` on page `pages[i]` (frames from pageFrames) and writes the result to `output`. A label that
 * would run off its page with the margins given is a 400 naming the margin or the size.
 */
export async function stampPageNumbers(
  input: string,
  output: string,
  frames: PageFrame[],
  pages: number[],
  labels: string[],
  place: NumberPlacement,
  ctx: EngineContext,
): Promise<void> {
  const doc = await PDFDocument.create();
  const laid = await layLabels(new Set(labels), doc, place);
  const targets: StampTarget[] = pages.map((page, i) => ({ page, frame: frames[page - 1], key: labels[i] }));
  for (const t of targets) fits(laid.get(t.key)!, t, place);
  try {
    await drawNumbers(input, output, doc, targets, laid, place, ctx);
    return;
  } catch (err) {
    // Out of time is out of time for qpdf too; else (an encrypted input, a file MuPDF fails on) stamp pages.
    if (!(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
  }
  // Pages with the same label (and size) share one stamp page.
  const stampDoc = await PDFDocument.create();
  const stamped = await layLabels(laid.keys(), stampDoc, place);
  await applyStamps(
    input,
    output,
    stampDoc,
    targets,
    (page, t) => {
      const lines = stamped.get(t.key)!;
      const { x, y, width } = origin(lines, t.frame, place);
      drawLines(page, lines, { x, y }, width, place.horizontal, { size: place.size, color: place.color, opacity: 1, rotation: 0, rtl: false });
    },
    false,
    ctx,
  );
}

/**
 * The numbers as text operators in each page's own content (drawTextIncrementally: no stamp page per number, so
 * 2,000 numbered pages cost about what MuPDF's incremental save of their page objects costs); the fonts travel
 * on the one page of a small font file.
 */
async function drawNumbers(
  input: string,
  output: string,
  doc: PDFDocument,
  targets: StampTarget[],
  laid: Map<string, Lines>,
  place: NumberPlacement,
  ctx: EngineContext,
): Promise<void> {
  const names = new Map<PDFFont, string>();
  const nameOf = (font: PDFFont) => names.get(font) ?? names.set(font, `QF${names.size + 1}`).get(font)!;
  const sorted = [...targets].sort((a, b) => a.page - b.page);
  const draws = sorted.map((t) => {
    const lines = laid.get(t.key)!;
    const { x, y, width } = origin(lines, t.frame, place);
    return lineOperators(lines, { x, y }, width, place.horizontal, { size: place.size, color: place.color, rtl: false }, nameOf);
  });
  const page = doc.addPage([1, 1]);
  for (const [font, name] of names) page.node.setFontDictionary(PDFName.of(name), font.ref);
  const fonts = join(ctx.cwd, 'number-fonts.pdf');
  await writeFile(fonts, await doc.save({ useObjectStreams: false }));
  await drawTextIncrementally(input, fonts, output, { to: sorted.map((t) => t.page), draws }, ctx);
}

type Lines = ReturnType<typeof wrapText>;

/** Each label laid out in lines, in fonts embedded in `doc`. */
async function layLabels(labels: Iterable<string>, doc: PDFDocument, place: NumberPlacement): Promise<Map<string, Lines>> {
  const fonts = new FontSet(doc);
  const laid = new Map<string, Lines>();
  for (const label of labels) {
    const chars = [...label.replace(/\r\n?/g, '\n')];
    laid.set(label, wrapText(chars, await fonts.fontsFor(chars, place.font), place.size, Infinity));
  }
  return laid;
}

/** The tallest ascent and deepest descent of the fonts on a line, at the size drawn. */
function extents(lines: Lines, size: number): { ascent: number; descent: number } {
  const fonts = new Set<PDFFont>(lines.flatMap((l) => l.fonts));
  let [ascent, descent] = [0, 0];
  for (const f of fonts) {
    const up = f.heightAtSize(size, { descender: false });
    ascent = Math.max(ascent, up);
    descent = Math.max(descent, f.heightAtSize(size) - up);
  }
  return { ascent: ascent || size * 0.75, descent };
}

/** Where drawLines starts (the first baseline, the column's left edge) and the column width, in the frame. */
function origin(lines: Lines, frame: PageFrame, place: NumberPlacement) {
  const { ascent, descent } = extents(lines, place.size);
  const width = Math.max(0, ...lines.map((l) => l.width));
  const below = (lines.length - 1) * place.size * LINE_SPACING + descent;
  const y = place.vertical === 'bottom' ? place.marginY + below : frame.height - place.marginY - ascent;
  const x = place.horizontal === 'left' ? place.marginX : place.horizontal === 'right' ? frame.width - place.marginX - width : (frame.width - width) / 2;
  return { x, y, width, height: ascent + below };
}

function fits(lines: Lines, t: StampTarget, place: NumberPlacement): void {
  const { width, height } = origin(lines, t.frame, place);
  const { frame, page } = t;
  if (place.horizontal !== 'center' && place.marginX + width > frame.width) {
    throw outOfRange(place.marginX, `horizontal_margin (the number, ${round(width)} points wide, must fit on page ${page}, ${round(frame.width)} points wide)`);
  }
  if (width > frame.width)
    throw outOfRange(place.size, `text_size (the number, ${round(width)} points wide, must fit on page ${page}, ${round(frame.width)} points wide)`);
  if (place.marginY + height > frame.height) {
    throw outOfRange(place.marginY, `vertical_margin (the number, ${round(height)} points tall, must fit on page ${page}, ${round(frame.height)} points tall)`);
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
