import { join } from 'node:path';
import { readableXfa } from '../forms/index.js';
import { oneOf, output, trueFalse } from '../requests/fields.js';
import { operation, pdfInput, type RunContext } from '../requests/operation.js';
import { type FlattenOptions, flattenDocument } from '../rewrite/index.js';

const TAG = 'Optimisation, colour and page geometry';

/**
 * pdfRest's qualities as dpi for line art / for gradients. Ghostscript flattens at one resolution, and a page
 * at 1200 dpi is ~400 MB of pixels, so the gradient figure is the one used.
 */
export const TRANSPARENCY_DPI = {
  high: { lineArt: 1200, gradients: 300 },
  medium: { lineArt: 300, gradients: 150 },
  low: { lineArt: 288, gradients: 144 },
} as const;

/** The shared steps, in app/rewrite: open (401 / 400), fresh field appearances from qpdf, then one pdfwrite pass. */
async function flatten(ctx: Pick<RunContext<unknown>, 'input' | 'dir' | 'signal' | 'timeoutMs' | 'outputName'>, opts: FlattenOptions, appearances: boolean) {
  const { input, dir, signal, timeoutMs, outputName } = ctx;
  const path = join(dir, 'flattened.pdf');
  await flattenDocument(input.path, path, opts, appearances, dir, { cwd: dir, signal, timeoutMs });
  return { files: [{ path, name: `${outputName}.pdf` }] };
}

const cost = { lane: 'cpu', processes: 1 } as const;

const forms = operation({
  path: '/flattened-forms-pdf',
  tag: TAG,
  summary: 'Flatten form fields into page content',
  description:
    'Every form field is drawn into its page as it shows (values visible) and the form is removed: no widgets and no AcroForm remain; other annotations are kept. ' +
    'Fields whose value has no appearance, or whose form asks for new ones (/NeedAppearances), get one from qpdf first; Ghostscript pdfwrite then draws them. ' +
    '`as_printed=true` draws the fields as printed (fields marked not to print are left out) instead of as on screen. A dynamic XFA form (XFA without AcroForm widgets) is flattened as pdf.js lays it out from its template and data, values drawn (said in `warning`), not as its placeholder page.',
  inputs: pdfInput(),
  fields: { as_printed: trueFalse(false), output: output() },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  cost,
  run: async (ctx) => {
    const { path, warning } = await readableXfa(ctx.input.path, ctx);
    const result = await flatten({ ...ctx, input: { ...ctx.input, path } }, { printed: ctx.fields.as_printed }, true);
    return { ...result, warning };
  },
});

const annotations = operation({
  path: '/flattened-annotations-pdf',
  tag: TAG,
  summary: 'Flatten annotations into page content',
  description:
    'Every visible annotation (comments, highlights, ink, stamps, free text, form fields) is drawn into its page and removed; an annotation without an appearance stream is drawn with one Ghostscript synthesises. ' +
    'Links and other annotations with nothing to draw are removed too, so no annotation remains; hidden annotations are dropped.',
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  cost,
  run: async (ctx) => flatten(ctx, { annotations: true }, true),
});

const layers = operation({
  path: '/flattened-layers-pdf',
  tag: TAG,
  summary: 'Flatten optional content (layers)',
  description:
    "Content of the layers visible in the document's default configuration (/OCProperties /D: /BaseState, /ON, /OFF) is kept as ordinary page content; content of hidden layers is removed. The output has no optional content groups.",
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  cost,
  run: async (ctx) => flatten(ctx, {}, true),
});

const transparencies = operation({
  path: '/flattened-transparencies-pdf',
  tag: TAG,
  summary: 'Flatten transparency',
  description:
    'Writes PDF 1.3, which has no transparency: Ghostscript pdfwrite draws each page that uses transparency (soft masks, constant alpha, blend modes, transparency groups) as an image; other pages keep their text and vectors. ' +
    `quality sets that resolution: high ${TRANSPARENCY_DPI.high.gradients} dpi, medium ${TRANSPARENCY_DPI.medium.gradients}, low ${TRANSPARENCY_DPI.low.gradients} (pdfRest's gradient resolutions; Ghostscript has one resolution, not a separate one for line art).`,
  inputs: pdfInput(),
  fields: { quality: oneOf(['low', 'medium', 'high'], 'medium'), output: output() },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  cost,
  run: async (ctx) => flatten(ctx, { transparencyDpi: TRANSPARENCY_DPI[ctx.fields.quality].gradients }, true),
});

export default [forms, annotations, layers, transparencies];
