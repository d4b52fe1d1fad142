import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { run, stream } from './run.js';

/** One page as MuPDF sees it: the visible (crop) box in PDF units after /Rotate, and the rotation. */
export interface PageBox {
  page: number;
  width: number;
  height: number;
  rotate: number;
}

/**
 * `mutool pages` over pages 1 to `pageCount` (the real page tree's count, see qpdf's pageCount): every page's
 * boxes and rotation. Without the range MuPDF walks to the root's /Count as claimed, 2^31 pages in a hostile
 * file. Fails (EngineError) on a document MuPDF cannot open.
 */
export async function readPageBoxes(input: string, pageCount: number, ctx: EngineContext): Promise<PageBox[]> {
  const r = await run('mutool', ['pages', '--', input, `1-${pageCount}`], ctx);
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

/** `mutool clean`: the document written again by MuPDF's parser, whose repair rebuilds what qpdf's cannot (a second repairer). */
export async function cleanPdf(input: string, output: string, ctx: EngineContext): Promise<void> {
  await run('mutool', ['clean', '--', input, output], ctx);
}

/**
 * Runs a MuPDF JavaScript program (`mutool run`), written into the job dir under `name`: the PDF is parsed and
 * written in MuPDF's process, never in ours. With `summary`, the last line the program printed is its JSON result.
 */
export async function runScript(name: string, script: string, args: string[], ctx: EngineContext, summary: true): Promise<Record<string, unknown>>;
export async function runScript(name: string, script: string, args: string[], ctx: EngineContext, summary?: false): Promise<undefined>;
export async function runScript(
  name: string,
  script: string,
  args: string[],
  ctx: EngineContext,
  summary = false,
): Promise<Record<string, unknown> | undefined> {
  const file = join(ctx.cwd, name);
  await writeFile(file, script);
  const r = await run('mutool', ['run', file, ...args], ctx);
  if (!summary) return;
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
  } catch {
    throw new EngineError('mutool', `${name} printed no summary`, { stderr: r.stderr });
  }
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
    // Not -q: the page lines on stderr time each page (pageBudget). mutool is quiet by itself when it writes to
    // stdout; `-s t` (timings) keeps them. Without them a page budget timed the whole run as "opening the
    // document": every 5 s of drawing one page was cut and drawn by Poppler, which opens the whole file for it
    // (a 2,010-page file: 2-3 s a page), so drawing grew with the square of the pages.
    'draw',
    '-s',
    't',
    '-F',
    'pam',
    '-o',
    output,
    '-r',
    String(opts.resolution),
    '-c',
    opts.colorspace,
    '-A',
    `${opts.graphicsAa}/${opts.textAa}`,
    '-B',
    String(BAND_ROWS),
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
 * Renders pages with one `mutool draw` writing PAM to stdout and yields them as they arrive. Pixels never touch
 * the disk (writing a 25 MB PAM per page costs more than drawing it), and stdout is read with backpressure: MuPDF
 * blocks on the pipe while the consumer is busy. With `reuse`, a page's `data` is valid only until the consumer
 * asks for the next page, whose pixels take its memory: one page buffer per process, whatever the document's length.
 */
export async function* drawPages(input: string, opts: DrawOptions, ctx: EngineContext, reuse = false): AsyncGenerator<RawPage> {
  if (!opts.pages.length) return;
  // The consumer may stop early (a failed encode): that aborts the process rather than leaving it blocked.
  const stop = new AbortController();
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;
  const proc = stream('mutool', drawArgs(input, '-', opts), { ...ctx, signal, pageBudget: pageBudget(input, ctx) });
  proc.done.catch(() => {}); // awaited below; an early exit must not leave it unhandled
  const parser = new PamParser();
  let index = 0;
  let finished = false;
  try {
    for await (const chunk of proc.stdout) {
      for (const img of parser.push(chunk)) {
        if (index >= opts.pages.length) throw new EngineError('mutool', 'drew more pages than asked');
        yield { index, page: opts.pages[index], ...img };
        // The consumer asked for the next page, so it is done with this one: its memory holds the next.
        if (reuse) parser.recycle(img.data);
        index++;
      }
    }
    await proc.done;
    finished = true;
  } finally {
    if (!finished) stop.abort();
    await proc.done.catch(() => {});
  }
  if (index !== opts.pages.length) throw new EngineError('mutool', `drew ${index} of ${opts.pages.length} pages`);
}

/**
 * `mutool draw` without -q writes "page <input> <n>" to stderr as it begins each page (the timing and newline follow
 * when the page is done): with ctx.pageMs, a page that takes longer is cut (run.ts pageBudget).
 */
export function pageBudget(input: string, ctx: EngineContext): { ms: number; starts: RegExp } | undefined {
  if (!ctx.pageMs) return undefined;
  return { ms: ctx.pageMs, starts: new RegExp(`page ${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (\\d+)`, 'g') };
}

/** Incremental reader of concatenated PAM (P7) images. */
export class PamParser {
  private head: Buffer = Buffer.alloc(0);
  private spare: Buffer | null = null;
  private own = new WeakSet<Buffer>();

  /** Hands back an image this parser yielded; its memory may hold a later one. */
  recycle(data: Buffer): void {
    if (this.own.has(data)) this.spare = data;
  }

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
      if (!img.data) {
        const spare = this.spare && this.spare.buffer.byteLength >= img.bytes ? this.spare : null;
        this.spare = null;
        // allocUnsafeSlow: never a slice of Node's shared pool, so the whole ArrayBuffer is ours to reuse.
        img.data = spare ? Buffer.from(spare.buffer, 0, img.bytes) : Buffer.allocUnsafeSlow(img.bytes);
        this.own.add(img.data);
      }
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
