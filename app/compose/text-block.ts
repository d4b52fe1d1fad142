import {
  beginText,
  type Color,
  degrees,
  endText,
  moveText,
  type PDFFont,
  type PDFOperator,
  type PDFPage,
  type PDFRef,
  popGraphicsState,
  pushGraphicsState,
  setFillingColor,
  setFillingGrayscaleColor,
  setFontAndSize,
  showText,
} from '@cantoo/pdf-lib';
import { bidi } from '../document/index.js';

/**
 * Text as lines: wrapped to a width (at spaces, or between CJK characters, or inside a word longer than the
 * line), each line drawn as runs of one font and one direction in visual order (Unicode bidi algorithm, so
 * Arabic and Hebrew read right to left with numbers and Latin words inside them left to right). Shaping
 * (Arabic joining, ligatures) and the order of glyphs inside a right-to-left run are fontkit's, via pdf-lib.
 */

export const LINE_SPACING = 1.2;

export interface Line {
  chars: string[];
  fonts: PDFFont[];
  width: number;
}

const BREAK_AFTER = /[\s\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]/u;
const BREAK_BEFORE = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]/u;
const SPACE = /\s/;

/** Consecutive characters in the same font, measured together (kerning and shaping included). */
function measure(chars: string[], fonts: PDFFont[], size: number): number {
  let width = 0;
  for (const run of runsOf(chars, fonts)) width += run.font.widthOfTextAtSize(run.text, size);
  return width;
}

function runsOf(chars: string[], fonts: PDFFont[], levels?: number[]) {
  const runs: { text: string; font: PDFFont; level: number }[] = [];
  chars.forEach((c, i) => {
    const last = runs[runs.length - 1];
    const level = levels?.[i] ?? 0;
    if (last && last.font === fonts[i] && last.level === level) last.text += c;
    else runs.push({ text: c, font: fonts[i], level });
  });
  return runs;
}

/** Splits text (code points, with a font each) into lines no wider than `maxWidth`; `\n` always breaks. */
export function wrapText(chars: string[], fonts: PDFFont[], size: number, maxWidth: number): Line[] {
  const lines: Line[] = [];
  const advance = (i: number) => (chars[i] === '\n' ? 0 : fonts[i].widthOfTextAtSize(chars[i], size));
  const push = (from: number, to: number) => {
    let end = to;
    while (end > from && SPACE.test(chars[end - 1])) end--;
    const c = chars.slice(from, end);
    const f = fonts.slice(from, end);
    lines.push({ chars: c, fonts: f, width: measure(c, f, size) });
  };
  let start = 0;
  let width = 0;
  let lastBreak = -1;
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === '\n') {
      push(start, i);
      start = i + 1;
      width = 0;
      lastBreak = -1;
      continue;
    }
    if (i > start && BREAK_BEFORE.test(chars[i])) lastBreak = i;
    const w = advance(i);
    if (width + w > maxWidth && i > start && !SPACE.test(chars[i])) {
      const cut = lastBreak > start ? lastBreak : i;
      push(start, cut);
      start = cut;
      while (start < i && SPACE.test(chars[start])) start++;
      width = 0;
      for (let k = start; k < i; k++) width += advance(k);
      lastBreak = -1;
    }
    width += w;
    if (BREAK_AFTER.test(chars[i])) lastBreak = i + 1;
  }
  push(start, chars.length);
  return lines;
}

export interface DrawStyle {
  size: number;
  color: Color;
  opacity: number;
  /** Degrees, counter-clockwise, about the block's origin. */
  rotation: number;
  /** Paragraph direction: right to left lines are aligned right. */
  rtl: boolean;
}

/**
 * Draws lines with the first baseline starting at `origin` (before rotation), the next ones below it, each
 * aligned in a column `columnWidth` wide: left, right or centred.
 */
export function drawLines(
  page: PDFPage,
  lines: Line[],
  origin: { x: number; y: number },
  columnWidth: number,
  align: 'left' | 'right' | 'center',
  style: DrawStyle,
): void {
  const a = (style.rotation * Math.PI) / 180;
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  const at = (dx: number, dy: number) => ({ x: origin.x + dx * cos - dy * sin, y: origin.y + dx * sin + dy * cos });
  lines.forEach((line, n) => {
    const dy = -n * style.size * LINE_SPACING;
    let dx = align === 'left' ? 0 : align === 'right' ? columnWidth - line.width : (columnWidth - line.width) / 2;
    for (const run of visualRuns(line, style.rtl)) {
      const p = at(dx, dy);
      page.drawText(run.text, {
        x: p.x,
        y: p.y,
        font: run.font,
        size: style.size,
        color: style.color,
        opacity: style.opacity,
        rotate: degrees(style.rotation),
      });
      dx += run.font.widthOfTextAtSize(run.text, style.size);
    }
  });
}

/**
 * drawLines for a form XObject (signature and field appearances): the lines as black text operators, the first
 * baseline at `top`, each line starting at `left(line)`; returns them with the Font resources they name.
 */
export function textOperators(lines: Line[], size: number, top: number, left: (line: Line) => number): { ops: PDFOperator[]; fonts: Record<string, PDFRef> } {
  const names = new Map<PDFFont, string>();
  const fonts: Record<string, PDFRef> = {};
  const nameOf = (f: PDFFont) => {
    if (!names.has(f)) {
      names.set(f, `F${names.size + 1}`);
      fonts[names.get(f)!] = f.ref;
    }
    return names.get(f)!;
  };
  return { ops: [beginText(), setFillingGrayscaleColor(0), ...runOperators(lines, size, top, left, false, nameOf), endText()], fonts };
}

/** Each line's runs in visual order as text-showing operators: the first baseline at `top`, a line starting at `left(line)`. */
function runOperators(lines: Line[], size: number, top: number, left: (line: Line) => number, rtl: boolean, nameOf: (font: PDFFont) => string): PDFOperator[] {
  const ops: PDFOperator[] = [];
  lines.forEach((line, n) => {
    const y = top - n * size * LINE_SPACING;
    let x = left(line);
    for (const run of visualRuns(line, rtl)) {
      ops.push(setFontAndSize(nameOf(run.font), size), moveText(x, y), showText(run.font.encodeText(run.text)), moveText(-x, -y));
      x += run.font.widthOfTextAtSize(run.text, size);
    }
  });
  return ops;
}

/**
 * drawLines (unrotated, opaque) as the text of a content stream, the fonts named by `nameOf`: for text drawn
 * into a page's own content rather than on a stamp page.
 */
export function lineOperators(
  lines: Line[],
  origin: { x: number; y: number },
  columnWidth: number,
  align: 'left' | 'right' | 'center',
  style: Pick<DrawStyle, 'size' | 'color' | 'rtl'>,
  nameOf: (font: PDFFont) => string,
): string {
  const left = (line: Line) => origin.x + (align === 'left' ? 0 : align === 'right' ? columnWidth - line.width : (columnWidth - line.width) / 2);
  const ops = [
    pushGraphicsState(),
    beginText(),
    setFillingColor(style.color),
    ...runOperators(lines, style.size, origin.y, left, style.rtl, nameOf),
    endText(),
    popGraphicsState(),
  ];
  return ops.map((op) => op.toString()).join('\n');
}

const STRONG_RTL = new Set(['R', 'AL']);

/** A line's runs left to right as seen (rule L2 of UAX #9). Characters inside a run stay in logical order. */
export function visualRuns(line: Line, rtl: boolean) {
  const text = line.chars.join('');
  const { levels: unitLevels } = bidi.getEmbeddingLevels(text, rtl ? 'rtl' : 'ltr');
  const levels: number[] = [];
  let unit = 0;
  for (const c of line.chars) {
    levels.push(unitLevels[unit]);
    unit += c.length;
  }
  const runs = runsOf(line.chars, line.fonts, levels);
  const max = Math.max(0, ...runs.map((r) => r.level));
  const minOdd = Math.min(...runs.map((r) => r.level).filter((l) => l % 2 === 1), max + 1);
  for (let level = max; level >= minOdd; level--) {
    for (let i = 0; i < runs.length; ) {
      if (runs[i].level < level) {
        i++;
        continue;
      }
      let j = i;
      while (j < runs.length && runs[j].level >= level) j++;
      runs.splice(i, j - i, ...runs.slice(i, j).reverse());
      i = j;
    }
  }
  // fontkit reverses runs of right-to-left scripts itself; neutral-only runs at an odd level are reversed (and
  // mirrored: brackets) here.
  return runs.map((r) => {
    if (r.level % 2 === 0 || [...r.text].some((c) => STRONG_RTL.has(bidi.getBidiCharTypeName(c)))) return r;
    return {
      ...r,
      text: [...r.text]
        .reverse()
        .map((c) => bidi.getMirroredCharacter(c) ?? c)
        .join(''),
    };
  });
}
