import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { expectOutput, run } from './run.js';

/**
 * unpaper as the scan cleaner: its noise filter (isolated specks) and black filter (solid dark areas such as
 * the scanner lid's edges), on one PNM page image. Every other stage (masks, borders, deskew, grey and blur
 * filters) is switched off: skew is measured and corrected elsewhere, and masks would wipe content that lies
 * outside the block unpaper detects.
 */

export interface CleanOptions {
  despeckle: boolean;
  removeBorders: boolean;
}

/**
 * The black filter looks for dark areas only in this share of the width and height along each edge: the page's
 * own dark content (photos, bold headings) further in is never taken for a border.
 */
export const BORDER_ZONE = 0.1;
/** Darkness (0-1) of an area the black filter removes; unpaper's default 0.95 leaves dark grey edges (measured: 20 of 255). */
const BORDER_DARKNESS = 0.9;

export function unpaperArgs(input: string, output: string, opts: CleanOptions, size: { width: number; height: number }): string[] {
  const [x, y] = [Math.round(size.width * BORDER_ZONE), Math.round(size.height * BORDER_ZONE)];
  return [
    '--overwrite',
    '--layout',
    'none',
    '--no-mask-scan',
    '--no-mask-center',
    '--no-deskew',
    '--no-border-scan',
    '--no-border-align',
    '--no-grayfilter',
    '--no-blurfilter',
    ...(opts.despeckle ? [] : ['--no-noisefilter']),
    ...(opts.removeBorders
      ? ['--blackfilter-scan-threshold', String(BORDER_DARKNESS), '--blackfilter-scan-exclude', `${x},${y},${size.width - 1 - x},${size.height - 1 - y}`]
      : ['--no-blackfilter']),
    input,
    output,
  ];
}

/** Raw 8-bit samples, 1 (grey) or 3 (RGB) per pixel, rows top to bottom. */
export interface PnmPixels {
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

export const pnmBytes = (img: PnmPixels): Buffer =>
  Buffer.concat([Buffer.from(`${img.channels === 1 ? 'P5' : 'P6'}\n${img.width} ${img.height}\n255\n`, 'latin1'), img.data]);

/** Reads a binary PGM or PPM (what unpaper writes for grey and colour input). */
export function parsePnm(b: Buffer): PnmPixels {
  const m = /^P([56])\s+(?:#[^\n]*\s+)*(\d+)\s+(\d+)\s+(\d+)\s/.exec(b.subarray(0, 200).toString('latin1'));
  if (m?.[4] !== '255') throw new EngineError('unpaper', 'wrote an image that is not 8-bit PGM or PPM');
  const [channels, width, height] = [m[1] === '5' ? 1 : 3, Number(m[2]), Number(m[3])];
  const data = b.subarray(m[0].length, m[0].length + width * height * channels);
  if (data.length !== width * height * channels) throw new EngineError('unpaper', 'wrote a truncated image');
  return { width, height, channels, data };
}

/** Cleans one page image (grey or RGB) through PNM files in the job dir; returns the cleaned pixels. */
export async function cleanScan(img: PnmPixels, name: string, opts: CleanOptions, ctx: EngineContext): Promise<PnmPixels> {
  const ext = img.channels === 1 ? 'pgm' : 'ppm';
  const input = join(ctx.cwd, `${name}-in.${ext}`);
  const output = join(ctx.cwd, `${name}-out.${ext}`);
  try {
    await writeFile(input, pnmBytes(img));
    await run('unpaper', unpaperArgs(input, output, opts, img), ctx);
    await expectOutput('unpaper', output);
    return parsePnm(await readFile(output));
  } finally {
    await rm(input, { force: true });
    await rm(output, { force: true });
  }
}
