import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { AppError, limitExceeded, outOfRange } from '../errors.js';
import { FontSet, resolveFont } from './fonts.js';
import { pageFrames } from './stamp.js';
import { layoutTable, type PlacedTable, paginate, type TableSpec, writeTables } from './table.js';

const cellsOf = (t: TableSpec) => [t.header_rows ?? [], t.rows, t.footer_rows ?? []].flat().flatMap((r) => r.cells);

/**
 * The tables of table_objects laid out on their pages (continuing on inserted pages) and drawn over `pdf` into
 * `output`; cells' images are `images` by image_index. Tagged as marked content when `tagging` is given.
 */
export async function addTables(
  pdf: string,
  tables: TableSpec[],
  images: { path: string }[],
  output: string,
  opts: { tagging?: { lang?: string }; maxPixels: number; dir: string },
  ctx: EngineContext,
): Promise<void> {
  const frames = await pageFrames(pdf, ctx);
  tables.forEach((t, i) => {
    if (t.page > frames.length) throw outOfRange(t.page, `table_objects[${i}].page (the PDF has ${frames.length} page${frames.length > 1 ? 's' : ''})`);
    for (const c of cellsOf(t)) {
      if (c.image && c.image.image_index >= images.length)
        throw outOfRange(c.image.image_index, `table_objects[${i}]: image_index (${images.length} image${images.length === 1 ? '' : 's'} given in image_ids)`);
    }
  });

  const doc = await PDFDocument.create();
  const fonts = new FontSet(doc);
  const used = new Set(tables.flatMap((t) => cellsOf(t).flatMap((c) => (c.image ? [c.image.image_index] : []))));
  const embedded: PDFEmbeddedPage[] = [];
  for (const n of used) embedded[n] = await imagePage(doc, images[n], n, opts.dir, opts.maxPixels, ctx);

  const placed: PlacedTable[] = [];
  for (const [i, t] of tables.entries()) {
    const where = `table_objects[${i}]`;
    const frame = frames[t.page - 1];
    const layout = await layoutTable(t, frame, fonts, embedded, where);
    const tagging = opts.tagging ? { artifact: t.tag_is_artifact === true, lang: opts.tagging.lang } : undefined;
    placed.push({ page: t.page, slices: paginate(t, layout, frame, where), tagging });
  }
  await writeTables(pdf, output, doc, frames, placed, ctx);
}

/** An image input as a page of its own (DPI size, EXIF orientation, JPEG kept as it is), embedded as a form. */
async function imagePage(doc: PDFDocument, image: { path: string }, n: number, dir: string, maxPixels: number, ctx: EngineContext): Promise<PDFEmbeddedPage> {
  const single = join(dir, `image-${n}.pdf`);
  try {
    await imagesToPdf([image.path], single, { lossless: true, maxDpi: null, maxPixels }, ctx);
    const src = await PDFDocument.load(await readFile(single), { updateMetadata: false });
    return await doc.embedPage(src.getPage(0));
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    if (err instanceof ImageTooLargeError) throw limitExceeded(`image_ids[${n}] (${err.width}x${err.height} pixels)`, 'MAX_IMAGE_PIXELS', err.limit);
    throw new AppError('invalid_input', `There was a problem reading image_ids[${n}]`);
  }
}

/** What the n8n node checks before sending, checked again here: clients without it get the same answers. */
export function checkTable(t: TableSpec, where: string, tagEnabled: boolean): void {
  if ((t.width === undefined) === (t.width_percentage === undefined))
    throw new AppError('out_of_range', `${where} must contain exactly one of width or width_percentage`);
  if (t.width_percentage !== undefined && t.width_mode !== 'relative')
    throw new AppError('out_of_range', `${where}.width_percentage requires width_mode to be relative`);
  if (t.x === undefined && t.horizontal_align === undefined) throw new AppError('out_of_range', `${where} must contain x or horizontal_align`);
  if (t.final_page_bottom_margin !== undefined && t.final_page_bottom_margin < (t.page_bottom_margin ?? 0))
    throw new AppError('out_of_range', `${where}.final_page_bottom_margin cannot be less than page_bottom_margin`);
  const styles = [
    t.style,
    ...t.columns.map((c) => c.style),
    ...[t.header_rows ?? [], t.rows, t.footer_rows ?? []].flat().flatMap((r) => [r.style, ...r.cells.map((c) => c.style)]),
  ];
  for (const s of styles) {
    if (!s) continue;
    if ((s.text_color_rgb && s.text_color_cmyk) || (s.background_color_rgb && s.background_color_cmyk))
      throw new AppError('out_of_range', `${where}: a style cannot contain both RGB and CMYK colors`);
    if (s.font) resolveFont(s.font);
    for (const side of Object.values(s.border ?? {}))
      if (side?.color_rgb && side.color_cmyk) throw new AppError('out_of_range', `${where}: a border cannot contain both RGB and CMYK colors`);
  }
  const tagged = t.tag_is_artifact !== undefined || t.tag_structure_type !== undefined;
  cellsOf(t).forEach((c) => {
    if (c.text !== undefined && c.image) throw new AppError('out_of_range', `${where}: a cell cannot contain both text and image`);
    if (c.fixed_height !== undefined && c.min_height !== undefined && c.fixed_height < c.min_height)
      throw new AppError('out_of_range', `${where}: a cell's fixed_height cannot be less than its min_height`);
    const cellTagged =
      c.tag_actual_text !== undefined ||
      c.tag_structure_type !== undefined ||
      (c.image && (c.image.tag_alt_text !== undefined || c.image.tag_is_artifact !== undefined || c.image.tag_structure_type !== undefined));
    if ((tagged || cellTagged) && !tagEnabled) throw new AppError('out_of_range', `${where}: tag properties require tag_enabled to be true`);
  });
  if (tagged && !tagEnabled) throw new AppError('out_of_range', `${where}: tag properties require tag_enabled to be true`);
}
