import { join } from 'node:path';
import { z } from 'zod';
import { isBoxRange, setPageBoxes } from '../impose/index.js';
import { json, looseNumber, output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const margin = z.preprocess(looseNumber, z.number().finite());
const range = z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().refine(isBoxRange));
const boxSpec = z.object({
  box: z.enum(['media', 'crop', 'bleed', 'trim', 'art']),
  pages: z.array(z.object({ range, top: margin, bottom: margin, left: margin, right: margin })).min(1),
});
/** Spec 4.5: an array of box definitions; clients also send it wrapped as {"boxes": [...]}. */
const boxesSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && !Array.isArray(v) && 'boxes' in v ? (v as { boxes: unknown }).boxes : v),
  z.array(boxSpec).min(1),
);

export default operation({
  path: '/pdf-with-page-boxes-set',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Set media, crop, bleed, trim and art boxes',
  description:
    'boxes: [{"box": "media|crop|bleed|trim|art", "pages": [{"range": "1-3|all|even|odd|last|2-last", "top": 10, "bottom": 10, "left": 10, "right": 10}]}]. Margins in PDF units, inward from the current media box; negative margins enlarge the media box only.',
  inputs: pdfInput(),
  fields: { boxes: json(boxesSchema), output: output() },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, limits }) => {
    const path = join(dir, 'boxes.pdf');
    await setPageBoxes(input.path, fields.boxes, path, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
