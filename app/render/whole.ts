import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { rasterizePdf } from '../../engines/ghostscript-raster.js';
import { type PdfToPsOptions, pdfToPs } from '../../engines/postscript.js';
import { inputError } from '../document/index.js';
import { openForRendering } from './render.js';

/**
 * Every page drawn as one image on a page of the same size (a /Rotate baked in), after the checks of the image
 * converters (401 for a password, 400 for a file MuPDF cannot open); the path of the result in `dir`.
 */
export async function rasterizedPdf(input: string, resolution: number, dir: string, ctx: EngineContext & { signal: AbortSignal }): Promise<string> {
  await openForRendering(input, ctx);
  const path = join(dir, 'rasterized.pdf');
  await rasterizePdf(input, path, { resolution }, ctx);
  return path;
}

/** The PDF as a PostScript program for printers (Ghostscript ps2write); a file Ghostscript fails on is a 400. */
export async function postscriptOf(input: string, options: PdfToPsOptions, dir: string, ctx: EngineContext): Promise<string> {
  const path = join(dir, 'output.ps');
  await pdfToPs(input, path, options, ctx).catch((err) => {
    if (err instanceof EngineError && err.details.exitCode !== undefined && !err.details.timedOut) throw inputError(err);
    throw err;
  });
  return path;
}
