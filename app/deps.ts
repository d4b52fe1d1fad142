import { join } from 'node:path';
import { onRun } from '../engines/run.js';
import { probeTools } from '../engines/tools.js';
import { configurePool } from '../engines/libreoffice/pool.js';
import type { Config } from './config.js';
import type { Deps } from './http/context.js';
import { Jobs } from './jobs/index.js';
import { createLogger } from './log.js';
import { META } from './meta.js';
import { operations } from './operations/index.js';
import { Store } from './store/index.js';

/** Builds everything the app needs (also used by tests, which call app.request() instead of listening). */
export async function createDeps(config: Config): Promise<Deps> {
  const log = createLogger(config.logLevel);
  const store = new Store(config.dataDir, config.resourceTtlMs);
  await store.init();
  const jobs = new Jobs({
    concurrency: config.concurrency,
    cpuBudget: config.cpuBudget,
    lightConcurrency: config.lightConcurrency,
    officeInstances: config.officeInstances,
    browserPages: config.browserPages,
    queueMax: config.queueMax,
    timeoutMs: config.maxProcessMs,
    workDir: store.workDir,
    keepMs: Math.max(config.resourceTtlMs, 3600_000),
    recordsDir: join(config.dataDir, 'requests'),
    onError: (err, jobId) => log.error({ err, jobId }, 'job failed'),
  });
  const stale = await jobs.sweepStaleDirs();
  await jobs.sweepRecords();
  if (stale) log.info({ stale }, 'removed temp dirs left by a previous run');
  // stderr as text (run() decodes it also for binary runs), without the tool's trailing newline.
  onRun((e) => log.debug({ tool: e.tool, exitCode: e.exitCode, ms: e.ms, stderr: e.stderr.trim() || undefined }, 'engine'));
  // Warm LibreOffice instances (OFFICE_INSTANCES), started lazily on the first office conversion.
  configurePool({ size: config.officeInstances });
  const tools = await probeTools();
  return { config, store, jobs, tools, log, operations, meta: META };
}

