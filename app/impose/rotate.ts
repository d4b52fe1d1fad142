import type { EngineContext } from '../../engines/context.js';
import { surveyPages } from '../../engines/mupdf-text-layer.js';
import { type QuarterTurn, rotatePages } from '../../engines/qpdf-edit.js';
import { inputError } from '../document/index.js';
import { openForRendering } from '../render/index.js';
import { type DetectContext, detectOrientations, type PageOrientation } from './orientation.js';

export type { QuarterTurn };

const list = (pages: number[]) => pages.join(', ');

/** The selected pages turned clockwise by `angle`, added to their /Rotate; nothing is drawn again. */
export const turnPages = (input: string, output: string, pages: number[], angle: QuarterTurn, ctx: EngineContext) =>
  rotatePages(input, output, [{ angle, pages }], ctx);

/**
 * The selected pages turned upright by the orientation Tesseract reads off each (see detectOrientations); the
 * warning names the pages turned and those left undecided.
 */
export async function turnUpright(
  input: string,
  output: string,
  pages: number[],
  minConfidence: number,
  ctx: DetectContext,
): Promise<{ warning: string; orientations: PageOrientation[] }> {
  const ectx = { cwd: ctx.dir, signal: ctx.signal, timeoutMs: ctx.timeoutMs };
  const { boxes } = await openForRendering(input, ectx);
  const surveys = await surveyPages(input, pages, ectx).catch((err) => {
    throw inputError(err);
  });
  const found = await detectOrientations({ input, boxes, pages, surveys, minConfidence }, ctx);
  const unsure = found.filter((f) => f.turn === null).map((f) => f.page);
  const turns = ([90, 180, 270] as const).map((angle) => ({ angle, pages: found.filter((f) => f.turn === angle).map((f) => f.page) }));
  await rotatePages(input, output, turns, ectx);
  const turned = turns.flatMap((t) => t.pages.map((p) => `${p} (${t.angle})`));
  const warning = [
    turned.length ? `Pages turned clockwise (degrees): ${turned.join(', ')}.` : 'No page needed turning.',
    unsure.length ? `Pages left as they were because their orientation could not be told with confidence: ${list(unsure)}.` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { warning, orientations: found };
}
