import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat, copyFile, readdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { sanitizeName, typeOf } from './names.js';

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

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const isResourceId = (id: string) => UUID_V4.test(id);

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
}

/** How long a file may sit in the store without a record before a sweep removes it: the moment between another replica moving it in and recording it (milliseconds in practice). */
const ORPHAN_GRACE_MS = 5_000;

/**
 * Resources: bytes in DATA_DIR/resources/<id> (a shared directory when replicas run), records in the index.
 * Files without a record are leftovers of a crash between move and index write, or of records Redis expired.
 */
export class Store {
  readonly filesDir: string;
  readonly workDir: string;

  constructor(
    readonly dataDir: string,
    private readonly ttlMs: number,
    private readonly index: ResourceIndex,
    opts: { workDir?: string } = {},
  ) {
    this.filesDir = join(dataDir, 'resources');
    this.workDir = opts.workDir ?? join(dataDir, 'work');
  }

  async init(): Promise<void> {
    await Promise.all([this.filesDir, this.workDir].map((d) => mkdir(d, { recursive: true })));
    await this.index.init();
    await this.sweepOrphans(0);
  }

  async get(id: string): Promise<ResourceRecord | undefined> {
    if (!isResourceId(id)) return undefined;
    const r = await this.index.get(id);
    if (r && r.expires && r.expires <= Date.now()) return undefined;
    return r;
  }

  pathOf(id: string): string {
    if (!isResourceId(id)) throw new Error('bad id');
    return join(this.filesDir, id);
  }

  /** A fresh id and the path where its bytes should be written before `register`. */
  reserve(): { id: string; path: string } {
    const id = randomUUID();
    return { id, path: `${join(this.filesDir, id)}.part` };
  }

  /** Moves a finished file into the store (a rename; a copy when the job dir is on another filesystem) and records it. */
  async add(src: string, opts: { name: string; owner: string | null; type?: string; copy?: boolean; id?: string }): Promise<ResourceRecord> {
    const id = opts.id ?? randomUUID();
    const dest = join(this.filesDir, id);
    if (opts.copy) await copyFile(src, dest);
    else await rename(src, dest).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EXDEV') throw err;
      await copyFile(src, `${dest}.part`);
      await rename(`${dest}.part`, dest);
    });
    const s = await stat(dest);
    const name = sanitizeName(opts.name);
    const rec: ResourceRecord = {
      id,
      name,
      type: opts.type ?? typeOf(name),
      size: s.size,
      modified: Date.now(),
      owner: opts.owner,
      expires: this.ttlMs > 0 ? Date.now() + this.ttlMs : 0,
    };
    await this.index.put(rec);
    return rec;
  }

  async remove(id: string): Promise<boolean> {
    if (!isResourceId(id) || !(await this.index.delete(id))) return false;
    await rm(join(this.filesDir, id), { force: true });
    return true;
  }

  /** Files and records go together; returns how many were removed. */
  async sweepExpired(now = Date.now()): Promise<number> {
    const expired = await this.index.sweep(now);
    await Promise.all(expired.map((id) => rm(join(this.filesDir, id), { force: true })));
    return expired.length + (await this.sweepOrphans(ORPHAN_GRACE_MS));
  }

  /** Removes bytes without a record that are older than `graceMs` (0 at start: nothing else writes yet). */
  private async sweepOrphans(graceMs: number): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.filesDir)) {
      const id = name.replace(/\.part$/, '');
      if (!name.endsWith('.part') && (await this.index.get(id))) continue;
      const s = await stat(join(this.filesDir, name)).catch(() => null);
      // A .part is an upload in progress: only one an hour old (or any at start) is a leftover.
      const grace = name.endsWith('.part') && graceMs ? 3600_000 : graceMs;
      if (!s || Date.now() - s.mtimeMs < grace) continue;
      await rm(join(this.filesDir, name), { force: true });
      removed++;
    }
    return removed;
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

  /** Reads the first bytes of a stored file (type sniffing). */
  head(id: string, bytes = 1024): Promise<Buffer> {
    return readHead(this.pathOf(id), bytes);
  }

  /** Waits for every pending index write (shutdown). */
  async flushAll(): Promise<void> {
    await this.index.flush();
  }

  async close(): Promise<void> {
    await this.index.flush();
    await this.index.close();
  }
}

export const resourceUrl = (baseUrl: string, id: string) => `${baseUrl}/resource/${id}?format=file`;

/** The first bytes of a file (type sniffing). */
export async function readHead(path: string, bytes = 1024): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
