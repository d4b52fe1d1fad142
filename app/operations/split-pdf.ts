import { AppError } from '../errors.js';
import { ORDER_GRAMMAR as GRAMMAR, splitPdf } from '../impose/index.js';
import { output, pageList } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

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
    const paths = await splitPdf(input.path, fields.pages, dir, progress, { cwd: dir, signal, timeoutMs });
    return { files: paths.map((path, i) => ({ path, name: `${outputName}_${i + 1}.pdf` })) };
  },
});
