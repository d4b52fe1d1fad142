import { AppError, outOfRange } from '../../errors.js';

/**
 * Font names of `structured_text_options.style` -> CSS font families Chromium finds through fontconfig. The
 * published tokens (`arial`, `times`, `courier`, ...) map to their metric-compatible Liberation faces; the
 * installed families (Debian packages of scripts/apt-packages.txt) are taken by name. A style suffix (`Arial
 * Bold`, `Times Italic`) sets the weight or slant. Any other name is refused: fontconfig would silently
 * substitute something else.
 */

const LIBERATION_SANS = 'Liberation Sans';
const LIBERATION_SERIF = 'Liberation Serif';
const LIBERATION_MONO = 'Liberation Mono';

const FAMILIES: Record<string, string> = {
  arial: LIBERATION_SANS,
  helvetica: LIBERATION_SANS,
  sans: LIBERATION_SANS,
  sansserif: LIBERATION_SANS,
  times: LIBERATION_SERIF,
  timesroman: LIBERATION_SERIF,
  timesnewroman: LIBERATION_SERIF,
  serif: LIBERATION_SERIF,
  courier: LIBERATION_MONO,
  couriernew: LIBERATION_MONO,
  monospace: LIBERATION_MONO,
  mono: LIBERATION_MONO,
};
const INSTALLED = [
  LIBERATION_SANS,
  LIBERATION_SERIF,
  LIBERATION_MONO,
  'DejaVu Sans',
  'DejaVu Serif',
  'DejaVu Sans Mono',
  'Noto Sans',
  'Noto Serif',
  'Noto Sans Arabic',
  'Noto Sans Hebrew',
  'Noto Sans Devanagari',
  'Noto Sans Thai',
  'Noto Sans CJK SC',
  'Noto Sans CJK TC',
  'Noto Sans CJK HK',
  'Noto Sans CJK JP',
  'Noto Sans CJK KR',
  'Noto Serif CJK SC',
  'Noto Serif CJK TC',
  'Noto Serif CJK JP',
  'Noto Serif CJK KR',
  'Noto Sans Mono CJK SC',
  'Noto Sans Mono CJK TC',
  'Noto Sans Mono CJK JP',
  'Noto Sans Mono CJK KR',
];
const squash = (s: string) => s.toLowerCase().replace(/[\s_,-]+/g, '');
for (const name of INSTALLED) FAMILIES[squash(name)] = name;
FAMILIES.notosanscjk = 'Noto Sans CJK SC';
FAMILIES.notoserifcjk = 'Noto Serif CJK SC';

export const FONT_NAMES = ['Arial', 'Helvetica', 'Times', 'Times New Roman', 'Courier', 'Courier New', ...INSTALLED];

export interface CssFont {
  family: string;
  weight: 'normal' | 'bold';
  style: 'normal' | 'italic';
}

const SUFFIXES: [string, Omit<CssFont, 'family'>][] = [
  ['bolditalic', { weight: 'bold', style: 'italic' }],
  ['boldoblique', { weight: 'bold', style: 'italic' }],
  ['italic', { weight: 'normal', style: 'italic' }],
  ['oblique', { weight: 'normal', style: 'italic' }],
  ['bold', { weight: 'bold', style: 'normal' }],
  ['regular', { weight: 'normal', style: 'normal' }],
  ['', { weight: 'normal', style: 'normal' }],
];

/** `Arial`, `arial bold`, `Noto Sans CJK JP`; `parameter` names the option in the 400 for an unknown font. */
export function cssFont(name: string, parameter: string): CssFont {
  const n = squash(name);
  for (const [suffix, style] of SUFFIXES) {
    const family = n.endsWith(suffix) ? FAMILIES[n.slice(0, n.length - suffix.length)] : undefined;
    if (family) return { family, ...style };
  }
  const range = outOfRange(name.slice(0, 100), parameter).message;
  throw new AppError('out_of_range', `${range}: fonts are ${FONT_NAMES.join(', ')} (add Bold, Italic or Bold Italic for the other styles)`);
}

/** A font-family value: each family quoted, in order. */
export const familyList = (families: string[]) => [...new Set(families)].map((f) => `"${f}"`).join(', ');
