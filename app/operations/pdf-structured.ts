import { join } from 'node:path';
import { z } from 'zod';
import { STRUCTURED_PAGE_SIZES, type StructuredFormat, type StructuredOptions, type TypesetPrint, typesetFile } from '../convert/index.js';
import { colorValues, json, looseBool, looseList, looseNumber, num, oneOf, positive, text } from '../requests/fields.js';
import type { InputFile, InputSpec, RunContext } from '../requests/operation.js';

/**
 * The structured-text side of /pdf (Markdown, plain text, CSV, JSON, XML): the request model of the pdfRest
 * clients' `structured_text_options`, loose client types accepted, and the job's inputs handed to the typesetter
 * (app/convert/structured). Printing stays with pdf.ts.
 */

const flag = z.preprocess(looseBool, z.boolean()).optional();
const fontName = text({ min: 1, max: 200 })
  .transform((s) => s.trim())
  .pipe(z.string().min(1))
  .optional();
const rgb = colorValues(3, 255).optional() as unknown as z.ZodOptional<z.ZodType<[number, number, number]>>;
const sides = (max: number) =>
  z.object({ top: num(0, max).optional(), right: num(0, max).optional(), bottom: num(0, max).optional(), left: num(0, max).optional() }).optional();
const weight = z.preprocess(looseNumber, z.number().gt(0).max(1e6));
const index = z.preprocess(looseNumber, z.number().int().min(0).max(1e6));
const sizeAliases = Object.fromEntries(
  Object.keys(STRUCTURED_PAGE_SIZES).flatMap((k) => [
    [k.toUpperCase(), k],
    [k[0].toUpperCase() + k.slice(1), k],
  ]),
) as Record<string, keyof typeof STRUCTURED_PAGE_SIZES>;

const schema = z.object({
  title: text({ min: 1, max: 1000 }).optional(),
  language: text({ min: 1, max: 64 })
    .transform((s) => s.trim())
    .optional(),
  enable_tagging: flag,
  page_setup: z
    .object({
      size: oneOf(Object.keys(STRUCTURED_PAGE_SIZES) as [keyof typeof STRUCTURED_PAGE_SIZES], undefined, sizeAliases).optional(),
      width: positive(14400).optional(),
      height: positive(14400).optional(),
      orientation: oneOf(['auto', 'portrait', 'landscape']).optional(),
      margin: sides(7200),
    })
    .refine((p) => (p.width === undefined) === (p.height === undefined), {
      message: 'page_setup.width and page_setup.height must be provided together.',
      path: ['width'],
    })
    .optional(),
  style: z
    .object({
      font: fontName,
      heading_font: fontName,
      code_font: fontName,
      cjk_font: fontName,
      fallback_fonts: z
        .preprocess(
          looseList,
          z
            .array(text({ min: 1, max: 200 }))
            .min(1)
            .max(20),
        )
        .optional(),
      text_size: num(6, 72).optional(),
      text_color_rgb: rgb,
      heading_scale: z.preprocess(looseNumber, z.number().gt(0).max(4)).optional(),
      table: z
        .object({
          column_width_weights: z.preprocess(looseList, z.array(weight).min(1).max(1000)).optional(),
          keep_header_with_first_row: flag,
          repeat_headers_on_overflow: flag,
          show_borders: flag,
          border_width: num(0, 12).optional(),
          border_color_rgb: rgb,
          header_fill_color_rgb: rgb,
          header_text_color_rgb: rgb,
          row_fill_color_rgb: rgb,
          alternate_row_fill_color_rgb: rgb,
          cell_padding: sides(72),
        })
        .optional(),
    })
    .optional(),
  include_unrendered_html: flag,
  markdown: z
    .object({
      image_alt_text: z.record(z.string().max(1000), text({ min: 1, max: 2000 })).optional(),
      missing_image_alt_text: oneOf(['warn', 'fail', 'artifact']).optional(),
      image_sources: z.record(z.string().max(1000), z.object({ image_id_index: index.optional(), upload_index: index.optional() })).optional(),
    })
    .optional(),
  plain_text: z.object({ line_handling: oneOf(['reflow', 'preserve']).optional() }).optional(),
  data_presentation: oneOf(['source', 'hierarchy']).optional(),
  csv: z
    .object({
      first_row_is_header: flag,
      // Not trimmed: a space or a tab is a delimiter.
      delimiter: z.preprocess((v) => (typeof v === 'string' ? v : undefined), z.string().length(1)).optional(),
      columns: z
        .array(z.object({ index, text_align: oneOf(['left', 'center', 'right']).optional(), width_weight: weight.optional() }))
        .max(1000)
        .optional(),
    })
    .optional(),
});

export const structuredFields = {
  structured_text_options: json(schema.optional()).meta({
    type: 'string',
    description:
      'For .md, .markdown, .txt, .json, .xml and .csv (a .csv goes to LibreOffice as a spreadsheet unless this is sent, `{}` included): a JSON object ' +
      '{title, language, enable_tagging, page_setup {size Letter|Legal|Ledger|Tabloid|A3|A4|A5, width, height (points, together), orientation auto|portrait|landscape, margin {top, right, bottom, left}}, ' +
      'style {font, heading_font, code_font, cjk_font, fallback_fonts[], text_size 6-72, text_color_rgb [r,g,b], heading_scale (0-4], table {column_width_weights[], keep_header_with_first_row, repeat_headers_on_overflow, show_borders, border_width 0-12, border_color_rgb, header_fill_color_rgb, header_text_color_rgb, row_fill_color_rgb, alternate_row_fill_color_rgb, cell_padding {top, right, bottom, left} 0-72}}, ' +
      'include_unrendered_html, markdown {image_alt_text {target: alt}, missing_image_alt_text warn|fail|artifact, image_sources {target: {image_id_index | upload_index}}}, plain_text {line_handling reflow|preserve}, data_presentation source|hierarchy, ' +
      'csv {first_row_is_header, delimiter, columns [{index, text_align left|center|right, width_weight}]}}. ' +
      'Defaults: Letter, margins 72 pt, orientation auto (landscape for a CSV of more than 8 columns), Liberation Sans 11 pt, headings h1-h6 at 2, 1.6, 1.35, 1.15, 1, 0.9 times the text size times heading_scale, ' +
      'tables bordered with a repeated header, plain text lines preserved, JSON/XML as source, CSV comma-delimited with a header row, missing alternate text warned, raw HTML in Markdown shown escaped, untagged.',
  }),
  image_ids: z
    .preprocess(
      (v) =>
        looseList(v)
          ?.flatMap((x) => String(x).split(','))
          .map((x) => x.trim())
          .filter(Boolean),
      z.array(z.string()).optional(),
    )
    .meta({
      type: 'array',
      items: { type: 'string', format: 'uuid' },
      description: 'Images a Markdown document shows (GIF, JPEG, PNG, TIFF), by id; uploads go in image_files.',
    }),
};

export const structuredInputs: Record<string, InputSpec> = {
  image_files: { idField: 'image_ids', kind: 'any', required: false, multiple: true, description: 'Images a Markdown document shows, uploaded' },
};

export type StructuredFields = {
  structured_text_options?: StructuredOptions;
  image_ids?: string[];
  page_size: string;
  page_margin: string;
  page_orientation: 'portrait' | 'landscape';
  tagged_pdf: boolean;
};

/**
 * The upload typeset as HTML, written to the returned `file`. /pdf's own page fields (page_size, page_margin, landscape page_orientation,
 * tagged_pdf; n8n sends those) fill what structured_text_options leaves unset.
 */
export async function typesetInput(
  ctx: RunContext<StructuredFields>,
  local: string,
  name: string,
  format: StructuredFormat,
  marginPt: number,
): Promise<TypesetPrint & { file: string }> {
  const f = ctx.fields;
  const o: StructuredOptions = { ...f.structured_text_options };
  const setup = o.page_setup ?? {};
  const size = f.page_size.toLowerCase() as keyof typeof STRUCTURED_PAGE_SIZES;
  o.page_setup = {
    ...setup,
    size: setup.size ?? (setup.width === undefined ? size : undefined),
    orientation: setup.orientation ?? (f.page_orientation === 'landscape' ? 'landscape' : undefined),
    margin: { top: marginPt, right: marginPt, bottom: marginPt, left: marginPt, ...setup.margin },
  };
  o.enable_tagging ??= f.tagged_pdf;
  const images = ctx.inputs.image_files ?? [];
  const ids = f.image_ids?.length ?? 0;
  const asImage = (i: InputFile) => ({ name: i.name, path: i.path });
  const file = join(ctx.dir, 'page.html');
  const print = await typesetFile(
    {
      format,
      source: local,
      name,
      options: o,
      images: {
        uploads: images.slice(0, images.length - ids).map(asImage),
        ids: images.slice(images.length - ids).map(asImage),
        maxPixels: ctx.limits.maxImagePixels,
        maxBytes: ctx.limits.htmlMaxBytes,
      },
      out: file,
    },
    ctx.signal,
  );
  return { ...print, file };
}
