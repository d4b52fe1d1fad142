import { stripExtension } from '../store/names.js';
import { defaultName, parseFields } from './check.js';
import type { Deps } from './context.js';
import { executeJob, type JobSpec } from './execute.js';
import { resolveInputs } from './inputs.js';
import type { Operation, StoredFile } from './operation.js';
import type { Body } from './uploads.js';

/** How a request is queued: whose it is, who it is fair against, and how its answer is awaited. */
export interface Submission {
  owner: string | null;
  client: string;
  baseUrl: string;
  track?: boolean;
  clientSignal?: AbortSignal;
  notify?: unknown;
}
export type Submitted = { id: string; done: Promise<Record<string, unknown>> };

/** Checks a request for one operation (its ids resolved, its fields parsed) and queues it: HTTP and MCP. */
export async function submitOperation(op: Operation, body: Body, deps: Deps, how: Submission): Promise<Submitted> {
  const inputs = await resolveInputs(op.inputs, body, deps.store, { owner: how.owner, sniffPdf: op.path !== '/pdf-info' });
  return queueOperation(op, body.fields, inputs, deps, how);
}

/** Queues an operation on inputs already resolved and checked (a pipeline's step runs this way too). */
export function queueOperation(
  op: Operation,
  raw: Record<string, unknown>,
  inputs: Record<string, StoredFile[]>,
  deps: Deps,
  how: Submission,
): Submitted | Promise<Submitted> {
  const fields = parseFields(op, raw);
  const all = Object.values(inputs).flat();
  const outputName = stripExtension((fields as { output?: string }).output || '') || defaultName(op, all[0]);
  const spec: JobSpec = { path: op.path, fields: raw, inputs: strip(inputs), outputName, owner: how.owner, baseUrl: how.baseUrl };
  return deps.jobs.submit((job) => executeJob(spec, job, deps), {
    owner: how.owner,
    track: how.track,
    clientSignal: how.clientSignal,
    cost: typeof op.cost === 'function' ? op.cost({ fields, inputs }) : op.cost,
    client: how.client,
    spec,
    label: op.path,
    notify: how.notify,
  });
}

const strip = (inputs: Record<string, StoredFile[]>) =>
  Object.fromEntries(Object.entries(inputs).map(([k, files]) => [k, files.map(({ id, name, type, size }) => ({ id, name, type, size }))]));
