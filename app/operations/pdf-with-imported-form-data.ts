import { join } from 'node:path';
import { DATA_EXTENSIONS, importFormData } from '../forms/index.js';
import { output } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

export default operation({
  path: '/pdf-with-imported-form-data',
  tag: 'Forms',
  summary: 'Fill a PDF form from a data file',
  description:
    "data_file (or data_file_id): .fdf, .xfdf or .xml (Acrobat's AcroForm XML export) for AcroForm fields; .xdp, .xfd or .xml XFA data for XFA forms. Fields are matched by their fully qualified names (XFA data paths also match AcroForm names without [n] indices). Text and choice fields get new appearances (qpdf); check boxes and radio buttons take the state the value names (check boxes also yes/on/true, and off/no/false to clear). For an XFA form the data replaces the form's datasets packet (shown by XFA viewers such as Acrobat; other viewers show the form's fallback pages) and also fills the AcroForm fields a static XFA form carries. Names in the data that are not in the form are ignored and listed in `warning`; data that matches no field at all is refused (400).",
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF form' },
    data_file: { idField: 'data_file_id', kind: 'any', extensions: DATA_EXTENSIONS, description: 'The form data (.fdf, .xfdf, .xml, .xdp, .xfd)' },
  },
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ inputs, dir, signal, timeoutMs, outputName, limits }) => {
    const path = join(dir, 'filled.pdf');
    const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
    const warning = await importFormData(inputs.file[0].path, inputs.data_file[0], path, read, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
