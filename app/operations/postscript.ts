import { openPdf, parsePages, resolvePages } from '../document/index.js';
import { outOfRange } from '../errors.js';
import { postscriptOf } from '../render/index.js';
import { oneOf, output, positive, text, trueFalse } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

/** Beyond this factor a page's content is mostly off the page; below the lower one it is a dot. */
const MAX_SCALE = 10;
const MIN_SCALE = 0.01;

export default operation({
  path: '/postscript',
  tag: 'Conversion from PDF',
  summary: 'Convert a PDF to PostScript',
  description:
    'Poppler pdftops writes the PostScript (it honours LanguageLevel 3; Ghostscript ps2write writes Level 2 whatever it is asked), each page on paper of its own size; ' +
    'a Ghostscript pdfwrite pass first applies what pdftops cannot: a page list, annotations off, rotation, scale. ' +
    '`ps_level` 2 or 3 (default 3); `page_range` e.g. `1,3-5,14-last` (default all); `print_annotations` (default true); ' +
    '`rotate` turns each page so its text runs upright (default false: pages as the PDF shows them); `scale` (> 0, default 1) scales the page ' +
    'content about the page centre, page sizes kept; `shrink_to_fit` keeps a scale above 1 from pushing content off the page (the factor is ' +
    'capped at 1). Level 2 and 3 output is always 7-bit clean (ASCII85 / hex data), so `binary_output` true and false give the same, text-safe file.',
  inputs: pdfInput(),
  fields: {
    ps_level: oneOf(['2', '3'], '3', { level2: '2', level3: '3', '2.0': '2', '3.0': '3' }).meta({ type: 'integer', enum: [2, 3], default: 3 }),
    page_range: text({ max: 4096 })
      .optional()
      .default('all')
      .meta({ type: 'string', default: 'all', examples: ['all', '1,3-5,14-last'] }),
    print_annotations: trueFalse(true),
    rotate: trueFalse(false),
    scale: positive(MAX_SCALE).optional().default(1).meta({ type: 'number', default: 1, exclusiveMinimum: 0, maximum: MAX_SCALE }),
    shrink_to_fit: trueFalse(false),
    binary_output: trueFalse(true),
    output: output(),
  },
  output: 'file',
  produces: ['ps'],
  engines: ['ghostscript', 'poppler', 'qpdf'],
  cost: { lane: 'cpu', processes: 1 },
  check: (f) => {
    if (f.scale < MIN_SCALE) throw outOfRange(f.scale, 'scale');
    if (f.page_range.trim().toLowerCase() !== 'all') parsePages(f.page_range, {}, 'page_range');
  },
  run: async ({ input, fields, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const { pageCount } = await openPdf(input.path, ctx);
    const spec = fields.page_range.trim().toLowerCase();
    const list = spec === 'all' ? undefined : resolvePages(spec, pageCount, {}, 'page_range');
    const scale = fields.shrink_to_fit ? Math.min(fields.scale, 1) : fields.scale;
    const options = {
      level: fields.ps_level === '2' ? (2 as const) : (3 as const),
      pages: list,
      annotations: fields.print_annotations,
      autoRotate: fields.rotate,
      scale,
    };
    const path = await postscriptOf(input.path, options, dir, ctx);
    return { files: [{ path, name: `${outputName}.ps` }] };
  },
});
