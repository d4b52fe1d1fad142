import { z } from 'zod';
import { AppError } from '../errors.js';
import { parseFields, requireEngines, validationError } from '../requests/check.js';
import type { Deps } from '../requests/context.js';
import { json } from '../requests/fields.js';
import { type InputSpec, type Operation, primaryInput, producesOf } from '../requests/operation.js';

export const MAX_STEPS = 20;

const stepSchema = z.strictObject({
  operation: z.string().trim().min(1).max(200),
  fields: z.record(z.string(), z.unknown()).default({}),
});
export type RawStep = z.infer<typeof stepSchema>;

/** `steps` as a request sends it: a JSON array (or its text, from a form) of `{operation, fields}`. */
export const stepsSchema = json(z.array(stepSchema).min(1).max(MAX_STEPS));

/** One checked step: its operation, the fields as sent (parsed again where the step runs) and how it takes files. */
export interface Step {
  op: Operation;
  fields: Record<string, unknown>;
  /** The upload field the files flow into (`file`). */
  input: string;
  spec: InputSpec;
  /** Takes all files at once (merge, zip) instead of running once per file. */
  fanIn: boolean;
}

/** Parses `steps` (JSON text or array), naming the place of the first problem. */
export function parseSteps(raw: unknown): RawStep[] {
  const parsed = z.object({ steps: stepsSchema }).safeParse({ steps: raw }, { reportInput: true });
  if (!parsed.success) throw validationError(parsed.error, { steps: raw });
  return parsed.data.steps;
}

const pathOf = (name: string) => `/${name.trim().replace(/^\/+/, '').toLowerCase()}`;
const fileKinds = (spec: InputSpec) => (spec.kind === 'pdf' ? ['pdf'] : spec.extensions);
const describe = (types: string[]) => `${types.length ? types.join(', ') : 'no'} files`;

/**
 * Checks every step before anything runs: the operation exists and is available, its fields pass its own schema
 * and checks, no step names its main input (files come from the step before), and each step takes the kinds of
 * files the one before produces. `types` are the extensions of the pipeline's inputs when known. Errors name
 * the place: `steps[1].fields.compression_level: ...`. The pipeline's own inputs are checked by their bytes when
 * they are resolved, as any endpoint checks its inputs.
 */
export function planSteps(raw: RawStep[], deps: Pick<Deps, 'operations' | 'tools'>): Step[] {
  const steps: Step[] = [];
  let incoming: string[] | undefined;
  let from = '';
  raw.forEach((r, i) => {
    const at = `steps[${i}]`;
    const op = deps.operations.find((o) => o.path === pathOf(r.operation));
    if (!op) throw new AppError('out_of_range', `${at}.operation: no operation ${pathOf(r.operation)} on this server (GET /openapi.json lists them)`);
    const primary = primaryInput(op);
    if (!primary) throw new AppError('out_of_range', `${at}.operation: ${op.path} takes no input file, so it cannot be a step`);
    const [input, spec] = primary;
    for (const name of [input, spec.idField]) {
      if (name in r.fields)
        throw new AppError('out_of_range', `${at}.fields.${name}: a step's files come from the step before (or the pipeline's inputs), not from its fields`);
    }
    try {
      requireEngines(op, deps as Deps);
      parseFields(op, r.fields);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const where = err.field ? `${at}.fields.${err.field}` : err.code === 'engine_missing' ? `${at}.operation` : `${at}.fields`;
      throw new AppError(err.code, `${where}: ${err.message}`, err.headers);
    }
    for (const [name, other] of Object.entries(op.inputs)) {
      if (name === input || other.required === false || other.idField in r.fields) continue;
      throw new AppError('missing_input', `${at}.fields.${other.idField} is required (the id of a stored file, from POST /upload)`);
    }
    const accepted = fileKinds(spec);
    const refused = incoming?.filter((t) => t !== '*' && accepted && !accepted.includes(t)) ?? [];
    if (refused.length) throw new AppError('out_of_range', `${at}.operation: ${op.path} takes ${describe(accepted!)}, but ${from} gives ${describe(refused)}`);
    if (incoming && !incoming.length) throw new AppError('out_of_range', `${at}.operation: ${from} answers JSON and gives no files to ${op.path}`);
    steps.push({ op, fields: r.fields, input, spec, fanIn: !!spec.multiple });
    incoming = producesOf(op);
    from = `${at} (${op.path})`;
  });
  return steps;
}
