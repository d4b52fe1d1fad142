import { readFile } from 'node:fs/promises';
import fontkit, { type Font } from '@cantoo/fontkit';
import { type PDFDocument, type PDFFont, StandardFonts } from '@cantoo/pdf-lib';
import { AppError } from '../errors.js';

/**
 * The fonts text can be drawn in (`font` of /watermarked-pdf and /pdf-with-added-text; the spec names a font
 * list without giving it). Arial, Helvetica, Times and Courier are the standard 14 fonts while the text fits
 * WinAnsi (nothing embedded); any other text switches to their metric-compatible Liberation faces, embedded
 * as subsets, with per-character fallbacks for scripts they lack (Arabic, Hebrew, CJK, Devanagari, Thai), so
 * the text renders and extracts everywhere. Fonts are the Debian packages of scripts/apt-packages.txt.
 */

type Style = 'regular' | 'bold' | 'italic' | 'bolditalic';
interface FontFile {
  path: string;
  /** The face inside a collection (.ttc). */
  face?: string;
}
interface Family {
  name: string;
  standard?: Record<Style, StandardFonts>;
  files?: Record<Style, FontFile>;
}

const LIB = '/usr/share/fonts/truetype/liberation2';
const DEJAVU = '/usr/share/fonts/truetype/dejavu';
const NOTO = '/usr/share/fonts/truetype/noto';
const NOTO_CJK = '/usr/share/fonts/opentype/noto';

const styles = (dir: string, names: [string, string, string, string]): Record<Style, FontFile> => ({
  regular: { path: `${dir}/${names[0]}` },
  bold: { path: `${dir}/${names[1]}` },
  italic: { path: `${dir}/${names[2]}` },
  bolditalic: { path: `${dir}/${names[3]}` },
});
const liberation = (kind: string) =>
  styles(LIB, [`Liberation${kind}-Regular.ttf`, `Liberation${kind}-Bold.ttf`, `Liberation${kind}-Italic.ttf`, `Liberation${kind}-BoldItalic.ttf`]);
const cjk = (face: string): Record<Style, FontFile> => {
  const regular = { path: `${NOTO_CJK}/NotoSansCJK-Regular.ttc`, face: `NotoSansCJK${face}-Regular` };
  const bold = { path: `${NOTO_CJK}/NotoSansCJK-Bold.ttc`, face: `NotoSansCJK${face}-Bold` };
  return { regular, bold, italic: regular, bolditalic: bold };
};

const S = StandardFonts;
const HELVETICA = { regular: S.Helvetica, bold: S.HelveticaBold, italic: S.HelveticaOblique, bolditalic: S.HelveticaBoldOblique };
const TIMES = { regular: S.TimesRoman, bold: S.TimesRomanBold, italic: S.TimesRomanItalic, bolditalic: S.TimesRomanBoldItalic };
const COURIER = { regular: S.Courier, bold: S.CourierBold, italic: S.CourierOblique, bolditalic: S.CourierBoldOblique };
const only = (f: StandardFonts) => ({ regular: f, bold: f, italic: f, bolditalic: f });

const FAMILIES: Family[] = [
  { name: 'Arial', standard: HELVETICA, files: liberation('Sans') },
  { name: 'Helvetica', standard: HELVETICA, files: liberation('Sans') },
  { name: 'Times New Roman', standard: TIMES, files: liberation('Serif') },
  { name: 'Times', standard: TIMES, files: liberation('Serif') },
  { name: 'Courier New', standard: COURIER, files: liberation('Mono') },
  { name: 'Courier', standard: COURIER, files: liberation('Mono') },
  { name: 'Symbol', standard: only(S.Symbol) },
  { name: 'ZapfDingbats', standard: only(S.ZapfDingbats) },
  { name: 'Liberation Sans', files: liberation('Sans') },
  { name: 'Liberation Serif', files: liberation('Serif') },
  { name: 'Liberation Mono', files: liberation('Mono') },
  { name: 'DejaVu Sans', files: styles(DEJAVU, ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSans-Oblique.ttf', 'DejaVuSans-BoldOblique.ttf']) },
  { name: 'DejaVu Serif', files: styles(DEJAVU, ['DejaVuSerif.ttf', 'DejaVuSerif-Bold.ttf', 'DejaVuSerif-Italic.ttf', 'DejaVuSerif-BoldItalic.ttf']) },
  {
    name: 'DejaVu Sans Mono',
    files: styles(DEJAVU, ['DejaVuSansMono.ttf', 'DejaVuSansMono-Bold.ttf', 'DejaVuSansMono-Oblique.ttf', 'DejaVuSansMono-BoldOblique.ttf']),
  },
  { name: 'Noto Sans', files: styles(NOTO, ['NotoSans-Regular.ttf', 'NotoSans-Bold.ttf', 'NotoSans-Italic.ttf', 'NotoSans-BoldItalic.ttf']) },
  { name: 'Noto Serif', files: styles(NOTO, ['NotoSerif-Regular.ttf', 'NotoSerif-Bold.ttf', 'NotoSerif-Italic.ttf', 'NotoSerif-BoldItalic.ttf']) },
  { name: 'Noto Sans CJK', files: cjk('sc') },
  { name: 'Noto Sans CJK SC', files: cjk('sc') },
  { name: 'Noto Sans CJK TC', files: cjk('tc') },
  { name: 'Noto Sans CJK JP', files: cjk('jp') },
  { name: 'Noto Sans CJK KR', files: cjk('kr') },
];

/** Where characters the chosen font lacks are looked up, in order (regular and bold). */
const FALLBACKS: [FontFile, FontFile][] = [
  [{ path: `${NOTO}/NotoSansArabic-Regular.ttf` }, { path: `${NOTO}/NotoSansArabic-Bold.ttf` }],
  [{ path: `${NOTO}/NotoSansHebrew-Regular.ttf` }, { path: `${NOTO}/NotoSansHebrew-Bold.ttf` }],
  [{ path: `${DEJAVU}/DejaVuSans.ttf` }, { path: `${DEJAVU}/DejaVuSans-Bold.ttf` }],
  [cjk('sc').regular, cjk('sc').bold],
  [{ path: `${NOTO}/NotoSansDevanagari-Regular.ttf` }, { path: `${NOTO}/NotoSansDevanagari-Bold.ttf` }],
  [{ path: `${NOTO}/NotoSansThai-Regular.ttf` }, { path: `${NOTO}/NotoSansThai-Bold.ttf` }],
];

export const FONT_NAMES = FAMILIES.map((f) => f.name);

const squash = (s: string) => s.toLowerCase().replace(/[\s_,-]+/g, '');
const BY_NAME = new Map(FAMILIES.map((f) => [squash(f.name), f]));
for (const [alias, name] of [
  ['arialmt', 'Arial'],
  ['timesroman', 'Times'],
  ['timesnewromanps', 'Times New Roman'],
  ['couriernewps', 'Courier New'],
]) {
  BY_NAME.set(alias, FAMILIES.find((f) => f.name === name)!);
}
const SUFFIXES: [string, Style][] = [
  ['bolditalic', 'bolditalic'],
  ['boldoblique', 'bolditalic'],
  ['italicbold', 'bolditalic'],
  ['italic', 'italic'],
  ['oblique', 'italic'],
  ['bold', 'bold'],
  ['regular', 'regular'],
  ['roman', 'regular'],
  ['mt', 'regular'],
  ['', 'regular'],
];

export interface FontChoice {
  family: Family;
  style: Style;
}

/** A font name as clients write it (`Arial`, `Arial Bold`, `Helvetica-BoldOblique`, `Times New Roman Italic`, `times-roman`). */
export function resolveFont(name: string): FontChoice {
  const n = squash(name);
  for (const [suffix, style] of SUFFIXES) {
    if (!n.endsWith(suffix)) continue;
    const family = BY_NAME.get(n.slice(0, n.length - suffix.length).replace(/psmt$|ps$/, '')) ?? BY_NAME.get(n.slice(0, n.length - suffix.length));
    if (family) return { family, style };
  }
  throw new AppError(
    'out_of_range',
    `The requested font was not found: ${name.slice(0, 100)}. Fonts: ${FONT_NAMES.join(', ')} (add Bold, Italic or Bold Italic for the other styles).`,
  );
}

// Font files are read and parsed once per process: the CJK collection alone is 19 MB.
const parsed = new Map<string, Promise<Font>>();
const bytesOf = new Map<string, Promise<Buffer>>();
const keyOf = (f: FontFile) => `${f.path}#${f.face ?? ''}`;

function parse(file: FontFile): Promise<Font> {
  const key = keyOf(file);
  if (!parsed.has(key)) {
    const p = fileBytes(file).then((bytes) => {
      const font = file.face ? fontkit.create(bytes, file.face) : fontkit.create(bytes);
      if (!font || !('hasGlyphForCodePoint' in font)) throw new Error(`${file.path} holds no face ${file.face}`);
      return font as Font;
    });
    p.catch(() => parsed.delete(key));
    parsed.set(key, p);
  }
  return parsed.get(key)!;
}

function fileBytes(file: FontFile): Promise<Buffer> {
  if (!bytesOf.has(file.path)) bytesOf.set(file.path, readFile(file.path));
  return bytesOf.get(file.path)!;
}

/** pdf-lib parses the bytes it is given; handing it our parsed face spares a second parse and picks the face of a collection. */
const faces = new WeakMap<Uint8Array, Font>();
const FONTKIT = { ...fontkit, create: (bytes: Uint8Array) => faces.get(bytes) ?? fontkit.create(bytes) };

/** Unicode properties that make a character follow its neighbour's font rather than pick its own. */
const FOLLOWS = /[\p{M}\p{Z}\p{P}\p{Cf}]/u;

/**
 * The fonts of one stamp document: each face embedded once (as a subset), shared by every text drawn with it.
 */
export class FontSet {
  private readonly embedded = new Map<string, Promise<PDFFont>>();

  constructor(private readonly doc: PDFDocument) {
    doc.registerFontkit(FONTKIT as never);
  }

  /** One font per character of `chars` (code points), for drawing them in the chosen font. */
  async fontsFor(chars: string[], choice: FontChoice): Promise<PDFFont[]> {
    const { family, style } = choice;
    if (family.standard) {
      const font = await this.standard(family.standard[style]);
      const set = new Set(font.getCharacterSet());
      if (chars.every((c) => set.has(c.codePointAt(0)!) || c === '\n')) return chars.map(() => font);
    }
    const bold = style === 'bold' || style === 'bolditalic';
    const chain: FontFile[] = [...(family.files ? [family.files[style]] : []), ...FALLBACKS.map((f) => f[bold ? 1 : 0])];
    const out: PDFFont[] = [];
    let prev: { file: FontFile; face: Font } | undefined;
    for (const c of chars) {
      const cp = c.codePointAt(0)!;
      let pick = prev && FOLLOWS.test(c) && prev.face.hasGlyphForCodePoint(cp) ? prev : undefined;
      for (let i = 0; !pick && i < chain.length; i++) {
        const face = await parse(chain[i]);
        if (face.hasGlyphForCodePoint(cp)) pick = { file: chain[i], face };
      }
      // Nothing has it: the first font's missing-glyph box, still extractable as the character.
      pick ??= { file: chain[0], face: await parse(chain[0]) };
      out.push(await this.custom(pick.file));
      prev = pick;
    }
    return out;
  }

  private standard(name: StandardFonts): Promise<PDFFont> {
    if (!this.embedded.has(name)) this.embedded.set(name, this.doc.embedFont(name));
    return this.embedded.get(name)!;
  }

  private custom(file: FontFile): Promise<PDFFont> {
    const key = keyOf(file);
    if (!this.embedded.has(key)) {
      this.embedded.set(
        key,
        (async () => {
          const [face, bytes] = await Promise.all([parse(file), fileBytes(file)]);
          const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
          faces.set(view, face);
          return this.doc.embedFont(view, { subset: true });
        })(),
      );
    }
    return this.embedded.get(key)!;
  }
}
