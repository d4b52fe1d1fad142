import { setMaxListeners } from 'node:events';
import { AppError, prefixedError } from '../errors.js';
import type { JobContext } from '../jobs/index.js';
import type { Deps } from '../requests/context.js';
import { resolveInputs } from '../requests/inputs.js';
import { metricsOf } from '../requests/metrics.js';
import type { StoredFile } from '../requests/operation.js';
import { queueOperation, type Submitted } from '../requests/submit.js';
import { planSteps, type RawStep, type Step } from './plan.js';

/** A pipeline request as data (cluster mode sends it through Redis to the worker that runs it). */
export interface PipelineSpec {
  kind: 'pipeline';
  /** The named pipeline it came from, if any. */
  name?: string;
  steps: RawStep[];
  inputs: StoredFile[];
  owner: string | null;
  /** The unit of fairness of the request: every step's job is queued as this client's. */
  client: string;
  baseUrl: string;
}

export const isPipelineSpec = (spec: unknown): spec is PipelineSpec => (spec as PipelineSpec | undefined)?.kind === 'pipeline';

const one = <T>(list: T[]) => (list.length === 1 ? list[0] : list);
const idsOf = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
const stepName = (i: number, step: Step) => `steps[${i}] (${step.op.path}): `;

/** Checks files against a step's main input the way the endpoint checks its own (PDF by header, extensions). */
async function checkFiles(step: Step, files: StoredFile[], i: number, owner: string | null, deps: Deps): Promise<void> {
  try {
    await resolveInputs(
      { [step.input]: { ...step.spec, multiple: true } },
      { fields: { [step.spec.idField]: files.map((f) => f.id) }, files: {} },
      deps.store,
      { owner },
    );
  } catch (err) {
    throw prefixedError(err, stepName(i, step));
  }
}

/** A step's other inputs (an image, a certificate...), given by id in its fields. */
async function otherInputs(step: Step, i: number, owner: string | null, deps: Deps): Promise<Record<string, StoredFile[]>> {
  const specs = Object.fromEntries(Object.entries(step.op.inputs).filter(([name]) => name !== step.input));
  try {
    return await resolveInputs(specs, { fields: step.fields, files: {} }, deps.store, { owner });
  } catch (err) {
    throw prefixedError(err, stepName(i, step));
  }
}

/**
 * Checks a pipeline completely (steps, its inputs against the first step, every id a step names) and queues it in
 * the flow lane, which spends nothing: its steps queue in their own lanes as the client's jobs.
 */
export async function submitPipeline(
  spec: PipelineSpec,
  deps: Deps,
  opts: { track?: boolean; clientSignal?: AbortSignal; notify?: unknown },
): Promise<Submitted> {
  const steps = planSteps(spec.steps, deps);
  if (!spec.inputs.length) throw new AppError('missing_input', 'Either file (an upload) or id (the id of a stored file) is required');
  await checkFiles(steps[0], spec.inputs, 0, spec.owner, deps);
  for (const [i, step] of steps.entries()) await otherInputs(step, i, spec.owner, deps);
  return deps.jobs.submit((job) => runPipeline(spec, job, deps), {
    owner: spec.owner,
    track: opts.track,
    clientSignal: opts.clientSignal,
    cost: { lane: 'flow' },
    client: spec.client,
    spec,
    label: '/pipeline',
    notify: opts.notify,
  });
}

/**
 * Runs the steps in order inside the server: each takes the files of the one before, once per file (fan-out) or
 * all at once (fan-in), as ordinary jobs in their lanes, cancelled with the pipeline. Answers like an endpoint
 * for the last step's files, plus `steps: [{operation, outputId, ms}]`.
 */
export async function runPipeline(spec: PipelineSpec, job: JobContext, deps: Deps): Promise<Record<string, unknown>> {
  const metrics = deps.config.metrics ? metricsOf(deps) : undefined;
  // One step failing stops its siblings (other files of a fan-out) at once.
  const stop = new AbortController();
  // Every job of a fan-out listens to it (hundreds after a split): not a leak.
  setMaxListeners(0, stop.signal);
  const onAbort = () => stop.abort(job.signal.reason);
  job.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const body = await runSteps(spec, { ...job, signal: stop.signal }, deps);
    metrics?.pipelines.inc({ outcome: 'completed' });
    return body;
  } catch (err) {
    stop.abort(new AppError('cancelled', 'Another step of the pipeline failed.'));
    metrics?.pipelines.inc({ outcome: 'failed' });
    throw err;
  } finally {
    job.signal.removeEventListener('abort', onAbort);
  }
}

async function runSteps(spec: PipelineSpec, job: JobContext, deps: Deps): Promise<Record<string, unknown>> {
  const steps = planSteps(spec.steps, deps);
  let files = spec.inputs;
  let answers: Record<string, unknown>[] = [];
  const done: { operation: string; outputId?: string | string[]; ms: number }[] = [];
  const warnings: string[] = [];
  for (const [i, step] of steps.entries()) {
    job.signal.throwIfAborted();
    const started = Date.now();
    if (!files.length) throw new AppError('invalid_input', `${stepName(i - 1, steps[i - 1])}produced no files, so steps[${i}] has nothing to work on`);
    // Files of a kind only the run knew (an archive's contents) are checked as the endpoint would check them.
    if (i > 0) await checkFiles(step, files, i, spec.owner, deps);
    const others = await otherInputs(step, i, spec.owner, deps);
    const groups = step.fanIn ? [files] : files.map((f) => [f]);
    answers = await Promise.all(groups.map((group) => runStep(step, i, group, others, spec, job, deps)));
    const ids = answers.flatMap((a) => idsOf(a.outputId));
    files = await Promise.all(
      ids.map(async (id) => {
        const rec = await deps.store.get(id);
        if (!rec) throw new AppError('unknown_resource', `${stepName(i, step)}its output ${id} is gone`);
        return { id: rec.id, name: rec.name, type: rec.type, size: rec.size };
      }),
    );
    for (const a of answers) if (typeof a.warning === 'string') warnings.push(`${stepName(i, step)}${a.warning}`);
    done.push({ operation: step.op.path, ...(ids.length ? { outputId: one(ids) } : {}), ms: Date.now() - started });
    job.progress((i + 1) / steps.length);
  }
  const last = steps[steps.length - 1];
  const single = answers.length === 1 && files.length === 1 && last.op.output !== 'files';
  const body: Record<string, unknown> = {};
  if (!files.length) {
    // A JSON operation last: its answer as it gives it, or one per file it ran on.
    const strip = (a: Record<string, unknown>) => Object.fromEntries(Object.entries(a).filter(([k]) => !['inputId', 'warning'].includes(k)));
    if (answers.length === 1) Object.assign(body, strip(answers[0]));
    else body.results = answers.map(strip);
  } else {
    body.outputUrl = single ? answers[0].outputUrl : answers.flatMap((a) => a.outputUrl ?? []);
    body.outputId = single ? files[0].id : files.map((f) => f.id);
  }
  body.inputId = one(spec.inputs.map((f) => f.id));
  if (spec.name) body.pipeline = spec.name;
  body.steps = done;
  if (warnings.length) body.warning = warnings.join(' ');
  return body;
}

async function runStep(step: Step, i: number, group: StoredFile[], others: Record<string, StoredFile[]>, spec: PipelineSpec, job: JobContext, deps: Deps) {
  const { op } = step;
  // In the operation's own order, as a request resolves them: its first input is the one it works on (and names).
  const inputs = Object.fromEntries(Object.keys(op.inputs).map((name) => [name, name === step.input ? group : (others[name] ?? [])]));
  try {
    const { done } = await queueOperation(op, step.fields, inputs, deps, {
      owner: spec.owner,
      client: spec.client,
      baseUrl: spec.baseUrl,
      clientSignal: job.signal,
    });
    return await done;
  } catch (err) {
    throw prefixedError(job.signal.aborted ? job.signal.reason : err, stepName(i, step));
  }
}
