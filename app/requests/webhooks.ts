import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { FollowUpResult, JobQueue, JobRecord } from '../jobs/index.js';
import { statusBody } from './execute.js';
import { guardedLookup, isAllowedAddress } from './fetch-url.js';

/**
 * Webhooks for callers that do not poll: a processing POST with `Webhook-Url` is answered 202 `{requestId}` at
 * once, and the body `/request-status/{id}` would give once the request is final is POSTed to that URL (failures to
 * `Webhook-Error-Url` when given), signed, retried with backoff, under the URL policy of `url` inputs.
 */
export interface Webhook {
  url: string;
  errorUrl?: string;
  headers: Record<string, string>;
}

/** Attempts in all, and the waits between them (a receiver's Retry-After is followed within 1-30 s). */
const WEBHOOK_TRIES = 5;
const BACKOFF_MS = [1000, 3000, 9000, 27000];
const MIN_WAIT_MS = 1000;
const MAX_WAIT_MS = 30_000;
const ATTEMPT_TIMEOUT_MS = 10_000;
const MAX_EXTRA_HEADERS = 20;
const MAX_EXTRA_BYTES = 8192;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the server sets itself (framing, routing, the signature) or that make no sense on a webhook. */
const FORBIDDEN = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'quire-signature',
  'quire-request-id',
]);

const bad = (header: string, why: string) => new AppError('invalid_request', `${header}: ${why}`);

/** The target is refused unless every address it resolves to is public or listed in URL_ALLOW. */
async function checkTarget(header: string, raw: string, allow: string[]): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad(header, `${raw} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(header, 'only http and https URLs are called');
  if (url.username || url.password) throw bad(header, 'credentials in the URL are not accepted (send them in Webhook-Extra-Headers)');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (!addresses.length) throw bad(header, `the host ${host} does not resolve`);
  const refused = addresses.find((a) => !isAllowedAddress(a, host, allow));
  if (refused) throw bad(header, `the address ${refused} of ${host} is not public (private hosts must be listed in URL_ALLOW)`);
  return url.toString();
}

function parseExtraHeaders(raw: string): Record<string, string> {
  const header = 'Webhook-Extra-Headers';
  if (Buffer.byteLength(raw) > MAX_EXTRA_BYTES) throw bad(header, `more than ${MAX_EXTRA_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw bad(header, 'must be a JSON object of header names to string values');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad(header, 'must be a JSON object of header names to string values');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_EXTRA_HEADERS) throw bad(header, `at most ${MAX_EXTRA_HEADERS} headers`);
  const out: Record<string, string> = {};
  for (const [name, v] of entries) {
    if (!TOKEN.test(name)) throw bad(header, `${JSON.stringify(name)} is not a header name`);
    if (typeof v !== 'string') throw bad(header, `the value of ${name} must be a string`);
    // Control characters (CR, LF...) would let a value add headers or split the request.
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(v)) throw bad(header, `the value of ${name} contains control characters`);
    const lower = name.toLowerCase();
    if (FORBIDDEN.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) throw bad(header, `${name} is set by the server and cannot be sent`);
    out[lower] = v;
  }
  return out;
}

/** The webhook a processing request asks for, checked now (400s name the header); undefined without one. */
export async function webhookOf(c: Context, allow: string[]): Promise<Webhook | undefined> {
  const url = c.req.header('webhook-url')?.trim();
  const errorUrl = c.req.header('webhook-error-url')?.trim();
  const extra = c.req.header('webhook-extra-headers')?.trim();
  if (!url) {
    if (errorUrl) throw bad('Webhook-Error-Url', 'needs Webhook-Url');
    if (extra) throw bad('Webhook-Extra-Headers', 'needs Webhook-Url');
    return undefined;
  }
  return {
    url: await checkTarget('Webhook-Url', url, allow),
    ...(errorUrl ? { errorUrl: await checkTarget('Webhook-Error-Url', errorUrl, allow) } : {}),
    headers: extra ? parseExtraHeaders(extra) : {},
  };
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as the README tells receivers to check it. */
export function signature(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

export interface DeliveryOptions {
  secret?: string;
  allow: string[];
  log: Logger;
  /** Told once per webhook: delivered, or given up (retries spent, or an answer that is final). */
  onOutcome?: (outcome: 'delivered' | 'failed') => void;
}

function post(target: string, body: string, headers: Record<string, string>, allow: string[]): Promise<FollowUpResult> {
  const url = new URL(target);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<FollowUpResult>((resolve) => {
    const req = mod.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(host, allow),
        timeout: ATTEMPT_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve({ ok: true });
        const seconds = Number(res.headers['retry-after']);
        resolve({
          ok: false,
          // Redirects are not followed: the receiver named its URL, and another target would escape the check.
          retry: status >= 500 || status === 429,
          why: `the receiver answered ${status}`,
          retryInMs: Number.isFinite(seconds) ? seconds * 1000 : undefined,
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    // A refused address (EPRIVATE: the name now resolves to a private one) is the policy, not a network hiccup.
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, retry: err.code !== 'EPRIVATE', why: err.message }));
    req.end(body);
  });
}

/** One attempt: the final status of a request, signed afresh (a new timestamp per attempt). */
function attempt(hook: Webhook, record: JobRecord, n: number, opts: DeliveryOptions): Promise<FollowUpResult> {
  const body = JSON.stringify(statusBody(record));
  const target = record.status === 'failed' && hook.errorUrl ? hook.errorUrl : hook.url;
  const t = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    ...hook.headers,
    'content-type': 'application/json',
    'user-agent': 'Quire',
    'quire-request-id': record.id,
    ...(opts.secret ? { 'quire-signature': signature(opts.secret, t, body) } : {}),
  };
  opts.log.debug({ requestId: record.id, webhook: new URL(target).host, attempt: n }, 'webhook attempt');
  return post(target, body, headers, opts.allow);
}

/** Waits after the n-th failed attempt: 1, 3, 9, 27 s, or the receiver's Retry-After within 1-30 s. */
const waitMs = (n: number, asked?: number) => Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, asked ?? BACKOFF_MS[Math.min(n, BACKOFF_MS.length) - 1]));

const watched = new WeakSet<JobQueue>();

/**
 * Delivers the webhooks of the jobs this process runs, in the background (never awaited by a job): in process in
 * embedded mode, through a BullMQ queue any worker takes in cluster mode.
 */
export function deliverWebhooks(jobs: JobQueue, opts: DeliveryOptions): void {
  // Once per queue, however many apps are built on it.
  if (watched.has(jobs)) return;
  watched.add(jobs);
  jobs.followUp({
    attempt: (record, notify, n) => attempt(notify as Webhook, record, n, opts),
    tries: WEBHOOK_TRIES,
    waitMs,
    outcome: (ok, record, why) => {
      if (ok) opts.log.info({ requestId: record.id }, 'webhook delivered');
      else opts.log.warn({ requestId: record.id, why }, 'webhook not delivered');
      opts.onOutcome?.(ok ? 'delivered' : 'failed');
    },
  });
}
