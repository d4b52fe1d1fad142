import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';

/**
 * Image encoders for rendered pages. sharp (libvips, in-process, on libuv's thread pool) does PNG, JPEG and GIF;
 * BMP and TIFF (simple containers; libvips cannot write BMP or 8-bit CIELAB) are written here.
 */

export type ImageFormat = 'png' | 'jpg' | 'gif' | 'tif' | 'bmp';
export type ColorModel = 'rgb' | 'rgba' | 'gray' | 'cmyk' | 'lab';

/** Raw interleaved 8-bit samples, rows top to bottom: 1 channel gray, 3 RGB, 4 RGBA or CMYK (see `colorModel`). */
export interface RawImage {
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

export interface EncodeOptions {
  format: ImageFormat;
  /** What the output holds. `lab` takes RGB samples; `cmyk` takes CMYK samples; the others take their own. */
  colorModel: ColorModel;
  dpi: number;
  /** 1-100, JPEG only. */
  jpegQuality?: number;
}

const deflateAsync = promisify(deflate);

/** Writes one page image in the asked format and colour model, with its resolution recorded where the format can. */
export async function encodeImage(image: RawImage, output: string, opts: EncodeOptions): Promise<void> {
  const { format, colorModel, dpi } = opts;
  if (format === 'bmp') return writeFile(output, bmpBytes(image, dpi));
  if (format === 'tif') {
    // Our writer, not libvips: its strips deflate in parallel at a lower level (a 300 dpi page: 35 ms, not 105).
    const lab = colorModel === 'lab';
    const pixels = lab ? { ...image, data: rgbToLab8(image.data), channels: 3 } : image;
    return writeFile(output, await tiffBytes(pixels, { photometric: TIFF_PHOTOMETRIC[colorModel], dpi, compress: true }));
  }
  let img: Sharp;
  if (colorModel === 'cmyk') {
    // sharp cannot be told that raw samples are CMYK, but reads an uncompressed TIFF's photometric; with a CMYK
    // pipeline the samples go through untouched (an ICC round trip through sRGB costs ~2 s a page).
    const wrapped = await tiffBytes(image, { photometric: PHOTOMETRIC.separated, dpi, compress: false });
    img = sharp(wrapped, { limitInputPixels: false }).pipelineColourspace('cmyk').toColourspace('cmyk');
  } else {
    img = sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels as 1 | 3 | 4 }, limitInputPixels: false });
    if (colorModel === 'gray') img = img.toColourspace('b-w');
  }
  // withDensity, not withMetadata: the latter converts the output to sRGB (gray and CMYK would be lost).
  img = img.withDensity(dpi);
  switch (format) {
    case 'png':
      img = img.png({ compressionLevel: 6 });
      break;
    case 'jpg':
      // Huffman optimisation is a second pass: 3x the time for 6% smaller pages (measured at 300 dpi).
      img = img.jpeg({ quality: opts.jpegQuality ?? 75, chromaSubsampling: '4:2:0', optimiseCoding: false });
      break;
    case 'gif':
      // Effort 1 halves the time of the default for the same palette; no dithering keeps text crisp.
      img = img.gif({ effort: 1, dither: 0 });
      break;
  }
  await img.toFile(output);
}

/** BMP: 24-bit BGR, or 8-bit with a grey palette; rows bottom-up, each padded to 4 bytes. */
export function bmpBytes(image: RawImage, dpi: number): Buffer {
  const { width, height, channels, data } = image;
  if (channels !== 1 && channels !== 3) throw new Error(`BMP takes 1 or 3 channels, not ${channels}`);
  const bpp = channels * 8;
  const stride = Math.ceil((width * channels) / 4) * 4;
  const palette = channels === 1 ? 256 * 4 : 0;
  const offset = 14 + 40 + palette;
  const size = offset + stride * height;
  const out = Buffer.alloc(size);
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(size, 2);
  out.writeUInt32LE(offset, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26);
  out.writeUInt16LE(bpp, 28);
  out.writeUInt32LE(0, 30); // BI_RGB
  out.writeUInt32LE(stride * height, 34);
  const ppm = Math.round(dpi / 0.0254);
  out.writeInt32LE(ppm, 38);
  out.writeInt32LE(ppm, 42);
  out.writeUInt32LE(channels === 1 ? 256 : 0, 46);
  if (channels === 1) {
    for (let i = 0; i < 256; i++) out.writeUInt32LE((i << 16) | (i << 8) | i, 54 + i * 4);
  }
  const rowBytes = width * channels;
  for (let y = 0; y < height; y++) {
    const src = y * rowBytes;
    const dst = offset + (height - 1 - y) * stride;
    if (channels === 1) {
      data.copy(out, dst, src, src + rowBytes);
      continue;
    }
    for (let x = 0; x < rowBytes; x += 3) {
      out[dst + x] = data[src + x + 2];
      out[dst + x + 1] = data[src + x + 1];
      out[dst + x + 2] = data[src + x];
    }
  }
  return out;
}

export const PHOTOMETRIC = { minIsBlack: 1, rgb: 2, separated: 5, cielab: 8 } as const;
const TIFF_PHOTOMETRIC: Record<ColorModel, number> = {
  gray: PHOTOMETRIC.minIsBlack,
  rgb: PHOTOMETRIC.rgb,
  rgba: PHOTOMETRIC.rgb,
  cmyk: PHOTOMETRIC.separated,
  lab: PHOTOMETRIC.cielab,
};

/**
 * A baseline little-endian TIFF, one IFD, 8 bits per sample, chunky. With `compress`, Adobe Deflate strips of
 * about 1 MiB, compressed in parallel on libuv's pool. CIELAB gets a D50 white point (our Lab is D50-relative).
 */
export async function tiffBytes(image: RawImage, opts: { photometric: number; dpi: number; compress: boolean }): Promise<Buffer> {
  const { width, height, channels, data } = image;
  const rowBytes = width * channels;
  const rowsPerStrip = opts.compress ? Math.max(1, Math.min(height, Math.floor((1 << 20) / rowBytes))) : height;
  const strips: Buffer[] = [];
  for (let y = 0; y < height; y += rowsPerStrip) strips.push(data.subarray(y * rowBytes, Math.min(height, y + rowsPerStrip) * rowBytes));
  // Level 3: a text page at 300 dpi deflates in a third of level 6's time, 1.6x larger (still smaller than LZW).
  const bodies = opts.compress ? await Promise.all(strips.map((s) => deflateAsync(s, { level: 3 }))) : strips;

  type Entry = [tag: number, type: number, values: number[]];
  const SHORT = 3;
  const LONG = 4;
  const RATIONAL = 5;
  const entries: Entry[] = [
    [256, LONG, [width]],
    [257, LONG, [height]],
    [258, SHORT, Array(channels).fill(8)],
    [259, SHORT, [opts.compress ? 8 : 1]],
    [262, SHORT, [opts.photometric]],
    [273, LONG, bodies.map(() => 0)], // filled below
    [277, SHORT, [channels]],
    [278, LONG, [rowsPerStrip]],
    [279, LONG, bodies.map((b) => b.length)],
    [282, RATIONAL, [Math.round(opts.dpi * 100), 100]],
    [283, RATIONAL, [Math.round(opts.dpi * 100), 100]],
    [284, SHORT, [1]],
    [296, SHORT, [2]],
  ];
  if (opts.photometric === PHOTOMETRIC.separated) entries.push([332, SHORT, [1]]); // InkSet: CMYK
  if (channels === 4 && opts.photometric === PHOTOMETRIC.rgb) entries.push([338, SHORT, [2]]); // unassociated alpha
  if (opts.photometric === PHOTOMETRIC.cielab) entries.push([318, RATIONAL, [3457, 10000, 3585, 10000]]);
  entries.sort((a, b) => a[0] - b[0]);

  const size = (e: Entry) => e[2].length * (e[1] === SHORT ? 2 : 4);
  const ifdSize = 2 + entries.length * 12 + 4;
  let extra = 8 + ifdSize;
  const extraOffsets = entries.map((e) => {
    if (size(e) <= 4) return 0;
    const at = extra;
    extra += size(e) + (size(e) % 2);
    return at;
  });
  let dataAt = extra;
  const stripOffsets = entries.find((e) => e[0] === 273)![2];
  bodies.forEach((b, i) => {
    stripOffsets[i] = dataAt;
    dataAt += b.length;
  });

  const head = Buffer.alloc(extra);
  head.write('II', 0, 'latin1');
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(8, 4);
  head.writeUInt16LE(entries.length, 8);
  entries.forEach((e, i) => {
    const at = 10 + i * 12;
    head.writeUInt16LE(e[0], at);
    head.writeUInt16LE(e[1], at + 2);
    head.writeUInt32LE(e[1] === RATIONAL ? e[2].length / 2 : e[2].length, at + 4);
    let p = size(e) <= 4 ? at + 8 : extraOffsets[i];
    if (size(e) > 4) head.writeUInt32LE(p, at + 8);
    for (const v of e[2]) {
      if (e[1] === SHORT) {
        head.writeUInt16LE(v, p);
        p += 2;
      } else {
        head.writeUInt32LE(v, p);
        p += 4;
      }
    }
  });
  head.writeUInt32LE(0, 10 + entries.length * 12);
  return Buffer.concat([head, ...bodies]);
}

/** sRGB (D65) to 8-bit CIELAB (D50, Bradford-adapted, as ICC): L* 0-100 as 0-255, a* and b* as signed bytes. */
export function rgbToLab8(rgb: Buffer): Buffer {
  const lin = new Float64Array(256);
  for (let i = 0; i < 256; i++) {
    const c = i / 255;
    lin[i] = c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  const out = Buffer.allocUnsafe(rgb.length);
  // Documents have few distinct colours: a small direct-mapped cache skips most cube roots.
  const CACHE = 1 << 16;
  const keys = new Int32Array(CACHE).fill(-1);
  const vals = new Int32Array(CACHE);
  for (let i = 0; i < rgb.length; i += 3) {
    const key = (rgb[i] << 16) | (rgb[i + 1] << 8) | rgb[i + 2];
    const slot = (key ^ (key >>> 11)) & (CACHE - 1);
    let v: number;
    if (keys[slot] === key) v = vals[slot];
    else {
      const r = lin[rgb[i]];
      const g = lin[rgb[i + 1]];
      const b = lin[rgb[i + 2]];
      const fx = f((0.4360747 * r + 0.3850649 * g + 0.1430804 * b) / 0.96422);
      const fy = f(0.2225045 * r + 0.7168786 * g + 0.0606169 * b);
      const fz = f((0.0139322 * r + 0.0971045 * g + 0.7141733 * b) / 0.82521);
      const L = Math.min(255, Math.max(0, Math.round((116 * fy - 16) * 2.55)));
      const A = Math.min(127, Math.max(-128, Math.round(500 * (fx - fy)))) & 0xff;
      const B = Math.min(127, Math.max(-128, Math.round(200 * (fy - fz)))) & 0xff;
      v = (L << 16) | (A << 8) | B;
      keys[slot] = key;
      vals[slot] = v;
    }
    out[i] = v >>> 16;
    out[i + 1] = (v >>> 8) & 0xff;
    out[i + 2] = v & 0xff;
  }
  return out;
}

/**
 * An encoded page image (PNG from Poppler or Ghostscript, the fallback engines for pixels) as the raw samples
 * MuPDF would have drawn in `colour`, for the same encoders.
 */
export async function decodeToRaw(image: Buffer | string, colour: 'rgb' | 'gray' | 'rgba' | 'cmyk'): Promise<RawImage> {
  let img = sharp(image, { limitInputPixels: false });
  img =
    colour === 'gray'
      ? img.toColourspace('b-w')
      : colour === 'cmyk'
        ? img.removeAlpha().toColourspace('cmyk')
        : colour === 'rgba'
          ? img.ensureAlpha().toColourspace('srgb')
          : img.removeAlpha().toColourspace('srgb');
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data };
}
