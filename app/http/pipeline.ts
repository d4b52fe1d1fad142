import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { TOOLS } from '../../engines/tools.js';
import { withReadBudgets, withRepairedInputs } from '../document/index.js';
import { AppError, outOfRange, storageError, storageRefused, TEXT } from '../errors.js';
import type { JobContext } from '../jobs/index.js';
import { runOperationInThread } from '../jobs/operation-thread.js';
import { resourceUrl, writeRefusal } from '../store/index.js';
import { extensionOf, stripExtension } from '../store/names.js';
import { type Body, discardUploads, readBody } from './body.js';
import { baseUrlOf, clientOf, type Deps, type Env } from './context.js';
import { resolveInputs } from './inputs.js';
import type { InputFile, Operation, OperationResult, RunContext, StoredFile } from './operation.js';
import { webhookOf } from './webhooks.js';

/** `Request-Type: requestId` (spec) or `Response-Type: requestId` (the n8n node) asks for polling. */
export const wantsPolling = (c: Context) => [c.req.header('request-type'), c.req.header('response-type')].some((v) => v?.trim().toLowerCase() === 'requestid');

/** Turns zod's first complaint into the spec's sentence, naming the parameter and echoing the value. */
export function validationError(err: z.ZodError, raw: Record<string, unknown>): AppError {
  const issue = err.issues[0];
  const path = issue.path.map(String);
  const param = path[0] ?? 'body';
  let value: unknown = raw[param];
  if (value === undefined || value === '' || value === null) {
    if (path.length === 1) return new AppError('out_of_range', `${param} is required`);
  }
  if (path.length > 1) {
    // A nested JSON field: name the whole path and show the offending value.
    value = (issue as { input?: unknown }).input;
    const where = path.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : `${acc}.${p}`));
    if (value === undefined) return new AppError('out_of_range', `${where} is required`);
    return outOfRange(value, where);
  }
  return outOfRange(Array.isArray(value) && value.length === 1 ? value[0] : value, param);
}

const isAbsent = (v: unknown) => v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.every(isAbsent));

export function parseFields<S extends z.ZodRawShape>(op: Operation<S>, raw: Record<string, unknown>): z.infer<z.ZodObject<S>> {
  // An empty form field or a JSON null means "not sent", so defaults apply.
  const sent = Object.fromEntries(Object.entries(raw).filter(([, v]) => !isAbsent(v)));
  const parsed = z.object(op.fields).safeParse(sent, { reportInput: true });
  if (!parsed.success) throw Object.assign(validationError(parsed.error, raw), { field: String(parsed.error.issues[0].path[0] ?? '') || undefined });
  op.check?.(parsed.data);
  return parsed.data;
}

export function requireEngines(op: Operation, deps: Deps): void {
  const missing = op.engines.filter((t) => !deps.tools[t]);
  if (missing.length) {
    throw new AppError(
      'engine_missing',
      `${op.path} is unavailable: ${missing.map((t) => `${TOOLS[t].bin} (Debian package ${TOOLS[t].pkg})`).join(', ')} is not installed on this server`,
    );
  }
}

export const defaultName = (op: Operation, first: StoredFile | undefined) =>
  op.defaultName ? op.defaultName(first && stripExtension(first.name)) : `${first ? stripExtension(first.name) : 'service'}_service_${op.path.slice(1)}`;

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

/**
 * A processing POST (an operation, a pipeline): the body read (uploads streamed to the store), `submit` checks and
 * queues it, and the answer follows the client's choice: 202 for a webhook, `{requestId}` for polling, else the
 * result once ready. Uploads of a request that fails before it is queued are removed.
 */
export async function acceptRequest(
  c: Context<Env>,
  deps: Deps,
  fileFields: Set<string>,
  submit: (body: Body, how: Submission) => Promise<Submitted>,
): Promise<Response> {
  const owner = c.get('owner');
  // Checked before any upload is read: a refused webhook costs the client no transfer.
  const webhook = await webhookOf(c, deps.config.urlAllow);
  let body: Body | undefined;
  try {
    body = await readBody(c.req.raw, { store: deps.store, owner, maxBytes: deps.config.maxUploadBytes, fileFields });
    const polling = wantsPolling(c) || !!webhook;
    const { id, done } = await submit(body, {
      owner,
      client: clientOf(c),
      baseUrl: baseUrlOf(deps.config, c.req.url),
      track: polling,
      clientSignal: polling ? undefined : c.req.raw.signal,
      notify: webhook,
    });
    // The id is answered once its record is written: a kill -9 right after must not make it an unknown id.
    if (polling) await (deps.jobs as { flushRecords?: () => Promise<void> }).flushRecords?.();
    if (webhook) return c.json({ requestId: id }, 202);
    if (polling) return c.json({ requestId: id });
    return c.json(await unlessLost(deps, id, done));
  } catch (err) {
    // The client never saw these ids: nothing of a failed request stays behind.
    await discardUploads(deps.store, body);
    throw err;
  }
}

/** How often a client's wait looks for its job in cluster mode. */
const LOST_CHECK_MS = 5_000;

/**
 * The result of a job a client waits for. In cluster mode the job lives in Redis: a Redis restarted without its data
 * (no append-only file) has lost it and its completion event never comes, so the job is looked for every few seconds
 * and a lost one answers 503 instead of a wait without end. (A Redis that does not answer yet is looked at again.)
 */
async function unlessLost<T>(deps: Deps, id: string, done: Promise<T>): Promise<T> {
  if (!deps.config.redisUrl) return done;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const lost = new Promise<never>((_, reject) => {
    const look = async () => {
      const rec = await deps.jobs.get(id).catch(() => null);
      if (settled) return;
      if (rec === undefined) reject(new AppError('queue_lost', 'The job queue (Redis) lost this request: it restarted without its data. Send it again.'));
      else timer = setTimeout(look, LOST_CHECK_MS);
    };
    timer = setTimeout(look, LOST_CHECK_MS);
  });
  lost.catch(() => undefined);
  try {
    return await Promise.race([done, lost]);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/** Mounts one declared operation: parse, resolve, validate, queue, run, store, answer. */
export function mountOperation(app: Hono<Env>, op: Operation, deps: Deps): void {
  const fileFields = new Set(Object.keys(op.inputs));
  app.post(op.path, (c) => {
    requireEngines(op, deps);
    return acceptRequest(c, deps, fileFields, (body, how) => submitOperation(op, body, deps, how));
  });
}

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

const strip = (inputs: Record<string, StoredFile[]>) =>
  Object.fromEntries(Object.entries(inputs).map(([k, files]) => [k, files.map(({ id, name, type, size }) => ({ id, name, type, size }))]));

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
  const { value: result, warning } = await withReadBudgets(
    { renderPageMs: limits.renderPageMs, textPageMs: limits.textPageMs, ocrPageMs: limits.ocrPageMs, writePageMs: limits.writePageMs },
    () =>
      withRepairedInputs(
        pdfs,
        (pathOf) => {
          const swapped = Object.fromEntries(Object.entries(inputs).map(([k, files]) => [k, files.map((f) => ({ ...f, path: pathOf(f.path) }))]));
          const first = Object.values(swapped).flat()[0];
          const ctx: RunContext<unknown> = {
            fields,
            inputs: swapped,
            input: first,
            dir: job.dir,
            signal: job.signal,
            progress: job.progress,
            outputName: spec.outputName,
            timeoutMs: Math.max(1000, deps.config.maxProcessMs - (Date.now() - started)),
            urlPolicy: { enabled: deps.config.urlFetch, allow: deps.config.urlAllow },
            concurrency: deps.config.concurrency,
            limits,
            llm: deps.config.llm,
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
