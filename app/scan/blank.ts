import type { PageBox } from '../../engines/mupdf.js';
import type { RenderContext } from '../render/index.js';
import { INK_DPI, inkFraction } from './ink.js';
import { cappedDpi, eachGreyBatch, readGrey } from './pixels.js';

/**
 * The default share of ink under which a page is blank: half of one word (five letters) of 11-point text on a
 * Letter page (0.00021 measured; one line is ~0.001), above the noise left on the noisiest scanned blank we
 * made (0.00007). Keeping a blank page costs less than losing one with content.
 */
export const BLANK_THRESHOLD = 0.0001;

/** Pixels of a page drawn to measure its ink: A3 at 100 dpi; a larger page is drawn coarser. */
const INK_PIXELS = 2_500_000;

/** Each page's ink (inkFraction), drawn at INK_DPI through the render chain. */
export async function measureInk(input: string, boxes: PageBox[], pages: number[], ctx: RenderContext): Promise<Map<number, number>> {
  const ink = new Map<number, number>();
  await eachGreyBatch(input, boxes, pages, cappedDpi(boxes, pages, INK_DPI, INK_PIXELS), ctx, async (batch, files) => {
    for (const [i, file] of files.entries()) ink.set(batch[i], inkFraction(await readGrey(file)));
  });
  return ink;
}

/** The pages of `pages` whose ink is below `threshold`, ascending. */
export async function blankPages(input: string, boxes: PageBox[], pages: number[], threshold: number, ctx: RenderContext): Promise<number[]> {
  const ink = await measureInk(input, boxes, pages, ctx);
  return pages.filter((p) => ink.get(p)! < threshold);
}
