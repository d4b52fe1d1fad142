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

  async sweep(): Promise<string[]> {
    return [];
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}
}
