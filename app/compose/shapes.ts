import { beginMarkedContent, type Color, endMarkedContent, PDFOperator, PDFOperatorNames, type PDFPage } from '@cantoo/pdf-lib';
import { colorOf } from './stamp.js';

/**
 * Lines and rectangles drawn on stamp pages (/pdf-with-added-shapes), and the marked content that tags what
 * Quire draws (shapes, tables) for assistive technology.
 */

/** The structure types content drawn by Quire may be tagged with (those the pdfRest clients list). */
export const STRUCTURE_TYPES = [
  'P',
  'H',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'Lbl',
  'Span',
  'Quote',
  'Note',
  'Reference',
  'BibEntry',
  'Code',
  'Link',
  'Annot',
  'Ruby',
  'RB',
  'RT',
  'RP',
  'Warichu',
  'WT',
  'WP',
  'Figure',
  'Formula',
  'Form',
] as const;

/** How drawn content is marked: a decorative artifact, or content with a structure type and replacement text. */
export interface ContentTag {
  artifact?: boolean;
  /** The marked-content tag (a structure type such as P, Figure, TD); Span when only actual text is given. */
  type?: string;
  actualText?: string;
  alt?: string;
  lang?: string;
}

/** A PDF text string as UTF-16BE hex: no escaping to get wrong, any script. */
const hexText = (s: string) => `<FEFF${Buffer.from(s, 'utf16le').swap16().toString('hex').toUpperCase()}>`;

/**
 * Draws with `draw` inside marked content: `/Artifact BMC ... EMC`, or `/<type> BMC` (BDC with /Alt, /Lang), and
 * actual text in an inner `/Span <</ActualText ...>> BDC`: the form Poppler (pdftotext) and screen readers read
 * instead of what is drawn. No tag, no marking.
 */
export function markedContent(page: PDFPage, tag: ContentTag | undefined, draw: () => void): void {
  if (!tag) {
    draw();
    return;
  }
  const begin = (name: string, props: string[]) =>
    page.pushOperators(
      props.length ? PDFOperator.of(PDFOperatorNames.BeginMarkedContentSequence, [`/${name}`, `<<${props.join(' ')}>>`]) : beginMarkedContent(name),
    );
  // Tag names come from fixed lists (structure types), never from free text.
  const outer = tag.artifact ? 'Artifact' : (tag.type ?? (tag.actualText === undefined ? 'Span' : undefined));
  if (outer)
    begin(
      outer,
      tag.artifact ? [] : [tag.alt !== undefined ? `/Alt ${hexText(tag.alt)}` : '', tag.lang !== undefined ? `/Lang ${hexText(tag.lang)}` : ''].filter(Boolean),
    );
  const actual = !tag.artifact && tag.actualText !== undefined;
  if (actual) begin('Span', [`/ActualText ${hexText(tag.actualText!)}`]);
  draw();
  if (actual) page.pushOperators(endMarkedContent());
  if (outer) page.pushOperators(endMarkedContent());
}

export interface ShapeStyle {
  stroke_color_rgb?: number[];
  stroke_color_cmyk?: number[];
  stroke_width?: number;
  opacity: number;
}

export interface LineShape extends ShapeStyle {
  type: 'line';
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface RectangleShape extends ShapeStyle {
  type: 'rectangle';
  x: number;
  y: number;
  width: number;
  height: number;
  fill_color_rgb?: number[];
  fill_color_cmyk?: number[];
}

export type Shape = LineShape | RectangleShape;

const strokeOf = (s: ShapeStyle): Color | undefined =>
  s.stroke_color_rgb || s.stroke_color_cmyk ? colorOf(s.stroke_color_rgb, s.stroke_color_cmyk) : undefined;

/**
 * Draws one shape, coordinates in PDF units from the page's lower-left corner. A line is stroked (black, 1 unit
 * by default); a rectangle is filled when it has a fill colour and outlined when it has a stroke colour or
 * width, or no fill at all (then black, 1 unit wide). Opacity applies to fill and stroke.
 */
export function drawShape(page: PDFPage, s: Shape): void {
  const width = s.stroke_width ?? 1;
  const stroke = strokeOf(s);
  if (s.type === 'line') {
    page.drawLine({
      start: { x: s.x1, y: s.y1 },
      end: { x: s.x2, y: s.y2 },
      thickness: width,
      color: stroke ?? colorOf(undefined, undefined),
      opacity: s.opacity,
    });
    return;
  }
  const fill = s.fill_color_rgb || s.fill_color_cmyk ? colorOf(s.fill_color_rgb, s.fill_color_cmyk) : undefined;
  const outlined = stroke !== undefined || s.stroke_width !== undefined || fill === undefined;
  page.drawRectangle({
    x: s.x,
    y: s.y,
    width: s.width,
    height: s.height,
    color: fill,
    opacity: s.opacity,
    borderColor: outlined ? (stroke ?? colorOf(undefined, undefined)) : undefined,
    borderWidth: outlined ? width : 0,
    borderOpacity: s.opacity,
  });
}
