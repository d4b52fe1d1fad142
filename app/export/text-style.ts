import { readFile } from 'node:fs/promises';
import fontkit, { type Font } from '@cantoo/fontkit';
import { StandardFontEmbedder, StandardFonts } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { matchFace } from '../../engines/fontconfig.js';
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

/** Advance of one character in a standard face at 1 pt; NaN outside the face's encoding. */
function standardAdvance(font: StandardFonts, ch: string): number {
  const k = `${font}|${ch}`;
  let a = advance.get(k);
  if (a === undefined) {
    const embedder = StandardFontEmbedder.for(font as unknown as Parameters<typeof StandardFontEmbedder.for>[0]);
    // pdf-lib measures a character its encoding lacks as the missing glyph: unknown here.
    a = embedder.encoding.canEncodeUnicodeCodePoint(ch.codePointAt(0)!) ? embedder.widthOfTextAtSize(ch, 1) : NaN;
    advance.set(k, a);
  }
  return a;
}

const standardFace = (family: string, bold: boolean, italic: boolean) => METRICS[family]?.[(bold ? 1 : 0) + (italic ? 2 : 0)];

/**
 * Width of `text` in a standard family at 1 pt, or undefined for a family without known metrics or text with
 * characters outside its encoding (CJK, symbols), whose width in the font a reader substitutes is unknown.
 */
export function naturalWidth(text: string, family: string, bold: boolean, italic: boolean): number | undefined {
  const font = standardFace(family, bold, italic);
  if (!font) return undefined;
  let w = 0;
  for (const ch of text) {
    const a = standardAdvance(font, ch);
    if (Number.isNaN(a)) return undefined;
    w += a;
  }
  return w;
}

/**
 * The faces the machine draws characters in that the standard families lack (Thai, Devanagari, CJK, Cyrillic in
 * a face without it...), as fontconfig picks them: LibreOffice falls back to them, and /word names them for the
 * scripts Word sets in a font of their own, so a row's width in them can be measured and kept.
 */
export interface ScriptFace {
  family: string;
  bold: boolean;
  font: Font;
}
export type ScriptFaces = ScriptFace[];

/** Scripts Word and LibreOffice set in a run's complex-script font (w:cs). */
const COMPLEX =
  /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Thai}\p{Script=Lao}\p{Script=Tibetan}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=Mongolian}]/u;
/** Characters that take their neighbours' face and width (spaces, marks, controls). */
const NO_FACE = /[\p{Z}\p{M}\p{Cc}\p{Cf}]/u;
/** fontconfig asked at most this many times per document: text in scripts no face has costs no more. */
const MAX_MATCHES = 16;

const parsed = new Map<string, Promise<Font | undefined>>();
function openFace(file: string, index: number): Promise<Font | undefined> {
  const key = `${file}#${index}`;
  if (!parsed.has(key))
    parsed.set(
      key,
      readFile(file).then(
        (bytes) => {
          const f = fontkit.create(bytes);
          return 'fonts' in f ? f.fonts[index] : f;
        },
        () => undefined,
      ),
    );
  return parsed.get(key)!;
}

/**
 * The faces for the characters of `words` that their standard family (Times, Arial, Courier as /word names them)
 * lacks, by `family` (the Word font of a word, as runStyle names it), one fontconfig match per face found.
 */
export async function scriptFaces(words: { text: string; family: string; bold: boolean }[], ctx: EngineContext): Promise<ScriptFaces> {
  const faces: ScriptFaces = [];
  const missed = new Set<string>();
  let asked = 0;
  for (const w of words) {
    const standard = standardFace(w.family, w.bold, false);
    if (!standard) continue;
    for (const ch of w.text) {
      const cp = ch.codePointAt(0)!;
      if (NO_FACE.test(ch) || !Number.isNaN(standardAdvance(standard, ch)) || missed.has(`${w.bold}|${ch}`)) continue;
      if (faces.some((f) => f.bold === w.bold && f.font.hasGlyphForCodePoint(cp))) continue;
      if (asked++ >= MAX_MATCHES) return faces;
      const m = await matchFace(w.family, cp, w.bold, ctx).catch(() => undefined);
      const font = m && (await openFace(m.file, m.index));
      if (m && font?.hasGlyphForCodePoint(cp)) faces.push({ family: m.family, bold: w.bold, font });
      else missed.add(`${w.bold}|${ch}`);
    }
  }
  return faces;
}

const faceFor = (faces: ScriptFaces, cp: number, bold: boolean) =>
  faces.find((f) => f.bold === bold && f.font.hasGlyphForCodePoint(cp)) ?? faces.find((f) => f.font.hasGlyphForCodePoint(cp));

/**
 * The face a word's complex-script characters (Thai, Arabic, Devanagari...) are set in, Word's w:cs font: faces
 * of these scripts differ widely in width, so the one measured is named. East Asian faces set their characters a
 * full em wide whichever the machine has: LibreOffice's own choice (a serif face for a serif font) is kept.
 */
export function scriptFonts(text: string, bold: boolean, faces: ScriptFaces): { cs?: string } {
  if (!faces.length) return {};
  for (const ch of text) if (COMPLEX.test(ch)) return { cs: faceFor(faces, ch.codePointAt(0)!, bold)?.family };
  return {};
}

/**
 * Width of `text` at 1 pt as LibreOffice sets it: its standard family's metrics where the family has the
 * character, the script face (shaped: marks, ligatures) where it does not; undefined when neither knows one.
 */
export function textWidth(text: string, family: string, bold: boolean, italic: boolean, faces: ScriptFaces): number | undefined {
  const standard = standardFace(family, bold, italic);
  if (!standard) return undefined;
  let w = 0;
  // Characters outside the standard face run together (so they are shaped together) in the face that has them.
  let run = '';
  let face: ScriptFace | undefined;
  const flush = () => {
    if (run && face) w += face.font.layout(run).advanceWidth / face.font.unitsPerEm;
    run = '';
  };
  for (const ch of text) {
    const a = standardAdvance(standard, ch);
    if (!Number.isNaN(a)) {
      flush();
      w += a;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    // A mark stays with the characters before it.
    if (run && (NO_FACE.test(ch) || face?.font.hasGlyphForCodePoint(cp))) {
      run += ch;
      continue;
    }
    const next = faceFor(faces, cp, bold);
    if (!next) {
      if (NO_FACE.test(ch)) continue;
      return undefined;
    }
    flush();
    face = next;
    run = ch;
  }
  flush();
  return w;
}
