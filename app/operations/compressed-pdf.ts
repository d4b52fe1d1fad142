import { readFile, stat } from 'node:fs/promises';
import { openPdf } from '../document/index.js';
import { AppError } from '../errors.js';
import { oneOf, output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import {
  compressPdf,
  LEVELS,
  PDFREST_PROFILE_DOC,
  type PdfRestPlan,
  PROFILE_DOC,
  pdfRestGs,
  pdfRestQpdfPass,
  profileSettings,
  readProfile,
} from '../rewrite/index.js';

/** CLIENTS.md: what clients expect when nothing smaller could be made. */
export const NOT_SMALLER = 'The document could not be made smaller. No output was produced.';
const MAX_PROFILE_BYTES = 64 * 1024;

export default operation({
  path: '/compressed-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Make a PDF smaller',
  description:
    'compression_level: low = lossless (qpdf: Flate streams recompressed at level 9, objects packed into object streams, unused resources dropped; text, fonts, tags, forms and images untouched); ' +
    'medium = colour and grey images above 225 dpi resampled to 150 dpi (mono above 450 to 300) and re-encoded by Ghostscript (JPEG quality 75 where it chooses JPEG), fonts subset, then the lossless pass; ' +
    'high = images above ~115 dpi resampled to 96 dpi (mono 200) and every colour/grey image re-encoded as JPEG quality 50, then the lossless pass. ' +
    'For low/medium/high the smallest of the Ghostscript and the lossless-only results is kept. Ghostscript rewrites the document: structure tags are not kept at medium/high. ' +
    `custom takes a profile (upload) or profile_id (stored JSON) in either schema, told apart by shape. pdfRest's: ${PDFREST_PROFILE_DOC} Quire's flat one: ${PROFILE_DOC} ` +
    `When the result is not smaller than the input the answer is 200 with warning "${NOT_SMALLER}" and no output.`,
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    profile: { idField: 'profile_id', kind: 'any', required: false, description: 'JSON compression profile (compression_level=custom)' },
  },
  fields: {
    compression_level: oneOf(['low', 'medium', 'high', 'custom']),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  run: async ({ fields, inputs, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const level = fields.compression_level;
    const profile = inputs.profile?.[0];
    if (level === 'custom' && !profile) throw new AppError('out_of_range', 'profile or profile_id is required when compression_level is custom');
    let settings = level === 'custom' ? null : LEVELS[level];
    let objectStreams = true;
    let plan: PdfRestPlan | undefined;
    if (level === 'custom') {
      if ((await stat(profile!.path)).size > MAX_PROFILE_BYTES) throw new AppError('out_of_range', 'The compression profile is larger than 64 KB');
      const p = readProfile(await readFile(profile!.path, 'utf8'));
      if (p.kind === 'flat') {
        settings = profileSettings(p.profile);
        objectStreams = p.profile.object_streams ?? true;
      } else {
        plan = p.plan;
        settings = await pdfRestGs(input.path, plan);
      }
    }
    const { pageCount } = await openPdf(input.path, ctx);
    const final = plan && ((from: string, to: string) => pdfRestQpdfPass(from, to, plan, ctx));
    const result = await compressPdf(input.path, dir, { settings, objectStreams, fallback: level !== 'custom', final }, { ...ctx, pages: pageCount });
    const notApplied = plan?.notApplied.length ? `Not applied: ${plan.notApplied.join(', ')}` : undefined;
    if (result.size >= result.inputSize && !plan?.writeEvenIfLarger) return { warning: notApplied ? `${NOT_SMALLER} ${notApplied}` : NOT_SMALLER };
    return { files: [{ path: result.path, name: `${outputName}.pdf` }], ...(notApplied ? { warning: notApplied } : {}) };
  },
});
