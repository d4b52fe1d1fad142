import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { ReadLimitError, streamData } from '../../engines/qpdf.js';
import { writeFilledForm } from '../../engines/qpdf-form.js';
import { inputError, type PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';
import { beyondWinAnsi, redrawUnicodeFields } from './form-appearance.js';
import { planFill, readFormData } from './form-data.js';
import { openForm } from './open-form.js';

const NO_FORM = 'The input PDF has no form fields to fill: it is not a form-based PDF (no AcroForm fields, no XFA form).';
const list = (names: string[]) => (names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', '));

/**
 * The form in `pdf` filled from a data file into `output`: AcroForm fields by fully qualified name (new
 * appearances), and for an XFA form its datasets packet replaced. Data matching no field is refused. Returns the
 * warning naming the values not imported, if any.
 */
export async function importFormData(
  pdf: string,
  dataFile: { path: string; name: string },
  output: string,
  read: { maxBytes: number; maxObjects: number },
  ctx: EngineContext & { signal: AbortSignal; timeoutMs: number },
): Promise<string | undefined> {
  const { path: source, json, objects, acroRef, acro, widgets, xfa } = await openForm(pdf, ctx, read, { unpackTo: join(ctx.cwd, 'unpacked.pdf') });
  const data = await readFormData(dataFile.path, dataFile.name, ctx);
  if (!acro || (!widgets.length && !xfa)) throw new AppError('invalid_input', NO_FORM);

  const plan = planFill(objects, widgets, data.fields);
  const header = json.qpdf![0] as { maxobjectid: number };
  const streams: Record<string, unknown> = {};
  let xfaFilled = false;
  let xfaUnknown: string[] = [];
  if (xfa && data.datasets) {
    // Data for a form that has none of its fields is the wrong data: checked against the template's names.
    const names = await templateNames(source, objects, xfa, ctx, read.maxBytes);
    xfaUnknown = data.fields.filter((f) => !names.has(f.name.split('.').pop()!)).map((f) => f.name);
    xfaFilled = !data.fields.length || xfaUnknown.length < data.fields.length;
  }
  if (xfaFilled && data.datasets) {
    const packet = Buffer.from(data.datasets, 'utf8');
    const parts = objects.array(xfa);
    if (parts.length) {
      // An array of (packet name, stream): replace the datasets stream, or add one before the postamble.
      const names = parts.map((p, i) => (i % 2 === 0 ? pdfText(p) : ''));
      const at = names.indexOf('datasets');
      if (at >= 0 && typeof parts[at + 1] === 'string') {
        streams[`obj:${parts[at + 1]}`] = { stream: { dict: {}, data: packet.toString('base64') } };
      } else {
        const ref = `${header.maxobjectid + 1} 0 R`;
        streams[`obj:${ref}`] = { stream: { dict: {}, data: packet.toString('base64') } };
        const post = names.indexOf('postamble');
        const next = [...parts];
        next.splice(post >= 0 ? post : next.length, 0, 'u:datasets', ref);
        setAcro(plan.updates, objects, acroRef, { '/XFA': next });
      }
    } else if (typeof xfa === 'string') {
      // One stream holding the whole XDP: its datasets element is replaced (or added before </xdp:xdp>).
      const whole = (
        await streamData(source, xfa.replace(/ R$/, ''), ctx, read).catch((err) => {
          throw inputError(err);
        })
      ).toString('utf8');
      const replaced = /<([\w.-]+:)?datasets\b[\s\S]*?<\/\1?datasets\s*>/.test(whole)
        ? whole.replace(/<([\w.-]+:)?datasets\b[\s\S]*?<\/\1?datasets\s*>/, data.datasets)
        : whole.replace(/(<\/[\w.-]*:?xdp\s*>)\s*$/, `${data.datasets}$1`);
      streams[`obj:${xfa}`] = { stream: { dict: {}, data: Buffer.from(replaced, 'utf8').toString('base64') } };
    }
  }
  if (!plan.filled.length && !xfaFilled) {
    const detail = data.fields.length ? `none of its fields (${list(data.fields.map((f) => f.name))}) is in this form` : 'it holds no field values';
    throw new AppError('invalid_input', `The data_file does not match this form: ${detail}, so the form could not be filled correctly.`);
  }
  if (plan.filled.length) setAcro(plan.updates, objects, acroRef, { '/NeedAppearances': true });

  const updates: Record<string, unknown> = { ...streams };
  for (const [ref, value] of plan.updates) updates[`obj:${ref}`] = { value };
  const update = join(ctx.cwd, 'form-update.json');
  await writeFile(update, JSON.stringify({ qpdf: [header, updates] }));
  await writeFilledForm(source, output, update, ctx).catch((err) => {
    throw inputError(err);
  });
  // Only then is the filled file read again (pdf-lib holds it whole in memory).
  if (data.fields.some((f) => f.values.some(beyondWinAnsi))) await redrawUnicodeFields(output);
  // With XFA data, a name is unknown when neither the template nor the AcroForm fields have it.
  if (xfaFilled) plan.unknown = plan.unknown.filter((n) => xfaUnknown.includes(n));
  const ignored = [...plan.unknown.map((n) => `${n} (not in the form)`), ...plan.skipped.map((n) => `${n} (not fillable with that value)`)];
  return ignored.length
    ? `${ignored.length} value${ignored.length > 1 ? 's' : ''} of the data file ${ignored.length > 1 ? 'were' : 'was'} not imported: ${list(ignored)}.`
    : undefined;
}

/** Changes the AcroForm dictionary, wherever it lives (its own object, or inline in the catalog). */
function setAcro(updates: Map<string, Record<string, unknown>>, objects: PdfObjects, acroRef: unknown, change: Record<string, unknown>): void {
  if (typeof acroRef === 'string' && / R$/.test(acroRef)) {
    const d = updates.get(acroRef) ?? { ...(objects.dict(acroRef) ?? {}) };
    updates.set(acroRef, { ...d, ...change });
    return;
  }
  const rootRef = objects.trailer['/Root'] as string;
  const root = updates.get(rootRef) ?? { ...objects.catalog };
  root['/AcroForm'] = { ...((root['/AcroForm'] as Record<string, unknown>) ?? {}), ...change };
  updates.set(rootRef, root);
}

/** Names of the fields, subforms and exclusion groups in the XFA template packet. */
async function templateNames(
  pdf: string,
  objects: PdfObjects,
  xfa: unknown,
  ctx: { cwd: string; signal: AbortSignal; timeoutMs: number },
  maxBytes: number,
): Promise<Set<string>> {
  const parts = objects.array(xfa);
  const at = parts.findIndex((p, i) => i % 2 === 0 && pdfText(p) === 'template');
  const ref = parts.length ? parts[at + 1] : xfa;
  if (typeof ref !== 'string' || (parts.length && at < 0)) return new Set();
  const xml = (
    await streamData(pdf, ref.replace(/ R$/, ''), ctx, { maxBytes }).catch((err) => {
      if (err instanceof ReadLimitError) throw inputError(err);
      return Buffer.alloc(0);
    })
  ).toString('utf8');
  return new Set([...xml.matchAll(/<(?:field|subform|exclGroup)\b[^>]*\bname="([^"]+)"/g)].map((m) => m[1]));
}
