import type { EngineContext } from '../../engines/context.js';
import { type QpdfJson, type ReadLimits, readPdfJson } from '../../engines/qpdf.js';
import { unpackObjects } from '../../engines/qpdf-form.js';
import { inputError, PdfObjects, selectPages } from '../document/index.js';
import type { FormWidget } from './form-data.js';

/** A PDF form as the form operations read it: its objects, the AcroForm dictionary, its widgets and its XFA entry. */
export interface OpenedForm {
  /** The file the objects were read from: the input, or its unpacked copy. */
  path: string;
  json: QpdfJson;
  objects: PdfObjects;
  /** The catalog's /AcroForm as written (a reference when the dictionary is an object of its own). */
  acroRef: unknown;
  acro: Record<string, unknown> | null;
  widgets: (FormWidget & { value?: unknown })[];
  xfa: unknown;
}

/**
 * Opens a form for reading (password 401, broken 400, as every input). With `unpackTo`, the objects are read
 * from a copy without object streams, which is what a later `--update-from-json` must be applied to.
 */
export async function openForm(input: string, ctx: EngineContext, read: ReadLimits, opts: { unpackTo?: string } = {}): Promise<OpenedForm> {
  await selectPages(input, '1-last', ctx);
  const path = opts.unpackTo ?? input;
  const { json } = await (opts.unpackTo ? unpackObjects(input, opts.unpackTo, ctx) : Promise.resolve())
    .then(() => readPdfJson(path, ctx, read))
    .catch((err) => {
      throw inputError(err);
    });
  const objects = new PdfObjects(json);
  const acroRef = objects.catalog['/AcroForm'];
  const acro = objects.dict(acroRef);
  return { path, json, objects, acroRef, acro, widgets: (json.acroform?.fields ?? []) as OpenedForm['widgets'], xfa: acro?.['/XFA'] };
}
