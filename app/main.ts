import { serve } from '@hono/node-server';
import { shutdownBrowser } from '../engines/chromium/browser.js';
import { shutdownPool } from '../engines/libreoffice/pool.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createDeps } from './deps.js';
import { shutdownThreads } from './jobs/operation-thread.js';
import { watchFolders } from './pipelines/index.js';
import { createApp, createWorkerApp } from './server.js';

/** Time after STOP_GRACE_SECONDS for aborted jobs to settle and engines to close. */
const STOP_CLEANUP_MS = 5_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const deps = await createDeps(config);
  const { log, store, jobs } = deps;
  const app = config.role === 'worker' ? createWorkerApp(deps) : createApp(deps);
  const sweep = setInterval(
    () =>
      store.sweepExpired().then(
        (n) => n && log.info({ removed: n }, 'expired resources removed'),
        (err) => log.error({ err }, 'sweep failed'),
      ),
    Math.min(60_000, Math.max(1000, config.resourceTtlMs / 4 || 60_000)),
  );
  sweep.unref();
  // Folders first: once the port answers /health, a file dropped into a watched in/ must have somewhere to land.
  const watcher = await watchFolders(deps);
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    log.info(
      {
        port: info.port,
        host: config.host,
        engines: deps.tools,
        role: config.role,
        mode: config.redisUrl ? 'redis' : 'embedded',
        concurrency: config.concurrency,
        keys: config.apiKeys ? config.apiKeys.size : 'open',
      },
      'Quire listening',
    );
  });
  // Long conversions must not be cut by Node's default request timeout; the job limit governs instead.
  (server as unknown as { requestTimeout: number }).requestTimeout = 0;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceSeconds: config.stopGraceMs / 1000 }, 'shutting down');
    // Whatever still hangs after the grace and the aborts (an engine deaf to its kill, a storage call), the process
    // ends by itself, before the orchestrator's stop timeout (compose: 35 s) kills it; a record left pending then
    // reads failed after the restart.
    setTimeout(() => {
      log.error({ afterSeconds: (config.stopGraceMs + STOP_CLEANUP_MS) / 1000 }, 'stop did not finish: exiting now');
      process.exit(1);
    }, config.stopGraceMs + STOP_CLEANUP_MS).unref();
    server.close();
    // Files being processed stay in in/ if the drain cuts them: the next start takes them again.
    await Promise.all([watcher.stop(), jobs.drain(config.stopGraceMs)]);
    shutdownThreads();
    await Promise.all([shutdownPool(), shutdownBrowser()]);
    await store.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
