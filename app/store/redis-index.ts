import type { Redis } from 'ioredis';
import type { ResourceIndex, ResourceRecord } from './index.js';

const key = (id: string) => `quire:resource:${id}`;

/**
 * The shared index of a cluster (REDIS_URL): one JSON value per record, expiring with the resource (Redis
 * removes it; the store's sweep then removes the bytes it left). Every replica sees every record.
 */
export class RedisIndex implements ResourceIndex {
  constructor(private readonly redis: Redis) {}

  async init(): Promise<void> {
    await this.redis.ping();
  }

  async get(id: string): Promise<ResourceRecord | undefined> {
    const v = await this.redis.get(key(id));
    return v ? (JSON.parse(v) as ResourceRecord) : undefined;
  }

  async put(rec: ResourceRecord): Promise<void> {
    if (rec.expires) await this.redis.set(key(rec.id), JSON.stringify(rec), 'PXAT', rec.expires);
    else await this.redis.set(key(rec.id), JSON.stringify(rec));
  }

  async delete(id: string): Promise<boolean> {
    return (await this.redis.del(key(id))) > 0;
  }

  /** A SCAN over the records (Redis keeps no running sum that its own expiry would update). */
  async totals(): Promise<{ count: number; bytes: number }> {
    let count = 0;
    let bytes = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', key('*'), 'COUNT', 1000);
      cursor = next;
      if (!keys.length) continue;
      for (const v of await this.redis.mget(...keys)) {
        if (!v) continue;
        count++;
        bytes += (JSON.parse(v) as ResourceRecord).size;
      }
    } while (cursor !== '0');
    return { count, bytes };
  }

  async sweep(): Promise<string[]> {
    return [];
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
