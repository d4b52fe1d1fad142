import { join } from 'node:path';
import { xfaFormToAcroForm } from '../forms/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export default operation({
  path: '/pdf-with-acroforms',
  tag: 'Forms',
  summary: 'Convert an XFA form to an AcroForm',
  description:
    'Turns an XFA form into an AcroForm. Static XFA forms carry AcroForm widgets beside the XFA: the /XFA entry (and /NeedsRendering) is removed, so every viewer uses the AcroForm, and the AcroForm fields are filled from the XFA datasets (matched by name without [n] indices, as /pdf-with-imported-form-data does), with new appearances. Dynamic XFA forms (no widgets: their pages exist only once an XFA viewer lays them out) are laid out from their template and data by pdf.js in Chromium and printed; each laid-out field becomes an AcroForm field at its place: text (multiline from a text area), check box, radio group (one per exclusion group, export values from the on values of its buttons), drop-down or list, named by its XFA path (form1[0].Name[0]) and holding its current value. Metadata, attachments and names of the original are kept, /XFA and /NeedsRendering removed. The layout has the HTML limits (HTML_TIMEOUT_SECONDS, HTML_MAX_PAGES, HTML_MAX_MB, HTML_MAX_MEMORY_MB; 422 past one); a template pdf.js cannot lay out is refused (400). XFA scripts do not run, so a form whose scripts add or hide parts is laid out as its template and data stand. A PDF without XFA answers 200 with a warning and no output.',
  inputs: pdfInput('The XFA form'),
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf', 'chromium'],
  // A dynamic form is laid out in Chromium: the browser lane, whatever the form turns out to be.
  cost: { lane: 'browser' },
  run: async ({ input, dir, signal, timeoutMs, outputName, limits }) => {
    const { path, warning } = await xfaFormToAcroForm(input.path, join(dir, 'acroform.pdf'), { dir, signal, timeoutMs, limits });
    return path ? { files: [{ path, name: `${outputName}.pdf` }], warning } : { warning };
  },
});
