import { join } from 'node:path';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { linearizePdf } from '../rewrite/index.js';

export default operation({
  path: '/linearized-pdf',
  tag: 'Optimisation, colour and page geometry',
  summary: 'Linearize a PDF for fast web view',
  description: 'Rewrites the file so a viewer can show the first page before the rest has arrived (qpdf --linearize).',
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const path = join(dir, 'linearized.pdf');
    await linearizePdf(input.path, path, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
