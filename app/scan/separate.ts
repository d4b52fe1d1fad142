import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { RE2JS } from 're2js';
import { assemblePages } from '../../engines/qpdf-edit.js';
import { inputError, selectedPages } from '../document/index.js';
import { invalidInput } from '../errors.js';
import { inParallel, openForRendering, type RenderContext, splitRuns } from '../render/index.js';
import { blankPages } from './blank.js';
import { type PageBarcode, pagesBetween, readPageBarcodes, separatorPages } from './separators.js';

export interface SeparateRequest {
  separator: 'blank' | 'barcode';
  /** separator=barcode: a text the barcode must contain a match of. */
  pattern?: RE2JS;
  /** separator=blank: share of the page below which a page is blank. */
  threshold: number;
  /** The pages that can be separators. */
  selection: Parameters<typeof selectedPages>[0];
}

/**
 * The document cut at its separator sheets, the sheets left out: one PDF per run of pages between two separators,
 * written as part-1.pdf, part-2.pdf, ... in `ctx.dir`. Refused when every page is a separator.
 */
export async function separateDocument(
  input: string,
  req: SeparateRequest,
  ctx: RenderContext,
): Promise<{ paths: string[]; separators: number[]; barcodes: PageBarcode[] }> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const { boxes } = await openForRendering(input, ectx);
  const candidates = selectedPages(req.selection, boxes.length);
  const barcodes = req.separator === 'barcode' ? await readPageBarcodes(input, boxes, candidates, ctx) : [];
  const separators = req.separator === 'barcode' ? separatorPages(barcodes, req.pattern) : await blankPages(input, boxes, candidates, req.threshold, ctx);
  const groups = pagesBetween(boxes.length, separators);
  if (!groups.length) throw invalidInput(`every page is a separator sheet (pages ${separators.join(', ')}), so no document is left`);
  // One qpdf per output, the outputs spread over the cores (the job holds them all: perCore).
  const paths = groups.map((_, i) => join(ctx.dir, `part-${i + 1}.pdf`));
  await inParallel(
    splitRuns(
      groups.map((_, i) => i),
      availableParallelism(),
    ),
    async (run, _k, runSignal) => {
      for (const i of run.items) await assemblePages([{ path: input, pages: groups[i] }], paths[i], { ...ectx, signal: runSignal });
    },
    ctx.signal,
  ).catch((err) => {
    throw inputError(err);
  });
  return { paths, separators, barcodes };
}
