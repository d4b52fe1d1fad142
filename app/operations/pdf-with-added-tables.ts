import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import { z } from 'zod';
import type { EngineContext } from '../../engines/context.js';
import { ImageTooLargeError, imagesToPdf } from '../../engines/image-pdf.js';
import { FontSet, layoutTable, type PlacedTable, pageFrames, paginate, resolveFont, type TableSpec, writeTables } from '../compose/index.js';
import { AppError, limitExceeded, outOfRange } from '../errors.js';
import { colorValues, jsonObjects, looseBool, looseList, looseNumber, output } from '../requests/fields.js';
import { type InputFile, operation } from '../requests/operation.js';

const MAX_TABLES = 100;
const MAX_CELLS = 20000;

const flag = z.preprocess(looseBool, z.boolean()).optional();
const atLeast0 = z.preprocess(looseNumber, z.number().min(0).max(100000)).optional();
const above0 = z.preprocess(looseNumber, z.number().gt(0).max(100000)).optional();
const count = z.preprocess(looseNumber, z.number().int().min(1).max(10000)).optional();
/** Colours as `"r,g,b"` or arrays; CMYK channels may be decimals (the n8n node allows them). */
const cmyk = z
  .preprocess(
    (v) => (typeof v === 'string' && !v.trim().startsWith('[') ? v.split(',') : looseList(v))?.map((x) => looseNumber(typeof x === 'string' ? x.trim() : x)),
    z.array(z.number().min(0).max(100)).length(4),
  )
  .optional();
const rgb = colorValues(3, 255).optional();
const sides = <T extends z.ZodType>(t: T) => z.strictObject({ top: t.optional(), right: t.optional(), bottom: t.optional(), left: t.optional() });
const borderSide = z.strictObject({
  width: atLeast0,
  color_rgb: rgb,
  color_cmyk: cmyk,
  opacity: z.preprocess(looseNumber, z.number().min(0).max(1)).optional(),
});
const style = z
  .strictObject({
    font: z.string().min(1).max(200).optional(),
    text_size: z.preprocess(looseNumber, z.number().gt(0).max(500)).optional(),
    text_align: z.enum(['left', 'center', 'right']).optional(),
    vertical_align: z.enum(['top', 'middle', 'bottom']).optional(),
    text_color_rgb: rgb,
    text_color_cmyk: cmyk,
    background_color_rgb: rgb,
    background_color_cmyk: cmyk,
    opacity: z.preprocess(looseNumber, z.number().min(0).max(1)).optional(),
    padding: sides(z.preprocess(looseNumber, z.number().min(0).max(10000))).optional(),
    border: sides(borderSide).optional(),
  })
  .optional();
const cell = z.strictObject({
  text: z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().max(100000)).optional(),
  image: z
    .strictObject({
      image_index: z.preprocess(looseNumber, z.number().int().min(0)),
      width: above0,
      height: above0,
      tag_alt_text: z.string().min(1).max(10000).optional(),
      tag_is_artifact: flag,
      tag_structure_type: z.literal('Figure').optional(),
    })
    .optional(),
  col_span: count,
  row_span: count,
  min_height: atLeast0,
  fixed_height: atLeast0,
  no_wrap: flag,
  is_rtl: flag,
  style,
  tag_actual_text: z.string().min(1).max(10000).optional(),
  tag_structure_type: z.enum(['TH', 'TD']).optional(),
});
const row = z.strictObject({ cells: z.array(cell).min(1), min_height: atLeast0, style });
const table = z.strictObject({
  page: z.preprocess(looseNumber, z.number().int().min(1)),
  x: atLeast0,
  y: z.preprocess(looseNumber, z.number().min(0).max(100000)),
  width: above0,
  width_percentage: z.preprocess(looseNumber, z.number().gt(0).max(100)).optional(),
  width_mode: z.enum(['fixed', 'relative']).optional(),
  horizontal_align: z.enum(['left', 'center', 'right']).optional(),
  is_rtl: flag,
  keep_table_block_together: flag,
  spacing_before: atLeast0,
  spacing_after: atLeast0,
  continuation_page_top_margin: atLeast0,
  page_bottom_margin: atLeast0,
  final_page_bottom_margin: atLeast0,
  overflow_behavior: z.enum(['move-row', 'split-row', 'fail']).optional(),
  row_split_behavior: z.enum(['split-when-needed', 'prefer-next-page']).optional(),
  repeat_header_on_overflow: flag,
  repeat_footer_on_overflow: flag,
  show_header_on_first_page: flag,
  show_footer_on_last_page: flag,
  columns: z
    .array(z.strictObject({ width: z.preprocess(looseNumber, z.number().gt(0).max(100000)), style }))
    .min(1)
    .max(1000),
  header_rows: z.array(row).min(1).optional(),
  rows: z.array(row).min(1),
  footer_rows: z.array(row).min(1).optional(),
  style,
  tag_is_artifact: flag,
  tag_structure_type: z.literal('Table').optional(),
});
type Table = z.infer<typeof table>;

const tables = jsonObjects(table);

export default operation({
  path: '/pdf-with-added-tables',
  tag: 'Content insertion',
  summary: 'Add tables to pages',
  description:
    'table_objects is a JSON array (or one object) of tables: {page, x or horizontal_align, y (the top edge, PDF units from the lower-left corner of the page as seen), width (the sum of the column widths) or width_percentage of the page width with width_mode "relative" (column widths are then weights), columns [{width, style}], header_rows, rows, footer_rows [{cells, min_height, style}], style, is_rtl (columns right to left)}. ' +
    'A cell has text or an image ({image_index into image_ids, width, height}: its own size, or scaled to the cell width), col_span, row_span, min_height, fixed_height, no_wrap. Styles (table, column, row, cell; each overrides the previous) set font, text_size (default 10), text_align, vertical_align, text_color_rgb/cmyk, background_color_rgb/cmyk, opacity, padding {top, right, bottom, left} (default 4) and border {top, right, bottom, left: {width, color_rgb/cmyk, opacity}} (none by default). ' +
    'Rows break across pages between rows (rows joined by a row span stay together): the table flows down to page_bottom_margin (default 36), and the rest continues on new pages of the same size inserted after the table\'s page, from continuation_page_top_margin (default 36) below their top, with header rows repeated (repeat_header_on_overflow, default true) and footer rows on the last page (show_footer_on_last_page, default true) above final_page_bottom_margin. keep_table_block_together moves a table that fits on a new page but not in its place there; overflow_behavior "fail" refuses a table that does not fit; a row taller than a page is refused (rows are not split). ' +
    `The tables are drawn on layers laid over the pages; the original content is kept as it is. With tag_enabled, cell text is marked content /TH or /TD (tag_structure_type, with tag_actual_text as /ActualText and tag_language as /Lang), images /Figure with /Alt, and borders, backgrounds and repeated headers /Artifact (everything with tag_is_artifact); this marked content is not linked into the structure tree of a tagged input. At most ${MAX_TABLES} tables and ${MAX_CELLS} cells per request.`,
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    image_files: {
      idField: 'image_ids',
      kind: 'any',
      multiple: true,
      required: false,
      extensions: ['jpg', 'jpeg', 'png', 'tif', 'tiff', 'gif', 'webp', 'bmp'],
      description: 'Images cells reference by image_index (uploads first, then image_ids)',
    },
  },
  fields: {
    table_objects: tables.meta({ type: 'string', description: 'JSON array of table objects' }),
    tag_enabled: z
      .preprocess(looseBool, z.boolean())
      .optional()
      .meta({ type: 'string', enum: ['true', 'false'], default: 'false' }),
    tag_language: z
      .string()
      .regex(/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/)
      .max(64)
      .optional(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  check: (f) => {
    if (f.table_objects.length > MAX_TABLES)
      throw new AppError('out_of_range', `table_objects: at most ${MAX_TABLES} tables per request (${f.table_objects.length} given)`);
    const cells = f.table_objects.reduce((a, t) => a + [t.header_rows ?? [], t.rows, t.footer_rows ?? []].flat().reduce((b, r) => b + r.cells.length, 0), 0);
    if (cells > MAX_CELLS) throw new AppError('out_of_range', `table_objects: at most ${MAX_CELLS} cells per request (${cells} given)`);
    f.table_objects.forEach((t, i) => checkTable(t, `table_objects[${i}]`, f.tag_enabled === true));
  },
  run: async ({ fields, inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pdf = inputs.file[0];
    const frames = await pageFrames(pdf.path, ctx);
    const images = inputs.image_files ?? [];
    fields.table_objects.forEach((t, i) => {
      if (t.page > frames.length) throw outOfRange(t.page, `table_objects[${i}].page (the PDF has ${frames.length} page${frames.length > 1 ? 's' : ''})`);
      for (const c of cellsOf(t)) {
        if (c.image && c.image.image_index >= images.length)
          throw outOfRange(
            c.image.image_index,
            `table_objects[${i}]: image_index (${images.length} image${images.length === 1 ? '' : 's'} given in image_ids)`,
          );
      }
    });

    const doc = await PDFDocument.create();
    const fonts = new FontSet(doc);
    const used = new Set(fields.table_objects.flatMap((t) => cellsOf(t).flatMap((c) => (c.image ? [c.image.image_index] : []))));
    const embedded: PDFEmbeddedPage[] = [];
    for (const n of used) embedded[n] = await imagePage(doc, images[n], n, dir, limits.maxImagePixels, ctx);

    const placed: PlacedTable[] = [];
    for (const [i, t] of fields.table_objects.entries()) {
      const where = `table_objects[${i}]`;
      const frame = frames[t.page - 1];
      const layout = await layoutTable(t as TableSpec, frame, fonts, embedded, where);
      const tagging = fields.tag_enabled ? { artifact: t.tag_is_artifact === true, lang: fields.tag_language } : undefined;
      placed.push({ page: t.page, slices: paginate(t as TableSpec, layout, frame, where), tagging });
    }
    const path = join(dir, 'with-tables.pdf');
    await writeTables(pdf.path, path, doc, frames, placed, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});

const cellsOf = (t: Table) => [t.header_rows ?? [], t.rows, t.footer_rows ?? []].flat().flatMap((r) => r.cells);

/** What the n8n node checks before sending, checked again here: clients without it get the same answers. */
function checkTable(t: Table, where: string, tagEnabled: boolean): void {
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

/** An image input as a page of its own (DPI size, EXIF orientation, JPEG kept as it is), embedded as a form. */
async function imagePage(doc: PDFDocument, image: InputFile, n: number, dir: string, maxPixels: number, ctx: EngineContext): Promise<PDFEmbeddedPage> {
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
