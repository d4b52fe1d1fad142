import type { EngineContext } from './context.js';
import { runJob } from './qpdf-edit.js';
import { expectOutput } from './run.js';

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
