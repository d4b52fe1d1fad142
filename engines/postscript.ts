import type { EngineContext } from './context.js';
import { expectOutput, run } from './run.js';

/**
 * PostScript and EPS to PDF with Ghostscript's pdfwrite. -dSAFER is what stops a hostile program from
 * reading, writing or deleting files (it raises /invalidfileaccess and Ghostscript exits non-zero).
 * Kept apart from a general ghostscript module only because that one is being written concurrently.
 * Also home of the pdfwrite pass that applies `compression` and `downsample` to Chromium's output.
 */
export interface PsOptions {
  /** EPS: the page is the %%BoundingBox, not the default paper. */
  eps: boolean;
  lossless: boolean;
  /** Image resolution cap in DPI, or null to keep images as they are. */
  maxDpi: number | null;
}

/** pdfwrite's image settings: Flate instead of JPEG when lossless, and downsampling above `maxDpi`. */
function imageArgs(o: Pick<PsOptions, 'lossless' | 'maxDpi'>): string[] {
  const args: string[] = [];
  if (o.lossless) {
    // Without PassThroughJPEGImages=false, JPEG data that needs no downsampling would be copied as it is.
    args.push('-dPassThroughJPEGImages=false');
    for (const k of ['Color', 'Gray']) args.push(`-dAutoFilter${k}Images=false`, `-d${k}ImageFilter=/FlateEncode`);
  }
  for (const k of ['Color', 'Gray', 'Mono']) {
    if (o.maxDpi === null) args.push(`-dDownsample${k}Images=false`);
    else args.push(`-dDownsample${k}Images=true`, `-d${k}ImageResolution=${o.maxDpi}`, `-d${k}ImageDownsampleThreshold=1.0`);
  }
  if (o.maxDpi !== null) args.push('-dColorImageDownsampleType=/Bicubic', '-dGrayImageDownsampleType=/Bicubic');
  return args;
}

const PDFWRITE = ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dEmbedAllFonts=true', '-dSubsetFonts=true'];

export function psToPdfArgs(input: string, output: string, o: PsOptions): string[] {
  const args = [...PDFWRITE];
  if (o.eps) args.push('-dEPSCrop');
  args.push(...imageArgs(o), `-sOutputFile=${output}`, '--', input);
  return args;
}

export async function psToPdf(input: string, output: string, o: PsOptions, ctx: EngineContext): Promise<void> {
  await run('gs', psToPdfArgs(input, output, o), { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  await expectOutput('gs', output);
}

/** One drawn image: encoding and the resolution it is drawn at (`pdfimages -list`). */
export interface DrawnImage {
  encoding: string;
  ppi: number;
}

export function parseDrawnImages(list: string): DrawnImage[] {
  return list
    .split('\n')
    .slice(2)
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length >= 14 && /^\d+$/.test(c[0]) && (c[2] === 'image' || c[2] === 'smask'))
    .map((c) => ({ encoding: c[8], ppi: Math.max(Number(c[12]) || 0, Number(c[13]) || 0) }));
}

/** Whether a PDF's images break the compression and resolution asked for; 5% slack for pdfimages' rounding. */
export function imagesNeedRewrite(images: DrawnImage[], o: Pick<PsOptions, 'lossless' | 'maxDpi'>): boolean {
  return images.some((i) => (o.lossless && (i.encoding === 'jpeg' || i.encoding === 'jpx')) || (o.maxDpi !== null && i.ppi > o.maxDpi * 1.05));
}

/**
 * Applies `compression` and `downsample` to a finished PDF (Chromium's output keeps images as the page had
 * them): a Ghostscript pdfwrite pass, only when some image needs it, since the pass costs time and drops
 * the structure tree. Returns whether it rewrote `input` into `output`.
 */
export async function enforceImagePolicy(input: string, output: string, o: Pick<PsOptions, 'lossless' | 'maxDpi'>, ctx: EngineContext): Promise<boolean> {
  const list = await run('pdfimages', ['-list', input], { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  if (!imagesNeedRewrite(parseDrawnImages(list.stdout), o)) return false;
  await run('gs', [...PDFWRITE, ...imageArgs(o), `-sOutputFile=${output}`, '--', input], { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  await expectOutput('gs', output);
  return true;
}
