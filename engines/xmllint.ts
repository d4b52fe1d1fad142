import type { EngineContext } from './context.js';
import { run } from './run.js';

/**
 * XML Schema validation with libxml2's xmllint. --nonet keeps schema imports and the document from reaching the
 * network; entities are never substituted (no --noent), and callers refuse DOCTYPEs before this runs anyway.
 */

export interface SchemaError {
  line: number | null;
  message: string;
}

/** Errors xmllint reports (`file:12: element X: Schemas validity error : ...`); at most `max` of them are kept. */
export function parseSchemaErrors(stderr: string, max = 100): SchemaError[] {
  const errors: SchemaError[] = [];
  for (const raw of stderr.split('\n')) {
    const m = /^.*?:(\d+): (?:element [^:]+: )?(?:Schemas validity|parser) error : (.*)$/.exec(raw);
    if (m) errors.push({ line: Number(m[1]), message: m[2].trim() });
    if (errors.length >= max) break;
  }
  return errors;
}

/**
 * Validates `file` against `schema`: no errors when valid, else the errors (exit 3 invalid; exit 1 the document is
 * not well-formed XML, `wellFormed` false). A schema that does not compile (exit 5) is our fault, not the
 * document's: it fails as an engine error.
 */
export async function validateSchema(file: string, schema: string, ctx: EngineContext): Promise<{ wellFormed: boolean; errors: SchemaError[] }> {
  const r = await run('xmllint', ['--noout', '--nonet', '--schema', schema, file], { ...ctx, okExitCodes: [0, 1, 3], maxBuffer: 8 * 1024 * 1024 });
  if (r.exitCode === 0) return { wellFormed: true, errors: [] };
  const errors = parseSchemaErrors(r.stderr);
  return {
    wellFormed: r.exitCode !== 1,
    errors: errors.length ? errors : [{ line: null, message: r.stderr.trim().split('\n')[0] || 'the document does not conform to the schema' }],
  };
}
