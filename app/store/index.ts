import { randomUUID } from 'node:crypto';
import { access, constants, mkdir, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DirBytes, type ResourceBytes, readHead } from './bytes.js';
import { isResourceId, sanitizeName, typeOf, UUID_V4 } from './names.js';

export interface ResourceRecord {
  id: string;
  name: string;
  type: string;
  size: number;
  /** ms since epoch */
  modified: number;
  /** sha-256 of the API key that created it; null on an open server */
  owner: string | null;
  /** ms since epoch; 0 = kept until deleted */
  expires: number;
}

export interface ResourceInfo {
  id: string;
  name: string;
  url: string;
  type: string;
  size: number;
  modified: string;
}

export { isResourceId, UUID_V4 };

/**
 * Where resource records live: a lowdb index in DATA_DIR (embedded mode) or Redis (REDIS_URL, shared by
 * replicas). Records carry their expiry; the Redis index also lets Redis expire them.
 */
export interface ResourceIndex {
  init(): Promise<void>;
  get(id: string): Promise<ResourceRecord | undefined>;
  put(rec: ResourceRecord): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** Removes records whose expiry passed and returns their ids (Redis expires its own: none). */
  sweep(now: number): Promise<string[]>;
  /** Waits for pending writes (shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Resources recorded and their bytes (metrics; the Redis index scans, so callers cache it). */
  totals(): Promise<{ count: number; bytes: number }>;
}

/**
 * Resources: bytes in a ResourceBytes (DATA_DIR/resources/<id>, a shared directory when replicas run, or S3
 * objects), records in the index. Bytes without a record are leftovers of a crash between storing and
 * recording, or of records Redis expired.
 */
export class Store {
  readonly workDir: string;
  readonly bytes: ResourceBytes;
  /** KEY_SCOPE=owner: a resource is visible only to the key that created it. */
  private readonly ownerScope: boolean;

  constructor(
    readonly dataDir: string,
    private readonly ttlMs: number,
    private readonly index: ResourceIndex,
    opts: { workDir?: string; bytes?: ResourceBytes; ownerScope?: boolean } = {},
  ) {
    this.ownerScope = opts.ownerScope ?? false;
    this.workDir = opts.workDir ?? join(dataDir, 'work');
    this.bytes = opts.bytes ?? new DirBytes(join(dataDir, 'resources'));
  }

  async init(): Promise<void> {
    await mkdir(this.workDir, { recursive: true });
    await this.bytes.init();
    await this.index.init();
    await this.bytes.sweepOrphans(this.known, true);
  }

  private readonly known = async (id: string) => !!(await this.index.get(id));

  /** A record as a request by `owner` may see it: under KEY_SCOPE=owner another key's reads as unknown. */
  async getFor(id: string, owner: string | null): Promise<ResourceRecord | undefined> {
    const rec = await this.get(id);
    return rec && this.ownerScope && rec.owner !== owner ? undefined : rec;
  }

  async get(id: string): Promise<ResourceRecord | undefined> {
    if (!isResourceId(id)) return undefined;
    const r = await this.index.get(id);
    if (r?.expires && r.expires <= Date.now()) return undefined;
    return r;
  }

  /**
   * A local file with the bytes of `id` for engines, read only: the stored file itself, or (S3) a copy fetched
   * into the local cache and linked into `dir`, the job's temp dir.
   */
  localPath(id: string, dir: string): Promise<string> {
    if (!isResourceId(id)) throw new Error('bad id');
    return this.bytes.localPath(id, dir);
  }

  /** The bytes as a stream (downloads); undefined when they are gone. */
  read(id: string): Promise<Readable | undefined> {
    if (!isResourceId(id)) throw new Error('bad id');
    return this.bytes.read(id);
  }

  /** A fresh id and a local path where its bytes may be written before `add` moves them in. */
  reserve(): { id: string; path: string } {
    const id = randomUUID();
    return { id, path: this.bytes.staging(id) };
  }

  /** Moves a finished file into the store (a rename, or an upload to S3) and records it. */
  async add(src: string, opts: { name: string; owner: string | null; type?: string; copy?: boolean; id?: string }): Promise<ResourceRecord> {
    const id = opts.id ?? randomUUID();
    const size = await this.bytes.put(id, src, !!opts.copy);
    return this.record(id, size, opts);
  }

  /** Streams bytes into the store (through `via`, e.g. a size limit) and records them; memory stays flat. */
  async addStream(source: Readable, opts: { name: string; owner: string | null; type?: string }, via: NodeJS.ReadWriteStream[] = []): Promise<ResourceRecord> {
    const id = randomUUID();
    const size = await this.bytes.write(id, [source, ...via]);
    return this.record(id, size, opts);
  }

  private async record(id: string, size: number, opts: { name: string; owner: string | null; type?: string }): Promise<ResourceRecord> {
    const name = sanitizeName(opts.name);
    const rec: ResourceRecord = {
      id,
      name,
      type: opts.type ?? typeOf(name),
      size,
      modified: Date.now(),
      owner: opts.owner,
      expires: this.ttlMs > 0 ? Date.now() + this.ttlMs : 0,
    };
    try {
      await this.index.put(rec);
    } catch (err) {
      await this.bytes.remove(id).catch(() => undefined);
      throw err;
    }
    return rec;
  }

  /**
   * The record first, then the bytes. Bytes the storage will not remove now (S3 down, a read-only disk) are left
   * without a record: the orphan sweep removes them once the storage takes writes again, and nobody reads them meanwhile.
   */
  async remove(id: string): Promise<boolean> {
    if (!isResourceId(id) || !(await this.index.delete(id))) return false;
    await this.bytes.remove(id).catch(() => undefined);
    return true;
  }

  /** Bytes and records go together; returns how many were removed. */
  async sweepExpired(now = Date.now()): Promise<number> {
    const expired = await this.index.sweep(now);
    await Promise.all(expired.map((id) => this.bytes.remove(id)));
    return expired.length + (await this.bytes.sweepOrphans(this.known, false));
  }

  /** Resources stored and their bytes, from the index. */
  totals(): Promise<{ count: number; bytes: number }> {
    return this.index.totals();
  }

  /** Whether the storage of bytes takes writes (/ready). */
  ready(): Promise<boolean> {
    return this.bytes.ready();
  }

  info(rec: ResourceRecord, baseUrl: string): ResourceInfo {
    return {
      id: rec.id,
      name: rec.name,
      url: resourceUrl(baseUrl, rec.id),
      type: rec.type,
      size: rec.size,
      modified: new Date(rec.modified).toISOString(),
    };
  }

  /** Reads the first bytes of a stored file (type sniffing; a ranged GET on S3). */
  head(id: string, bytes = 1024): Promise<Buffer> {
    if (!isResourceId(id)) throw new Error('bad id');
    return this.bytes.head(id, bytes);
  }

  /** Waits for every pending index write (shutdown). */
  async flushAll(): Promise<void> {
    await this.index.flush();
  }

  async close(): Promise<void> {
    await this.index.flush();
    await this.index.close();
    await this.bytes.close();
  }
}

/**
 * Why the file system holding `dir` takes no more writes, as the errno a write would get: 'EROFS' (remounted
 * read-only), 'EACCES' (not ours to write), 'ENOSPC' (under 1 MiB left to unprivileged writers); undefined when it
 * takes them or cannot be told. A job that failed there failed for that, whatever words its engine found ("write error").
 */
export async function writeRefusal(dir: string): Promise<'EROFS' | 'EACCES' | 'ENOSPC' | undefined> {
  const s = await statfs(dir).catch(() => undefined);
  if (!s) return undefined;
  const denied = await access(dir, constants.W_OK).then(
    () => undefined,
    (err: NodeJS.ErrnoException) => (err.code === 'EROFS' || err.code === 'EACCES' ? err.code : undefined),
  );
  return denied ?? (s.bavail * s.bsize < 1024 * 1024 ? 'ENOSPC' : undefined);
}

/**
 * Bytes this process may still write in `dir` (undefined when it cannot be told): the file system's room for
 * unprivileged writers, or none when the directory takes no writes at all (read-only, not ours to write).
 */
export async function freeBytes(dir: string): Promise<number | undefined> {
  const s = await statfs(dir).catch(() => undefined);
  if (!s) return undefined;
  const denied = await access(dir, constants.W_OK).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'EROFS' || err.code === 'EACCES',
  );
  return denied ? 0 : s.bavail * s.bsize;
}

export const resourceUrl = (baseUrl: string, id: string) => `${baseUrl}/resource/${id}?format=file`;

export { readHead };
