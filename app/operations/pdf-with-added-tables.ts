import { join } from 'node:path';
import { z } from 'zod';
import { addTables, checkTable, type TableSpec } from '../compose/index.js';
import { AppError } from '../errors.js';
import { colorValues, jsonObjects, looseBool, looseList, looseNumber, output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

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
    f.table_objects.forEach((t, i) => checkTable(t as TableSpec, `table_objects[${i}]`, f.tag_enabled === true));
  },
  run: async ({ fields, inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const path = join(dir, 'with-tables.pdf');
    const tagging = fields.tag_enabled ? { lang: fields.tag_language } : undefined;
    const opts = { tagging, maxPixels: limits.maxImagePixels, dir };
    await addTables(inputs.file[0].path, fields.table_objects as TableSpec[], inputs.image_files ?? [], path, opts, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
