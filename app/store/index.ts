import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat, copyFile, readdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { coalesce } from './coalesce.js';
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

type ShardData = Record<string, ResourceRecord>;
interface Shard {
  db: Low<ShardData>;
  flush: () => Promise<void>;
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const isResourceId = (id: string) => UUID_V4.test(id);

/**
 * Resources: bytes in DATA_DIR/resources/<id>, records in a lowdb index split into 256 shards by the id's
 * first byte. lowdb rewrites a whole file per write (195 ms for one 100k-record file), so sharding keeps a
 * write near 1 ms at 100k records and coalescing merges the writes that arrive while one runs.
 */
export class Store {
  readonly filesDir: string;
  readonly workDir: string;
  private readonly indexDir: string;
  private readonly shards = new Map<string, Shard>();

  constructor(
    readonly dataDir: string,
    private readonly ttlMs: number,
  ) {
    this.filesDir = join(dataDir, 'resources');
    this.workDir = join(dataDir, 'work');
    this.indexDir = join(dataDir, 'index');
  }

  async init(): Promise<void> {
    await Promise.all([this.filesDir, this.workDir, this.indexDir].map((d) => mkdir(d, { recursive: true })));
    const files = new Set(await readdir(this.indexDir));
    await Promise.all(
      Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).map(async (key) => {
        const db = new Low<ShardData>(new JSONFile(join(this.indexDir, `${key}.json`)), {});
        if (files.has(`${key}.json`)) await db.read();
        db.data ??= {};
        this.shards.set(key, { db, flush: coalesce(() => db.write()) });
      }),
    );
    // Bytes without a record are leftovers of a crash between move and index write.
    for (const name of await readdir(this.filesDir)) {
      if (!this.get(name.replace(/\.part$/, '')) || name.endsWith('.part')) await rm(join(this.filesDir, name), { force: true });
    }
  }

  private shard(id: string): Shard {
    const s = this.shards.get(id.slice(0, 2));
    if (!s) throw new Error(`store not initialised or bad id ${id}`);
    return s;
  }

  get count(): number {
    let n = 0;
    for (const s of this.shards.values()) n += Object.keys(s.db.data).length;
    return n;
  }

  get(id: string): ResourceRecord | undefined {
    if (!isResourceId(id)) return undefined;
    const r = this.shard(id).db.data[id];
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

  /** Moves a finished file into the store (same filesystem: a rename) and records it. */
  async add(src: string, opts: { name: string; owner: string | null; type?: string; copy?: boolean; id?: string }): Promise<ResourceRecord> {
    const id = opts.id ?? randomUUID();
    const dest = join(this.filesDir, id);
    if (opts.copy) await copyFile(src, dest);
    else await rename(src, dest);
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
    const shard = this.shard(id);
    shard.db.data[id] = rec;
    await shard.flush();
    return rec;
  }

  async remove(id: string): Promise<boolean> {
    const shard = this.shard(id);
    if (!shard.db.data[id]) return false;
    delete shard.db.data[id];
    await shard.flush();
    await rm(join(this.filesDir, id), { force: true });
    return true;
  }

  /** Files and records go together; returns how many were removed. */
  async sweepExpired(now = Date.now()): Promise<number> {
    let removed = 0;
    for (const shard of this.shards.values()) {
      const expired = Object.values(shard.db.data).filter((r) => r.expires && r.expires <= now);
      if (!expired.length) continue;
      for (const r of expired) delete shard.db.data[r.id];
      await shard.flush();
      await Promise.all(expired.map((r) => rm(join(this.filesDir, r.id), { force: true })));
      removed += expired.length;
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
    await Promise.all([...this.shards.values()].map((s) => s.flush()));
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
