import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configurePool } from '../engines/libreoffice/pool.js';
import { onRun } from '../engines/run.js';
import { probeTools } from '../engines/tools.js';
import type { Config } from './config.js';
import { ClusterJobs } from './jobs/cluster.js';
import { type JobQueue, Jobs } from './jobs/index.js';
import { createLogger } from './log.js';
import { META } from './meta.js';
import { operations } from './operations/index.js';
import { loadNamedPipelines, runSpec } from './pipelines/index.js';
import type { Deps } from './requests/context.js';
import type { ResourceBytes } from './store/bytes.js';
import { Store } from './store/index.js';
import { LowdbIndex } from './store/lowdb-index.js';
import { RedisIndex } from './store/redis-index.js';

/** Builds everything the app needs (also used by tests, which call app.request() instead of listening). */
export async function createDeps(config: Config): Promise<Deps> {
  const log = createLogger(config.logLevel);
  const keepMs = Math.max(config.resourceTtlMs, 3600_000);
  const onError = (err: unknown, jobId: string) => log.error({ err, jobId }, 'job failed');
  let store: Store;
  let jobs: JobQueue;
  let cluster: ClusterJobs | undefined;
  // Bytes: S3 (S3_BUCKET), else DATA_DIR/resources. Engines read S3 inputs from a local cache beside the job dirs
  // (same filesystem, so a job's dir gets a hard link, which no eviction can pull away). The SDK is loaded only
  // then (~100 ms and its memory at every start otherwise).
  const bytesFor = async (workDir: string): Promise<ResourceBytes | undefined> => {
    if (!config.s3) return undefined;
    const { S3Bytes } = await import('./store/s3-bytes.js');
    return new S3Bytes(config.s3, { cacheDir: join(workDir, '.cache'), cacheWrites: config.role !== 'api' });
  };
  if (config.redisUrl) {
    // Cluster mode: Redis holds the queues, the index and the request records; a shared DATA_DIR or S3 the bytes.
    const workDir = join(tmpdir(), 'quire-work', String(process.pid));
    cluster = new ClusterJobs({
      redisUrl: config.redisUrl,
      work: config.role !== 'api',
      lightConcurrency: config.lightConcurrency,
      cpuBudget: config.cpuBudget,
      officeInstances: config.officeInstances,
      browserPages: config.browserPages,
      timeoutMs: config.maxProcessMs,
      keepMs,
      queueMax: config.queueMax,
      workDir,
      onError,
    });
    store = new Store(config.dataDir, config.resourceTtlMs, new RedisIndex(cluster.redis), {
      workDir,
      bytes: await bytesFor(workDir),
      ownerScope: config.keyScope === 'owner',
    });
    jobs = cluster;
  } else {
    store = new Store(config.dataDir, config.resourceTtlMs, new LowdbIndex(join(config.dataDir, 'index')), {
      bytes: await bytesFor(join(config.dataDir, 'work')),
      ownerScope: config.keyScope === 'owner',
    });
    const local = new Jobs({
      concurrency: config.concurrency,
      cpuBudget: config.cpuBudget,
      lightConcurrency: config.lightConcurrency,
      officeInstances: config.officeInstances,
      browserPages: config.browserPages,
      queueMax: config.queueMax,
      timeoutMs: config.maxProcessMs,
      workDir: join(config.dataDir, 'work'),
      keepMs,
      recordsDir: join(config.dataDir, 'requests'),
      onError,
    });
    const stale = await local.sweepStaleDirs();
    await local.sweepRecords();
    if (stale) log.info({ stale }, 'removed temp dirs left by a previous run');
    jobs = local;
  }
  await store.init();
  // stderr as text (run() decodes it also for binary runs), without the tool's trailing newline.
  onRun((e) => log.debug({ tool: e.tool, exitCode: e.exitCode, ms: e.ms, stderr: e.stderr.trim() || undefined }, 'engine'));
  // Warm LibreOffice instances (OFFICE_INSTANCES), started lazily on the first office conversion.
  configurePool({ size: config.officeInstances });
  const tools = await probeTools();
  const pipelines = await loadNamedPipelines(config.pipelinesDir, { operations, tools, log });
  const deps: Deps = { config, store, jobs, tools, log, operations, meta: META, pipelines };
  if (cluster) {
    const c = cluster;
    deps.cluster = {
      ready: async () => ({ redis: { ok: await c.ping() }, storage: { ok: await store.ready() } }),
    };
    await c.start((spec, ctx) => runSpec(spec, ctx, deps));
  } else if (config.s3) {
    // One process, bytes in a bucket: /ready reports whether the bucket answers.
    deps.cluster = { ready: async () => ({ storage: { ok: await store.ready() } }) };
  }
  return deps;
}
