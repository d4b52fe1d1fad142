import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { browserStats } from '../../engines/chromium/browser.js';
import { poolStats } from '../../engines/libreoffice/pool.js';
import type { Deps } from './context.js';

/**
 * What GET /metrics (app/http/metrics.ts) serves in Prometheus text format, counted by every front door and by the
 * jobs run here. One registry per app, so apps sharing a process (tests) never clash. Labels are bounded: routes are the registered patterns (`/resource/:id`, never a raw URL),
 * operations their paths, lanes the four cost classes.
 */
export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  requestSeconds: Histogram<'method' | 'route'>;
  /** Webhook deliveries by outcome (delivered, failed after retries, refused by the receiver). */
  webhooks: Counter<'outcome'>;
  /** Pipelines run in this process by outcome (completed, failed). */
  pipelines: Counter<'outcome'>;
  /** Files of watched folders by named pipeline and outcome (done, failed). */
  watched: Counter<'pipeline' | 'outcome'>;
}

const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** Requests also answer in milliseconds (status, metadata, downloads). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, ...JOB_BUCKETS];
/** Resource totals may need a scan of the Redis index: computed at most this often. */
const TOTALS_CACHE_MS = 10_000;

const byDeps = new WeakMap<Deps, Metrics>();

/** The metrics of one app (created on first use, with their job observers). */
export function metricsOf(deps: Deps): Metrics {
  let m = byDeps.get(deps);
  if (!m) byDeps.set(deps, (m = create(deps)));
  return m;
}

function create(deps: Deps): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'quire_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'quire_http_request_duration_seconds',
    help: 'Time to answer HTTP requests (synchronous processing included), by route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  const webhooks = new Counter({ name: 'quire_webhook_deliveries_total', help: 'Webhook deliveries by outcome.', labelNames: ['outcome'] as const, registers });
  const pipelines = new Counter({
    name: 'quire_pipeline_runs_total',
    help: 'Pipelines run in this process, by outcome.',
    labelNames: ['outcome'] as const,
    registers,
  });
  // Pipeline names come from PIPELINES_DIR, read at start: a bounded label.
  const watched = new Counter({
    name: 'quire_watched_files_total',
    help: 'Files taken from watched folders, by named pipeline and outcome (done, failed).',
    labelNames: ['pipeline', 'outcome'] as const,
    registers,
  });

  const jobSeconds = new Histogram({
    name: 'quire_job_duration_seconds',
    help: 'Jobs run in this process, by operation, lane and outcome: time running.',
    labelNames: ['operation', 'lane', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  const waitSeconds = new Histogram({
    name: 'quire_job_wait_seconds',
    help: 'Jobs run in this process, by lane: time queued before they started.',
    labelNames: ['lane'] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  deps.jobs.observe({
    ran: (r) => {
      jobSeconds.observe({ operation: r.label, lane: r.lane, outcome: r.ok ? 'completed' : 'failed' }, r.runMs / 1000);
      waitSeconds.observe({ lane: r.lane }, r.waitMs / 1000);
    },
  });

  new Gauge({
    name: 'quire_queue_jobs',
    help: 'Jobs waiting and running per lane (cluster mode: across the cluster, from BullMQ).',
    labelNames: ['lane', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      // Redis down: these series are left out rather than failing the scrape (/ready tells why).
      const counts = await deps.jobs.laneCounts().catch(() => ({}));
      for (const [lane, c] of Object.entries(counts)) {
        this.set({ lane, state: 'waiting' }, c.waiting);
        this.set({ lane, state: 'running' }, c.running);
      }
    },
  });

  // The engines keep plain process-wide counters; a scrape copies them (reset + inc keeps the counter type).
  new Counter({
    name: 'quire_engine_starts_total',
    help: 'Engine processes started: LibreOffice instances, Chromium browsers.',
    labelNames: ['engine'] as const,
    registers,
    collect() {
      this.reset();
      this.inc({ engine: 'libreoffice' }, poolStats().started);
      this.inc({ engine: 'chromium' }, browserStats().launches);
    },
  });
  new Counter({
    name: 'quire_engine_restarts_total',
    help: 'Engine processes replaced or killed, by reason (recycled_jobs, recycled_memory, killed, crashed, hung, renderer_memory).',
    labelNames: ['engine', 'reason'] as const,
    registers,
    collect() {
      this.reset();
      const lo = poolStats();
      const ch = browserStats();
      const rows: [string, string, number][] = [
        ['libreoffice', 'recycled_jobs', lo.recycledForJobs],
        ['libreoffice', 'recycled_memory', lo.recycledForMemory],
        ['libreoffice', 'killed', lo.killed],
        ['libreoffice', 'crashed', lo.crashed],
        ['chromium', 'recycled_jobs', ch.recycled],
        ['chromium', 'crashed', ch.crashed],
        ['chromium', 'hung', ch.hung],
        ['chromium', 'renderer_memory', ch.rendererMemoryKills],
      ];
      for (const [engine, reason, n] of rows) this.inc({ engine, reason }, n);
    },
  });
  new Gauge({
    name: 'quire_engine_pool',
    help: 'Warm engine pools: configured size, processes running, and busy (LibreOffice instances converting; Chromium pages open).',
    labelNames: ['engine', 'state'] as const,
    registers,
    collect() {
      this.reset();
      const lo = poolStats();
      const ch = browserStats();
      this.set({ engine: 'libreoffice', state: 'size' }, deps.config.officeInstances);
      this.set({ engine: 'libreoffice', state: 'running' }, lo.running);
      this.set({ engine: 'libreoffice', state: 'busy' }, lo.busy);
      this.set({ engine: 'chromium', state: 'size' }, deps.config.browserPages);
      this.set({ engine: 'chromium', state: 'running' }, ch.running);
      this.set({ engine: 'chromium', state: 'busy' }, ch.pagesOpen);
    },
  });

  let totals: { at: number; value: Promise<{ count: number; bytes: number }> } | undefined;
  // The embedded index is in memory and read afresh at each scrape; only the Redis scan is cached.
  const cacheMs = deps.config.redisUrl ? TOTALS_CACHE_MS : 0;
  const storeTotals = () => {
    if (!totals || Date.now() - totals.at >= cacheMs) {
      totals = { at: Date.now(), value: deps.store.totals() };
      // A failed read is not cached.
      totals.value.catch(() => (totals = undefined));
    }
    return totals.value;
  };
  new Gauge({
    name: 'quire_resources',
    help: `Resources stored (uploads and outputs), from the index (cluster mode: refreshed at most every ${TOTALS_CACHE_MS / 1000} s).`,
    registers,
    async collect() {
      // The index unreachable: the last value read stays.
      const t = await storeTotals().catch(() => undefined);
      if (t) this.set(t.count);
    },
  });
  new Gauge({
    name: 'quire_resources_bytes',
    help: `Bytes of the resources stored, from the index (cluster mode: refreshed at most every ${TOTALS_CACHE_MS / 1000} s).`,
    registers,
    async collect() {
      // The index unreachable: the last value read stays.
      const t = await storeTotals().catch(() => undefined);
      if (t) this.set(t.bytes);
    },
  });

  return { registry, requests, requestSeconds, webhooks, pipelines, watched };
}
