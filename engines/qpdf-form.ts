import type { EngineContext } from './context.js';
import type { QpdfJson } from './qpdf.js';
import { runJob } from './qpdf-edit.js';
import { expectOutput, run } from './run.js';

/**
 * Writes `input` without object streams (encryption and everything else kept). qpdf 11.3's
 * --update-from-json loses changes to objects that live in an object stream (the stream's copy wins when it
 * is read later), so the objects to change are read from, and written over, this copy.
 */
export async function unpackObjects(input: string, output: string, ctx: EngineContext): Promise<void> {
  await runJob({ inputFile: input, outputFile: output, objectStreams: 'disable' }, ctx);
  await expectOutput('qpdf', output);
}

/**
 * Writes a filled form: the changed objects come in as a qpdf JSON v2 update (`--update-from-json`, so
 * everything else, encryption included, stays as it was), then qpdf draws the text and choice fields'
 * appearances (`--generate-appearances`, which works from /NeedAppearances and clears it when it can).
 */
export async function writeFilledForm(input: string, output: string, update: string, ctx: EngineContext): Promise<void> {
  await runJob({ inputFile: input, outputFile: output, updateFromJson: update, generateAppearances: '', objectStreams: 'generate' }, ctx);
  await expectOutput('qpdf', output);
}

/** A field's widget as qpdf's JSON lists it (one entry per widget of the form). */
export interface QpdfFormField {
  fullname: string;
  fieldtype: string;
  fieldflags: number;
  /** The field's dictionary, and its widget's (the same object for a field of one widget). */
  object: string;
  value: unknown;
  pageposfrom1: number;
  annotation: { object: string; annotationflags: number };
}

/** The form's fields, one per widget (none when the document has no AcroForm), without reading the rest of it. */
export async function formFields(input: string, ctx: EngineContext): Promise<QpdfFormField[]> {
  const r = await run('qpdf', ['--json', '--json-key=acroform', '--json-stream-data=none', '--', input], { ...ctx, okExitCodes: [3], maxBuffer: 256 << 20 });
  return (JSON.parse(r.stdout) as { acroform?: { fields?: QpdfFormField[] } }).acroform?.fields ?? [];
}

/** Some of the document's objects ("4 0 R") as qpdf's JSON v2 (read them with PdfObjects). */
export async function chosenObjects(input: string, refs: string[], ctx: EngineContext): Promise<QpdfJson> {
  const picks = refs.map((ref) => `--json-object=${ref.replace(/ R$/, '').replace(' ', ',')}`);
  const r = await run('qpdf', ['--json', '--json-key=qpdf', '--json-stream-data=none', ...picks, '--', input], {
    ...ctx,
    okExitCodes: [3],
    maxBuffer: 256 << 20,
  });
  return JSON.parse(r.stdout) as QpdfJson;
}
