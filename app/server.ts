import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { AppError, toClientError } from './errors.js';
import { mountOperation } from './http/accept.js';
import { apiKeyAuth } from './http/auth.js';
import { mountMetrics } from './http/metrics.js';
import { mountDocs } from './http/openapi.js';
import { mountPipelines } from './http/pipelines.js';
import { mountResources } from './http/resources.js';
import { mountStatus } from './http/status.js';
import { mountWebPage } from './http/web/index.js';
import { mountMcp } from './mcp/index.js';
import type { Deps, Env } from './requests/context.js';
import { metricsOf } from './requests/metrics.js';
import { deliverWebhooks } from './requests/webhooks.js';

/** Webhooks go out from the process that ran the job (in a cluster: any worker, through a BullMQ queue). */
function startWebhooks(deps: Deps): void {
  const metrics = deps.config.metrics ? metricsOf(deps) : undefined;
  deliverWebhooks(deps.jobs, {
    secret: deps.config.webhookSecret,
    allow: deps.config.urlAllow,
    log: deps.log,
    onOutcome: (outcome) => metrics?.webhooks.inc({ outcome }),
  });
}

/** A worker replica (ROLE=worker) runs jobs from Redis and answers only liveness and readiness. */
export function createWorkerApp(deps: Deps): Hono<Env> {
  const app = new Hono<Env>();
  // Job durations are measured where jobs run: workers are scraped too.
  mountMetrics(app, deps);
  startWebhooks(deps);
  mountStatus(app, deps);
  app.notFound((c) => c.json({ error: 'This is a worker replica (ROLE=worker): send requests to an api replica.' }, 404));
  app.onError((err, c) => {
    const mapped = toClientError(err);
    return c.json(mapped.body, mapped.status as 400);
  });
  return app;
}

/** The Hono app: middleware, routes generated from the operation registry, one error mapper. No listen(). */
export function createApp(deps: Deps): Hono<Env> {
  const app = new Hono<Env>();

  app.use(async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    const log = deps.log.child({ reqId: requestId });
    c.set('requestId', requestId);
    c.set('log', log);
    const started = performance.now();
    await next();
    c.header('X-Request-Id', requestId);
    log.info({ method: c.req.method, path: c.req.path, status: c.res.status, ms: Math.round(performance.now() - started) }, 'request');
  });
  // Before the key check: /metrics takes METRICS_TOKEN as well as keys, and 401s are counted.
  mountMetrics(app, deps);
  app.use(apiKeyAuth(deps.config.apiKeys, deps.config.keyScope === 'owner'));
  startWebhooks(deps);

  mountStatus(app, deps);
  mountResources(app, deps);
  mountDocs(app, deps);
  mountWebPage(app, deps);
  for (const op of deps.operations) mountOperation(app, op, deps);
  mountPipelines(app, deps);
  mountMcp(app, deps);

  app.notFound((c) => c.json({ error: `No route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    const mapped = toClientError(err);
    const log = c.get('log') ?? deps.log;
    if (mapped.status >= 500) log.error({ err }, 'request failed');
    else if (!(err instanceof AppError)) log.warn({ err }, 'input rejected by an engine');
    for (const [k, v] of Object.entries(mapped.headers)) c.header(k, v);
    return c.json(mapped.body, mapped.status as 400);
  });
  return app;
}
