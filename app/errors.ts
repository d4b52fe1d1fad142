import { accessSync, constants as fsConstants } from 'node:fs';
import { constants } from 'node:os';
import { dirname } from 'node:path';
import { EngineError } from '../engines/errors.js';

/** Every error a client can see: code -> HTTP status. Texts follow the spec's section 7 where it gives one. */
const CODES = {
  invalid_request: 400,
  invalid_input: 400,
  both_inputs: 400,
  missing_input: 400,
  out_of_range: 400,
  bad_json: 400,
  unknown_resource: 404,
  not_found: 404,
  request_not_found: 404,
  password: 401,
  key_missing: 401,
  key_invalid: 401,
  forbidden: 403,
  too_large: 413,
  unsupported_media: 415,
  timeout: 422,
  limit: 422,
  queue_full: 429,
  cancelled: 499,
  internal: 500,
  engine_missing: 503,
  shutting_down: 503,
  storage_unavailable: 503,
  queue_lost: 503,
  queue_unavailable: 503,
  storage_full: 507,
} as const;
export type ErrorCode = keyof typeof CODES;

export class AppError extends Error {
  /** The request field the error is about, where one is (a pipeline prefixes it with the step). */
  field?: string;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
  get status(): number {
    return CODES[this.code];
  }
}

export const TEXT = {
  invalidInput: 'Uploaded file is not valid input for this route',
  password: 'The input file is password protected and cannot be processed.',
  keyMissing: 'An Api-Key header is required to send this request.',
  keyInvalid: 'The provided key is not valid.',
  unknownResource: 'That file does not exist',
  requestNotFound: 'requestID not found. Check that the Api-Key and the request id are correct.',
  invalidRequest: 'Invalid Request',
};

export const outOfRange = (value: unknown, parameter: string) =>
  new AppError('out_of_range', `${display(value)} is not within the acceptable range for ${parameter}`);

export const invalidInput = (detail?: string) => new AppError('invalid_input', detail ? `${TEXT.invalidInput}: ${detail}` : TEXT.invalidInput);

/**
 * A job cut by one of the per-engine limits: 422 (the client's input, so clients do not resubmit it), naming
 * what was exceeded and the setting an operator can raise.
 */
export const limitExceeded = (what: string, setting: string, value: number | string) =>
  new AppError('limit', `${what} exceeded the limit ${setting}=${value}, so the job was stopped.`);

export const passwordProtected = () => new AppError('password', TEXT.password);

function display(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 200)}...` : value;
  const s = JSON.stringify(value);
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
}

/**
 * A write the server's own storage refused (DATA_DIR, the job dirs): full, over quota, read-only or not ours to
 * write. Not the client's fault and not a crash: 507, so the client knows to retry later or elsewhere.
 */
const STORAGE_ERRNOS: Record<string, string> = {
  ENOSPC: "the server's storage is full",
  EDQUOT: "the server's storage quota is used up",
  EROFS: "the server's storage is read-only",
  EACCES: 'the server may not write to its storage',
  EPERM: 'the server may not write to its storage',
};
/** Engines say the same in their own words on stderr. */
const STORAGE_STDERR = /No space left on device|Disk quota exceeded|Read-only file system/i;
const STORAGE_SAID: Record<string, string> = {
  'no space left on device': STORAGE_ERRNOS.ENOSPC,
  'disk quota exceeded': STORAGE_ERRNOS.EDQUOT,
  'read-only file system': STORAGE_ERRNOS.EROFS,
};

export function storageError(err: unknown): AppError | undefined {
  const e = err as NodeJS.ErrnoException;
  // libuv has no name for EDQUOT: Node reports it as "Unknown system error -122", so it is told by its number.
  const code = e?.errno === -constants.errno.EDQUOT ? 'EDQUOT' : (mkdirCause(e) ?? e?.code);
  const why = code && typeof e?.syscall === 'string' ? STORAGE_ERRNOS[code] : undefined;
  if (why) return storageFull(`${why} (${code})`);
  // A read that failed for want of room is not a broken input: inputError wraps the engine's failure as a 400.
  if (err instanceof AppError && Array.isArray(err.cause)) return err.cause.map(storageError).find(Boolean);
  const said = err instanceof EngineError ? STORAGE_STDERR.exec(err.details.stderr ?? '') : null;
  if (said) return storageFull(`${(err as EngineError).tool} could not write its output, ${STORAGE_SAID[said[0].toLowerCase()]}`);
  return undefined;
}

/**
 * Node's recursive mkdir (job dirs, caches) reports a read-only file system as ENOENT: it then looks for a missing
 * parent and finds none. The parent's own answer tells the real cause.
 */
function mkdirCause(e: NodeJS.ErrnoException): string | undefined {
  if (e?.code !== 'ENOENT' || e.syscall !== 'mkdir' || typeof e.path !== 'string') return undefined;
  try {
    accessSync(dirname(e.path), fsConstants.W_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

/** A write the storage would refuse with `code` (ENOSPC, EROFS...), found by looking at it rather than by a failed call. */
export const storageRefused = (code: string) => storageFull(`${STORAGE_ERRNOS[code] ?? 'the server cannot write to its storage'} (${code})`);

export const storageFull = (why: string) =>
  new AppError('storage_full', `The request could not be stored or processed: ${why}. Nothing of it was kept; try again later.`);

/**
 * The bucket that holds resource bytes did not answer or refused (S3 down, unreachable, misconfigured): 503, like an
 * engine that is down, so the client retries later; the storage is named, its address and the SDK's words go to the log.
 */
export const storageUnavailable = (storage: string, why: string) =>
  new AppError('storage_unavailable', `The server's storage (${storage}) is unavailable: ${why}. Nothing of this request was stored; try again later.`, {
    'retry-after': '30',
  });

/** How long a command of the request path waits for Redis's answer before the request is refused. */
export const REDIS_ANSWER_MS = 5_000;
/**
 * Redis (cluster mode) out of reach: its connection gives up rather than waits (jobs/cluster.ts), so a request is
 * refused at once instead of waiting as long as the outage. ioredis tells these apart only by the message of a plain Error.
 */
const REDIS_UNREACHABLE: Record<string, string> = {
  "Stream isn't writeable and enableOfflineQueue options is false": 'no connection',
  'Connection is closed.': 'no connection',
  'Command timed out': `no answer within ${REDIS_ANSWER_MS / 1000} s`,
};

export const queueUnavailable = (why: string) =>
  new AppError('queue_unavailable', `The job queue (Redis) is unavailable: ${why}. The request was not taken; send it again later.`, {
    'retry-after': '10',
  });

/** The one mapper from anything thrown to what the client sees. Stacks and stderr never leave the log. */
export function toClientError(err: unknown): { status: number; body: { error: string }; headers: Record<string, string> } {
  const storage = storageError(err);
  if (storage) return { status: storage.status, body: { error: storage.message }, headers: {} };
  const redis = err instanceof Error && !(err instanceof AppError) ? REDIS_UNREACHABLE[err.message] : undefined;
  if (redis) return toClientError(queueUnavailable(redis));
  if (err instanceof AppError) return { status: err.status, body: { error: err.message }, headers: err.headers };
  if (err instanceof EngineError) {
    if (err.details.missing) return { status: 503, body: { error: `${err.tool} is not installed on this server` }, headers: {} };
    // Installed but not starting (twice, the second time on a fresh instance): the server's fault, for now.
    if (err.details.unavailable)
      return { status: 503, body: { error: `${err.tool} could not be started on this server. Try again later.` }, headers: { 'retry-after': '30' } };
    // An engine that rejects an input (exit code, unreadable structure) means the input is broken: 400.
    return { status: 400, body: { error: TEXT.invalidInput }, headers: {} };
  }
  return { status: 500, body: { error: 'Internal error. The failure was logged.' }, headers: {} };
}

/**
 * Anything thrown, as the client would see it, with `prefix` before its text (a pipeline names the failing step).
 * The status is kept: a step's 422 is the pipeline's 422.
 */
export function prefixedError(err: unknown, prefix: string): AppError {
  const mapped = toClientError(err);
  const code = err instanceof AppError ? err.code : ((Object.keys(CODES) as ErrorCode[]).find((c) => CODES[c] === mapped.status) ?? 'internal');
  return new AppError(code, `${prefix}${mapped.body.error}`, mapped.headers);
}
