import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { AppError } from '../errors.js';
import { refuseDeep } from '../requests/fields.js';
import { type Body, type BodyOptions, storeStream, tooLarge } from '../requests/uploads.js';
import type { ResourceRecord } from '../store/index.js';

const JSON_LIMIT = 20 * 1024 * 1024;
export const fieldKey = (name: string) => name.replace(/\[\]$/, '');

function addField(fields: Record<string, unknown>, rawName: string, value: unknown) {
  const key = fieldKey(rawName);
  const prev = fields[key];
  if (prev === undefined) fields[key] = rawName.endsWith('[]') ? [value] : value;
  else fields[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
}

function requestStream(req: Request): Readable {
  if (!req.body) return Readable.from([]);
  return Readable.fromWeb(req.body as unknown as WebReadableStream<Uint8Array>);
}

/**
 * Reads a processing request's body: multipart (files streamed into the store), JSON, or url-encoded.
 * Parsing our own way because Hono's parseBody() buffers whole uploads in memory.
 */
export async function readBody(req: Request, opts: BodyOptions): Promise<Body> {
  const type = (req.headers.get('content-type') ?? '').toLowerCase();
  const length = Number(req.headers.get('content-length') ?? 0);
  if (length > opts.maxBytes + 1024 * 1024) throw tooLarge(opts.maxBytes);

  if (type.startsWith('multipart/form-data')) return readMultipart(req, opts);
  if (type.includes('json')) {
    const text = await readText(req, JSON_LIMIT);
    if (!text.trim()) return { fields: {}, files: {} };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('bad_json', 'JSON data provided is not properly formatted');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new AppError('bad_json', 'The JSON body must be an object of parameters');
    }
    // Every later step (absent-value checks, validation, error texts) may walk a value recursively.
    refuseDeep(parsed);
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(parsed)) fields[fieldKey(k)] = v;
    return { fields, files: {} };
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(await readText(req, JSON_LIMIT))) addField(fields, k, v);
    return { fields, files: {} };
  }
  if (req.body && length > 0) {
    throw new AppError('unsupported_media', 'Send the request as multipart/form-data or application/json');
  }
  return { fields: {}, files: {} };
}

async function readText(req: Request, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of requestStream(req)) {
    size += chunk.length;
    if (size > limit) throw new AppError('too_large', `The request body is larger than ${limit / 1048576} MB`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function readMultipart(req: Request, opts: BodyOptions): Promise<Body> {
  const fields: Record<string, unknown> = {};
  const files: Record<string, ResourceRecord[]> = {};
  const pending: Promise<void>[] = [];
  return new Promise<Body>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: Object.fromEntries(req.headers),
        limits: { fileSize: opts.maxBytes, fieldSize: 10 * 1024 * 1024, fields: 1000, files: 100, parts: 1100 },
        defParamCharset: 'utf8',
      });
    } catch {
      reject(new AppError('invalid_request', 'Malformed multipart/form-data request'));
      return;
    }
    let failed: unknown = null;
    const fail = (err: unknown) => {
      failed ??= err;
    };
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(new AppError('too_large', `The field ${fieldKey(name)} is too long`));
      addField(fields, name, value);
    });
    bb.on('file', (name, stream, info) => {
      const key = fieldKey(name);
      if (!opts.fileFields.has(key) || failed) {
        stream.resume();
        return;
      }
      // Order of arrival decides the order of inputs (merge): keep a slot now, fill it when stored.
      const list = (files[key] ??= []);
      const slot = list.length;
      list.push(undefined as unknown as ResourceRecord);
      stream.on('limit', () => fail(tooLarge(opts.maxBytes)));
      const job = storeStream(stream, info.filename || key, opts, undefined)
        .then((rec) => {
          list[slot] = rec;
          if ((stream as Readable & { truncated?: boolean }).truncated) fail(tooLarge(opts.maxBytes));
        })
        .catch((err) => {
          fail(err);
          // A part that could not be stored (a full disk) ends the request now: busboy would wait forever for the
          // destroyed part to be read, and the client for an answer.
          body.unpipe(bb);
          body.resume();
          void finish();
        });
      pending.push(job);
    });
    bb.on('partsLimit', () => fail(new AppError('invalid_request', 'Too many parts in the multipart body')));
    bb.on('filesLimit', () => fail(new AppError('invalid_request', 'Too many files in one request (limit 100)')));
    bb.on('fieldsLimit', () => fail(new AppError('invalid_request', 'Too many fields in one request (limit 1000)')));
    let finished = false;
    const finish = async () => {
      if (finished) return;
      finished = true;
      await Promise.allSettled(pending);
      const stored = Object.values(files).flat().filter(Boolean);
      if (failed) {
        // A removal the storage refuses too (the index on a full disk) keeps that upload whole, record and bytes: it
        // expires with RESOURCE_TTL_SECONDS; the client hears the first failure.
        await Promise.all(stored.map((r) => opts.store.remove(r.id).catch(() => undefined)));
        reject(failed);
        return;
      }
      resolve({ fields, files });
    };
    // busboy emits no 'close' after an error (a part header it cannot parse): the request ends here too.
    bb.on('error', (err) => {
      fail(new AppError('invalid_request', `Malformed multipart/form-data request: ${(err as Error).message}`));
      void finish();
    });
    bb.on('close', () => void finish());
    const body = requestStream(req);
    body
      .on('error', (err) => {
        fail(new AppError('invalid_request', `The upload was interrupted: ${err.message}`));
        bb.destroy();
      })
      .pipe(bb);
  });
}
