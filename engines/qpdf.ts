import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { type RunResult, run, stream } from './run.js';

// qpdf exits 3 when it succeeded with warnings (a damaged file it could recover).
const WARNINGS = [3];

export type QpdfJson = {
  qpdf?: [{ pdfversion: string; maxobjectid: number }, Record<string, { value?: unknown; stream?: { dict: Record<string, unknown> } }>];
  pages?: { object: string; images: unknown[]; contents: string[]; pageposfrom1: number }[];
  encrypt?: {
    encrypted: boolean;
    capabilities: Record<string, boolean>;
    parameters: { P: number; R: number; V: number; bits: number; method: string };
    userpasswordmatched: boolean;
    ownerpasswordmatched: boolean;
  };
  attachments?: Record<string, unknown>;
  acroform?: { hasacroform: boolean; fields: unknown[] };
};

/** Passwords go through a file in the job dir, never on the command line (where `ps` shows them). */
export async function passwordArgs(password: string | undefined, ctx: EngineContext): Promise<string[]> {
  if (password === undefined) return [];
  const file = join(ctx.cwd, `.password-${randomUUID()}`);
  await writeFile(file, password, { mode: 0o600 });
  return [`--password-file=${file}`];
}

/**
 * What one call may read into the server process: a hostile file can decode to gigabytes from a few MB, or
 * list millions of objects. Callers pass MAX_STREAM_MB and MAX_OBJECTS; the defaults (theirs) bound the rest.
 */
export interface ReadLimits {
  /** Bytes of one decoded stream, or of qpdf's JSON of the document. */
  maxBytes?: number;
  /** Objects of the document. */
  maxObjects?: number;
}
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_OBJECTS = 2_000_000;

/** A read cut by one of its ReadLimits: `kind` says which, `max` what it was (the caller names its setting). */
export class ReadLimitError extends EngineError {
  constructor(
    readonly kind: 'bytes' | 'objects',
    readonly max: number,
    message: string,
  ) {
    super('qpdf', message, kind === 'bytes' ? { limit: 'bytes' } : {});
  }
}

/**
 * Runs qpdf with its stdout read as it comes: `take` sees each piece, and when it returns an error the process
 * group is killed and that error thrown. Nothing is kept here; stderr is held up to `maxBuffer`.
 */
async function readStdout(
  args: string[],
  ctx: EngineContext,
  maxBuffer: number,
  take: (chunk: Buffer) => EngineError | undefined,
  onStderrLine?: (line: string) => void,
): Promise<RunResult> {
  const stop = new AbortController();
  const cancel = () => stop.abort();
  if (ctx.signal?.aborted) stop.abort();
  ctx.signal?.addEventListener('abort', cancel, { once: true });
  const proc = stream('qpdf', args, { cwd: ctx.cwd, timeoutMs: ctx.timeoutMs, signal: stop.signal, okExitCodes: WARNINGS, maxBuffer, onStderrLine });
  let cut: EngineError | undefined;
  try {
    for await (const chunk of proc.stdout) {
      cut = take(chunk) ?? undefined;
      if (cut) {
        stop.abort();
        break;
      }
    }
  } catch {
    // The stream ends in an error when the process is killed; done says why.
  } finally {
    ctx.signal?.removeEventListener('abort', cancel);
  }
  const result = await proc.done.catch((err: unknown) => {
    throw cut ?? err;
  });
  if (cut) throw cut;
  return result;
}

const bytesLimit = (max: number, what: string) => new ReadLimitError('bytes', max, `${what} is more than ${max} bytes`);

/** Occurrences of `needle` in `text`. */
function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

export interface PdfJsonRead {
  json: QpdfJson;
  warnings: string;
  /** Streams whose /Length was wrong, with the length qpdf found ("N G R" -> bytes). */
  recoveredLengths: Record<string, number>;
}

/**
 * The whole document as qpdf's JSON v2 (objects, pages, encryption, attachments, form). The JSON is counted as
 * it comes: more bytes than `maxBytes` or more objects than `maxObjects` stop qpdf (ReadLimitError).
 */
export async function readPdfJson(input: string, ctx: EngineContext, opts: { password?: string } & ReadLimits = {}): Promise<PdfJsonRead> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxObjects = opts.maxObjects ?? DEFAULT_MAX_OBJECTS;
  const chunks: Buffer[] = [];
  let size = 0;
  let objects = 0;
  let tail = '';
  const recoveredLengths: Record<string, number> = {};
  try {
    const args = ['--json', '--json-stream-data=none', ...(await passwordArgs(opts.password, ctx)), '--', input];
    const r = await readStdout(
      args,
      ctx,
      maxBytes,
      (chunk) => {
        size += chunk.length;
        if (size > maxBytes) return bytesLimit(maxBytes, "qpdf's JSON of the document");
        chunks.push(chunk);
        // Every object is one key "obj:N G R" (a quote inside a PDF string is escaped); the tail catches keys cut in two.
        const text = tail + chunk.toString('latin1');
        objects += occurrences(text, '"obj:');
        tail = text.slice(-4);
        if (objects > maxObjects) return new ReadLimitError('objects', maxObjects, `the document has more than ${maxObjects} objects`);
      },
      (line) => {
        const m = /\(object (\d+) (\d+), offset \d+\): recovered stream length: (\d+)/.exec(line);
        if (m) recoveredLengths[`${m[1]} ${m[2]} R`] = Number(m[3]);
      },
    );
    return { json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as QpdfJson, warnings: r.stderr, recoveredLengths };
  } catch (err) {
    throw classify(err);
  }
}

/**
 * 'open': encrypted, but the user password is empty. 'attachments': only embedded files are encrypted; pages and
 * strings are in the clear, so a reader opens it without a password, though qpdf and MuPDF still ask for one.
 */
export type Encryption = 'none' | 'open' | 'attachments' | 'needs-password';

/**
 * `qpdf --requires-password`: 0 = a password is needed, 2 = not encrypted, 3 = encrypted, opens without one.
 * qpdf answers 0 whenever the user password is not empty, also for a file that encrypts only its embedded files
 * (V4/V5, /StmF and /StrF /Identity or absent, /EFF a crypt filter; "encrypt only file attachments" in Acrobat):
 * the methods qpdf reads from the encryption dictionary without a password tell that file apart.
 */
export async function encryptionOf(input: string, ctx: EngineContext): Promise<Encryption> {
  const r = await run('qpdf', ['--requires-password', '--', input], { ...ctx, okExitCodes: [2, 3] });
  if (r.exitCode === 2) return 'none';
  if (r.exitCode === 3) return 'open';
  return (await onlyEmbeddedFilesEncrypted(input, ctx)) ? 'attachments' : 'needs-password';
}

/**
 * `qpdf --show-encryption` prints the stream and string methods (V4 and V5 only) even when the password is wrong:
 * "none" for both leaves nothing but embedded files encrypted. V1/V2 files print no methods: everything is encrypted.
 */
async function onlyEmbeddedFilesEncrypted(input: string, ctx: EngineContext): Promise<boolean> {
  const r = await run('qpdf', ['--show-encryption', '--', input], { ...ctx, okExitCodes: WARNINGS });
  const method = (what: string) => new RegExp(`^${what} encryption method: (\\S+)`, 'm').exec(r.stdout)?.[1];
  return method('stream') === 'none' && method('string') === 'none';
}

export class PasswordError extends EngineError {}

/** qpdf says "invalid password" both for a missing and for a wrong one. */
export function classify(err: unknown): unknown {
  if (err instanceof EngineError && /invalid password/i.test(err.details.stderr ?? '')) {
    return new PasswordError(err.tool, 'invalid password', err.details);
  }
  return err;
}

/**
 * The pages of the real page tree, as qpdf walks it (`--show-pages`: one "page N: ..." line each). Not the
 * root's /Count (`--show-npages` prints that as claimed: 2147483647 or -5 in a hostile file of two pages). The
 * listing is counted as it comes, so a file of many real pages costs no memory here.
 */
export async function pageCount(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<number> {
  try {
    const proc = stream('qpdf', ['--show-pages', ...(await passwordArgs(opts.password, ctx)), '--', input], { ...ctx, okExitCodes: WARNINGS });
    let pages = 0;
    let rest = '';
    try {
      for await (const chunk of proc.stdout) {
        const lines = (rest + chunk.toString('latin1')).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line.startsWith('page ')) pages++;
      }
    } catch {
      // The stream ends in an error when the process is killed; done says why.
    }
    await proc.done;
    return rest.startsWith('page ') ? pages + 1 : pages;
  } catch (err) {
    throw classify(err);
  }
}

/** Decoded bytes kept on the first pass of streamData; a larger stream is counted, then read again. */
const HOLD_BYTES = 16 * 1024 * 1024;

/**
 * The decoded bytes of one stream object (XMP metadata, embedded files). `ref` is "N G". More than `maxBytes`
 * stops qpdf (ReadLimitError). Beyond HOLD_BYTES the first pass only counts, so a stream that inflates past the
 * limit costs no memory; one under it is read a second time.
 */
export async function streamData(input: string, ref: string, ctx: EngineContext, opts: { password?: string; maxBytes?: number } = {}): Promise<Buffer> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const [num, gen] = ref.split(' ');
  try {
    const args = [`--show-object=${num},${gen ?? 0}`, '--filtered-stream-data', ...(await passwordArgs(opts.password, ctx)), '--', input];
    const held: Buffer[] = [];
    let size = 0;
    await readStdout(args, ctx, maxBytes, (chunk) => {
      size += chunk.length;
      if (size > maxBytes) return bytesLimit(maxBytes, `stream ${num} ${gen ?? 0} decoded`);
      if (size <= HOLD_BYTES) held.push(chunk);
    });
    if (size <= HOLD_BYTES) return Buffer.concat(held);
    const r = await run('qpdf', args, { ...ctx, okExitCodes: WARNINGS, binary: true, maxBuffer: maxBytes });
    return r.stdoutBuffer;
  } catch (err) {
    if (err instanceof EngineError && err.details.limit === 'bytes' && !(err instanceof ReadLimitError))
      throw bytesLimit(maxBytes, `stream ${num} ${gen ?? 0} decoded`);
    throw classify(err);
  }
}

/** The decoded size of one stream, counted and dropped; more than `maxBytes` stops qpdf (ReadLimitError). */
export async function streamSize(input: string, ref: string, ctx: EngineContext, opts: { password?: string; maxBytes?: number } = {}): Promise<number> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const [num, gen] = ref.split(' ');
  let size = 0;
  try {
    const args = [`--show-object=${num},${gen ?? 0}`, '--filtered-stream-data', ...(await passwordArgs(opts.password, ctx)), '--', input];
    await readStdout(args, ctx, maxBytes, (chunk) => {
      size += chunk.length;
      if (size > maxBytes) return bytesLimit(maxBytes, `stream ${num} ${gen ?? 0} decoded`);
    });
    return size;
  } catch (err) {
    throw classify(err);
  }
}

/**
 * The most each filter can expand its input, so that most streams are settled from their dictionary alone:
 * deflate ~1032:1, LZW below 2600:1 (a 12-bit code for a string of at most ~3840 bytes), RunLength 64:1,
 * ASCII85 4:1 (z), ASCIIHex 1:2. Other filters (images, crypt) are not bounded here: such streams are decoded.
 */
const EXPANSION: Record<string, number> = {
  '/FlateDecode': 1032,
  '/Fl': 1032,
  '/LZWDecode': 2600,
  '/LZW': 2600,
  '/RunLengthDecode': 64,
  '/RL': 64,
  '/ASCII85Decode': 4,
  '/A85': 4,
  '/ASCIIHexDecode': 0.5,
  '/AHx': 0.5,
};

/**
 * The most a stream can decode to, from its dictionary: the raw length (qpdf's recovered one when /Length was
 * wrong) times each filter's largest expansion; Infinity when that cannot be bounded.
 */
export function decodedSizeBound(dict: Record<string, unknown>, rawLength: unknown, resolve: (v: unknown) => unknown = (v) => v): number {
  const length = resolve(rawLength);
  if (typeof length !== 'number' || !Number.isFinite(length) || length < 0) return Infinity;
  const f = resolve(dict['/Filter']);
  const filters = Array.isArray(f) ? f.map(resolve) : f === undefined || f === null ? [] : [f];
  return filters.reduce<number>((bound, name) => bound * (typeof name === 'string' ? (EXPANSION[name] ?? Infinity) : Infinity), length);
}

/**
 * The first stream a content parser (Poppler, MuPDF) would decode, page contents, form XObjects and patterns,
 * that decodes to more than `maxBytes`, or null. Most are settled by decodedSizeBound; only streams whose
 * bound is above the limit are decoded, counted and dropped, and cut at the limit.
 */
export async function oversizedContentStream(
  input: string,
  read: Pick<PdfJsonRead, 'json' | 'recoveredLengths'>,
  ctx: EngineContext,
  opts: { password?: string; maxBytes?: number } = {},
): Promise<string | null> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const objects = read.json.qpdf?.[1] ?? {};
  const resolve = (v: unknown): unknown => {
    for (let i = 0; typeof v === 'string' && /^\d+ \d+ R$/.test(v) && i < 32; i++) v = objects[`obj:${v}`]?.value ?? null;
    return v;
  };
  const refs = new Set<string>();
  for (const page of read.json.pages ?? []) for (const c of page.contents ?? []) refs.add(c);
  for (const [key, o] of Object.entries(objects)) {
    const d = o.stream?.dict;
    if (d && (d['/Subtype'] === '/Form' || '/PatternType' in d)) refs.add(key.replace(/^obj:/, ''));
  }
  for (const ref of refs) {
    const dict = objects[`obj:${ref}`]?.stream?.dict;
    if (!dict) continue;
    if (decodedSizeBound(dict, read.recoveredLengths[ref] ?? dict['/Length'], resolve) <= maxBytes) continue;
    try {
      await streamSize(input, ref.replace(/ R$/, ''), ctx, { password: opts.password, maxBytes });
    } catch (err) {
      if (err instanceof ReadLimitError) return ref;
      throw err;
    }
  }
  return null;
}

/**
 * Where each object of the document's last revision is (`qpdf --show-xref`): "N/G" -> "uncompressed; offset = X",
 * "compressed; stream = S, index = I" or "free". An object whose entry differs between a file and a prefix of it
 * was written again, or first, by an incremental update after that prefix.
 */
export async function xrefEntries(input: string, ctx: EngineContext): Promise<Map<string, string>> {
  try {
    const r = await run('qpdf', ['--show-xref', '--', input], { ...ctx, okExitCodes: WARNINGS });
    const entries = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^(\d+\/\d+): (.*)$/.exec(line.trim());
      if (m) entries.set(m[1], m[2]);
    }
    return entries;
  } catch (err) {
    throw classify(err);
  }
}
