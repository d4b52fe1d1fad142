import { join } from 'node:path';
import { output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';
import { attachFile } from '../rewrite/index.js';

export default operation({
  path: '/pdf-with-added-attachment',
  tag: 'Content insertion',
  summary: 'Embed a file in a PDF',
  description:
    "The file is added to the document's EmbeddedFiles with its name and MIME type. PDF/A-1 and PDF/A-2 inputs are refused (those parts prohibit attachments); PDF/A-3 allows them.",
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF' },
    file_to_attach: { idField: 'id_to_attach', kind: 'any', description: 'The file to embed' },
  },
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const path = join(dir, 'attached.pdf');
    await attachFile(
      inputs.file[0].path,
      inputs.file_to_attach[0],
      path,
      { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects },
      { cwd: dir, signal, timeoutMs },
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
