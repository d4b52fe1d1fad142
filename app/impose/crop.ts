import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { contentBoxes, type DisplayedBox } from '../../engines/ghostscript-bbox.js';
import { type ReadLimits, readPdfJson } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError, PdfObjects } from '../document/index.js';

type Box = [number, number, number, number];

/**
 * A box measured on the page as displayed (origin at the lower-left corner of the visible box after /Rotate) in
 * the page's own coordinates. `visible` is the crop box clipped to the media box, in page coordinates.
 */
export function toPageSpace(b: DisplayedBox, visible: Box, rotate: number): Box {
  const [x0, y0, x1, y1] = visible;
  const [w, h] = [x1 - x0, y1 - y0];
  const corners = [
    [b[0], b[1]],
    [b[2], b[3]],
  ].map(([dx, dy]) => {
    if (rotate === 90) return [x0 + w - dy, y0 + dx];
    if (rotate === 180) return [x0 + w - dx, y0 + h - dy];
    if (rotate === 270) return [x0 + dy, y0 + h - dx];
    return [x0 + dx, y0 + dy];
  });
  return [
    Math.min(corners[0][0], corners[1][0]),
    Math.min(corners[0][1], corners[1][1]),
    Math.max(corners[0][0], corners[1][0]),
    Math.max(corners[0][1], corners[1][1]),
  ];
}

const round = (n: number) => Math.round(n * 1000) / 1000;
const normal = (a: number[]): Box => [Math.min(a[0], a[2]), Math.min(a[1], a[3]), Math.max(a[0], a[2]), Math.max(a[1], a[3])];
const intersect = (a: Box, b: Box): Box => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];

/**
 * Sets each selected page's media and crop box to what it draws (Ghostscript's bbox device) plus `margin`
 * points, within what it showed before; its trim, bleed and art boxes are clipped to the new box. Only page
 * dictionaries change (qpdf --update-from-json): content, links and fields stay. Returns the pages that draw
 * nothing, which are left as they were.
 */
export async function cropToContent(input: string, output: string, pages: number[], margin: number, limits: ReadLimits, ctx: EngineContext): Promise<number[]> {
  const [{ json }, drawn] = await Promise.all([readPdfJson(input, ctx, limits), contentBoxes(input, pages, ctx)]).catch((err) => {
    throw inputError(err);
  });
  const objects = new PdfObjects(json);
  const refs = (json.pages ?? []).map((p) => p.object);
  const empty: number[] = [];
  const updates: Record<string, { value: unknown }> = {};
  pages.forEach((page, i) => {
    const ref = refs[page - 1];
    const box = drawn[i];
    if (!ref || !box) return empty.push(page);
    const read = (key: string) => {
      const a = objects.array(objects.inherited(ref, key)).map((n) => Number(objects.resolve(n)));
      return a.length === 4 && a.every(Number.isFinite) ? normal(a) : null;
    };
    const media = read('/MediaBox') ?? [0, 0, 612, 792];
    const visible = intersect(read('/CropBox') ?? media, media);
    const rotate = ((Number(objects.inherited(ref, '/Rotate') ?? 0) % 360) + 360) % 360;
    const [a, b, c, d] = toPageSpace(box, visible, (Math.round(rotate / 90) * 90) % 360);
    const rect = intersect([a - margin, b - margin, c + margin, d + margin], visible).map(round) as Box;
    const value: Record<string, unknown> = { ...(objects.dict(ref) ?? {}), '/MediaBox': rect, '/CropBox': rect };
    for (const key of ['/TrimBox', '/BleedBox', '/ArtBox']) {
      const other = read(key);
      if (!other) continue;
      const clipped = intersect(other, rect);
      if (clipped[2] > clipped[0] && clipped[3] > clipped[1]) value[key] = clipped.map(round);
      else delete value[key];
    }
    updates[`obj:${ref}`] = { value };
  });
  const update = join(ctx.cwd, 'crop.json');
  await writeFile(update, JSON.stringify({ qpdf: [json.qpdf![0], updates] }));
  await writePdf(input, output, { updateFromJson: update }, ctx);
  return empty;
}
