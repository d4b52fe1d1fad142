import type { Context, Hono } from 'hono';
import { AppError } from '../errors.js';
import { requireEngines } from '../requests/check.js';
import { baseUrlOf, clientOf, type Deps, type Env } from '../requests/context.js';
import type { Operation } from '../requests/operation.js';
import { type Submission, type Submitted, submitOperation } from '../requests/submit.js';
import { type Body, discardUploads } from '../requests/uploads.js';
import { webhookOf } from '../requests/webhooks.js';
import { readBody } from './body.js';

/** `Request-Type: requestId` (spec) or `Response-Type: requestId` (the n8n node) asks for polling. */
export const wantsPolling = (c: Context) => [c.req.header('request-type'), c.req.header('response-type')].some((v) => v?.trim().toLowerCase() === 'requestid');

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
