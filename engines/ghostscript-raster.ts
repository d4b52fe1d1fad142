import type { EngineContext } from './context.js';
import { expectOutput, run } from './run.js';

/** Arguments of Ghostscript's pdfimage24 device: each page becomes one RGB Flate image in a PDF of the same page size. */
export function rasterizePdfArgs(input: string, output: string, opts: { resolution: number }): string[] {
  return [
    '-dSAFER', '-dBATCH', '-dNOPAUSE', '-q',
    '-sDEVICE=pdfimage24',
    `-r${opts.resolution}`,
    // Anti-aliased text and line art: at 150 dpi aliased glyphs are hard to read.
    '-dTextAlphaBits=4', '-dGraphicsAlphaBits=4',
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
