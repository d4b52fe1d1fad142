import type { EngineContext } from './context.js';
import { expectOutput, run } from './run.js';

/**
 * PostScript and EPS to PDF with Ghostscript's pdfwrite. -dSAFER is what stops a hostile program from
 * reading, writing or deleting files (it raises /invalidfileaccess and Ghostscript exits non-zero).
 * Kept apart from a general ghostscript module only because that one is being written concurrently.
 */
export interface PsOptions {
  /** EPS: the page is the %%BoundingBox, not the default paper. */
  eps: boolean;
  lossless: boolean;
  /** Image resolution cap in DPI, or null to keep images as they are. */
  maxDpi: number | null;
}

export function psToPdfArgs(input: string, output: string, o: PsOptions): string[] {
  const args = ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dEmbedAllFonts=true', '-dSubsetFonts=true'];
  if (o.eps) args.push('-dEPSCrop');
  if (o.lossless) {
    for (const k of ['Color', 'Gray']) args.push(`-dAutoFilter${k}Images=false`, `-d${k}ImageFilter=/FlateEncode`);
  }
  for (const k of ['Color', 'Gray', 'Mono']) {
    if (o.maxDpi === null) args.push(`-dDownsample${k}Images=false`);
    else args.push(`-dDownsample${k}Images=true`, `-d${k}ImageResolution=${o.maxDpi}`, `-d${k}ImageDownsampleThreshold=1.0`);
  }
  args.push(`-sOutputFile=${output}`, '--', input);
  return args;
}

export async function psToPdf(input: string, output: string, o: PsOptions, ctx: EngineContext): Promise<void> {
  await run('gs', psToPdfArgs(input, output, o), { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  await expectOutput('gs', output);
}
