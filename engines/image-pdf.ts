import { readFile, writeFile } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import { concatTransformationMatrix, drawObject, PDFDocument, PDFName, type PDFRef, popGraphicsState, pushGraphicsState } from '@cantoo/pdf-lib';
import sharp, { type Metadata } from 'sharp';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';

/**
 * Images to PDF, one page per image or frame (multi-page TIFF, animated GIF/WebP). JPEGs go in untouched
 * (DCTDecode pass-through, EXIF orientation applied by the page's transformation matrix, CMYK kept as
 * DeviceCMYK) unless they must be downsampled; everything else becomes raw pixels, Flate-compressed
 * (lossless) or re-encoded as JPEG (lossy, opaque images only), with alpha kept as a soft mask.
 * Page size follows the image's DPI; images without one are taken as 72 DPI (one pixel per point).
 */

export interface ImagePdfOptions {
  lossless: boolean;
  /** Downsample colour and grey images above this resolution; null keeps every pixel. Bilevel images are never resampled. */
  maxDpi: number | null;
  /** Quality of re-encoded JPEGs. */
  jpegQuality?: number;
  /** Pixels of one image or frame, checked on its header before anything is decoded; default DEFAULT_MAX_PIXELS. */
  maxPixels?: number;
}

/** The default of MAX_IMAGE_PIXELS. */
export const DEFAULT_MAX_PIXELS = 100_000_000;

/** The formats taken (BMP is decoded here): sharp also reads SVG (an XML parser and renderer), HEIF and VIPS. */
const FORMATS = ['jpeg', 'png', 'tiff', 'gif', 'webp'];

/** An image whose header declares more pixels than allowed: refused before it is decoded. */
export class ImageTooLargeError extends EngineError {
  constructor(
    readonly width: number,
    readonly height: number,
    readonly limit: number,
  ) {
    super('sharp', `image of ${width}x${height} pixels exceeds ${limit}`);
  }
}

export const DEFAULT_DPI = 72;
const MAX_PAGE_UNITS = 14400;

interface Placed {
  ref: PDFRef;
  /** Pixel size as stored (before orientation). */
  width: number;
  height: number;
  dpi: number;
  orientation: number;
}

/** The page size in points for an image: stored size, quarter-turned by orientations 5-8, scaled by DPI. */
export function pageSizeFor(width: number, height: number, dpi: number, orientation: number): [number, number] {
  const turned = orientation >= 5 && orientation <= 8;
  const [w, h] = turned ? [height, width] : [width, height];
  let pw = (w * 72) / dpi;
  let ph = (h * 72) / dpi;
  const over = Math.max(pw, ph) / MAX_PAGE_UNITS;
  if (over > 1) {
    pw /= over;
    ph /= over;
  }
  return [pw, ph];
}

/** Maps the unit square to the page so the stored image appears as EXIF orientation `o` says it should. */
export function orientationMatrix(o: number, pw: number, ph: number): [number, number, number, number, number, number] {
  switch (o) {
    case 2:
      return [-pw, 0, 0, ph, pw, 0]; // mirrored horizontally
    case 3:
      return [-pw, 0, 0, -ph, pw, ph]; // 180
    case 4:
      return [pw, 0, 0, -ph, 0, ph]; // mirrored vertically
    case 5:
      return [0, -ph, -pw, 0, pw, ph]; // transposed
    case 6:
      return [0, -ph, pw, 0, 0, ph]; // 90 clockwise
    case 7:
      return [0, ph, pw, 0, 0, 0]; // transversed
    case 8:
      return [0, ph, -pw, 0, pw, 0]; // 90 counter-clockwise
    default:
      return [pw, 0, 0, ph, 0, 0];
  }
}

export async function imagesToPdf(inputs: string[], output: string, opts: ImagePdfOptions, ctx: EngineContext): Promise<number> {
  const doc = await PDFDocument.create();
  let pages = 0;
  for (const file of inputs) {
    ctx.signal?.throwIfAborted();
    let meta: Metadata;
    let path: Source = file;
    const maxPixels = opts.maxPixels ?? DEFAULT_MAX_PIXELS;
    try {
      // libvips (sharp's build) has no BMP loader: uncompressed BMPs are decoded here, after their header's size is checked.
      const head = await readFile(file);
      if (head.subarray(0, 2).toString('latin1') === 'BM') path = decodeBmp(checkBmpPixels(head, maxPixels));
      // The header only, so without sharp's pixel limit: the size is checked below against ours.
      meta = await (typeof path === 'string' ? sharp(path, { limitInputPixels: false }) : src(path)).metadata();
      if (typeof path !== 'string') meta = { ...meta, density: path.density };
      else if (!FORMATS.includes(meta.format ?? '')) throw new Error(`${meta.format} is not an accepted image format`);
    } catch (err) {
      if (err instanceof ImageTooLargeError) throw err;
      throw new EngineError('sharp', `unreadable image: ${(err as Error).message}`);
    }
    const [w, h] = [meta.width ?? 0, meta.pageHeight ?? meta.height ?? 0];
    if (w * h > maxPixels) throw new ImageTooLargeError(w, h, maxPixels);
    const frames = meta.pages ?? 1;
    for (let i = 0; i < frames; i++) {
      // The header read well, the pixels may not (truncated or corrupt data): still the input's fault.
      const placed = await embedFrame(doc, path, i, frames, meta, opts).catch((err) => {
        throw err instanceof EngineError ? err : new EngineError('sharp', `unreadable image data: ${(err as Error).message}`);
      });
      const [pw, ph] = pageSizeFor(placed.width, placed.height, placed.dpi, placed.orientation);
      const page = doc.addPage([pw, ph]);
      const name = page.node.newXObject('Im', placed.ref);
      page.pushOperators(
        pushGraphicsState(),
        concatTransformationMatrix(...orientationMatrix(placed.orientation, pw, ph)),
        drawObject(name),
        popGraphicsState(),
      );
      pages++;
    }
  }
  doc.setProducer('Quire');
  doc.setCreator('Quire');
  await writeFile(output, await doc.save({ useObjectStreams: true }));
  return pages;
}

type Source = string | { raw: Buffer; width: number; height: number; channels: 3 | 4; density: number };

/** A BMP whose header declares more than `maxPixels` pixels is refused before decodeBmp allocates them. */
export function checkBmpPixels(b: Buffer, maxPixels: number): Buffer {
  if (b.length < 26) return b;
  const width = Math.abs(b.readInt32LE(18));
  const height = Math.abs(b.readInt32LE(22));
  if (width * height > maxPixels) throw new ImageTooLargeError(width, height, maxPixels);
  return b;
}

const src = (s: Source, page?: number) =>
  typeof s === 'string'
    ? sharp(s, { limitInputPixels: 1e9, ...(page !== undefined ? { page, pages: 1 } : {}) })
    : sharp(s.raw, { raw: { width: s.width, height: s.height, channels: s.channels } });

/** Uncompressed (BI_RGB / BI_BITFIELDS) 8-, 24- and 32-bit BMPs to raw RGB(A), top row first. */
export function decodeBmp(b: Buffer): Source {
  const fail = (why: string) => {
    throw new EngineError('sharp', `unsupported BMP: ${why}`);
  };
  if (b.length < 54) fail('truncated');
  const dataOffset = b.readUInt32LE(10);
  const headerSize = b.readUInt32LE(14);
  const width = b.readInt32LE(18);
  const rawHeight = b.readInt32LE(22);
  const bpp = b.readUInt16LE(28);
  const compression = b.readUInt32LE(30);
  const ppm = b.readInt32LE(38);
  const height = Math.abs(rawHeight);
  if (width <= 0 || height === 0 || width * height > 2e8) fail('bad size');
  if (![0, 3].includes(compression) || ![8, 24, 32].includes(bpp)) fail(`${bpp}-bit, compression ${compression}`);
  const stride = Math.ceil((width * bpp) / 32) * 4;
  if (dataOffset + stride * height > b.length) fail('truncated');
  const channels = bpp === 32 ? 4 : 3;
  const out = Buffer.alloc(width * height * channels);
  const palette = 14 + headerSize;
  for (let y = 0; y < height; y++) {
    const row = dataOffset + (rawHeight > 0 ? height - 1 - y : y) * stride;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * channels;
      if (bpp === 8) {
        const p = palette + b[row + x] * 4;
        out[o] = b[p + 2];
        out[o + 1] = b[p + 1];
        out[o + 2] = b[p];
      } else {
        const i = row + (x * bpp) / 8;
        out[o] = b[i + 2];
        out[o + 1] = b[i + 1];
        out[o + 2] = b[i];
        if (channels === 4) out[o + 3] = b[i + 3];
      }
    }
  }
  const density = ppm > 0 ? Math.round(ppm * 0.0254) : DEFAULT_DPI;
  return { raw: out, width, height, channels, density };
}

async function embedFrame(doc: PDFDocument, path: Source, index: number, frames: number, meta: Metadata, opts: ImagePdfOptions): Promise<Placed> {
  const dpi = meta.density && meta.density > 1 ? meta.density : DEFAULT_DPI;
  const orientation = meta.orientation ?? 1;
  const bilevel = meta.bitsPerSample === 1 && meta.channels === 1;
  const scale = !bilevel && opts.maxDpi !== null && dpi > opts.maxDpi ? opts.maxDpi / dpi : 1;

  // JPEG pass-through: the original bytes, no generation loss.
  if (typeof path === 'string' && meta.format === 'jpeg' && frames === 1 && scale === 1) {
    const bytes = await readFile(path);
    // Nothing decodes it here, so a cut file would go into the PDF as it is.
    if (!jpegComplete(bytes)) throw new EngineError('sharp', 'truncated JPEG: no end-of-image marker after its scan');
    const img = await doc.embedJpg(bytes);
    return { ref: img.ref, width: meta.width!, height: meta.height!, dpi, orientation };
  }

  // Everything else is decoded; orientation is applied to the pixels, so the page draws them upright.
  const frame = frames > 1 ? await src(path, index).metadata() : meta;
  // Frames of a multi-page TIFF have sizes of their own: each is checked before it is decoded.
  const maxPixels = opts.maxPixels ?? DEFAULT_MAX_PIXELS;
  if ((frame.width ?? 0) * (frame.height ?? 0) > maxPixels) throw new ImageTooLargeError(frame.width!, frame.height!, maxPixels);
  let pipeline = src(path, frames > 1 ? index : undefined).rotate();
  const turned = orientation >= 5 && orientation <= 8;
  const w = turned ? frame.height! : frame.width!;
  const h = turned ? frame.width! : frame.height!;
  if (scale < 1) pipeline = pipeline.resize(Math.max(1, Math.round(w * scale)), Math.max(1, Math.round(h * scale)), { fit: 'fill' });
  const outDpi = dpi * scale;
  if (meta.space === 'cmyk') pipeline = pipeline.toColourspace('srgb');
  if (bilevel) pipeline = pipeline.toColourspace('b-w');

  if (!opts.lossless && !meta.hasAlpha && !bilevel) {
    const { data: jpeg, info } = await pipeline.jpeg({ quality: opts.jpegQuality ?? 85, chromaSubsampling: '4:4:4' }).toBuffer({ resolveWithObject: true });
    const img = await doc.embedJpg(jpeg);
    return { ref: img.ref, width: info.width, height: info.height, dpi: outDpi, orientation: 1 };
  }

  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  const ch = info.channels;
  const alpha = ch === 2 || ch === 4;
  const colour = ch >= 3 ? 3 : 1;
  const px = info.width * info.height;
  let pixels: Buffer = Buffer.alloc(px * colour);
  const mask = alpha ? Buffer.alloc(px) : null;
  for (let p = 0; p < px; p++) {
    for (let c = 0; c < colour; c++) pixels[p * colour + c] = data[p * ch + c];
    if (mask) mask[p] = data[p * ch + ch - 1];
  }
  let bpc = 8;
  if (bilevel && !alpha && colour === 1) {
    pixels = packBits(pixels, info.width, info.height);
    bpc = 1;
  }
  const ctx = doc.context;
  let smask: PDFRef | undefined;
  if (mask?.some((a) => a !== 255)) {
    smask = ctx.register(
      ctx.stream(deflateSync(mask), {
        Type: 'XObject',
        Subtype: 'Image',
        Width: info.width,
        Height: info.height,
        ColorSpace: 'DeviceGray',
        BitsPerComponent: 8,
        Filter: 'FlateDecode',
      }),
    );
  }
  const dict: Record<string, unknown> = {
    Type: 'XObject',
    Subtype: 'Image',
    Width: info.width,
    Height: info.height,
    ColorSpace: colour === 3 ? 'DeviceRGB' : 'DeviceGray',
    BitsPerComponent: bpc,
    Filter: 'FlateDecode',
  };
  const stream = ctx.stream(deflateSync(pixels), dict as never);
  if (smask) stream.dict.set(PDFName.of('SMask'), smask);
  return { ref: ctx.register(stream), width: info.width, height: info.height, dpi: outDpi, orientation: 1 };
}

/** Whether a JPEG's end-of-image marker follows its first scan (segments before it are skipped by their lengths). */
export function jpegComplete(b: Buffer): boolean {
  let i = 2;
  while (i + 4 <= b.length && b[i] === 0xff) {
    const marker = b[i + 1];
    if (marker === 0xff) i++;
    else if (marker === 0xda) return b.lastIndexOf(Buffer.from([0xff, 0xd9])) > i;
    else i += 2 + b.readUInt16BE(i + 2);
  }
  return false;
}

/** 8-bit grey (0 or 255) to 1 bit per pixel, rows padded to whole bytes as PDF requires. */
function packBits(grey: Buffer, width: number, height: number): Buffer {
  const row = Math.ceil(width / 8);
  const out = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (grey[y * width + x] >= 128) out[y * row + (x >> 3)] |= 0x80 >> (x & 7);
    }
  }
  return out;
}
