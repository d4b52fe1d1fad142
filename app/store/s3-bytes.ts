import { createReadStream } from 'node:fs';
import { chmod, copyFile, link, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Config } from '../config.js';
import { AppError, storageError, storageUnavailable } from '../errors.js';
import { type ResourceBytes, readHead, type StreamSource, streamToFile } from './bytes.js';
import { isResourceId } from './names.js';

const PREFIX = 'resources/';
/** Multipart parts: an upload holds at most (queue + 1) parts in memory, ~24 MB, whatever its size. */
const PART_BYTES = 8 * 1024 * 1024;
const PART_QUEUE = 2;
/** Local copies kept for engines (inputs fetched, uploads and outputs written through), least recently used first out. */
export const CACHE_BYTES = 2 * 1024 ** 3;
/** An object seen without a record is removed when it still has none this long after (the moment between an upload's completion and its record). */
const ORPHAN_GRACE_MS = 5_000;

const missing = (err: unknown) =>
  err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);
/** An object gone under its record (deleted, expired) is reported as a missing file is. */
const gone = (key: string) => Object.assign(new Error(`no object ${key}`), { code: 'ENOENT' });

/**
 * How long a bucket may keep a connection silent (no byte sent or received) before the call is given up; the SDK's
 * default is forever, so a stopped or unreachable store hung requests without an answer. S3 answers a call or sends
 * data within milliseconds to a second or two (a part's upload writes all along; a slow CompleteMultipartUpload is
 * kept alive with whitespace), so silence this long means the store is gone.
 */
const IDLE_MS = 5_000;
const CONNECT_MS = 3_000;
/**
 * Two attempts (the SDK's default is three): a store that does not answer is then reported within about 2 x IDLE_MS,
 * and a refused or reset connection at once; one retry still rides out a dropped connection or a throttled call.
 */
const ATTEMPTS = 2;
/**
 * A download streamed to a client is paced by that client: its S3 socket waits while the client reads slowly, so
 * once the object's answer arrived, silence is allowed this long before the bucket is taken for gone.
 */
const DOWNLOAD_IDLE_MS = 120_000;
/**
 * After the bucket failed a call, deletes are not sent for this long: they would fail or hang the same way and hold
 * up the answer of the request being cleaned up. Their records are gone, so the orphan sweep removes those objects
 * once the bucket answers again.
 */
const DELETES_PAUSED_MS = 30_000;

/** A failed call in a few words for the client (the SDK's own text and the store's address go to the log, as the cause). */
function whyFailed(err: unknown): string {
  const e = err as { name?: string; code?: string };
  if (e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT') return `no answer within ${IDLE_MS / 1000} s`;
  if (e?.code === 'ECONNREFUSED') return 'connection refused';
  if (e?.code === 'ECONNRESET' || e?.code === 'EPIPE') return 'connection lost';
  if (err instanceof S3ServiceException) return `${err.name} (HTTP ${err.$metadata.httpStatusCode ?? '?'})`;
  return e?.code ?? e?.name ?? 'request failed';
}

/** A client for AWS or an S3-compatible store (path-style, checksums only where S3 requires them). */
export function s3Client(s3: { endpoint?: string; region: string }): S3Client {
  return new S3Client({
    region: s3.region,
    maxAttempts: ATTEMPTS,
    // Credentials: the SDK's own chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles...).
    ...(s3.endpoint
      ? {
          endpoint: s3.endpoint,
          forcePathStyle: true,
          // S3-compatible stores differ in support for the SDK's default checksums (aws-chunked trailers):
          // send and check them only where S3 requires them.
          requestChecksumCalculation: 'WHEN_REQUIRED' as const,
          responseChecksumValidation: 'WHEN_REQUIRED' as const,
        }
      : {}),
    // Each download streaming to a client holds a socket for its duration (the SDK's default allows 50).
    requestHandler: {
      httpAgent: { maxSockets: 256, keepAlive: true },
      httpsAgent: { maxSockets: 256, keepAlive: true },
      connectionTimeout: CONNECT_MS,
      socketTimeout: IDLE_MS,
    },
  });
}

/**
 * Bytes as S3 objects `resources/<id>` (AWS or any S3-compatible store: MinIO, Ceph, R2...). Downloads stream
 * from the bucket; uploads stream into it (multipart beyond one part). Engines need files, so inputs are fetched
 * into a bounded local cache and hard-linked into the job's dir (an eviction never pulls a file from under a
 * running engine); uploads and outputs are written through to that cache, so a job on this replica reads
 * what it just stored without a download.
 */
export class S3Bytes implements ResourceBytes {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly cache: LocalCache;
  /** Ids seen without a record by a sweep, and when first (removed by a later sweep once the grace passed). */
  private readonly suspects = new Map<string, number>();
  /** When a call last found the bucket unavailable. */
  private failedAt = 0;

  constructor(s3: S3Config, opts: { cacheDir: string; cacheBytes?: number; cacheWrites?: boolean }) {
    this.bucket = s3.bucket;
    this.client = s3Client(s3);
    this.cache = new LocalCache(opts.cacheDir, opts.cacheBytes ?? CACHE_BYTES, opts.cacheWrites ?? true);
  }

  /** A call the bucket failed: 503 naming the bucket, not a 500 (our own errors, a 413 of the upload, pass as they are). */
  private unavailable(err: unknown): unknown {
    if (err instanceof AppError || (err as NodeJS.ErrnoException)?.code === 'ENOENT') return err;
    this.failedAt = Date.now();
    return Object.assign(storageUnavailable(`S3 bucket ${this.bucket}`, whyFailed(err)), { cause: err });
  }

  async init(): Promise<void> {
    await this.cache.init();
  }

  private key(id: string): string {
    return `${PREFIX}${id}`;
  }

  staging(id: string): string {
    return this.cache.staging(id);
  }

  /** Streams to the bucket (and, written through, to the local cache) at once. */
  async write(id: string, source: StreamSource): Promise<number> {
    let size = 0;
    const part = this.cache.writes ? this.cache.staging(id) : null;
    const fh = part ? await open(part, 'wx') : null;
    const count = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (!fh) cb(null, chunk);
        else fh.write(chunk).then(() => cb(null, chunk), cb);
      },
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.key(id), Body: count },
      partSize: PART_BYTES,
      queueSize: PART_QUEUE,
    });
    // Which side failed first: the source (a 413, a client gone) aborts the upload; the bucket ends the source.
    let failed: 'source' | 'bucket' | undefined;
    const piped = pipeline([...source, count]).catch((err) => {
      failed ??= 'source';
      void upload.abort().catch(() => undefined);
      throw err;
    });
    // An S3 failure ends the stream, so the request's body stops flowing too.
    const uploaded = upload.done().catch((err) => {
      failed ??= 'bucket';
      count.destroy(err);
      throw err;
    });
    const [p, u] = await Promise.allSettled([piped, uploaded]);
    await fh?.close();
    if (p.status === 'rejected' || u.status === 'rejected') {
      if (part) await rm(part, { force: true });
      const err =
        failed === 'bucket' ? this.unavailable((u as PromiseRejectedResult).reason) : p.status === 'rejected' ? p.reason : (u as PromiseRejectedResult).reason;
      // An object completed before the failure goes (when the bucket failed, the orphan sweep sees to it).
      await this.remove(id).catch(() => undefined);
      throw err;
    }
    if (part) await this.cache.adopt(id, part, size);
    return size;
  }

  async put(id: string, src: string, copy: boolean): Promise<number> {
    const { size } = await stat(src);
    const body = createReadStream(src);
    try {
      await new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: this.key(id), Body: body, ContentLength: size },
        partSize: PART_BYTES,
        queueSize: PART_QUEUE,
      }).done();
    } catch (err) {
      throw this.unavailable(err);
    } finally {
      body.destroy();
    }
    if (!copy) await this.cache.adopt(id, src, size);
    return size;
  }

  async read(id: string): Promise<Readable | undefined> {
    const local = await this.cache.peek(id, (path) => open(path, 'r'));
    if (local) return local.createReadStream();
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(id) }));
      (res.Body as IncomingMessage).socket?.setTimeout(DOWNLOAD_IDLE_MS);
      return res.Body as Readable;
    } catch (err) {
      if (missing(err)) return undefined;
      throw this.unavailable(err);
    }
  }

  /** A ranged GET unless the bytes are cached. */
  async head(id: string, bytes: number): Promise<Buffer> {
    const local = await this.cache.peek(id, (path) => readHead(path, bytes));
    if (local) return local;
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(id), Range: `bytes=0-${bytes - 1}` }));
      return Buffer.from(await res.Body!.transformToByteArray()).subarray(0, bytes);
    } catch (err) {
      // An empty object has no byte 0 to range over.
      if (err instanceof S3ServiceException && (err.name === 'InvalidRange' || err.$metadata.httpStatusCode === 416)) return Buffer.alloc(0);
      if (missing(err)) throw gone(this.key(id));
      throw this.unavailable(err);
    }
  }

  localPath(id: string, dir: string): Promise<string> {
    return this.cache.use(
      id,
      async (dest) => {
        const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(id) })).catch((err) => {
          if (missing(err)) throw gone(this.key(id));
          throw this.unavailable(err);
        });
        // The object's bytes stopping half way (the store gone mid-download) is the store's failure too.
        await streamToFile([res.Body as Readable], dest).catch((err) => {
          throw storageError(err) ?? this.unavailable(err);
        });
      },
      async (cached) => {
        const inputs = join(dir, '.inputs');
        await mkdir(inputs, { recursive: true });
        const dest = join(inputs, id);
        await link(cached, dest).catch(async (err: NodeJS.ErrnoException) => {
          if (err.code === 'EEXIST') return;
          if (err.code !== 'EXDEV' && err.code !== 'EPERM') throw err;
          await copyFile(cached, dest);
        });
        return dest;
      },
    );
  }

  async remove(id: string): Promise<void> {
    this.cache.forget(id);
    if (Date.now() - this.failedAt < DELETES_PAUSED_MS) return;
    await this.deleteObject(id);
  }

  private async deleteObject(id: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(id) })).catch((err) => {
      throw this.unavailable(err);
    });
  }

  /**
   * Objects appear in a listing only once complete, so an object without a record is either just uploaded (its
   * record follows within milliseconds) or left over (a crash, a record Redis expired). It goes when a later
   * sweep, at least the grace after the first, still finds no record.
   */
  async sweepOrphans(known: (id: string) => Promise<boolean>): Promise<number> {
    const now = Date.now();
    const seen = new Set<string>();
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: PREFIX, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const id = (o.Key ?? '').slice(PREFIX.length);
        // Only what we write: other keys under the prefix are left alone.
        if (!isResourceId(id) || (await known(id))) continue;
        seen.add(id);
        const first = this.suspects.get(id);
        if (first === undefined) this.suspects.set(id, now);
        else if (now - first >= ORPHAN_GRACE_MS) {
          this.cache.forget(id);
          await this.deleteObject(id);
          this.suspects.delete(id);
          removed++;
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    for (const id of this.suspects.keys()) if (!seen.has(id)) this.suspects.delete(id);
    return removed;
  }

  async ready(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/**
 * Local copies of objects, bounded in bytes. Each copy has its own file name, so removing an evicted copy never
 * hits a newer one; copies in use (being linked or opened) are pinned and not evicted.
 */
class LocalCache {
  private readonly entries = new Map<string, { path: string; size: number; pins: number }>();
  private readonly fetching = new Map<string, Promise<void>>();
  private total = 0;
  private seq = 0;

  constructor(
    readonly dir: string,
    private readonly maxBytes: number,
    /** Whether uploads and outputs are kept too (not on api replicas, which run no engines). */
    readonly writes: boolean,
  ) {}

  async init(): Promise<void> {
    // A previous process's copies are not counted: start empty.
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true });
  }

  staging(id: string): string {
    return join(this.dir, `${id}.${++this.seq}.part`);
  }

  /** Takes a finished local file in (a rename); when it cannot, the file is simply removed. */
  async adopt(id: string, src: string, size: number): Promise<void> {
    if (!this.writes || this.entries.has(id)) {
      await rm(src, { force: true });
      return;
    }
    const path = join(this.dir, `${id}.${++this.seq}`);
    try {
      await rename(src, path);
      await chmod(path, 0o444);
    } catch {
      await rm(src, { force: true });
      return;
    }
    this.remember(id, path, size);
  }

  /** Runs `fn` on the cached copy, fetching it first when there is none. */
  async use<T>(id: string, fetch: (dest: string) => Promise<void>, fn: (path: string) => Promise<T>): Promise<T> {
    for (;;) {
      const hit = await this.peek(id, fn);
      if (hit !== undefined) return hit;
      let pending = this.fetching.get(id);
      if (!pending) {
        pending = this.download(id, fetch).finally(() => this.fetching.delete(id));
        this.fetching.set(id, pending);
      }
      await pending;
    }
  }

  /** Runs `fn` on the cached copy if there is one (pinned meanwhile); undefined otherwise. */
  async peek<T>(id: string, fn: (path: string) => Promise<T>): Promise<T | undefined> {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    // Most recently used last.
    this.entries.delete(id);
    this.entries.set(id, entry);
    entry.pins++;
    try {
      return await fn(entry.path);
    } finally {
      entry.pins--;
    }
  }

  forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.total -= entry.size;
    void rm(entry.path, { force: true }).catch(() => undefined);
  }

  private async download(id: string, fetch: (dest: string) => Promise<void>): Promise<void> {
    const part = this.staging(id);
    const path = part.replace(/\.part$/, '');
    try {
      await fetch(part);
      await chmod(part, 0o444);
      await rename(part, path);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
    this.remember(id, path, (await stat(path)).size);
  }

  private remember(id: string, path: string, size: number): void {
    this.forget(id);
    this.entries.set(id, { path, size, pins: 0 });
    this.total += size;
    // Oldest first; the newest copy stays even when it alone is over the bound (its job needs it).
    for (const [other, entry] of this.entries) {
      if (this.total <= this.maxBytes || other === id) break;
      if (entry.pins) continue;
      this.forget(other);
    }
  }
}
