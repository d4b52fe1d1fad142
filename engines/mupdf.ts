import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { run } from './run.js';

/** One page as MuPDF sees it: the visible (crop) box in PDF units after /Rotate, and the rotation. */
export interface PageBox {
  page: number;
  width: number;
  height: number;
  rotate: number;
}

/** `mutool pages`: every page's boxes and rotation. Fails (EngineError) on a document MuPDF cannot open. */
export async function readPageBoxes(input: string, ctx: EngineContext): Promise<PageBox[]> {
  const r = await run('mutool', ['pages', input], ctx);
  return parsePageBoxes(r.stdout);
}

export function parsePageBoxes(xml: string): PageBox[] {
  const pages: PageBox[] = [];
  for (const m of xml.matchAll(/<page pagenum="(\d+)">([\s\S]*?)<\/page>/g)) {
    const rect = (tag: string) => {
      const r = new RegExp(`<${tag} l="([-\\d.]+)" b="([-\\d.]+)" r="([-\\d.]+)" t="([-\\d.]+)"`).exec(m[2]);
      return r ? r.slice(1).map(Number) : null;
    };
    const media = rect('MediaBox') ?? [0, 0, 612, 792];
    const crop = rect('CropBox') ?? media;
    // MuPDF renders the crop box clipped to the media box.
    const w = Math.max(0, Math.min(crop[2], media[2]) - Math.max(crop[0], media[0]));
    const h = Math.max(0, Math.min(crop[3], media[3]) - Math.max(crop[1], media[1]));
    const rotate = ((Number(/<Rotate v="(-?\d+)"/.exec(m[2])?.[1] ?? 0) % 360) + 360) % 360;
    const turned = rotate === 90 || rotate === 270;
    pages.push({ page: Number(m[1]), width: turned ? h : w, height: turned ? w : h, rotate });
  }
  return pages;
}

export type DrawColorspace = 'gray' | 'rgb' | 'rgba' | 'cmyk';

export interface DrawOptions {
  /** 1-based page numbers, rendered in this order (repeats allowed). */
  pages: number[];
  resolution: number;
  colorspace: DrawColorspace;
  /** Anti-aliasing of paths and image edges, and of glyphs: 0 (off) to 8 bits. */
  graphicsAa: number;
  textAa: number;
}

/** Band height in rows: MuPDF then holds one band, not the whole page, so its memory stays flat at any size. */
const BAND_ROWS = 256;

/** Arguments of `mutool draw` writing a stream of PAM images (one per page) to `output`. */
export function drawArgs(input: string, output: string, opts: DrawOptions): string[] {
  return [
    'draw', '-q',
    '-F', 'pam',
    '-o', output,
    '-r', String(opts.resolution),
    '-c', opts.colorspace,
    '-A', `${opts.graphicsAa}/${opts.textAa}`,
    '-B', String(BAND_ROWS),
    input,
    opts.pages.join(','),
  ];
}

/** A rendered page: raw interleaved 8-bit samples, `channels` per pixel, rows top to bottom. */
export interface RawPage {
  /** Position in DrawOptions.pages (0-based). */
  index: number;
  page: number;
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

/**
 * Renders pages with `mutool draw` to stdout and yields them one by one. `run()` hands over stdout only when the
 * process ends, so pages go in batches of `batch` per process (one when pages are large, to bound memory), and
 * the next batch is drawn while the consumer encodes the current one. Pixels never touch the disk: writing a
 * 25 MB PAM per page costs more than drawing it.
 */
export async function* drawPages(input: string, opts: DrawOptions & { batch?: number }, ctx: EngineContext): AsyncGenerator<RawPage> {
  const size = Math.max(1, opts.batch ?? 1);
  const batches: number[][] = [];
  for (let i = 0; i < opts.pages.length; i += size) batches.push(opts.pages.slice(i, i + size));
  const draw = (pages: number[]) => run('mutool', drawArgs(input, '-', { ...opts, pages }), { ...ctx, binary: true }).then((r) => r.stdoutBuffer);
  let next: Promise<Buffer> | null = batches.length ? draw(batches[0]) : null;
  let index = 0;
  try {
    for (let b = 0; b < batches.length; b++) {
      const out = await next!;
      next = b + 1 < batches.length ? draw(batches[b + 1]) : null;
      next?.catch(() => {}); // awaited on the next turn; a consumer that stops early must not leave it unhandled
      const images = [...new PamParser().push(out)];
      if (images.length !== batches[b].length) throw new EngineError('mutool', `drew ${images.length} of ${batches[b].length} pages`);
      for (const img of images) {
        yield { index, page: opts.pages[index], ...img };
        index++;
      }
    }
  } finally {
    // Let a prefetched batch finish (or fail) before the job dir goes away.
    await next?.catch(() => {});
  }
}

/** Incremental reader of concatenated PAM (P7) images. */
export class PamParser {
  private head: Buffer = Buffer.alloc(0);
  private img: { width: number; height: number; channels: number; bytes: number; data: Buffer | null; filled: number } | null = null;

  *push(chunk: Buffer): Generator<{ width: number; height: number; channels: number; data: Buffer }> {
    let buf = chunk;
    while (buf.length) {
      if (!this.img) {
        this.head = this.head.length ? Buffer.concat([this.head, buf]) : buf;
        const end = this.head.indexOf('ENDHDR\n');
        if (end < 0) {
          if (this.head.length > 4096) throw new EngineError('mutool', 'bad PAM header');
          return;
        }
        const text = this.head.subarray(0, end).toString('latin1');
        const field = (k: string) => Number(new RegExp(`^${k} (\\d+)$`, 'm').exec(text)?.[1]);
        const width = field('WIDTH');
        const height = field('HEIGHT');
        const channels = field('DEPTH');
        if (!text.startsWith('P7') || !(width > 0 && height > 0 && channels > 0) || field('MAXVAL') !== 255) {
          throw new EngineError('mutool', 'bad PAM header');
        }
        buf = this.head.subarray(end + 7);
        this.head = Buffer.alloc(0);
        this.img = { width, height, channels, bytes: width * height * channels, data: null, filled: 0 };
      }
      const img = this.img;
      if (!img.data && buf.length >= img.bytes) {
        // The whole image is in this chunk: a view, not a copy.
        this.img = null;
        yield { width: img.width, height: img.height, channels: img.channels, data: buf.subarray(0, img.bytes) };
        buf = buf.subarray(img.bytes);
        continue;
      }
      img.data ??= Buffer.allocUnsafe(img.bytes);
      const n = Math.min(buf.length, img.bytes - img.filled);
      buf.copy(img.data, img.filled, 0, n);
      img.filled += n;
      buf = buf.subarray(n);
      if (img.filled === img.bytes) {
        this.img = null;
        yield { width: img.width, height: img.height, channels: img.channels, data: img.data };
      }
    }
  }
}
