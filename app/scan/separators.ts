import { availableParallelism } from 'node:os';
import { RE2JS } from 're2js';
import type { PageBox } from '../../engines/mupdf.js';
import { readBarcodes } from '../../engines/zbar.js';
import { AppError } from '../errors.js';
import { inParallel, type RenderContext, splitRuns } from '../render/index.js';
import { cappedDpi, eachGreyBatch } from './pixels.js';

/**
 * Separator sheets: pages that carry a barcode (optionally one whose text matches a pattern), read by zbar on
 * pages drawn at BARCODE_DPI, and the groups of pages between separators.
 */

/** Code 128 printed at its narrowest (a 0.25 mm module) still has two pixels a bar here; QR codes need less. */
export const BARCODE_DPI = 200;

export interface PageBarcode {
  page: number;
  type: string;
  text: string;
}

/**
 * A client's pattern compiled with RE2 (linear time whatever the pattern, so it cannot stall the server; no
 * look-around or back-references, `(?i)` for case-insensitive). A bad pattern is a 400 naming the field.
 */
export function compileBarcodePattern(source: string, field = 'barcode_text'): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (err) {
    throw new AppError(
      'out_of_range',
      `${source} is not within the acceptable range for ${field}: not a valid RE2 regular expression (${(err as Error).message})`,
    );
  }
}

/** Every barcode on the pages, in page order: one zbarimg per core over a run of page images. */
export async function readPageBarcodes(input: string, boxes: PageBox[], pages: number[], ctx: RenderContext): Promise<PageBarcode[]> {
  const found: PageBarcode[] = [];
  await eachGreyBatch(input, boxes, pages, cappedDpi(boxes, pages, BARCODE_DPI), ctx, async (batch, files) => {
    const pageOf = new Map(files.map((f, i) => [f, batch[i]]));
    await inParallel(
      splitRuns(files, availableParallelism()),
      async (run, _k, signal) => {
        const codes = await readBarcodes(run.items, { cwd: ctx.dir, signal, timeoutMs: ctx.timeoutMs });
        found.push(...codes.map((b) => ({ page: pageOf.get(b.image)!, type: b.type, text: b.text })));
      },
      ctx.signal,
    );
  });
  return found.sort((a, b) => a.page - b.page);
}

/** The pages with a barcode whose text `pattern` finds (anywhere in it; anchor with ^ and $), or with any barcode. */
export function separatorPages(barcodes: PageBarcode[], pattern?: RE2JS): number[] {
  return [...new Set(barcodes.filter((b) => !pattern || pattern.matcher(b.text).find()).map((b) => b.page))].sort((a, b) => a - b);
}

/** The runs of pages 1..pageCount between separators, separators left out; empty runs are dropped. */
export function pagesBetween(pageCount: number, separators: number[]): number[][] {
  const cut = new Set(separators);
  const groups: number[][] = [[]];
  for (let p = 1; p <= pageCount; p++) {
    if (cut.has(p)) groups.push([]);
    else groups[groups.length - 1].push(p);
  }
  return groups.filter((g) => g.length);
}
