import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFilledForm } from '../../engines/qpdf-form.js';
import { inputError } from '../document/index.js';
import { beyondWinAnsi, redrawUnicodeFields } from './form-appearance.js';
import { type FieldValue, normalName, planFill, readFormData } from './form-data.js';
import { openForm } from './open-form.js';
import { type XfaRun, xfaToAcroForm } from './xfa-layout.js';
import { readXfaPackets } from './xfa-packets.js';

export const NO_XFA = 'No XFA forms were detected in the input PDF. No output was produced.';

/**
 * An XFA form turned into an AcroForm at `output`: a static form loses its /XFA and its AcroForm fields take the XFA
 * data; a dynamic one is laid out by pdf.js and its fields made AcroForm fields. Without XFA, no path and NO_XFA.
 */
export async function xfaFormToAcroForm(input: string, output: string, run: XfaRun): Promise<{ path?: string; warning?: string }> {
  const { dir, limits } = run;
  const ctx = { cwd: dir, signal: run.signal, timeoutMs: run.timeoutMs };
  const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
  const { path: source, json, objects, acroRef, acro, widgets, xfa } = await openForm(input, ctx, read, { unpackTo: join(dir, 'unpacked.pdf') });
  if (!acro || xfa === undefined || xfa === null) return { warning: NO_XFA };
  if (!widgets.length) {
    const converted = await xfaToAcroForm(input, output, run);
    return {
      path: converted.path,
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
  const path = output;
  await writeFilledForm(source, path, update, ctx).catch((err) => {
    throw inputError(err);
  });
  if (values.some((f) => f.values.some(beyondWinAnsi))) await redrawUnicodeFields(path);
  const missed = [...plan.unknown, ...plan.skipped];
  return {
    path,
    warning: missed.length
      ? `${missed.length} value${missed.length > 1 ? 's' : ''} of the XFA data had no AcroForm field to go to: ${missed.slice(0, 10).join(', ')}${missed.length > 10 ? ` and ${missed.length - 10} more` : ''}.`
      : undefined,
  };
}
