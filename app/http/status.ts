import type { Hono } from 'hono';
import { browserDown } from '../../engines/chromium/browser.js';
import { poolDown } from '../../engines/libreoffice/pool.js';
import { TOOLS, type ToolName } from '../../engines/tools.js';
import { AppError, TEXT } from '../errors.js';
import type { Deps, Env } from '../requests/context.js';
import { statusBody } from '../requests/execute.js';
import { freeBytes, writeRefusal } from '../store/index.js';

type EngineState = 'ok' | 'missing' | 'down';

/**
 * Each engine as known now, without starting anything: 'missing' when the probe at start did not find it (the
 * endpoints needing it answer 503; the same on every replica of an image, so no reason to take one out of a
 * balancer), 'down' when it is installed but its pool's last start failed (this replica's fault).
 */
function engineStates(deps: Deps): Record<ToolName, EngineState> {
  const down: Partial<Record<ToolName, string | null>> = { libreoffice: poolDown(), chromium: browserDown() };
  const states = {} as Record<ToolName, EngineState>;
  for (const t of Object.keys(TOOLS) as ToolName[]) states[t] = !deps.tools[t] ? 'missing' : down[t] ? 'down' : 'ok';
  return states;
}

/** Why a directory takes no writes at all, in /health's words. */
const REFUSED = { EROFS: 'read-only (EROFS)', EACCES: 'not writable by this server (EACCES)' };

/**
 * Free space where uploads and job files are written (DATA_DIR, the job dirs; with S3 the local cache): below
 * STORAGE_MIN_FREE_MB a request may fail half way with 507, so a balancer should send it elsewhere. A directory
 * that takes no writes at all counts as 0 MB and says why (`refused`): the operator's fix is not to free space.
 */
async function storageState(deps: Deps): Promise<{ freeMb: number | null; minFreeMb: number; low: boolean; refused?: string }> {
  const dirs = [deps.config.dataDir, deps.store.workDir];
  const free = (await Promise.all(dirs.map(freeBytes))).filter((b): b is number => b !== undefined);
  const refusal = (await Promise.all(dirs.map(writeRefusal))).find((r) => r === 'EROFS' || r === 'EACCES');
  const least = free.length ? Math.min(...free) : undefined;
  const MB = 1024 * 1024;
  return {
    freeMb: least === undefined ? null : Math.floor(least / MB),
    minFreeMb: deps.config.storageMinFreeBytes / MB,
    low: least !== undefined && least < deps.config.storageMinFreeBytes,
    ...(refusal ? { refused: REFUSED[refusal] } : {}),
  };
}

/** Liveness (/up), readiness (/health: engines, cheap; /ready: also versions, disabled endpoints, queue, cluster stores), and polling of requests sent with Request-Type. */
export function mountStatus(app: Hono<Env>, deps: Deps): void {
  app.get('/up', (c) => c.json({ status: 'OK', ...deps.meta }));
  app.get('/health', async (c) => {
    const engines = engineStates(deps);
    const down = Object.keys(engines).filter((t) => engines[t as ToolName] === 'down');
    const storage = await storageState(deps);
    const problems = [
      ...(down.length ? [`${down.join(' and ')} could not be started on this server`] : []),
      ...(storage.refused
        ? [`its storage is ${storage.refused}`]
        : storage.low
          ? [`its storage has ${storage.freeMb} MB free, below STORAGE_MIN_FREE_MB=${storage.minFreeMb}`]
          : []),
    ];
    const status = problems.length ? 'unavailable' : Object.values(engines).includes('missing') ? 'degraded' : 'ok';
    const error = problems.length ? { error: `This server cannot take work: ${problems.join('; ')}.` } : {};
    return c.json({ status, engines, storage, ...error }, problems.length ? 503 : 200);
  });
  app.get('/ready', async (c) => {
    const states = engineStates(deps);
    const engines = Object.fromEntries(
      (Object.keys(TOOLS) as ToolName[]).map((t) => [
        t,
        deps.tools[t]
          ? { available: true, version: deps.tools[t], ...(states[t] === 'down' ? { down: true } : {}) }
          : { available: false, package: TOOLS[t].pkg },
      ]),
    );
    const missing = Object.keys(engines).filter((t) => !deps.tools[t as ToolName]);
    const disabled = deps.operations.filter((op) => op.engines.some((t) => !deps.tools[t])).map((op) => op.path);
    // Cluster mode: without Redis or the shared storage this replica can do nothing (503, so balancers skip it).
    const shared = (await deps.cluster?.ready()) ?? {};
    const down = Object.values(shared).some((s) => !s.ok) || Object.values(states).includes('down');
    const status = down ? 'unavailable' : missing.length ? 'degraded' : 'ready';
    // Without Redis there is no queue to show: the answer is still the readiness one (503 above), not an error.
    const queue = await deps.jobs.snapshot().catch(() => null);
    return c.json({ status, engines, disabledEndpoints: disabled, queue, ...shared }, down ? 503 : 200);
  });

  app.get('/request-status/:id', async (c) => {
    const id = c.req.param('id');
    const rec = await deps.jobs.get(id);
    // Another key's request is reported exactly like an unknown one: ids are not confirmed to strangers.
    if (!rec || (deps.config.apiKeys && rec.owner !== c.get('owner'))) throw new AppError('request_not_found', TEXT.requestNotFound);
    return c.json(statusBody(rec));
  });
}
