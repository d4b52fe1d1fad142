import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { devicePageBudget, pageListArg } from './ghostscript-raster.js';
import { run } from './run.js';

/** A box [x0, y0, x1, y1] in points from the lower-left corner of the page as displayed (crop box, after /Rotate). */
export type DisplayedBox = [number, number, number, number];

/**
 * Ghostscript's `bbox` device: the bounding box of everything each page marks, as it draws the page (white
 * marks count too; what the crop box hides does not). Returns one box per page in the order of `pages`
 * (1-based, strictly increasing), null for a page that marks nothing.
 */
export async function contentBoxes(input: string, pages: number[], ctx: EngineContext): Promise<(DisplayedBox | null)[]> {
  // run() keeps only the tail of stderr: the boxes are collected line by line as they come.
  const lines: string[] = [];
  const onStderrLine = (line: string) => line.startsWith('%%HiResBoundingBox:') && lines.push(line);
  await run('gs', bboxArgs(input, pages), { ...ctx, onStderrLine, pageBudget: devicePageBudget(ctx) });
  const boxes = parseBoundingBoxes(lines.join('\n'));
  // Ghostscript exits 0 on a file it could not read, reporting fewer pages.
  if (boxes.length !== pages.length) throw new EngineError('gs', `bbox reported ${boxes.length} pages, expected ${pages.length}`);
  return boxes;
}

export function bboxArgs(input: string, pages: number[]): string[] {
  // Page progress ("Page N") and the boxes both go to stderr, where run() watches the per-page budget. The
  // device's own 4000 dpi took 6.2 s for 3 pages of the Federal Register, 720 dpi 0.7 s, boxes within 0.1 pt.
  return ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-sstdout=%stderr', '-sDEVICE=bbox', '-r720', '-dUseCropBox', pageListArg(pages), input];
}

export function parseBoundingBoxes(out: string): (DisplayedBox | null)[] {
  return [...out.matchAll(/^%%HiResBoundingBox:\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)/gm)].map((m) => {
    const b = m.slice(1, 5).map(Number) as DisplayedBox;
    return b[2] > b[0] && b[3] > b[1] ? b : null;
  });
}
