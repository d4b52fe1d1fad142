import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { splitPages } from '../../engines/qpdf-edit.js';
import { openPdf, resolvePages } from '../document/index.js';
import { AppError } from '../errors.js';
import { output, pageList } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };

/**
 * Groups of equal size go through one qpdf run (`--pages` then `--split-pages=size`): one single-page
 * PDF per page of a 1000-page file is one process, and any pages[] list costs one run per distinct size.
 */
export function runsBySize(groups: number[][]): { size: number; members: number[] }[] {
  const bySize = new Map<number, number[]>();
  groups.forEach((g, i) => bySize.set(g.length, [...(bySize.get(g.length) ?? []), i]));
  return [...bySize].map(([size, members]) => ({ size, members }));
}

export default operation({
  path: '/split-pdf',
  tag: 'Assembly and creation',
  summary: 'Split a PDF into several',
  description:
    'Each pages[] entry yields one PDF, in the order given (reversed ranges, even and odd allowed); without pages[], one PDF per page. Outputs are named output_1.pdf, output_2.pdf, ...',
  inputs: pdfInput(),
  fields: {
    pages: pageList(GRAMMAR).optional(),
    output: output(),
  },
  output: 'files',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  check: (f) => {
    // Observed in the official clients' tests (CLIENTS.md): a split of just ["last"] is rejected.
    if (f.pages?.length === 1 && f.pages[0].trim().toLowerCase() === 'last') {
      throw new AppError('out_of_range', 'last is not within the acceptable range for pages: a split needs more than the last page alone');
    }
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const { pageCount } = await openPdf(input.path, ctx);
    const groups = fields.pages ? fields.pages.map((spec) => resolvePages(spec, pageCount, GRAMMAR)) : Array.from({ length: pageCount }, (_, i) => [i + 1]);
    const paths: string[] = new Array(groups.length);
    const runs = runsBySize(groups);
    for (const [r, { size, members }] of runs.entries()) {
      const sub = join(dir, `split-${r}`);
      await mkdir(sub);
      const parts = await splitPages({ path: input.path, pages: members.flatMap((m) => groups[m]) }, join(sub, 'part-%d.pdf'), size, ctx);
      members.forEach((m, k) => (paths[m] = parts[k]));
      progress((r + 1) / runs.length);
    }
    return { files: paths.map((path, i) => ({ path, name: `${outputName}_${i + 1}.pdf` })) };
  },
});
