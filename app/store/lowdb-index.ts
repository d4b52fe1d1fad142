import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { coalesce } from './coalesce.js';
import type { ResourceIndex, ResourceRecord } from './index.js';

type ShardData = Record<string, ResourceRecord>;
interface Shard {
  db: Low<ShardData>;
  flush: () => Promise<void>;
}

/**
 * The embedded index: lowdb files in DATA_DIR/index split into 256 shards by the id's first byte. lowdb
 * rewrites a whole file per write (195 ms for one 100k-record file), so sharding keeps a write near 1 ms at
 * 100k records and coalescing merges the writes that arrive while one runs.
 */
export class LowdbIndex implements ResourceIndex {
  private readonly shards = new Map<string, Shard>();

  constructor(private readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const files = new Set(await readdir(this.dir));
    // A shard write cut by a full disk or a crash leaves lowdb's temp file (`.<shard>.json.tmp`, often empty); the shard itself is whole.
    for (const f of files) if (/^\.[0-9a-f]{2}\.json\.tmp$/.test(f)) await rm(join(this.dir, f), { force: true });
    await Promise.all(
      Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).map(async (key) => {
        const db = new Low<ShardData>(new JSONFile(join(this.dir, `${key}.json`)), {});
        if (files.has(`${key}.json`)) await db.read();
        db.data ??= {};
        this.shards.set(key, { db, flush: coalesce(() => db.write()) });
      }),
    );
  }

  private shard(id: string): Shard {
    const s = this.shards.get(id.slice(0, 2));
    if (!s) throw new Error(`index not initialised or bad id ${id}`);
    return s;
  }

  get count(): number {
    let n = 0;
    for (const s of this.shards.values()) n += Object.keys(s.db.data).length;
    return n;
  }

  /** Records live in memory: a pass over them, no I/O. */
  async totals(): Promise<{ count: number; bytes: number }> {
    let count = 0;
    let bytes = 0;
    for (const s of this.shards.values()) {
      for (const r of Object.values(s.db.data)) {
        count++;
        bytes += r.size;
      }
    }
    return { count, bytes };
  }

  async get(id: string): Promise<ResourceRecord | undefined> {
    return this.shard(id).db.data[id];
  }

  /**
   * A change the shard's file did not take (a full or read-only disk) is undone in memory too, so that what this
   * process answers is what a restart reads; the shard is then written once more without it.
   */
  async put(rec: ResourceRecord): Promise<void> {
    const shard = this.shard(rec.id);
    shard.db.data[rec.id] = rec;
    try {
      await shard.flush();
    } catch (err) {
      if (shard.db.data[rec.id] === rec) delete shard.db.data[rec.id];
      void shard.flush().catch(() => undefined);
      throw err;
    }
  }

  async delete(id: string): Promise<boolean> {
    const shard = this.shard(id);
    const rec = shard.db.data[id];
    if (!rec) return false;
    delete shard.db.data[id];
    try {
      await shard.flush();
    } catch (err) {
      shard.db.data[id] ??= rec;
      void shard.flush().catch(() => undefined);
      throw err;
    }
    return true;
  }

  async sweep(now: number): Promise<string[]> {
    const removed: string[] = [];
    for (const shard of this.shards.values()) {
      const expired = Object.values(shard.db.data).filter((r) => r.expires && r.expires <= now);
      if (!expired.length) continue;
      for (const r of expired) delete shard.db.data[r.id];
      await shard.flush();
      removed.push(...expired.map((r) => r.id));
    }
    return removed;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.shards.values()].map((s) => s.flush()));
  }

  async close(): Promise<void> {}
}
