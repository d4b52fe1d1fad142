import type { EngineContext } from './context.js';
import { run } from './run.js';

/** An image as drawn on a displayed page: device space (points, /Rotate applied, origin top-left, y down). */
export interface DrawnImage {
  page: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * Where each page draws its images, from `mutool trace` output (the same device space as the structured text, so
 * images and text lines can be ordered together). Image masks count: scans of text are often 1-bit stencils.
 * Clipping masks do not.
 */
export function parseDrawnImages(xml: string): DrawnImage[] {
  const out: DrawnImage[] = [];
  let page = 0;
  for (const m of xml.matchAll(/<(page|fill_image|fill_image_mask) ([^>]*)>/g)) {
    if (m[1] === 'page') {
      page = Number(/number="(\d+)"/.exec(m[2])?.[1] ?? 0);
      continue;
    }
    const t = (/transform="([^"]*)"/.exec(m[2])?.[1] ?? '').trim().split(/\s+/).map(Number);
    if (t.length !== 6 || t.some((n) => !Number.isFinite(n))) continue;
    const [a, b, c, d, e, f] = t;
    // The unit square through the image matrix.
    const xs = [e, a + e, c + e, a + c + e];
    const ys = [f, b + f, d + f, b + d + f];
    out.push({ page, x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) });
  }
  return out;
}

/**
 * Renders one region of a displayed page to PNG (`pdftoppm -x -y -W -H`): what the reader sees there, with
 * soft masks, colour spaces and every encoding (JBIG2, CCITT, JPX) resolved, which extracting the stored
 * image would not give.
 */
export async function renderRegion(
  input: string,
  page: number,
  box: Omit<DrawnImage, 'page'>,
  dpi: number,
  outputPrefix: string,
  ctx: EngineContext,
): Promise<string> {
  const s = dpi / 72;
  const x = Math.max(0, Math.floor(box.x0 * s));
  const y = Math.max(0, Math.floor(box.y0 * s));
  const w = Math.max(1, Math.ceil(box.x1 * s) - x);
  const h = Math.max(1, Math.ceil(box.y1 * s) - y);
  const args = [
    '-png',
    '-r',
    String(dpi),
    '-f',
    String(page),
    '-l',
    String(page),
    '-x',
    String(x),
    '-y',
    String(y),
    '-W',
    String(w),
    '-H',
    String(h),
    '-singlefile',
    input,
    outputPrefix,
  ];
  await run('pdftoppm', args, ctx);
  return `${outputPrefix}.png`;
}
