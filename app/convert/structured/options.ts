import { PAGE_SIZES } from '../../document/index.js';
import { outOfRange } from '../../errors.js';
import { type CssFont, cssFont, familyList } from './fonts.js';

/** `structured_text_options` of /pdf, as the pdfRest clients send it (every member optional). */

export type Rgb = [number, number, number];
export interface Sides {
  top?: number;
  right?: number;
  bottom?: number;
  left?: number;
}
/** The clients' size names (lower case, tabloid beside ledger) for the one paper table of the document domain. */
export const STRUCTURED_PAGE_SIZES = {
  letter: PAGE_SIZES.letter,
  legal: PAGE_SIZES.legal,
  ledger: PAGE_SIZES.ledger,
  tabloid: PAGE_SIZES.ledger,
  a3: PAGE_SIZES.A3,
  a4: PAGE_SIZES.A4,
  a5: PAGE_SIZES.A5,
} as const;
export type StructuredPageSize = keyof typeof STRUCTURED_PAGE_SIZES;

export interface TableStyle {
  column_width_weights?: number[];
  keep_header_with_first_row?: boolean;
  repeat_headers_on_overflow?: boolean;
  show_borders?: boolean;
  border_width?: number;
  border_color_rgb?: Rgb;
  header_fill_color_rgb?: Rgb;
  header_text_color_rgb?: Rgb;
  row_fill_color_rgb?: Rgb;
  alternate_row_fill_color_rgb?: Rgb;
  cell_padding?: Sides;
}

export interface ImageSource {
  image_id_index?: number;
  upload_index?: number;
}

export interface StructuredOptions {
  title?: string;
  language?: string;
  enable_tagging?: boolean;
  page_setup?: { size?: StructuredPageSize; width?: number; height?: number; orientation?: 'auto' | 'portrait' | 'landscape'; margin?: Sides };
  style?: {
    font?: string;
    heading_font?: string;
    code_font?: string;
    cjk_font?: string;
    fallback_fonts?: string[];
    text_size?: number;
    text_color_rgb?: Rgb;
    heading_scale?: number;
    table?: TableStyle;
  };
  include_unrendered_html?: boolean;
  markdown?: { image_alt_text?: Record<string, string>; missing_image_alt_text?: 'warn' | 'fail' | 'artifact'; image_sources?: Record<string, ImageSource> };
  plain_text?: { line_handling?: 'reflow' | 'preserve' };
  data_presentation?: 'source' | 'hierarchy';
  csv?: { first_row_is_header?: boolean; delimiter?: string; columns?: { index: number; text_align?: 'left' | 'center' | 'right'; width_weight?: number }[] };
}

export const DEFAULTS = { size: 'letter', margin: 72, textSize: 11, headingScale: 1 } as const;
/** hN's size over the body text's, before heading_scale. */
const HEADING_RATIOS = [2, 1.6, 1.35, 1.15, 1, 0.9];
/** Below this printable width or height (points) nothing sensible fits. */
const MIN_USABLE = 180;

export interface Paper {
  width: number;
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
}

/** Page geometry; `wide` says what `auto` orientation picks (landscape for wide tables). */
export function structuredPaper(o: StructuredOptions, wide: boolean): Paper {
  const p = o.page_setup ?? {};
  let [w, h]: number[] = p.width !== undefined && p.height !== undefined ? [p.width, p.height] : [...STRUCTURED_PAGE_SIZES[p.size ?? DEFAULTS.size]];
  // Unset is auto, as the server decides.
  const orientation = p.orientation === 'portrait' || p.orientation === 'landscape' ? p.orientation : wide ? 'landscape' : null;
  if ((orientation === 'landscape' && w < h) || (orientation === 'portrait' && w > h)) [w, h] = [h, w];
  const margin = { top: DEFAULTS.margin, right: DEFAULTS.margin, bottom: DEFAULTS.margin, left: DEFAULTS.margin, ...p.margin };
  if (w - margin.left - margin.right < MIN_USABLE)
    throw outOfRange(w, `structured_text_options.page_setup: the usable width between the margins is under ${MIN_USABLE} points`);
  if (h - margin.top - margin.bottom < MIN_USABLE)
    throw outOfRange(h, `structured_text_options.page_setup: the usable height between the margins is under ${MIN_USABLE} points`);
  return { width: w, height: h, margin };
}

/** The CJK face for a language, so Han characters take that region's glyph forms. */
function cjkFor(language: string | undefined): string {
  const l = (language ?? '').toLowerCase();
  if (l.startsWith('ja')) return 'Noto Sans CJK JP';
  if (l.startsWith('ko')) return 'Noto Sans CJK KR';
  if (/^zh-(tw|hant)/.test(l)) return 'Noto Sans CJK TC';
  if (/^zh-(hk|mo)/.test(l)) return 'Noto Sans CJK HK';
  return 'Noto Sans CJK SC';
}

/** Characters no chosen face has fall through to these (Arabic, Hebrew, Indic, Thai, symbols). */
const LAST_RESORT = ['DejaVu Sans', 'Noto Sans', 'Noto Sans Arabic', 'Noto Sans Hebrew', 'Noto Sans Devanagari', 'Noto Sans Thai'];

const rgb = (c: Rgb) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
const pt = (n: number) => `${Number(n.toFixed(3))}pt`;
const face = (f: CssFont) => `font-weight: ${f.weight}; font-style: ${f.style};`;

/** The print CSS of every structured format: fonts, sizes, colours, headings, code and tables. */
export function styleCss(o: StructuredOptions, paper: Paper): string {
  const s = o.style ?? {};
  const body = cssFont(s.font ?? 'Liberation Sans', 'structured_text_options.style.font');
  const heading = s.heading_font ? cssFont(s.heading_font, 'structured_text_options.style.heading_font') : { ...body, weight: 'bold' as const };
  const code = cssFont(s.code_font ?? 'Liberation Mono', 'structured_text_options.style.code_font');
  const cjk = s.cjk_font ? cssFont(s.cjk_font, 'structured_text_options.style.cjk_font').family : cjkFor(o.language);
  const fallbacks = (s.fallback_fonts ?? []).map((f, i) => cssFont(f, `structured_text_options.style.fallback_fonts[${i}]`).family);
  const stack = (first: string) => familyList([first, ...fallbacks, cjk, ...LAST_RESORT]);
  const size = s.text_size ?? DEFAULTS.textSize;
  const scale = s.heading_scale ?? DEFAULTS.headingScale;
  const t = s.table ?? {};
  const pad = { top: 3, right: 5, bottom: 3, left: 5, ...t.cell_padding };
  const border = t.show_borders === false ? 'none' : `${pt(t.border_width ?? 0.75)} solid ${rgb(t.border_color_rgb ?? [128, 128, 128])}`;
  const printable = paper.height - paper.margin.top - paper.margin.bottom;
  return [
    `@page { size: ${pt(paper.width)} ${pt(paper.height)}; }`,
    `html { font-family: ${stack(body.family)}; ${face(body)} font-size: ${pt(size)}; line-height: 1.35; color: ${rgb(s.text_color_rgb ?? [0, 0, 0])}; }`,
    'body { margin: 0; overflow-wrap: break-word; }',
    ...HEADING_RATIOS.map(
      (r, i) =>
        `h${i + 1} { font-family: ${stack(heading.family)}; ${face(heading)} font-size: ${pt(size * r * scale)}; line-height: 1.2; margin: 0.8em 0 0.4em; break-after: avoid; }`,
    ),
    'p, ul, ol, dl, blockquote, pre, table { margin: 0 0 0.7em; }',
    `pre, code, kbd, samp { font-family: ${stack(code.family)}; ${face(code)} font-size: 0.92em; }`,
    'pre { white-space: pre-wrap; overflow-wrap: anywhere; tab-size: 8; }',
    'pre { background: #f4f4f4; padding: 6pt; border-radius: 2pt; }',
    'pre.text { font-family: inherit; font-size: 1em; font-weight: inherit; font-style: inherit; background: none; padding: 0; }',
    'blockquote { margin-left: 0; padding-left: 10pt; border-left: 2.5pt solid #ccc; color: #444; }',
    `img { max-width: 100%; max-height: ${pt(printable)}; }`,
    '.missing-image { display: inline-block; border: 0.75pt dashed #999; padding: 2pt 4pt; color: #555; }',
    'hr { border: 0; border-top: 0.75pt solid #999; }',
    `table { border-collapse: collapse; ${t.column_width_weights ? 'width: 100%; table-layout: fixed;' : ''} }`,
    // Markdown tables have no <col>s: a fixed layout takes the widths of the first row's cells (CSV tables carry their own).
    ...(t.column_width_weights ?? []).map(
      (w, i, all) => `table.md tr:first-child > :nth-child(${i + 1}) { width: ${((w / all.reduce((a, b) => a + b, 0)) * 100).toFixed(3)}%; }`,
    ),
    `th, td { border: ${border}; padding: ${pt(pad.top)} ${pt(pad.right)} ${pt(pad.bottom)} ${pt(pad.left)}; vertical-align: top; text-align: left; box-sizing: border-box; }`,
    `th { font-weight: bold; background: ${t.header_fill_color_rgb ? rgb(t.header_fill_color_rgb) : '#e8e8e8'}; ${t.header_text_color_rgb ? `color: ${rgb(t.header_text_color_rgb)};` : ''} }`,
    t.row_fill_color_rgb ? `tbody tr { background: ${rgb(t.row_fill_color_rgb)}; }` : '',
    t.alternate_row_fill_color_rgb ? `tbody tr:nth-child(even) { background: ${rgb(t.alternate_row_fill_color_rgb)}; }` : '',
    'tr { break-inside: avoid; }',
    // Chromium repeats a table-header-group on every page the table spans; a row group is printed once.
    t.repeat_headers_on_overflow === false ? 'thead { display: table-row-group; }' : '',
    t.keep_header_with_first_row === false ? '' : 'thead { break-after: avoid; } tbody > tr:first-child { break-before: avoid; }',
    'ul.tree, ul.tree ul { list-style: none; padding-left: 14pt; margin: 0; } ul.tree { padding-left: 0; }',
    '.key { font-weight: bold; } .attr { color: #555; } .empty { color: #777; font-style: italic; }',
  ]
    .filter(Boolean)
    .join('\n');
}
