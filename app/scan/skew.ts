import sharp from 'sharp';
import { EDGE_BAND } from './ink.js';
import type { GreyImage } from './pixels.js';

/**
 * Skew of a scanned page by projection profiles (Postl's method): the dark pixels are projected onto the page's
 * vertical axis along lines tilted by each candidate angle; text lines and rules pile up into the sharpest
 * profile (the largest sum of squared bin counts) at the page's own tilt. Coarse steps over the range, then fine
 * steps around the best. The edge band is left out: a scanner's dark edges are straight and would pull to 0.
 */

/** Pixels across the image the angle is measured on: 0.02 degrees over it is a third of a pixel. */
export const SKEW_WIDTH = 1600;
/** The largest skew looked for, in degrees either way. */
export const MAX_SKEW = 10;
const COARSE = 0.2;
const FINE = 0.02;
const MAX_POINTS = 120_000;
const DARK = 128;

/**
 * The angle in degrees by which the page's content is turned clockwise (as seen, y down); 0 when the page has
 * too little ink to tell.
 */
export function measureSkew(img: GreyImage, range = MAX_SKEW): number {
  const { width, height, data } = img;
  const x0 = Math.floor(width * EDGE_BAND);
  const y0 = Math.floor(height * EDGE_BAND);
  let count = 0;
  for (let y = y0; y < height - y0; y++) for (let x = x0; x < width - x0; x++) if (data[y * width + x] < DARK) count++;
  if (count < 100) return 0;
  const step = Math.max(1, Math.ceil(count / MAX_POINTS));
  const xs = new Float64Array(Math.ceil(count / step));
  const ys = new Float64Array(xs.length);
  let n = 0;
  let k = 0;
  for (let y = y0; y < height - y0; y++) {
    for (let x = x0; x < width - x0; x++) {
      if (data[y * width + x] >= DARK || k++ % step) continue;
      // Centred on the page, so that the projection's offset stays small at any angle.
      xs[n] = x - width / 2;
      ys[n++] = y;
    }
  }
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

/** The sum of squared bin counts of the points projected along slope `t`. */
function profileSharpness(xs: Float64Array, ys: Float64Array, n: number, t: number, reach: number, bins: Int32Array): number {
  bins.fill(0);
  const offset = reach + 0.5;
  for (let i = 0; i < n; i++) bins[(ys[i] - xs[i] * t + offset) | 0]++;
  let s = 0;
  for (let i = 0; i < bins.length; i++) s += bins[i] * bins[i];
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
