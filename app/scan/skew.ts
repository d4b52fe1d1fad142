import sharp from 'sharp';
import { INK_DPI, inkMap, SPECK_PIXELS } from './ink.js';
import type { GreyImage } from './pixels.js';

/**
 * Skew of a scanned page by projection profiles (Postl's method): the dark pixels are projected onto the page's
 * vertical axis along lines tilted by each candidate angle; text lines and rules pile up into the sharpest
 * profile (the largest sum of squared differences between neighbouring bins) at the page's own tilt. Coarse
 * steps over the range, then fine steps around the best; along both axes, so that a page of text turned a
 * quarter is measured on its rows too. Only ink counts (inkMap: the edge band and specks are left out): a
 * scanner's dark edges are straight and would pull to 0, and specks are noise.
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
  let n = 0;
  let k = 0;
  for (let i = 0; i < map.mask.length; i++) {
    if (!map.mask[i] || k++ % step) continue;
    xs[n] = i % map.width;
    ys[n++] = Math.floor(i / map.width);
  }
  // Rows of text across the page, or down it (a page of text turned a quarter): the sharper profile wins. A
  // clockwise turn tilts columns the other way, seen along them.
  const across = bestTilt(xs.subarray(0, n), ys.subarray(0, n), map.width, map.height, range);
  const down = bestTilt(ys.subarray(0, n), xs.subarray(0, n), map.height, map.width, range);
  const angle = across.gain >= down.gain ? across.angle : -down.angle;
  return Math.round(angle * 100) / 100 || 0;
}

/**
 * The tilt (degrees) whose profile of the points along y is sharpest, and how much sharper it is than the median
 * of the coarse steps (its gain: text rows give 1.5 to 2, no rows about 1).
 */
function bestTilt(xs: Float64Array, ys: Float64Array, width: number, height: number, range: number): { angle: number; gain: number } {
  // Centred across, so that the projection's offset stays small at any angle.
  const centred = xs.map((x) => x - width / 2);
  const reach = Math.ceil((width / 2) * Math.tan((range * Math.PI) / 180)) + 1;
  const bins = new Int32Array(height + 2 * reach + 2);
  const sharpness = (deg: number) => profileSharpness(centred, ys, Math.tan((deg * Math.PI) / 180), reach, bins);
  const coarse: { angle: number; s: number }[] = [];
  for (let a = -range; a <= range + 1e-9; a += COARSE) coarse.push({ angle: a, s: sharpness(a) });
  const top = coarse.reduce((a, b) => (b.s > a.s ? b : a));
  let best = top;
  for (let a = Math.max(-range, top.angle - COARSE); a <= Math.min(range, top.angle + COARSE) + 1e-9; a += FINE) {
    const s = sharpness(a);
    if (s > best.s) best = { angle: a, s };
  }
  const median = coarse.map((c) => c.s).sort((a, b) => a - b)[coarse.length >> 1];
  return { angle: best.angle, gain: best.s / Math.max(1, median) };
}

/** How sharp the profile of the points projected along slope `t` is: its summed squared steps from bin to bin. */
function profileSharpness(xs: Float64Array, ys: Float64Array, t: number, reach: number, bins: Int32Array): number {
  bins.fill(0);
  const offset = reach + 0.5;
  for (let i = 0; i < xs.length; i++) bins[(ys[i] - xs[i] * t + offset) | 0]++;
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
