import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFField, PDFName, type PDFPage, rgb, StandardFonts } from '@cantoo/pdf-lib';
import { layOutXfa, type XfaField, XfaLayoutError, xfaLayoutAvailable } from '../../engines/chromium/xfa.js';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { popplerFormKind } from '../../engines/poppler.js';
import { encryptionOf } from '../../engines/qpdf.js';
import { arrangePages, runJob, writePdf } from '../../engines/qpdf-edit.js';
import { expectOutput } from '../../engines/run.js';
import type { Limits } from '../config.js';
import { invalidInput, limitExceeded } from '../errors.js';
import { beyondWinAnsi, redrawUnicodeFields } from './form-appearance.js';
import { openForm } from './open-form.js';

/**
 * Dynamic XFA forms (an XFA template and data, no AcroForm widgets: the pages exist only once an XFA viewer lays
 * them out; other viewers show a "please wait" placeholder page). pdf.js lays the form out in Chromium
 * (engines/chromium/xfa.ts); from that one layout come
 * - the form as it looks, for everything that reads pages (rendering, text, flattening): `readableXfa`;
 * - an AcroForm: the laid-out pages, the original's catalog (metadata, attachments, names) kept, the XFA dropped,
 *   and a field at each laid-out field's place, named by its XFA path, with its value: `xfaToAcroForm`.
 */

export interface XfaRun {
  dir: string;
  signal?: AbortSignal;
  timeoutMs: number;
  limits: Pick<Limits, 'htmlTimeoutMs' | 'htmlMaxPages' | 'htmlMaxBytes' | 'htmlMaxMemoryBytes' | 'maxStreamBytes' | 'maxObjects'>;
}

export const XFA_RENDER_WARNING =
  'The input PDF is a dynamic XFA form: its pages were laid out from the XFA template and data (pdf.js), and that layout was processed instead of the placeholder page the PDF carries.';

const ctxOf = (run: XfaRun): EngineContext => ({ cwd: run.dir, signal: run.signal, timeoutMs: run.timeoutMs });

/**
 * Whether `pdf` is a dynamic XFA form: Poppler names its form XFA (one cheap read, so every other PDF costs
 * only that), and qpdf finds no AcroForm widgets. A file neither can read is not one (its own read fails later).
 */
export async function isDynamicXfa(pdf: string, run: XfaRun): Promise<boolean> {
  const ctx = ctxOf(run);
  const kind = await popplerFormKind(pdf, ctx).catch(() => 'none');
  if (kind !== 'XFA') return false;
  const form = await openForm(pdf, ctx, { maxBytes: run.limits.maxStreamBytes, maxObjects: run.limits.maxObjects }).catch(() => null);
  return !!form?.acro && form.xfa !== undefined && form.xfa !== null && !form.widgets.length;
}

interface Laid {
  flat: string;
  bare: string;
  pages: { width: number; height: number }[];
  fields: XfaField[];
}

/** One layout per file and job: the renderers and the converter of one job share it. */
const laidOut = new Map<string, Promise<Laid>>();

/** Lays the form out (once per job dir and file), with the HTML limits; errors as the client should see them. */
function layOut(pdf: string, run: XfaRun): Promise<Laid> {
  const key = `${run.dir}\0${pdf}`;
  let p = laidOut.get(key);
  if (!p) {
    const n = laidOut.size + 1;
    const flat = join(run.dir, `xfa-layout-${n}.pdf`);
    const bare = join(run.dir, `xfa-layout-${n}-bare.pdf`);
    const { limits } = run;
    p = layOutXfa(
      pdf,
      { flat, bare },
      {
        limits: { timeoutMs: limits.htmlTimeoutMs, maxPages: limits.htmlMaxPages, maxBytes: limits.htmlMaxBytes, maxMemoryBytes: limits.htmlMaxMemoryBytes },
      },
      ctxOf(run),
    )
      .then((layout) => ({ flat, bare, ...layout }))
      .catch((err) => {
        throw xfaError(err, run.limits);
      })
      .finally(() => setTimeout(() => laidOut.delete(key), 60_000).unref());
    laidOut.set(key, p);
  }
  return p;
}

function xfaError(err: unknown, limits: XfaRun['limits']): unknown {
  if (err instanceof XfaLayoutError) return invalidInput(`its XFA form could not be laid out (pdf.js: ${err.reason})`);
  if (!(err instanceof EngineError) || !err.details.limit) return err;
  const l = err.details.limit;
  if (l === 'time') return limitExceeded('Laying out the XFA form', 'HTML_TIMEOUT_SECONDS', limits.htmlTimeoutMs / 1000);
  if (l === 'pages') return limitExceeded('The number of pages of the XFA form', 'HTML_MAX_PAGES', limits.htmlMaxPages);
  if (l === 'memory') return limitExceeded("The memory of the XFA form's page", 'HTML_MAX_MEMORY_MB', limits.htmlMaxMemoryBytes / 1024 / 1024);
  return limitExceeded('The size of the XFA form', 'HTML_MAX_MB', limits.htmlMaxBytes / 1024 / 1024);
}

/**
 * The PDF that page readers should read: for a dynamic XFA form, its laid-out pages (values drawn) with a warning;
 * any other PDF as it is. Without Chromium or pdf.js, the XFA form's placeholder page, with a warning saying so.
 */
export async function readableXfa(pdf: string, run: XfaRun): Promise<{ path: string; warning?: string }> {
  if (!(await isDynamicXfa(pdf, run))) return { path: pdf };
  if (!xfaLayoutAvailable())
    return {
      path: pdf,
      warning: 'The input PDF is a dynamic XFA form and this server cannot lay XFA out (pdf.js is not installed): its placeholder page was processed.',
    };
  return { path: (await layOut(pdf, run)).flat, warning: XFA_RENDER_WARNING };
}

export interface XfaConversion {
  path: string;
  pages: number;
  /** AcroForm fields made (a radio group counts once). */
  fields: number;
  /** Widgets placed. */
  widgets: number;
  /** Fields that could not be made (left out). */
  skipped: string[];
}

/**
 * A dynamic XFA form as an AcroForm: the laid-out pages (without the fields' controls) in place of the
 * placeholder, the original's catalog kept (metadata, attachments, names, document JavaScript), /XFA and
 * /NeedsRendering removed, and a field at each laid-out field: text (multiline from a text area), check box,
 * radio group (one per exclusion group, its buttons' on values as export values), drop-down or list, named by
 * the field's XFA path (`form1[0].Name[0]`) and holding its current value.
 */
export async function xfaToAcroForm(pdf: string, output: string, run: XfaRun): Promise<XfaConversion> {
  const laid = await layOut(pdf, run);
  const merged = join(run.dir, 'xfa-pages.pdf');
  const ctx = ctxOf(run);
  await arrangePages(pdf, [{ path: laid.bare, pages: laid.pages.map((_, i) => i + 1) }], merged, ctx);
  // An encrypted form that opens without a password (owner restrictions only): pdf-lib edits a decrypted copy, and
  // the result takes the original's encryption back (qpdf --copy-encryption).
  const encrypted = (await encryptionOf(pdf, ctx)) === 'open';
  const editable = encrypted ? join(run.dir, 'xfa-pages-decrypted.pdf') : merged;
  if (encrypted) await writePdf(merged, editable, { decrypt: true }, ctx);
  const doc = await PDFDocument.load(await readFile(editable), { updateMetadata: false, preserveXFA: true }).catch(() => {
    throw invalidInput('its laid-out XFA form could not be read back to add the AcroForm fields');
  });
  doc.catalog.delete(PDFName.of('NeedsRendering'));
  const acro = doc.catalog.getAcroForm();
  acro?.dict.delete(PDFName.of('XFA'));
  const form = doc.getForm();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = doc.getPages();
  let fields = 0;
  let unicode = false;
  const skipped: string[] = [];
  const radios = new Map<string, ReturnType<typeof form.createRadioGroup>>();
  const used = new Set<string>();
  /** A name pdf-lib has not given out yet (a field split across pages is laid out twice). */
  const fresh = (name: string) => {
    let n = name;
    for (let i = 2; used.has(n); i++) n = `${name}#${i}`;
    used.add(n);
    return n;
  };
  for (const f of laid.fields) {
    const page: PDFPage | undefined = pages[f.page - 1];
    if (!page) continue;
    // Check boxes and radio buttons: a square in the middle of the control (its box may be a little taller).
    const side = Math.min(f.rect.width, f.rect.height);
    const box =
      f.type === 'checkbox' || f.type === 'radio'
        ? { x: f.rect.x + (f.rect.width - side) / 2, y: f.rect.y + (f.rect.height - side) / 2, width: side, height: side }
        : f.rect;
    // Text and choices sit in the frames the layout printed; check boxes and radio buttons draw their own (the
    // printed page leaves them out).
    const framed = box !== f.rect;
    const place = {
      ...box,
      font,
      borderWidth: framed ? 0.75 : 0,
      borderColor: framed ? rgb(0, 0, 0) : undefined,
      backgroundColor: undefined,
      textColor: undefined,
    };
    // A field pdf-lib cannot make (an option beyond Helvetica's WinAnsi in a choice) is left out and named in the warning.
    let created: PDFField | undefined;
    const make = () => {
      if (f.type === 'radio') {
        let group = radios.get(f.name);
        if (!group) {
          group = form.createRadioGroup(fresh(f.name));
          created = group;
          radios.set(f.name, group);
          fields++;
        }
        const on = f.on || `${group.getOptions().length + 1}`;
        group.addOptionToPage(on, page, place);
        if (f.value.length) group.select(on);
        if (f.readOnly) group.enableReadOnly();
        if (f.required) group.enableRequired();
        return;
      }
      fields++;
      const name = fresh(f.name);
      if (f.type === 'checkbox') {
        const box = form.createCheckBox(name);
        created = box;
        box.addToPage(page, place);
        if (f.value.length) box.check();
        if (f.readOnly) box.enableReadOnly();
        if (f.required) box.enableRequired();
      } else if (f.type === 'choice') {
        const options = f.options ?? [];
        const field = f.list ? form.createOptionList(name) : form.createDropdown(name);
        created = field;
        field.addOptions(options);
        if (f.multiSelect) field.enableMultiselect();
        const selected = f.value.filter((v) => options.includes(v));
        if (selected.length) field.select(f.multiSelect ? selected : selected[0]);
        field.addToPage(page, place);
        if (f.fontSize > 0) field.setFontSize(f.fontSize);
        if (f.readOnly) field.enableReadOnly();
        if (f.required) field.enableRequired();
      } else {
        const field = form.createTextField(name);
        created = field;
        if (f.multiline) field.enableMultiline();
        const value = f.value[0] ?? '';
        field.addToPage(page, place);
        if (value) field.setText(value);
        if (f.fontSize > 0) field.setFontSize(f.fontSize);
        // Helvetica draws WinAnsi only: such a value is drawn by redrawUnicodeFields after saving.
        if (beyondWinAnsi(value)) {
          unicode = true;
          form.markFieldAsClean(field.ref);
        }
        if (f.readOnly) field.enableReadOnly();
        if (f.required) field.enableRequired();
      }
    };
    try {
      make();
    } catch {
      skipped.push(f.name);
      if (f.type !== 'radio') fields--;
      if (created && f.type !== 'radio') {
        try {
          form.removeField(created);
        } catch {
          /* left as it is: a field without a widget */
        }
      }
    }
  }
  const written = encrypted ? join(run.dir, 'xfa-acroform-decrypted.pdf') : output;
  await writeFile(written, await doc.save({ useObjectStreams: true }));
  if (unicode) await redrawUnicodeFields(written);
  if (encrypted) {
    await runJob({ inputFile: written, outputFile: output, copyEncryption: pdf, encryptionFilePassword: '' }, ctx);
    await expectOutput('qpdf', output);
  }
  return { path: output, pages: laid.pages.length, fields, widgets: laid.fields.length - skipped.length, skipped };
}
