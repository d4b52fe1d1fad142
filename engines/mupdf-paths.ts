import type { EngineContext } from './context.js';
import { traceBatches } from './mupdf-stext.js';
import { type DrawnImage, parseDrawnImages } from './page-images.js';

/**
 * A straight-edged piece of line art as drawn on a displayed page: a filled rectangle (a cell's shading, or a
 * rule drawn as a thin rectangle) or a stroked straight segment (a rule), as its box in device space (points,
 * /Rotate applied, origin top-left, y down: the space of the structured text).
 */
export interface DrawnRect {
  page: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  /** sRGB, 0-1, approximated from the drawing's colour space. */
  rgb: [number, number, number];
}

/**
 * What the pages draw besides text, from `mutool trace` in batches (it lists every glyph too, so it is read once):
 * rectangles and straight strokes
 * (curves, rotated rectangles and other shapes are not tables' cells or rules, and are left out), where images
 * are placed, and which pages draw text invisibly.
 */
export async function traceDrawings(
  input: string,
  pages: number[],
  ctx: EngineContext,
): Promise<{ rects: DrawnRect[]; images: DrawnImage[]; paths: Map<number, number>; hiddenText: Set<number> }> {
  const out = { rects: [] as DrawnRect[], images: [] as DrawnImage[], paths: new Map<number, number>(), hiddenText: new Set<number>() };
  await traceBatches(input, pages, ctx, (xml) => {
    for (const r of parseDrawnRects(xml)) out.rects.push(r);
    for (const im of parseDrawnImages(xml)) out.images.push(im);
    for (const [page, n] of countPaths(xml)) out.paths.set(page, n);
    for (const page of hiddenTextPages(xml)) out.hiddenText.add(page);
  });
  return out;
}

/** Pages that draw text invisibly (render mode 3: an OCR layer, hidden text), which the trace lists as ignore_text. */
export function hiddenTextPages(xml: string): Set<number> {
  const out = new Set<number>();
  let page = 0;
  for (const m of xml.matchAll(/<(page|ignore_text)\b([^>]*)>/g)) {
    if (m[1] === 'page') page = Number(/number="(\d+)"/.exec(m[2])?.[1] ?? 0);
    else out.add(page);
  }
  return out;
}

/** How many paths (filled or stroked, of any shape) each page draws. */
export function countPaths(xml: string): Map<number, number> {
  const out = new Map<number, number>();
  let page = 0;
  for (const m of xml.matchAll(/<(page|fill_path|stroke_path)\b([^>]*)>/g)) {
    if (m[1] === 'page') page = Number(/number="(\d+)"/.exec(m[2])?.[1] ?? 0);
    else out.set(page, (out.get(page) ?? 0) + 1);
  }
  return out;
}

/** Where one filled or stroked path lies on a displayed page: the box of its points, in the trace's device space. */
export interface DrawnPath {
  page: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** Every path the pages draw, of any shape (a curve lies within its control points, so their box holds it); traced in batches. */
export async function drawnPaths(input: string, pages: number[], ctx: EngineContext): Promise<DrawnPath[]> {
  const out: DrawnPath[] = [];
  await traceBatches(input, pages, ctx, (xml) => {
    for (const d of parsePathBoxes(xml)) out.push(d);
  });
  return out;
}

/** The attribute readers of parsePathBoxes, made once: it reads a few for each of thousands of tags a page. */
const ATTRS: Record<string, RegExp> = {};

export function parsePathBoxes(xml: string): DrawnPath[] {
  const out: DrawnPath[] = [];
  let page = 0;
  let cur: { m: number[]; pts: [number, number][] } | null = null;
  const attr = (s: string, name: string) => (ATTRS[name] ??= new RegExp(`\\b${name}="([^"]*)"`)).exec(s)?.[1];
  const re = /<(page|fill_path|stroke_path|\/fill_path|\/stroke_path|moveto|lineto|curveto)\b([^>]*)>/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const [, tag, rest] = m;
    if (tag === 'page') page = Number(attr(rest, 'number') ?? 0);
    else if (tag === 'fill_path' || tag === 'stroke_path') cur = { m: nums(attr(rest, 'transform')), pts: [] };
    else if (tag === '/fill_path' || tag === '/stroke_path') {
      if (cur?.pts.length) {
        const [a, b, c, d, e, f] = cur.m.length === 6 ? cur.m : [1, 0, 0, 1, 0, 0];
        const xs = cur.pts.map(([x, y]) => x * a + y * c + e);
        const ys = cur.pts.map(([x, y]) => x * b + y * d + f);
        out.push({ page, x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) });
      }
      cur = null;
    } else if (cur) {
      for (const k of ['', '1', '2', '3']) {
        const x = attr(rest, `x${k}`);
        const y = attr(rest, `y${k}`);
        if (x !== undefined && y !== undefined) cur.pts.push([Number(x), Number(y)]);
      }
    }
  }
  return out;
}

const nums = (s: string | undefined) => (s ?? '').trim().split(/\s+/).filter(Boolean).map(Number);

/** Device colours to sRGB the naive way (no profiles): enough to tell shading from white and black. */
export function toRgb(values: number[]): [number, number, number] {
  const v = values.map((n) => Math.min(1, Math.max(0, Number.isFinite(n) ? n : 0)));
  if (v.length === 1) return [v[0], v[0], v[0]];
  if (v.length === 3) return [v[0], v[1], v[2]];
  if (v.length === 4) return [0, 1, 2].map((i) => (1 - v[i]) * (1 - v[3])) as [number, number, number];
  return [0, 0, 0];
}

export function parseDrawnRects(xml: string): DrawnRect[] {
  const out: DrawnRect[] = [];
  let page = 0;
  const re = /<(page|fill_path|stroke_path|\/fill_path|\/stroke_path|moveto|lineto|curveto|closepath)\b([^>]*)>/g;
  let cur: { stroke: boolean; m: number[]; rgb: [number, number, number]; width: number; sub: [number, number][][]; curved: boolean } | null = null;
  const attr = (s: string, name: string) => (ATTRS[name] ??= new RegExp(`\\b${name}="([^"]*)"`)).exec(s)?.[1];
  const finish = () => {
    if (!cur || cur.curved) return;
    const [a, b, c, d, e, f] = cur.m.length === 6 ? cur.m : [1, 0, 0, 1, 0, 0];
    const dev = (p: [number, number]): [number, number] => [p[0] * a + p[1] * c + e, p[0] * b + p[1] * d + f];
    for (const sub of cur.sub) {
      const pts = sub.map(dev);
      if (!pts.length) continue;
      const xs = pts.map((p) => p[0]);
      const ys = pts.map((p) => p[1]);
      // Axis-aligned only: every edge horizontal or vertical.
      const straight = pts.every((p, i) => i === 0 || Math.abs(p[0] - pts[i - 1][0]) < 0.01 || Math.abs(p[1] - pts[i - 1][1]) < 0.01);
      if (!straight) continue;
      let [x0, y0, x1, y1] = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
      if (cur.stroke) {
        // A stroke covers half its width on each side; its width is scaled by the drawing's matrix.
        const half = (cur.width * Math.sqrt(Math.abs(a * d - b * c))) / 2 || 0.25;
        [x0, y0, x1, y1] = [x0 - half, y0 - half, x1 + half, y1 + half];
        // A stroked rectangle is its four edges, not a filled area.
        if (pts.length >= 4 && x1 - x0 > 4 * half + 1 && y1 - y0 > 4 * half + 1) {
          const h = 2 * half;
          out.push(
            { page, x0, y0, x1, y1: y0 + h, rgb: cur.rgb },
            { page, x0, y0: y1 - h, x1, y1, rgb: cur.rgb },
            { page, x0, y0, x1: x0 + h, y1, rgb: cur.rgb },
            { page, x0: x1 - h, y0, x1, y1, rgb: cur.rgb },
          );
          continue;
        }
      } else if (pts.length < 3) continue;
      out.push({ page, x0, y0, x1, y1, rgb: cur.rgb });
    }
  };
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const [, tag, rest] = m;
    if (tag === 'page') page = Number(attr(rest, 'number') ?? 0);
    else if (tag === 'fill_path' || tag === 'stroke_path') {
      cur = {
        stroke: tag === 'stroke_path',
        m: nums(attr(rest, 'transform')),
        rgb: toRgb(nums(attr(rest, 'color'))),
        width: Number(attr(rest, 'linewidth') ?? 1),
        sub: [],
        curved: false,
      };
    } else if (tag === '/fill_path' || tag === '/stroke_path') {
      finish();
      cur = null;
    } else if (cur && tag === 'moveto') cur.sub.push([[Number(attr(rest, 'x')), Number(attr(rest, 'y'))]]);
    else if (cur && tag === 'lineto') cur.sub[cur.sub.length - 1]?.push([Number(attr(rest, 'x')), Number(attr(rest, 'y'))]);
    else if (cur && tag === 'curveto') cur.curved = true;
  }
  return out;
}
