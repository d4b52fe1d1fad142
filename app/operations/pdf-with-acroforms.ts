import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFilledForm } from '../../engines/qpdf-form.js';
import { inputError } from '../document/index.js';
import {
  beyondWinAnsi,
  type FieldValue,
  normalName,
  openForm,
  planFill,
  readFormData,
  readXfaPackets,
  redrawUnicodeFields,
  xfaToAcroForm,
} from '../forms/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

export const NO_XFA = 'No XFA forms were detected in the input PDF. No output was produced.';

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
    const ctx = { cwd: dir, signal, timeoutMs };
    const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
    const { path: source, json, objects, acroRef, acro, widgets, xfa } = await openForm(input.path, ctx, read, { unpackTo: join(dir, 'unpacked.pdf') });
    if (!acro || xfa === undefined || xfa === null) return { warning: NO_XFA };
    if (!widgets.length) {
      const converted = await xfaToAcroForm(input.path, join(dir, 'acroform.pdf'), { dir, signal, timeoutMs, limits });
      return {
        files: [{ path: converted.path, name: `${outputName}.pdf` }],
        warning:
          `The dynamic XFA form was laid out by pdf.js (${converted.pages} page${converted.pages === 1 ? '' : 's'}, ${converted.fields} field${converted.fields === 1 ? '' : 's'}); check the result against the form in an XFA viewer.` +
          (converted.skipped.length ? ` Fields left out (they could not be made as AcroForm fields): ${converted.skipped.slice(0, 10).join(', ')}.` : ''),
      };
    }

    // The XFA data, read by our importer, onto the AcroForm fields.
    const packets = await readXfaPackets(source, objects, xfa, ctx, read.maxBytes);
    let values: FieldValue[] = [];
    const datasets = packets.get('datasets');
    if (datasets) {
      const file = join(dir, 'datasets.xfd');
      await writeFile(
        file,
        datasets.includes('xmlns:xfa') ? datasets : datasets.replace(/^<xfa:datasets/, '<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"'),
      );
      values = (await readFormData(file, 'datasets.xfd', ctx).catch(() => ({ fields: [] as FieldValue[] }))).fields;
    }
    // Designer names AcroForm fields after the whole XFA path (form1[0].page1[0].Name[0]); other producers
    // leave the root subform out: a data path that matches nothing is tried without its root.
    const names = new Set(widgets.map((w) => normalName(w.fullname)));
    values = values.map((v) => {
      const n = normalName(v.name);
      const rest = n.split('.').slice(1).join('.');
      return names.has(n) || !names.has(rest) ? v : { ...v, name: rest };
    });
    const plan = planFill(objects, widgets, values);

    const rootRef = objects.trailer['/Root'] as string;
    const root = plan.updates.get(rootRef) ?? { ...objects.catalog };
    delete root['/NeedsRendering'];
    const change = (d: Record<string, unknown>) => {
      const next = { ...d };
      delete next['/XFA'];
      if (plan.filled.length) next['/NeedAppearances'] = true;
      return next;
    };
    if (typeof acroRef === 'string' && / R$/.test(acroRef)) plan.updates.set(acroRef, change(plan.updates.get(acroRef) ?? { ...acro }));
    else root['/AcroForm'] = change(acro);
    plan.updates.set(rootRef, root);

    const header = json.qpdf![0] as { maxobjectid: number };
    const updates: Record<string, unknown> = {};
    for (const [ref, value] of plan.updates) updates[`obj:${ref}`] = { value };
    const update = join(dir, 'form-update.json');
    await writeFile(update, JSON.stringify({ qpdf: [header, updates] }));
    const path = join(dir, 'acroform.pdf');
    await writeFilledForm(source, path, update, ctx).catch((err) => {
      throw inputError(err);
    });
    if (values.some((f) => f.values.some(beyondWinAnsi))) await redrawUnicodeFields(path);
    const missed = [...plan.unknown, ...plan.skipped];
    return {
      files: [{ path, name: `${outputName}.pdf` }],
      warning: missed.length
        ? `${missed.length} value${missed.length > 1 ? 's' : ''} of the XFA data had no AcroForm field to go to: ${missed.slice(0, 10).join(', ')}${missed.length > 10 ? ` and ${missed.length - 10} more` : ''}.`
        : undefined,
    };
  },
});
