import { StandardFontEmbedder, StandardFonts } from '@cantoo/pdf-lib';
import type { Word } from '../document/index.js';
import { colourHex, wordFont } from './docx-style.js';

/** The look of a run of words for slides and cells, with the font families and colours /word uses. */
export interface TextStyle {
  family: string;
  size: number;
  bold: boolean;
  italic: boolean;
  /** RRGGBB */
  color: string;
}

/** The style most of the words' characters have (font, size, colour each by majority; bold and italic only when all are). */
export function styleOf(words: Word[]): TextStyle {
  const vote = <T>(key: (w: Word) => T): T => {
    const count = new Map<T, number>();
    for (const w of words) count.set(key(w), (count.get(key(w)) ?? 0) + w.text.length);
    return [...count.entries()].sort((a, b) => b[1] - a[1])[0][0];
  };
  return {
    family: vote((w) => wordFont(w.font.name)),
    size: vote((w) => w.font.size),
    bold: words.every((w) => w.bold),
    italic: words.every((w) => w.italic),
    color: vote((w) => colourHex(w.color.values)),
  };
}

// Metrics of the standard families (the Liberation faces LibreOffice draws them with are metric-compatible).
const METRICS: Record<string, [StandardFonts, StandardFonts, StandardFonts, StandardFonts]> = {
  'Times New Roman': [StandardFonts.TimesRoman, StandardFonts.TimesRomanBold, StandardFonts.TimesRomanItalic, StandardFonts.TimesRomanBoldItalic],
  Arial: [StandardFonts.Helvetica, StandardFonts.HelveticaBold, StandardFonts.HelveticaOblique, StandardFonts.HelveticaBoldOblique],
  'Courier New': [StandardFonts.Courier, StandardFonts.CourierBold, StandardFonts.CourierOblique, StandardFonts.CourierBoldOblique],
};
const advance = new Map<string, number>();

/**
 * Width of `text` in a standard family at 1 pt, or undefined for a family without known metrics or text with
 * characters outside its encoding (CJK, symbols), whose width in the font a reader substitutes is unknown.
 */
export function naturalWidth(text: string, family: string, bold: boolean, italic: boolean): number | undefined {
  const fonts = METRICS[family];
  if (!fonts) return undefined;
  const font = fonts[(bold ? 1 : 0) + (italic ? 2 : 0)];
  let w = 0;
  for (const ch of text) {
    const k = `${font}|${ch}`;
    let a = advance.get(k);
    if (a === undefined) {
      const embedder = StandardFontEmbedder.for(font as unknown as Parameters<typeof StandardFontEmbedder.for>[0]);
      // pdf-lib measures a character its encoding lacks as the missing glyph: unknown here.
      a = embedder.encoding.canEncodeUnicodeCodePoint(ch.codePointAt(0)!) ? embedder.widthOfTextAtSize(ch, 1) : NaN;
      advance.set(k, a);
    }
    if (Number.isNaN(a)) return undefined;
    w += a;
  }
  return w;
}
