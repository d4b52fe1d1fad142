import type { GreyImage } from './pixels.js';

/**
 * How much of a page is ink, as a scan reader sees it. Pages are drawn at INK_DPI: low enough that a scanner's
 * single-pixel noise is averaged away, high enough that 7-point text still draws dark strokes (at 72 dpi the
 * small text of the French corpus scan drew mostly grey).
 * A band along each edge (EDGE_BAND of the width and height) is left out, where scanners leave dark edges and
 * shadows of the sheet; dark specks smaller than SPECK_PIXELS (dust, toner dots) are not counted.
 */
export const INK_DPI = 100;
export const EDGE_BAND = 0.05;
/** Connected dark areas up to this many pixels at INK_DPI (0.26 mm^2: a speck half a millimetre across) are noise. */
export const SPECK_PIXELS = 4;
/** Below this grey level (0-255) a pixel is dark: light show-through from the sheet's other side is not. */
const DARK = 160;

/** The dark marks of a page inside the edge band, specks left out. */
export interface InkMap {
  /** Where the inner area starts in the image. */
  x0: number;
  y0: number;
  width: number;
  height: number;
  /** 1 where a pixel of the inner area belongs to a mark larger than a speck. */
  mask: Uint8Array;
  /** Pixels set in `mask`. */
  area: number;
}

/**
 * Dark pixels of the inner area grouped into 8-connected marks (walked with an explicit stack); marks of at most
 * `speck` pixels are dropped.
 */
export function inkMap(img: GreyImage, speck = SPECK_PIXELS): InkMap {
  const { width, height, data } = img;
  const x0 = Math.floor(width * EDGE_BAND);
  const y0 = Math.floor(height * EDGE_BAND);
  const w = Math.max(0, width - 2 * x0);
  const h = Math.max(0, height - 2 * y0);
  // 1 = dark and not yet visited.
  const dark = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = (y + y0) * width + x0;
    for (let x = 0; x < w; x++) if (data[row + x] < DARK) dark[y * w + x] = 1;
  }
  const mask = new Uint8Array(w * h);
  const stack = new Int32Array(w * h);
  const members = new Int32Array(w * h);
  let area = 0;
  for (let start = 0; start < dark.length; start++) {
    if (!dark[start]) continue;
    dark[start] = 0;
    let top = 0;
    let size = 0;
    stack[top++] = start;
    while (top) {
      const i = stack[--top];
      members[size++] = i;
      const x = i % w;
      const y = (i - x) / w;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= w) continue;
          const j = ny * w + nx;
          if (dark[j]) {
            dark[j] = 0;
            stack[top++] = j;
          }
        }
      }
    }
    if (size <= speck) continue;
    for (let k = 0; k < size; k++) mask[members[k]] = 1;
    area += size;
  }
  return { x0, y0, width: w, height: h, mask, area };
}

/** The share of the page inside the edge band covered by dark marks larger than a speck (0 to 1). */
export function inkFraction(img: GreyImage): number {
  const map = inkMap(img);
  return map.width && map.height ? map.area / (map.width * map.height) : 0;
}
