import type { Hono } from 'hono';
import { TOOLS, type ToolName } from '../../engines/tools.js';
import { AppError, TEXT } from '../errors.js';
import type { JobRecord } from '../jobs/index.js';
import type { Deps, Env } from './context.js';

/** Liveness, readiness (engines), the SDK's /up probe, and polling of requests sent with Request-Type. */
export function mountStatus(app: Hono<Env>, deps: Deps): void {
  app.get('/up', (c) => c.json({ status: 'OK', ...deps.meta }));
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    const engines = Object.fromEntries(
      (Object.keys(TOOLS) as ToolName[]).map((t) => [
        t,
        deps.tools[t] ? { available: true, version: deps.tools[t] } : { available: false, package: TOOLS[t].pkg },
      ]),
    );
    const missing = Object.keys(engines).filter((t) => !deps.tools[t as ToolName]);
    const disabled = deps.operations.filter((op) => op.engines.some((t) => !deps.tools[t])).map((op) => op.path);
    // Cluster mode: without Redis or the shared storage this replica can do nothing (503, so balancers skip it).
    const shared = (await deps.cluster?.ready()) ?? {};
    const down = Object.values(shared).some((s) => !s.ok);
    const status = down ? 'unavailable' : missing.length ? 'degraded' : 'ready';
    return c.json({ status, engines, disabledEndpoints: disabled, queue: await deps.jobs.snapshot(), ...shared }, down ? 503 : 200);
  });

  app.get('/request-status/:id', async (c) => {
    const id = c.req.param('id');
    const rec = await deps.jobs.get(id);
    // Another key's request is reported exactly like an unknown one: ids are not confirmed to strangers.
    if (!rec || (deps.config.apiKeys && rec.owner !== c.get('owner'))) throw new AppError('request_not_found', TEXT.requestNotFound);
    return c.json(statusBody(rec));
  });
}

/** What /request-status answers for a request (webhooks send the same). */
export function statusBody(rec: JobRecord): Record<string, unknown> {
  const requestId = rec.id;
  if (rec.status === 'pending') return { status: 'pending', requestId, ...(rec.progress !== undefined ? { progress: rec.progress } : {}) };
  if (rec.status === 'failed') return { status: 'failed', requestId, error: rec.error?.error, statusCode: rec.error?.status };
  return { status: 'completed', requestId, ...rec.result };
}
