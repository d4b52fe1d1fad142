import { z } from 'zod';
import type { Quad, StextPage } from '../../engines/mupdf-stext.js';
import { orderedBox, type Point, quarterTurn, seenPoint, userPoint } from '../document/index.js';
import { AppError } from '../errors.js';

/**
 * Area redactions: a box drawn on a page rather than a text looked for. The box is in the coordinates the other
 * placing endpoints take (/pdf-with-added-image, /pdf-with-added-shapes, /compared-pdf's boxes): PDF points from
 * the lower-left corner of the page as seen (trim box, else crop box, else media box, after /Rotate). It becomes
 * one /Redact annotation in PDF user space, so applying it removes whatever lies under it: glyphs, image pixels.
 */

export interface Area {
  /** 1-based page. */
  page: number;
  /** Lower-left corner and size, points on the page as seen. */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A number sent as a JSON number or a numeric string ("72", " 72.5 "), as the clients send them. */
const loose = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v);
const finite = z.preprocess(loose, z.number().finite());

/** `value` of an area redaction: an object, or the same object as a JSON string. */
export const areaSchema = z.preprocess(
  (v) => {
    if (typeof v !== 'string' || !v.trim().startsWith('{')) return v;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  },
  z.object({
    page: z.preprocess(loose, z.number().int().min(1)),
    x: finite,
    y: finite,
    width: z.preprocess(loose, z.number().finite().gt(0)),
    height: z.preprocess(loose, z.number().finite().gt(0)),
  }),
);

type Box = [number, number, number, number];

/** What the mapping needs of a page: its boxes (Poppler's: crop clipped to media, trim falling back) and /Rotate. */
export interface AreaPage {
  cropBox: Box;
  trimBox: Box;
  rotate: number;
}

/** A box sent up to this far past the page's edge is cut at the edge (a client's rounding); further is refused. */
const EDGE_SLACK = 1;

const bounds = (points: Point[]): Box => [
  Math.min(...points.map((p) => p.x)),
  Math.min(...points.map((p) => p.y)),
  Math.max(...points.map((p) => p.x)),
  Math.max(...points.map((p) => p.y)),
];

const round = (n: number) => Math.round(n * 1000) / 1000;
const fmt = (n: number) => String(Math.round(n * 100) / 100);

/**
 * The area in PDF user space, cut to the page's crop box. `field` names it in errors: a page the document does
 * not have, or a box that reaches more than a point past the page (the crop box as seen), is a 400 naming the
 * field and what the page allows.
 */
export function areaInUserSpace(area: Area, pages: AreaPage[], field: string): Box {
  const g = pages[area.page - 1];
  if (!g) {
    throw new AppError(
      'out_of_range',
      `${area.page} is not within the acceptable range for ${field}.page: the document has ${pages.length} page${pages.length === 1 ? '' : 's'}`,
    );
  }
  const corners = [
    { x: area.x, y: area.y },
    { x: area.x + area.width, y: area.y + area.height },
  ];
  const [x0, y0, x1, y1] = bounds(corners.map((p) => userPoint(p, g.trimBox, g.rotate)));
  const [cx0, cy0, cx1, cy1] = orderedBox(g.cropBox);
  const cut = [Math.max(x0, cx0), Math.max(y0, cy0), Math.min(x1, cx1), Math.min(y1, cy1)].map(round) as Box;
  const off = x0 < cx0 - EDGE_SLACK || y0 < cy0 - EDGE_SLACK || x1 > cx1 + EDGE_SLACK || y1 > cy1 + EDGE_SLACK;
  if (off || cut[0] >= cut[2] || cut[1] >= cut[3]) {
    // What the page allows, in the client's own coordinates.
    const [ax, ay, bx, by] = bounds(cropSeen(g.cropBox, g));
    throw new AppError(
      'out_of_range',
      `${field} is off page ${area.page}: the box x ${fmt(area.x)} to ${fmt(area.x + area.width)}, y ${fmt(area.y)} to ${fmt(area.y + area.height)} must lie within x ${fmt(ax)} to ${fmt(bx)}, y ${fmt(ay)} to ${fmt(by)} (PDF points from the lower-left corner of the page as seen)`,
    );
  }
  return cut;
}

/** The crop box's corners on the page as seen from the trim box's origin: where a box may lie. */
function cropSeen(crop: Box, g: AreaPage): Point[] {
  const [a, b, c, d] = orderedBox(crop);
  return [
    { x: a, y: b },
    { x: c, y: d },
  ].map((p) => seenPoint(p, g.trimBox, g.rotate));
}

/**
 * A user-space rectangle in MuPDF's page space (the structured text's: the crop box as seen, origin top-left,
 * y down), where the characters' quads are.
 */
function toDevice([x0, y0, x1, y1]: Box, g: AreaPage): Box {
  const crop = orderedBox(g.cropBox);
  const tall = quarterTurn(g.rotate) % 180 ? crop[2] - crop[0] : crop[3] - crop[1];
  const pts = [
    { x: x0, y: y0 },
    { x: x1, y: y1 },
  ].map((p) => seenPoint(p, crop, g.rotate));
  return bounds(pts.map((p) => ({ x: p.x, y: tall - p.y })));
}

/**
 * How many of the page's drawn paths (their boxes, in the trace's device space) meet the area, leaving out fills
 * of (nearly) the whole page: a background, not a drawing anyone redacts.
 */
export function pathsUnder(rect: Box, g: AreaPage, paths: { x0: number; y0: number; x1: number; y1: number }[]): number {
  const [x0, y0, x1, y1] = toDevice(rect, g);
  const [cx0, cy0, cx1, cy1] = orderedBox(g.cropBox);
  const page = (cx1 - cx0) * (cy1 - cy0);
  return paths.filter((p) => p.x0 < x1 && x0 < p.x1 && p.y0 < y1 && y0 < p.y1 && (p.x1 - p.x0) * (p.y1 - p.y0) < 0.9 * page).length;
}

/** The text whose characters' centres lie in the area (reading order as MuPDF gave it): the mark's comment. */
export function textInArea(rect: Box, g: AreaPage, page: StextPage | undefined): string {
  if (!page) return '';
  const [x0, y0, x1, y1] = toDevice(rect, g);
  const lines: string[] = [];
  for (const line of page.lines) {
    let s = '';
    for (const span of line.spans) {
      for (const ch of span.chars) {
        const q = ch.quad;
        const cx = (q[0] + q[2] + q[4] + q[6]) / 4;
        const cy = (q[1] + q[3] + q[5] + q[7]) / 4;
        s += cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 ? ch.c : ' ';
      }
    }
    const t = s.replace(/\s+/g, ' ').trim();
    if (t) lines.push(t);
  }
  return lines.join(' ');
}

/**
 * Characters outside the area (their centre outside it) whose box meets it, as "text, text" by line: applying removes
 * every character whose font box (ascent to descent, often taller than the line spacing) meets a mark, so these go
 * too. The preview names them, so that the box can be drawn again within the lines' height.
 */
export function touchedOutside(rect: Box, g: AreaPage, page: StextPage | undefined): string {
  if (!page) return '';
  const [x0, y0, x1, y1] = toDevice(rect, g);
  const runs: string[] = [];
  for (const line of page.lines) {
    let s = '';
    for (const span of line.spans) {
      for (const ch of span.chars) {
        const q = ch.quad;
        const [qx0, qy0, qx1, qy1] = [
          Math.min(q[0], q[2], q[4], q[6]),
          Math.min(q[1], q[3], q[5], q[7]),
          Math.max(q[0], q[2], q[4], q[6]),
          Math.max(q[1], q[3], q[5], q[7]),
        ];
        const cx = (qx0 + qx1) / 2;
        const cy = (qy0 + qy1) / 2;
        const inside = cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1;
        const meets = qx0 < x1 && x0 < qx1 && qy0 < y1 && y0 < qy1;
        s += meets && !inside ? ch.c : ' ';
      }
    }
    runs.push(
      ...s
        .split(/\s{2,}/)
        .map((r) => r.trim())
        .filter((r) => r && /\S/.test(r)),
    );
  }
  const text = runs.join(', ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** The one quad (ul ur ll lr, user space) of an area mark. */
export function areaQuad([x0, y0, x1, y1]: Box): Quad {
  return [x0, y1, x1, y1, x0, y0, x1, y0];
}
