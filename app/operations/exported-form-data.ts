import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../errors.js';
import { acroFormValues, openForm, readXfaPackets, writeAcroXml, writeFdf, writeXfa, writeXfdf, xfaDataFromTemplate, xfaDataOf } from '../forms/index.js';
import { oneOf, output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const FORMATS = ['fdf', 'xfdf', 'xml', 'xdp', 'xfd'] as const;
const ACRO = ['fdf', 'xfdf', 'xml'];
const XFA = ['xfd', 'xdp', 'xml'];
const NO_FORM = 'The input PDF has no form fields to export: it is not a form-based PDF (no AcroForm fields, no XFA form).';

export default operation({
  path: '/exported-form-data',
  tag: 'Forms',
  summary: 'Export the data of a PDF form',
  description:
    "Writes the values of a PDF form as a data file. AcroForm forms: data_format fdf (application/vnd.fdf), xfdf (application/vnd.adobe.xfdf) or xml (Acrobat's AcroForm XML: one element per field, nested by name, invalid names kept in xfdf:original). XFA forms: xdp (application/vnd.adobe.xdp+xml, the datasets packet in an XDP), xfd (the datasets packet alone) or xml (the data element alone). The form's datasets are exported as they are; a form without a datasets packet exports its template's fields with their default values. A format that does not fit the form is refused (400). Each file reads back through /pdf-with-imported-form-data to the same values. Signatures and push buttons are not exported.",
  inputs: pdfInput('The PDF form'),
  fields: { data_format: oneOf(FORMATS), output: output() },
  output: 'file',
  produces: ['xfdf', 'fdf', 'xml'],
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ input, fields, dir, signal, timeoutMs, outputName, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
    const { objects, acro, widgets, xfa } = await openForm(input.path, ctx, read);
    const format = fields.data_format;
    if (!acro || (!widgets.length && !xfa)) throw new AppError('invalid_input', NO_FORM);
    const pdfName = input.name;
    let bytes: Buffer;
    if (xfa) {
      if (!XFA.includes(format)) throw new AppError('out_of_range', `Input PDF contains XFA form fields. Valid options for data_format are: ${XFA.join(', ')}`);
      const packets = await readXfaPackets(input.path, objects, xfa, ctx, read.maxBytes);
      const datasets = packets.get('datasets');
      const data = (datasets && xfaDataOf(datasets)) ?? xfaDataFromTemplate(packets.get('template') ?? '');
      bytes = writeXfa(data, format as 'xdp' | 'xfd' | 'xml', pdfName);
    } else {
      if (!ACRO.includes(format))
        throw new AppError('out_of_range', `Input PDF contains AcroForm form fields. Valid options for data_format are: ${ACRO.join(', ')}`);
      const values = acroFormValues(objects, widgets);
      bytes = format === 'fdf' ? writeFdf(values, pdfName) : format === 'xfdf' ? writeXfdf(values, pdfName) : writeAcroXml(values);
    }
    const path = join(dir, `data.${format}`);
    await writeFile(path, bytes);
    return { files: [{ path, name: `${outputName}.${format}` }] };
  },
});
