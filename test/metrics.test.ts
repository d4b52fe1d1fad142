import { readFileSync } from 'node:fs';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
// GET /metrics (issue 17): off by default, Prometheus text parsed by an independent parser, values that move
// after real requests, bounded labels, and the key / token rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { browserStats } from '../engines/chromium/browser.js';
import { corpus, startApp, type TestApp } from './helpers.js';
import { invoiceXml } from './zugferd-fixtures.js';

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
  sum?: string;
  buckets?: Record<string, string>;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

const PDF = corpus('pdf/text-minimal-pdflatex.pdf');
const KEY = 'metrics-test-key-0123456789';
const TOKEN = 'metrics-scraper-token-abcdef';

/**
 * The exposition parsed whole (types, counters, gauges), plus its histogram series once more without their TYPE
 * lines: the parser folds a labelled histogram's series into one (losing labels, `_count` and `_sum`), whereas
 * untyped `<name>_count{labels}` samples keep them.
 */
async function scrape(t: TestApp, headers: Record<string, string> = {}): Promise<Family[]> {
  const res = await t.request('/metrics', { headers });
  assert.is(res.status, 200, await res.clone().text());
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await res.text();
  const untyped = text.replace(/^# TYPE \S+ histogram\n/gm, '');
  return [...(parsePrometheusTextFormat(text) as Family[]), ...(parsePrometheusTextFormat(untyped) as Family[]).filter((f) => f.name.endsWith('_count'))];
}

const family = (fams: Family[], name: string) => fams.find((f) => f.name === name);
const matches = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v);
/** A counter's or gauge's value for these labels (0 when the series does not exist yet). */
function value(fams: Family[], name: string, labels: Record<string, string> = {}): number {
  // Untyped, each series' _count line is a family of its own (its buckets come between): search them all.
  const s = fams
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .find((m) => matches(m, labels));
  return s ? Number(s.value) : 0;
}
/** A histogram's observation count for these labels. */
const count = (fams: Family[], name: string, labels: Record<string, string>) => value(fams, `${name}_count`, labels);

test('off by default: /metrics is an unknown route (404)', async () => {
  const t = await startApp();
  try {
    const res = await t.request('/metrics');
    assert.is(res.status, 404);
    assert.match((await res.json()).error, /No route for GET \/metrics/);
  } finally {
    await t.close();
  }
});

test('METRICS=on: request counter, job histogram and resources gauge move after real requests', async () => {
  const t = await startApp({ METRICS: 'on' });
  try {
    const before = await scrape(t);
    const req = { method: 'POST', route: '/pdf-info', status: '200' };
    const job = { operation: '/pdf-info', lane: 'light', outcome: 'completed' };

    const res = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count' });
    assert.is(res.status, 200);
    assert.is((await res.json()).page_count, 1);
    const after = await scrape(t);
    assert.is(value(after, 'quire_http_requests_total', req), value(before, 'quire_http_requests_total', req) + 1);
    assert.is(count(after, 'quire_job_duration_seconds', job), count(before, 'quire_job_duration_seconds', job) + 1);
    assert.is(count(after, 'quire_job_wait_seconds', { lane: 'light' }), count(before, 'quire_job_wait_seconds', { lane: 'light' }) + 1);
    assert.is(family(after, 'quire_job_duration_seconds')?.type, 'HISTOGRAM');

    // The upload of /pdf-info stays a resource: the gauge counts it; bytes follow the file's size.
    const resources = value(after, 'quire_resources');
    const bytes = value(after, 'quire_resources_bytes');
    const up = await t.form('/upload', { file: { file: PDF } });
    assert.is(up.status, 200);
    const id = (await up.json()).files[0].id as string;
    await t.request(`/resource/${id}?format=info`);
    await t.request(`/no-such-route/${id}`);
    const last = await scrape(t);
    assert.is(value(last, 'quire_resources'), resources + 1);
    assert.ok(value(last, 'quire_resources_bytes') > bytes);

    // Routes are patterns, never raw paths with ids (bounded cardinality).
    assert.is(value(last, 'quire_http_requests_total', { method: 'GET', route: '/resource/:id', status: '200' }), 1);
    assert.is(value(last, 'quire_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    const routes = family(last, 'quire_http_requests_total')!.metrics.map((m) => m.labels!.route);
    assert.not.ok(
      routes.some((r) => r.includes(id)),
      routes.join(', '),
    );

    // Queue gauges for the four lanes, pools, engine restarts, Node process metrics.
    for (const lane of ['light', 'cpu', 'office', 'browser']) {
      assert.ok(
        family(last, 'quire_queue_jobs')!.metrics.some((m) => matches(m, { lane, state: 'waiting' })),
        lane,
      );
    }
    assert.is(value(last, 'quire_queue_jobs', { lane: 'light', state: 'running' }), 0);
    assert.is(value(last, 'quire_engine_pool', { engine: 'libreoffice', state: 'size' }), t.deps.config.officeInstances);
    assert.is(family(last, 'quire_engine_restarts_total')?.type, 'COUNTER');
    assert.ok(family(last, 'quire_engine_restarts_total')!.metrics.some((m) => matches(m, { engine: 'chromium', reason: 'crashed' })));
    assert.ok(family(last, 'process_cpu_user_seconds_total'), 'default process metrics');
    assert.ok(family(last, 'nodejs_heap_size_used_bytes'), 'default Node metrics');
  } finally {
    await t.close();
  }
});

test('a failed job is counted as failed with its operation', async () => {
  const t = await startApp({ METRICS: 'on' });
  try {
    const labels = { operation: '/split-pdf', lane: 'light', outcome: 'failed' };
    const before = await scrape(t);
    // Passes the upload's sniffing (%PDF-), then qpdf fails on it inside the job: 400.
    const res = await t.form('/split-pdf', { file: { bytes: Buffer.from('%PDF-1.4\nnot really a pdf\n'), name: 'broken.pdf' }, pages: '1' });
    assert.is(res.status, 400);
    const after = await scrape(t);
    assert.is(count(after, 'quire_job_duration_seconds', labels), count(before, 'quire_job_duration_seconds', labels) + 1);
    assert.is(count(after, 'quire_job_duration_seconds', { ...labels, outcome: 'completed' }), 0);
    assert.is(value(after, 'quire_http_requests_total', { method: 'POST', route: '/split-pdf', status: '400' }), 1);
  } finally {
    await t.close();
  }
});

test('/validated-zugferd: small invoice XML runs in the light lane; XML over 64 KB and PDFs (whose invoice may inflate) in the cpu lane', async () => {
  const t = await startApp({ METRICS: 'on' });
  try {
    const jobs = async (lane: string) => count(await scrape(t), 'quire_job_duration_seconds', { operation: '/validated-zugferd', lane, outcome: 'completed' });
    const xml = invoiceXml();
    const line = /<ram:IncludedSupplyChainTradeLineItem>[\s\S]*?<\/ram:IncludedSupplyChainTradeLineItem>/.exec(xml)![0];
    // Lines failing the rules: what makes a large invoice cost seconds.
    const large = xml.replace(line, line + '<ram:IncludedSupplyChainTradeLineItem/>'.repeat(2000));
    assert.ok(xml.length < 64 * 1024 && large.length > 64 * 1024);
    const send = async (name: string, bytes: Buffer, status: string) => {
      const res = await t.form('/validated-zugferd', { file: { bytes, name } });
      assert.is(res.status, 200);
      assert.is((await res.json()).status, status, name);
    };
    await send('small.xml', Buffer.from(xml), 'VALID');
    assert.is(await jobs('light'), 1);
    assert.is(await jobs('cpu'), 0);
    await send('large.xml', Buffer.from(large), 'INVALID');
    await send('plain.pdf', readFileSync(PDF), 'INVALID');
    assert.is(await jobs('light'), 1);
    assert.is(await jobs('cpu'), 2);
    // A PDF under an .xml name would take the light lane: refused, naming the fix.
    const disguised = await t.form('/validated-zugferd', { file: { bytes: readFileSync(PDF), name: 'invoice.xml' } });
    assert.is(disguised.status, 400);
    assert.match((await disguised.json()).error, /invoice\.xml is a PDF: send it with the \.pdf extension/);
  } finally {
    await t.close();
  }
});

test('engine restarts: a Chromium killed from outside counts as crashed, and the next job starts another', async () => {
  const t = await startApp({ METRICS: 'on' });
  const html = { bytes: Buffer.from('<!doctype html><html><body><p>metrics</p></body></html>'), name: 'page.html' };
  try {
    assert.is((await t.form('/pdf', { file: html })).status, 200);
    const before = await scrape(t);
    const crashed = { engine: 'chromium', reason: 'crashed' };
    assert.ok(value(before, 'quire_engine_starts_total', { engine: 'chromium' }) >= 1);
    assert.is(value(before, 'quire_engine_pool', { engine: 'chromium', state: 'running' }), 1);
    const pid = browserStats().pids.find(Boolean)!;
    process.kill(pid, 'SIGKILL');
    let after = before;
    for (let i = 0; i < 600 && value(after, 'quire_engine_restarts_total', crashed) === value(before, 'quire_engine_restarts_total', crashed); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await scrape(t);
    }
    assert.is(value(after, 'quire_engine_restarts_total', crashed), value(before, 'quire_engine_restarts_total', crashed) + 1);
    assert.is((await t.form('/pdf', { file: html })).status, 200);
    const again = await scrape(t);
    assert.is(value(again, 'quire_engine_starts_total', { engine: 'chromium' }), value(before, 'quire_engine_starts_total', { engine: 'chromium' }) + 1);
  } finally {
    await t.close();
  }
});

test('two apps in one process keep separate registries', async () => {
  const a = await startApp({ METRICS: 'on' });
  const b = await startApp({ METRICS: 'on' });
  try {
    await a.request('/up');
    await a.request('/up');
    const fa = await scrape(a);
    const fb = await scrape(b);
    assert.is(value(fa, 'quire_http_requests_total', { route: '/up', status: '200' }), 2);
    assert.is(value(fb, 'quire_http_requests_total', { route: '/up', status: '200' }), 0);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('with API_KEYS: a valid key or METRICS_TOKEN (Api-Key or Bearer); nothing else', async () => {
  const t = await startApp({ METRICS: 'on', API_KEYS: KEY, METRICS_TOKEN: TOKEN });
  try {
    const status = async (headers: Record<string, string>) => (await t.request('/metrics', { headers })).status;
    assert.is(await status({}), 401);
    assert.is(await status({ 'api-key': 'wrong-key-wrong-key-0000' }), 401);
    assert.is(await status({ authorization: 'Bearer wrong-token-wrong-token' }), 401);
    assert.is(await status({ authorization: `Basic ${TOKEN}` }), 401);
    assert.is(await status({ 'api-key': KEY }), 200);
    assert.is(await status({ 'api-key': TOKEN }), 200);
    assert.is(await status({ authorization: `Bearer ${TOKEN}` }), 200);
    // The token opens /metrics only, not the API.
    assert.is((await t.request('/request-status/x', { headers: { 'api-key': TOKEN } })).status, 401);
    const fams = await scrape(t, { authorization: `Bearer ${TOKEN}` });
    assert.ok(value(fams, 'quire_http_requests_total', { route: '/metrics', status: '401' }) >= 4);
  } finally {
    await t.close();
  }
});

test('API_KEYS without METRICS_TOKEN: a key is needed; METRICS_TOKEN alone closes an open server', async () => {
  const keyed = await startApp({ METRICS: 'on', API_KEYS: KEY });
  const tokened = await startApp({ METRICS: 'on', METRICS_TOKEN: TOKEN });
  try {
    assert.is((await keyed.request('/metrics')).status, 401);
    assert.is((await keyed.request('/metrics', { headers: { 'api-key': KEY } })).status, 200);
    assert.is((await tokened.request('/metrics')).status, 401);
    assert.is((await tokened.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    assert.is((await tokened.request('/up')).status, 200);
  } finally {
    await Promise.all([keyed.close(), tokened.close()]);
  }
});

test.run();
