import { Readable } from 'node:stream';
import type { Hono } from 'hono';
import { AppError, TEXT } from '../errors.js';
import { baseUrlOf, type Deps, type Env } from '../requests/context.js';
import { fetchUrl } from '../requests/fetch-url.js';
import { type Body, discardUploads, storeStream } from '../requests/uploads.js';
import { isResourceId, type ResourceRecord } from '../store/index.js';
import { extensionFor, extensionOf } from '../store/names.js';
import { readBody } from './body.js';

const notFound = () => new AppError('unknown_resource', TEXT.unknownResource);

/**
 * Types a browser may show in place (the web page's previews). Never HTML, SVG or XML: the resource would run
 * scripts with this origin's rights.
 */
const INLINE_TYPES = new Set(['application/pdf', 'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp']);

/** RFC 6266: an ASCII fallback plus the exact UTF-8 name. */
export function contentDisposition(name: string, inline = false): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const idsOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined || v === null ? [] : String(v).split(',')).map((x) => String(x).trim()).filter(Boolean);

/** Resource management (spec 4.2) and /upload (the official clients' way to store inputs). */
export function mountResources(app: Hono<Env>, deps: Deps): void {
  const { store, config } = deps;

  app.get('/resource/:id', async (c) => {
    const format = c.req.query('format') ?? 'file';
    if (!['file', 'url', 'info'].includes(format)) throw new AppError('invalid_request', TEXT.invalidRequest);
    const rec = await store.getFor(c.req.param('id'), c.get('owner'));
    if (!rec) throw notFound();
    const base = baseUrlOf(config, c.req.url);
    if (format === 'info') return c.json(store.info(rec, base));
    if (format === 'url') return c.json({ url: store.info(rec, base).url });
    // Streamed from the file or the S3 object, never buffered.
    const bytes = await store.read(rec.id);
    if (!bytes) throw notFound();
    return new Response(Readable.toWeb(bytes) as unknown as ReadableStream, {
      headers: {
        'Content-Type': rec.type,
        'Content-Length': String(rec.size),
        'Content-Disposition': contentDisposition(rec.name, c.req.query('disposition') === 'inline' && INLINE_TYPES.has(rec.type)),
        'Last-Modified': new Date(rec.modified).toUTCString(),
        'Cache-Control': 'private, no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    });
  });

  /** Ownership: with keys on, only the key that made a resource may delete it. */
  const deleteOne = async (id: string, owner: string | null): Promise<{ status: number; text: string }> => {
    const rec = isResourceId(id) ? await store.getFor(id, owner) : undefined;
    if (!rec) return { status: 404, text: 'File does not exist' };
    if (config.apiKeys && rec.owner !== owner) return { status: 403, text: 'The provided key does not own this file' };
    await store.remove(id);
    return { status: 200, text: 'Successfully Deleted' };
  };

  app.delete('/resource/:id', async (c) => {
    const id = c.req.param('id');
    const r = await deleteOne(id, c.get('owner'));
    if (r.status === 404) throw notFound();
    if (r.status === 403) throw new AppError('forbidden', r.text);
    return c.json({ deletionResponses: { [id]: r.text } });
  });

  app.post('/delete', async (c) => {
    const body = await readBody(c.req.raw, { store, owner: null, maxBytes: 0, fileFields: new Set() });
    const ids = idsOf(body.fields.ids ?? body.fields.id);
    if (!ids.length) throw new AppError('out_of_range', 'ids is required: a comma-separated list of resource ids');
    const deletionResponses: Record<string, string> = {};
    for (const id of ids) deletionResponses[id] = (await deleteOne(id, c.get('owner'))).text;
    return c.json({ deletionResponses });
  });

  app.post('/upload', async (c) => {
    const owner = c.get('owner');
    const type = (c.req.header('content-type') ?? '').toLowerCase();
    const opts = { store, owner, maxBytes: config.maxUploadBytes, fileFields: new Set(['file']) };
    const stored: ResourceRecord[] = [];
    let body: Body | undefined;
    try {
      const rawName = c.req.header('content-filename');
      if (rawName !== undefined) {
        if (!c.req.raw.body) throw new AppError('invalid_request', 'The raw upload has no body');
        const mediaType = type.split(';')[0].trim();
        const name = decodeHeaderName(rawName) || 'file';
        const withExt = extensionOf(name) || !mediaType ? name : `${name}.${extensionFor(mediaType)}`;
        const length = Number(c.req.header('content-length') ?? 0);
        if (length > config.maxUploadBytes)
          throw new AppError(
            'too_large',
            `The upload is larger than this server's limit of ${Math.round(config.maxUploadBytes / 1048576)} MB (MAX_UPLOAD_MB).`,
          );
        stored.push(await storeStream(Readable.fromWeb(c.req.raw.body as never), withExt, opts));
      } else {
        body = await readBody(c.req.raw, opts);
        stored.push(...(body.files.file ?? []));
        for (const url of idsOf(body.fields.url)) {
          const fetched = await fetchUrl(url, { enabled: config.urlFetch, allow: config.urlAllow }, c.req.raw.signal);
          stored.push(await storeStream(fetched.stream, fetched.name, opts, undefined));
        }
      }
      if (!stored.length) throw new AppError('missing_input', 'Send at least one file (multipart parts named file), a raw body with Content-Filename, or url');
      return c.json({ files: stored.map((r) => ({ name: r.name, id: r.id })) });
    } catch (err) {
      await discardUploads(store, { fields: {}, files: { file: stored } });
      if (body) await discardUploads(store, body);
      throw err;
    }
  });
}

function decodeHeaderName(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
