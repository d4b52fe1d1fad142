import type { Word } from '../document/index.js';

/**
 * How a PDF word's look is written in Word: a font family Word and LibreOffice can find, size, weight, slant
 * and colour. PDF font names carry subset prefixes and style suffixes (`ABCDEF+TimesNewRomanPS-BoldMT`).
 */
export interface RunStyle {
  font: string;
  /** Half-points, as Word stores sizes. */
  halfPoints: number;
  bold: boolean;
  italic: boolean;
  /** RRGGBB */
  color: string;
  /** A rule drawn under the word (see underlinedWords). */
  underline: boolean;
  /** Drawn invisibly in the PDF: Word's hidden text. */
  hidden: boolean;
  /** The face its complex-script characters are set in, when `font` lacks them (scriptFonts). */
  cs?: string;
}

/**
 * Families with a metric-compatible stand-in in LibreOffice (Liberation, Carlito, Caladea) keep their name, so
 * Word shows the original and LibreOffice breaks lines at the same places. TeX's Computer Modern has no such
 * twin: Times is a little narrower, so rows still fit their column; other fonts go to the standard family of
 * their kind.
 */
const FAMILIES: [RegExp, string][] = [
  [/^(times|tnr|nimbusrom|liberationserif)/i, 'Times New Roman'],
  [/^(helvetica|arial|nimbussan|liberationsans)/i, 'Arial'],
  [/^(courier|nimbusmon|liberationmono|cmtt|sftt)/i, 'Courier New'],
  [/^calibri/i, 'Calibri'],
  [/^cambria/i, 'Cambria'],
  [/^(symbol|standardsymbol)/i, 'Symbol'],
  [/^(cmss|sfss)/i, 'Arial'],
  [/^(cm[a-z]*\d|sf[a-z]{2}\d|lmroman|latinmodern)/i, 'Times New Roman'],
  [/^(dejavu|noto|liberation|carlito|caladea|georgia|verdana|tahoma|trebuchet|garamond|palatino|bookman|century|segoe|consolas)/i, ''],
  [/(mono|code|typewriter|consol)/i, 'Courier New'],
  [/(sans|gothic|grotesk|grotesque|helv|univers|frutiger|myriad|futura|gill|lucida|verdana|roboto|open)/i, 'Arial'],
];

/** `ABCDEF+TimesNewRomanPS-BoldMT` -> `Times New Roman`; `DejaVuSans-Bold` -> `DejaVu Sans`; unknown serif faces -> `Times New Roman`. */
export function wordFont(pdfName: string): string {
  const base = pdfName
    .replace(/^[A-Z]{6}\+/, '')
    .split(/[-,]/)[0]
    .replace(/(PSMT|PS|MT)$/, '');
  for (const [re, family] of FAMILIES)
    if (re.test(base))
      return (
        family ||
        base
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .replace(/\s+(Regular|Book|Roman)$/i, '')
          .trim()
      );
  return 'Times New Roman';
}

const hex = (v: number) =>
  Math.round(Math.min(1, Math.max(0, v)) * 255)
    .toString(16)
    .padStart(2, '0')
    .toUpperCase();

/** RRGGBB of a device colour (grey, RGB or CMYK, without a profile: enough for black, greys and the hue). */
export function colourHex(values: number[]): string {
  const v = values.map((n) => (Number.isFinite(n) ? n : 0));
  if (v.length === 1) return hex(v[0]).repeat(3);
  if (v.length === 3) return v.map(hex).join('');
  if (v.length === 4) return [0, 1, 2].map((i) => hex((1 - v[i]) * (1 - v[3]))).join('');
  return '000000';
}

/** Text lighter than this sat on a fill (a table header, a banner) that is not kept: it is written black. */
const LIGHTEST = 0.85;

export const runStyle = (w: Word, underline = false, hidden = false): RunStyle => {
  const color = colourHex(w.color.values);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(color.slice(i, i + 2), 16) / 255);
  return {
    font: wordFont(w.font.name),
    halfPoints: Math.max(2, Math.round(w.font.size * 2)),
    bold: w.bold,
    italic: w.italic,
    color: 0.2126 * r + 0.7152 * g + 0.0722 * b > LIGHTEST ? '000000' : color,
    underline,
    hidden,
  };
};

export const sameStyle = (a: RunStyle, b: RunStyle) =>
  a.font === b.font &&
  a.halfPoints === b.halfPoints &&
  a.bold === b.bold &&
  a.italic === b.italic &&
  a.color === b.color &&
  a.underline === b.underline &&
  a.hidden === b.hidden &&
  a.cs === b.cs;
