import { type EngineContext, pageTimeout } from './context.js';
import { expectOutput, run } from './run.js';

/** Arguments of Ghostscript's pdfimage24 device: each page becomes one RGB Flate image in a PDF of the same page size. */
export function rasterizePdfArgs(input: string, output: string, opts: { resolution: number }): string[] {
  return [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-q',
    '-sDEVICE=pdfimage24',
    `-r${opts.resolution}`,
    // Anti-aliased text and line art: at 150 dpi aliased glyphs are hard to read.
    '-dTextAlphaBits=4',
    '-dGraphicsAlphaBits=4',
    `-sOutputFile=${output}`,
    input,
  ];
}

/** One process streams the document page by page, so memory stays at one page whatever the length. */
export async function rasterizePdf(input: string, output: string, opts: { resolution: number }, ctx: EngineContext): Promise<void> {
  await run('gs', rasterizePdfArgs(input, output, opts), ctx);
  // Ghostscript exits 0 on a file it could not read, writing nothing.
  await expectOutput('gs', output);
}

/** Ghostscript's own raster devices, used where they beat drawing with MuPDF and encoding in Node (JPEG, BMP). */
export type RasterDevice = 'jpeg' | 'jpeggray' | 'bmp16m' | 'bmpgray' | 'pngalpha';

export interface DeviceOptions {
  device: RasterDevice;
  /** 1-based, strictly increasing (Ghostscript refuses any other PageList). */
  pages: number[];
  resolution: number;
  /** Anti-aliasing of glyphs and of line art, and interpolation of every image, each on its own. */
  smoothText: boolean;
  smoothLines: boolean;
  smoothImages: boolean;
  /** 1-100, JPEG devices only. */
  jpegQuality?: number;
  /** What Ghostscript leaves out of the drawing (`-dFILTERTEXT`, `-dFILTERIMAGE`). */
  leaveOut?: ('TEXT' | 'IMAGE')[];
}

/** `pattern` holds %d, numbered from 1 in the order of `pages`. Page progress goes to stderr as `Page N`. */
export function deviceArgs(input: string, pattern: string, opts: DeviceOptions): string[] {
  return [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-sstdout=%stderr',
    `-sDEVICE=${opts.device}`,
    `-r${opts.resolution}`,
    // What viewers (and MuPDF) show: the crop box, turned by /Rotate.
    '-dUseCropBox',
    `-dTextAlphaBits=${opts.smoothText ? 4 : 1}`,
    `-dGraphicsAlphaBits=${opts.smoothLines ? 4 : 1}`,
    `-dInterpolateControl=${opts.smoothImages ? -1 : 0}`,
    ...(opts.jpegQuality === undefined ? [] : [`-dJPEGQ=${opts.jpegQuality}`]),
    ...(opts.leaveOut ?? []).map((kind) => `-dFILTER${kind}`),
    pageListArg(opts.pages),
    `-sOutputFile=${pattern}`,
    input,
  ];
}

/**
 * Ghostscript's -sPageList for `pages` (increasing), consecutive pages as ranges ("1-500,502"): it refuses an
 * argument longer than 2,048 characters ("Command too long"), which a list of single pages passes at ~550 pages.
 */
export function pageListArg(pages: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length; i++) {
    const first = pages[i];
    while (pages[i + 1] === pages[i] + 1) i++;
    parts.push(pages[i] > first ? `${first}-${pages[i]}` : String(first));
  }
  return `-sPageList=${parts.join(',')}`;
}

/** With ctx.pageMs, a page past it is cut (run.ts pageBudget): deviceArgs has Ghostscript print "Page N" as it begins each. */
export const devicePageBudget = (ctx: EngineContext) => (ctx.pageMs ? { ms: ctx.pageMs, starts: /^Page (\d+)$/gm } : undefined);

/** Renders the pages to files; returns their paths in the order of `pages`. */
export async function renderWithDevice(input: string, pattern: string, opts: DeviceOptions, ctx: EngineContext & { onPage?: () => void }): Promise<string[]> {
  const onStderrLine = ctx.onPage ? (line: string) => /^Page \d+$/.test(line) && ctx.onPage!() : undefined;
  await run('gs', deviceArgs(input, pattern, opts), { ...ctx, onStderrLine, pageBudget: devicePageBudget(ctx) });
  const files = opts.pages.map((_, i) => pattern.replace('%d', String(i + 1)));
  // Ghostscript can exit 0 having written nothing (an unreadable file).
  for (const f of files) await expectOutput('gs', f);
  return files;
}

/**
 * One page drawn by Ghostscript to a PNG file: the last engine for pixels, when MuPDF and Poppler both fail on
 * the page. The crop box, turned by /Rotate, as the others draw it.
 */
export async function ghostscriptDrawPage(
  input: string,
  page: number,
  output: string,
  opts: { resolution: number; colour: 'rgb' | 'gray' | 'rgba' },
  ctx: EngineContext,
): Promise<void> {
  const device = { rgb: 'png16m', gray: 'pnggray', rgba: 'pngalpha' }[opts.colour];
  await run(
    'gs',
    [
      '-dSAFER',
      '-dBATCH',
      '-dNOPAUSE',
      '-q',
      `-sDEVICE=${device}`,
      `-r${opts.resolution}`,
      '-dUseCropBox',
      `-dFirstPage=${page}`,
      `-dLastPage=${page}`,
      `-sOutputFile=${output}`,
      input,
    ],
    { ...ctx, timeoutMs: pageTimeout(ctx) },
  );
  await expectOutput('gs', output);
}
