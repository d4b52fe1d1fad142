import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { withReadBudgets, withRepairedInputs } from '../document/index.js';
import { AppError, storageError, storageRefused, TEXT } from '../errors.js';
import type { JobContext, JobRecord } from '../jobs/index.js';
import { runOperationInThread } from '../jobs/operation-thread.js';
import { resourceUrl, writeRefusal } from '../store/index.js';
import { extensionOf } from '../store/names.js';
import { parseFields } from './check.js';
import type { Deps } from './context.js';
import type { InputFile, Operation, OperationResult, RunContext, StoredFile } from './operation.js';

/**
 * A validated request as data, so that any replica can run it (cluster mode sends it through Redis): the raw
 * fields (parsed again where it runs, by the same schema) and the inputs by id.
 */
export interface JobSpec {
  path: string;
  fields: Record<string, unknown>;
  inputs: Record<string, StoredFile[]>;
  outputName: string;
  owner: string | null;
  baseUrl: string;
}

/** Runs a request inside its job: the operation, then its outputs into the store, then the response body. */
export async function executeJob(spec: JobSpec, job: JobContext, deps: Deps): Promise<Record<string, unknown>> {
  try {
    return await runJob(spec, job, deps);
  } catch (err) {
    if (storageError(err) || job.signal.aborted) throw err;
    const refusal = await writeRefusal(job.dir);
    throw refusal ? storageRefused(refusal) : err;
  }
}

async function runJob(spec: JobSpec, job: JobContext, deps: Deps): Promise<Record<string, unknown>> {
  const op = deps.operations.find((o) => o.path === spec.path);
  if (!op) throw new AppError('not_found', `No operation ${spec.path} on this server`);
  const fields = parseFields(op, spec.fields);
  // Engines read local files: the stored ones, or (S3) copies fetched into the job's dir before the operation runs.
  const inputs: Record<string, InputFile[]> = {};
  const local = (id: string) =>
    deps.store.localPath(id, job.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new AppError('unknown_resource', TEXT.unknownResource);
      throw err;
    });
  for (const [k, files] of Object.entries(spec.inputs)) inputs[k] = await Promise.all(files.map(async (f) => ({ ...f, path: await local(f.id) })));
  job.signal.throwIfAborted();
  const all = Object.values(inputs).flat();
  const started = Date.now();
  const { limits } = deps.config;
  const pdfs = Object.entries(inputs).flatMap(([k, files]) => (op.inputs[k]?.kind === 'pdf' ? files.map((f) => f.path) : []));
  // Each page of every read has its time budget, and a damaged input is repaired once before it is refused.
  let attempts = 0;
  const { value: result, warning } = await withReadBudgets(
    { renderPageMs: limits.renderPageMs, textPageMs: limits.textPageMs, ocrPageMs: limits.ocrPageMs, writePageMs: limits.writePageMs },
    () =>
      withRepairedInputs(
        pdfs,
        async (pathOf) => {
          // A run again on repaired copies starts in a dir of its own: the folders and files the failed run left
          // under their fixed names (a profiles dir, a split's parts) are not in its way.
          const dir = attempts++ === 0 ? job.dir : await mkdtemp(join(job.dir, 'again-'));
          const swapped = Object.fromEntries(Object.entries(inputs).map(([k, files]) => [k, files.map((f) => ({ ...f, path: pathOf(f.path) }))]));
          const first = Object.values(swapped).flat()[0];
          const ctx: RunContext<unknown> = {
            fields,
            inputs: swapped,
            input: first,
            dir,
            signal: job.signal,
            progress: job.progress,
            outputName: spec.outputName,
            timeoutMs: Math.max(1000, deps.config.maxProcessMs - (Date.now() - started)),
            urlPolicy: { enabled: deps.config.urlFetch, allow: deps.config.urlAllow },
            concurrency: deps.config.concurrency,
            limits,
            llm: deps.config.llm,
            signatureTrustDir: deps.config.signatureTrustDir,
          };
          return op.thread ? runOperationInThread(op.thread, op.path, ctx, limits.jobMaxMemoryMb) : op.run(ctx as RunContext<typeof fields>);
        },
        { cwd: job.dir, signal: job.signal, timeoutMs: deps.config.maxProcessMs },
        { writesPdf: (r) => (r.files ?? []).some((f) => /\.pdf$/i.test(f.name ?? (f.ext ? `.${f.ext}` : f.path))) },
      ),
  );
  if (warning) result.warning = result.warning ? `${warning} ${result.warning}` : warning;
  job.signal.throwIfAborted();
  return respond(op, result, result.inputs ?? all, spec.outputName, spec.owner, spec.baseUrl, deps);
}

async function respond(
  op: Operation,
  result: OperationResult,
  inputs: InputFile[],
  outputName: string,
  owner: string | null,
  baseUrl: string,
  deps: Deps,
): Promise<Record<string, unknown>> {
  const inputId = inputs.length === 1 ? inputs[0].id : inputs.map((i) => i.id);
  const body: Record<string, unknown> = { ...(result.json ?? {}) };
  if (result.files) {
    const ids: string[] = [];
    const listed: { name: string; id: string; outputUrl: string }[] = [];
    try {
      for (const f of result.files) {
        // Without a name or ext, the extension of the file the engine wrote: the name carries the type (typeOf).
        const ext = f.ext ?? extensionOf(f.path);
        const name = f.name ?? `${outputName}${ext ? `.${ext}` : ''}`;
        const rec = await deps.store.add(f.path, { name, owner });
        ids.push(rec.id);
        listed.push({ name: rec.name, id: rec.id, outputUrl: resourceUrl(baseUrl, rec.id) });
      }
    } catch (err) {
      // The storage failed half way through the outputs: the client never learns the ids of those already stored.
      await Promise.all(ids.map((id) => deps.store.remove(id).catch(() => undefined)));
      throw err;
    }
    if (op.listFiles) body.files = listed;
    const single = op.output === 'file' || op.output === 'json-or-file';
    body.outputUrl = single ? resourceUrl(baseUrl, ids[0]) : ids.map((i) => resourceUrl(baseUrl, i));
    body.outputId = single ? ids[0] : ids;
  }
  if (inputs.length) body.inputId = inputId;
  if (result.warning) body.warning = result.warning;
  return body;
}

/** What /request-status answers for a request (webhooks send the same). */
export function statusBody(rec: JobRecord): Record<string, unknown> {
  const requestId = rec.id;
  if (rec.status === 'pending') return { status: 'pending', requestId, ...(rec.progress !== undefined ? { progress: rec.progress } : {}) };
  if (rec.status === 'failed') return { status: 'failed', requestId, error: rec.error?.error, statusCode: rec.error?.status };
  return { status: 'completed', requestId, ...rec.result };
}
