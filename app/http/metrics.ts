import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { AppError } from '../errors.js';
import type { Deps, Env } from '../requests/context.js';
import { type Metrics, metricsOf } from '../requests/metrics.js';
import { bearerOf } from './auth.js';

/** The registered pattern that answered (`/resource/:id`), or `unmatched` (404s for unknown paths). */
function routeOf(c: Context): string {
  const handlers = matchedRoutes(c).filter((r) => r.method !== 'ALL');
  return handlers.at(-1)?.path ?? 'unmatched';
}

/** Counts every request; put before the key check so 401s count too. */
function countRequests(m: Metrics): MiddlewareHandler<Env> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const labels = { method: c.req.method, route: routeOf(c) };
    m.requests.inc({ ...labels, status: String(c.res.status) });
    m.requestSeconds.observe(labels, (performance.now() - started) / 1000);
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Open when neither API_KEYS nor METRICS_TOKEN is set; otherwise a valid API key or the token, as `Api-Key` or
 * `Authorization: Bearer` (what Prometheus' `authorization` setting sends). Hashes are compared, in constant time.
 */
function scraperCheck(deps: Deps): (c: Context<Env>) => void {
  const { apiKeys, metricsToken } = deps.config;
  const token = metricsToken ? digest(metricsToken) : undefined;
  const keys = apiKeys ? new Set([...apiKeys].map((k) => digest(k).toString('hex'))) : undefined;
  return (c) => {
    if (!keys && !token) return;
    const bearer = bearerOf(c.req.header('authorization'));
    const presented = [c.req.header('api-key'), bearer].filter((v): v is string => !!v);
    if (!presented.length)
      throw new AppError('key_missing', 'An Api-Key header or an Authorization: Bearer token (METRICS_TOKEN) is required to read metrics.');
    for (const p of presented) {
      const d = digest(p);
      if ((token && timingSafeEqual(d, token)) || keys?.has(d.toString('hex'))) return;
    }
    throw new AppError('key_invalid', 'The provided key or token is not valid.');
  };
}

/**
 * Mounts the request counter and GET /metrics (METRICS=on). Call before the API key middleware: the route checks
 * its own credentials (a scraper may hold only METRICS_TOKEN).
 */
export function mountMetrics(app: Hono<Env>, deps: Deps): void {
  if (!deps.config.metrics) return;
  const m = metricsOf(deps);
  const check = scraperCheck(deps);
  app.use(countRequests(m));
  app.get('/metrics', async (c) => {
    check(c);
    return c.body(await m.registry.metrics(), 200, { 'content-type': m.registry.contentType });
  });
}
