import { join } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import { z } from 'zod';
import { applyStamps, type ContentTag, drawShape, markedContent, pageFrames, STRUCTURE_TYPES, type StampTarget } from '../compose/index.js';
import { AppError, outOfRange } from '../errors.js';
import { colorValues, jsonObjects, looseBool, looseNumber, num, output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

const MAX_SHAPES = 1000;
const flag = z.preprocess(looseBool, z.boolean()).optional();
const coord = num(0, 100000);
const page = z.preprocess(
  (v) => (typeof v === 'string' && v.trim().toLowerCase() === 'all' ? 'all' : looseNumber(v)),
  z.union([z.literal('all'), z.number().int().min(1)]),
);

// Keys of the SDK's models (extra keys are refused there, so they are here).
const common = {
  page,
  stroke_color_rgb: colorValues(3, 255).optional(),
  stroke_color_cmyk: colorValues(4, 100).optional(),
  stroke_width: z.preprocess(looseNumber, z.number().gt(0).max(1000)).optional(),
  opacity: num(0, 1, 1),
  tag_actual_text: z.string().min(1).max(10000).optional(),
  tag_is_artifact: flag,
  tag_structure_type: z.enum(STRUCTURE_TYPES).optional(),
};
const shapeObject = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('line'), x1: coord, y1: coord, x2: coord, y2: coord, ...common }),
  z.strictObject({
    type: z.literal('rectangle'),
    x: coord,
    y: coord,
    width: z.preprocess(looseNumber, z.number().gt(0).max(100000)),
    height: z.preprocess(looseNumber, z.number().gt(0).max(100000)),
    fill_color_rgb: colorValues(3, 255).optional(),
    fill_color_cmyk: colorValues(4, 100).optional(),
    ...common,
  }),
]);
type ShapeObject = z.infer<typeof shapeObject>;

const objects = jsonObjects(shapeObject);

export default operation({
  path: '/pdf-with-added-shapes',
  tag: 'Content insertion',
  summary: 'Add lines and rectangles to pages',
  description:
    `shape_objects is a JSON array (or one object) of shapes, at most ${MAX_SHAPES}: {"type": "line", x1, y1, x2, y2} or {"type": "rectangle", x, y (lower-left corner), width, height, fill_color_rgb ("r,g,b", 0-255) or fill_color_cmyk ("c,m,y,k", 0-100)}, each with page (a number or "all"), stroke_color_rgb or stroke_color_cmyk (default black), stroke_width (default 1), opacity (0-1, fill and stroke). Coordinates are PDF units from the lower-left corner of the page as seen (trim box, after /Rotate). A rectangle is outlined when it has a stroke colour or width, or no fill. ` +
    'The shapes are drawn on a layer laid over the page; the original content is kept as it is. With tag_enabled each shape is marked content: an /Artifact (the default, and whenever tag_is_artifact is true), else tagged with tag_structure_type (default Span) and carrying tag_actual_text as /ActualText. The marked content is not linked into the structure tree of a tagged input. Tag options without tag_enabled are refused.',
  inputs: { file: { idField: 'id', kind: 'pdf', description: 'The PDF' } },
  fields: {
    shape_objects: objects.meta({ type: 'string', description: 'JSON array of shape objects' }),
    tag_enabled: z
      .preprocess(looseBool, z.boolean())
      .optional()
      .meta({ type: 'string', enum: ['true', 'false'], default: 'false' }),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  cost: { lane: 'light' },
  check: (f) => {
    if (f.shape_objects.length > MAX_SHAPES)
      throw new AppError('out_of_range', `shape_objects: at most ${MAX_SHAPES} shapes per request (${f.shape_objects.length} given)`);
    f.shape_objects.forEach((o, i) => {
      if (o.stroke_color_rgb && o.stroke_color_cmyk)
        throw new AppError('out_of_range', `shape_objects[${i}] cannot contain both stroke_color_rgb and stroke_color_cmyk`);
      if (o.type === 'rectangle' && o.fill_color_rgb && o.fill_color_cmyk)
        throw new AppError('out_of_range', `shape_objects[${i}] cannot contain both fill_color_rgb and fill_color_cmyk`);
      const tagged = o.tag_actual_text !== undefined || o.tag_is_artifact !== undefined || o.tag_structure_type !== undefined;
      if (tagged && f.tag_enabled !== true) throw new AppError('out_of_range', `shape_objects[${i}]: tag_enabled must be true when tag options are provided`);
    });
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const frames = await pageFrames(input.path, ctx);
    const shapes = fields.shape_objects;
    shapes.forEach((o, i) => {
      if (o.page !== 'all' && o.page > frames.length)
        throw outOfRange(o.page, `shape_objects[${i}].page (the PDF has ${frames.length} page${frames.length > 1 ? 's' : ''})`);
    });
    const targets: StampTarget[] = [];
    frames.forEach((frame, i) => {
      const on = shapes.flatMap((o, n) => (o.page === 'all' || o.page === i + 1 ? [n] : []));
      if (on.length) targets.push({ page: i + 1, frame, key: on.join(',') });
    });
    const doc = await PDFDocument.create();
    const path = join(dir, 'with-shapes.pdf');
    await applyStamps(
      input.path,
      path,
      doc,
      targets,
      (p, t) => {
        for (const n of t.key.split(',').map(Number)) markedContent(p, fields.tag_enabled ? tagOf(shapes[n]) : undefined, () => drawShape(p, shapes[n]));
      },
      false,
      ctx,
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});

function tagOf(o: ShapeObject): ContentTag {
  if (o.tag_is_artifact || (o.tag_actual_text === undefined && o.tag_structure_type === undefined && o.tag_is_artifact === undefined))
    return { artifact: true };
  return { type: o.tag_structure_type, actualText: o.tag_actual_text };
}
