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

/** The one mapper from anything thrown to what the client sees. Stacks and stderr never leave the log. */
export function toClientError(err: unknown): { status: number; body: { error: string }; headers: Record<string, string> } {
  if (err instanceof AppError) return { status: err.status, body: { error: err.message }, headers: err.headers };
  if (err instanceof EngineError) {
    if (err.details.missing) return { status: 503, body: { error: `${err.tool} is not installed on this server` }, headers: {} };
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
