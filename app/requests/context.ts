import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { ToolVersions } from '../../engines/tools.js';
import type { Config } from '../config.js';
import type { JobQueue } from '../jobs/index.js';
import type { Store } from '../store/index.js';
import type { Operation } from './operation.js';

export interface Deps {
  config: Config;
  store: Store;
  jobs: JobQueue;
  tools: ToolVersions;
  log: Logger;
  operations: Operation[];
  meta: { product: string; version: string; releaseDate: string };
  /** Named pipelines read from PIPELINES_DIR at start (the valid ones), and the files left out with why. */
  pipelines: { valid: NamedPipeline[]; invalid: { file: string; error: string }[] };
  /** Shared services for /ready: Redis and the shared storage (cluster mode), or the S3 bucket of one process. */
  cluster?: { ready: () => Promise<Record<string, { ok: boolean }>> };
}

export interface NamedPipeline {
  name: string;
  description?: string;
  steps: { operation: string; fields: Record<string, unknown> }[];
}

export type Env = { Variables: { owner: string | null; requestId: string; log: Logger } };

/**
 * Who the scheduler is fair between: the API key (its hash), else the peer address. Behind a proxy every
 * request shares one address; keys keep clients apart there.
 */
export function clientOf(c: Context<Env>): string {
  const owner = c.get('owner');
  if (owner) return `key:${owner}`;
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return `addr:${incoming?.socket?.remoteAddress ?? 'local'}`;
}

/** Base of every outputUrl/url: PUBLIC_URL, else the address the client used. */
export const baseUrlOf = (config: Config, requestUrl: string) => config.publicUrl ?? new URL(requestUrl).origin;
