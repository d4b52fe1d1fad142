import { join } from 'node:path';
import { writePdf } from '../../engines/qpdf-edit.js';
import { inputError } from '../document/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

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
    await writePdf(input.path, path, { linearize: true }, ctx).catch((err) => {
      throw inputError(err);
    });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
