import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { readPdfJson } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError, PdfObjects, parsePages, resolvePages } from '../document/index.js';
import { AppError } from '../errors.js';

const BOX_KEYS = { media: '/MediaBox', crop: '/CropBox', bleed: '/BleedBox', trim: '/TrimBox', art: '/ArtBox' } as const;
type BoxName = keyof typeof BOX_KEYS;
const GRAMMAR = { reverse: true, parity: true };

/** A range of the boxes field: `all`, or the shared page grammar. */
export function isBoxRange(s: string): boolean {
  try {
    parsePages(pageSpec(s), GRAMMAR, 'range');
    return true;
  } catch {
    return false;
  }
}

/** Spec 4.5: box definitions, each with margins for ranges of pages. */
export type BoxesSpec = { box: BoxName; pages: { range: string; top: number; bottom: number; left: number; right: number }[] }[];

/** `all` is every page; the rest is the shared page grammar. */
const pageSpec = (range: string) => (range.trim().toLowerCase() === 'all' ? '1-last' : range);

type Rect = [number, number, number, number];

/**
 * The new boxes per page (0-based index -> PDF key -> rect). Margins are measured inward from the page's
 * current MediaBox, whichever box they set; only the media box may grow (negative margins).
 */
export function planBoxes(boxes: BoxesSpec, media: Rect[]): Map<number, Map<string, Rect>> {
  const plan = new Map<number, Map<string, Rect>>();
  for (const [b, def] of boxes.entries()) {
    for (const [p, sel] of def.pages.entries()) {
      const where = `boxes[${b}].pages[${p}]`;
      if (def.box !== 'media') {
        for (const side of ['top', 'bottom', 'left', 'right'] as const) {
          if (sel[side] < 0)
            throw new AppError(
              'out_of_range',
              `${sel[side]} is not within the acceptable range for ${where}.${side}: only the media box takes negative margins`,
            );
        }
      }
      for (const page of resolvePages(pageSpec(sel.range), media.length, GRAMMAR, `${where}.range`)) {
        const [x0, y0, x1, y1] = media[page - 1];
        const rect: Rect = [x0 + sel.left, y0 + sel.bottom, x1 - sel.right, y1 - sel.top];
        if (rect[2] - rect[0] < 1 || rect[3] - rect[1] < 1) {
          throw new AppError(
            'out_of_range',
            `The margins of ${where} leave no ${def.box} box on page ${page}: they are not within the acceptable range for boxes`,
          );
        }
        if (!plan.has(page - 1)) plan.set(page - 1, new Map());
        plan.get(page - 1)!.set(BOX_KEYS[def.box as BoxName], rect);
      }
    }
  }
  return plan;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * `input` with the boxes set into `output`. qpdf cannot set boxes from its command line; --update-from-json
 * replaces just the page dictionaries it is given and keeps everything else byte-for-byte in meaning (streams,
 * forms, owner-only encryption), where rewriting the file with pdf-lib would re-serialise the whole document in-process.
 */
export async function setPageBoxes(
  input: string,
  boxes: BoxesSpec,
  output: string,
  read: { maxBytes: number; maxObjects: number },
  ctx: EngineContext & { cwd: string },
): Promise<void> {
  const { json: doc } = await readPdfJson(input, ctx, read).catch((err) => {
    throw inputError(err);
  });
  const objects = new PdfObjects(doc);
  const pages = (doc.pages ?? []).map((p) => p.object);
  const media = pages.map((ref): Rect => {
    const a = objects.array(objects.inherited(ref, '/MediaBox')).map((n) => Number(objects.resolve(n)));
    return a.length === 4 && a.every(Number.isFinite)
      ? [Math.min(a[0], a[2]), Math.min(a[1], a[3]), Math.max(a[0], a[2]), Math.max(a[1], a[3])]
      : [0, 0, 612, 792];
  });
  const plan = planBoxes(boxes, media);
  const updates: Record<string, unknown> = {};
  for (const [index, rects] of plan) {
    const key = `obj:${pages[index]}`;
    const value = { ...(objects.dict(pages[index]) ?? {}) };
    for (const [box, rect] of rects) value[box] = rect.map(round);
    updates[key] = { value };
  }
  const update = join(ctx.cwd, 'boxes.json');
  await writeFile(update, JSON.stringify({ qpdf: [doc.qpdf![0], updates] }));
  await writePdf(input, output, { updateFromJson: update }, ctx);
}
