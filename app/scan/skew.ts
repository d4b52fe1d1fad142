import sharp from 'sharp';
import { INK_DPI, SPECK_PIXELS, inkMap } from './ink.js';
import type { GreyImage } from './pixels.js';

/**
 * Skew of a scanned page by projection profiles (Postl's method): the dark pixels are projected onto the page's
 * vertical axis along lines tilted by each candidate angle; text lines and rules pile up into the sharpest
 * profile (the largest sum of squared differences between neighbouring bins) at the page's own tilt. Coarse steps over the range, then fine
 * steps around the best. Only ink counts (inkMap: the edge band and specks are left out): a scanner's dark edges
 * are straight and would pull to 0, and specks are noise.
 */

/** Pixels across the image the angle is measured on: 0.02 degrees over it is a third of a pixel. */
export const SKEW_WIDTH = 1600;
/** The largest skew looked for, in degrees either way. */
export const MAX_SKEW = 10;
const COARSE = 0.2;
const FINE = 0.02;
const MAX_POINTS = 120_000;
/** Less ink than this share of the page (about two lines of text) has no lines to measure. */
const MIN_INK = 0.002;

/**
 * The angle in degrees by which the page's content is turned clockwise (as seen, y down), from an image drawn at
 * `dpi`; 0 when the page has too little ink to tell (a blank sheet's specks would give a random angle).
 */
export function measureSkew(img: GreyImage, dpi: number, range = MAX_SKEW): number {
  const map = inkMap(img, Math.round(SPECK_PIXELS * (dpi / INK_DPI) ** 2));
  if (map.area < MIN_INK * map.width * map.height) return 0;
  const step = Math.max(1, Math.ceil(map.area / MAX_POINTS));
  const xs = new Float64Array(Math.ceil(map.area / step));
  const ys = new Float64Array(xs.length);
  const centre = map.width / 2;
  let n = 0;
  let k = 0;
  for (let i = 0; i < map.mask.length; i++) {
    if (!map.mask[i] || k++ % step) continue;
    // Centred across the page, so that the projection's offset stays small at any angle.
    xs[n] = (i % map.width) - centre;
    ys[n++] = Math.floor(i / map.width);
  }
  const width = map.width;
  const height = map.height;
  const reach = Math.ceil((width / 2) * Math.tan((range * Math.PI) / 180)) + 1;
  const bins = new Int32Array(height + 2 * reach + 2);
  const best = (from: number, to: number, by: number, start: number) => {
    let angle = start;
    let top = -1;
    for (let a = from; a <= to + 1e-9; a += by) {
      const s = profileSharpness(xs, ys, n, Math.tan((a * Math.PI) / 180), reach, bins);
      if (s > top) [top, angle] = [s, a];
    }
    return angle;
  };
  const coarse = best(-range, range, COARSE, 0);
  const fine = best(Math.max(-range, coarse - COARSE), Math.min(range, coarse + COARSE), FINE, coarse);
  return Math.round(fine * 100) / 100;
}

/** How sharp the profile of the points projected along slope `t` is: its summed squared steps from bin to bin. */
function profileSharpness(xs: Float64Array, ys: Float64Array, n: number, t: number, reach: number, bins: Int32Array): number {
  bins.fill(0);
  const offset = reach + 0.5;
  for (let i = 0; i < n; i++) bins[(ys[i] - xs[i] * t + offset) | 0]++;
  let s = 0;
  for (let i = 1; i < bins.length; i++) s += (bins[i] - bins[i - 1]) ** 2;
  return s;
}

/** A page image turned by `degrees` (clockwise) on a white ground, cut back to its own size around its centre. */
export async function rotateImage(file: string, degrees: number, channels: 1 | 3): Promise<GreyImage & { channels: number }> {
  const background = { r: 255, g: 255, b: 255 };
  let img = sharp(file, { limitInputPixels: false });
  img = channels === 1 ? img.greyscale() : img.removeAlpha().toColourspace('srgb');
  const meta = await sharp(file, { limitInputPixels: false }).metadata();
  const { data, info } = await img.rotate(degrees, { background }).raw().toBuffer({ resolveWithObject: true });
  const [w, h] = [meta.width!, meta.height!];
  const left = Math.max(0, Math.round((info.width - w) / 2));
  const top = Math.max(0, Math.round((info.height - h) / 2));
  const cut = await sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels as 1 | 3 }, limitInputPixels: false })
    .extract({ left, top, width: Math.min(w, info.width - left), height: Math.min(h, info.height - top) })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: cut.info.width, height: cut.info.height, channels: cut.info.channels, data: cut.data };
}
