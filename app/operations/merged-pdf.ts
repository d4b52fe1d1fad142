import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { ORDER_GRAMMAR as GRAMMAR, mergePdfs } from '../impose/index.js';
import { list, looseList, output, pageList } from '../requests/fields.js';
import { type InputFile, operation } from '../requests/operation.js';

/**
 * The client's order of inputs (spec 4.8): the n-th `file` in type[] is the n-th upload, the n-th `id`
 * the n-th id. Without type[] the order is unambiguous only when all inputs are of one kind.
 */
export function interleave<T>(uploads: T[], ids: T[], types: readonly ('file' | 'id')[] | undefined): T[] {
  if (!types) {
    if (uploads.length && ids.length)
      throw new AppError('out_of_range', 'type is required when both files and ids are sent: one value (file or id) per input, in order');
    return [...uploads, ...ids];
  }
  const files = types.filter((t) => t === 'file').length;
  if (types.length !== uploads.length + ids.length || files !== uploads.length) {
    throw new AppError(
      'out_of_range',
      `${types.join(',')} is not within the acceptable range for type: it needs one value per input, ${uploads.length} file and ${ids.length} id`,
    );
  }
  let u = 0;
  let i = 0;
  return types.map((t) => (t === 'file' ? uploads[u++] : ids[i++]));
}

export default operation({
  path: '/merged-pdf',
  tag: 'Assembly and creation',
  summary: 'Merge pages of several PDFs into one',
  description:
    'Inputs are uploads (file, repeated) and/or stored ids (id[]); type[] (file or id, one per input) fixes their order and pages[] (one per input) the pages taken from each, with reversed ranges (9-2, last-2), even and odd. The same file may appear more than once.',
  inputs: { file: { idField: 'id', kind: 'pdf', multiple: true, description: 'PDFs to merge, in order' } },
  fields: {
    // Declared as a field too, to tell ids from uploads in ctx.inputs (uploads first, then ids).
    id: z
      .preprocess(
        (v) =>
          looseList(v)
            ?.flatMap((x) => String(x).split(','))
            .map((x) => x.trim())
            .filter(Boolean),
        z.array(z.string()).optional(),
      )
      .meta({ type: 'array', items: { type: 'string', format: 'uuid' } }),
    pages: pageList(GRAMMAR).optional(),
    type: list(['file', 'id']).optional(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  defaultName: () => 'service_merged-pdf',
  run: async ({ fields, inputs, dir, signal, timeoutMs, outputName }) => {
    const all = inputs.file;
    const idCount = Math.min(fields.id?.length ?? 0, all.length);
    const ordered: InputFile[] = interleave(all.slice(0, all.length - idCount), all.slice(all.length - idCount), fields.type);
    const pages = fields.pages ?? ordered.map(() => '1-last');
    if (pages.length !== ordered.length) {
      throw new AppError(
        'out_of_range',
        `${pages.join(',')} is not within the acceptable range for pages: it needs one page selection per input (${ordered.length})`,
      );
    }
    const path = join(dir, 'merged.pdf');
    await mergePdfs(
      ordered.map((f, n) => ({ path: f.path, pages: pages[n] })),
      path,
      { cwd: dir, signal, timeoutMs },
    );
    return { files: [{ path, name: `${outputName}.pdf` }], inputs: ordered };
  },
});
