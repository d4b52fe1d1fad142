// Webhooks (issue 17): a receiver on loopback (allowed by URL_ALLOW) gets the signed /request-status body,
// retries after 5xx in order, failures at the error URL, no retry after other 4xx; the URL policy and the extra
// headers are checked at submit time (400 naming the header).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, startApp, type TestApp, tool, until } from './helpers.js';
import { crash, descendants, type Proc, REDIS_SERVER, started, startQuire, startRedis, stop } from './processes.js';

const PDF = corpus('pdf/text-minimal-pdflatex.pdf');
const SCAN = corpus('scans/linn-scan-4-orientations.pdf');
const SECRET = 'webhook-test-secret-0123456789';
const BROKEN = { bytes: Buffer.from('%PDF-1.4\nnot really a pdf\n'), name: 'broken.pdf' };

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A webhook receiver: each path answers the statuses of its script in turn (then 200), with headers when given. */
async function receiver(scripts: Record<string, (number | [number, Record<string, string>])[]> = {}) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const [answered, headers] = [scripts[path]?.shift() ?? 200].flat() as [number, Record<string, string>?];
      hits.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered, headers).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { hits, base, close: () => new Promise<void>((r) => server.close(() => r())) };
}

// Deliveries and retries happen in the background (retries back off for seconds): waited for, a minute at most.
const MINUTE = 60_000;

/** Checks Quire-Signature as a receiver would: HMAC-SHA256 of "<t>.<body>" with the shared secret. */
function verify(hit: Hit, secret: string): void {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit.headers['quire-signature']));
  assert.ok(m, `signature header: ${hit.headers['quire-signature']}`);
  const expected = createHmac('sha256', secret).update(`${m![1]}.${hit.body}`).digest();
  assert.ok(timingSafeEqual(expected, Buffer.from(m![2], 'hex')), 'HMAC matches');
  assert.ok(Math.abs(Number(m![1]) - Date.now() / 1000) < 300, 'timestamp is now');
}

async function statusOf(t: TestApp, id: string): Promise<unknown> {
  const res = await t.request(`/request-status/${id}`);
  assert.is(res.status, 200);
  return res.json();
}

test('202 at once, then the signed /request-status body at the Webhook-Url, with the extra headers', async () => {
  const r = await receiver();
  const t = await startApp({ URL_ALLOW: '127.0.0.1', WEBHOOK_SECRET: SECRET });
  try {
    const res = await t.form(
      '/pdf-info',
      { file: { file: PDF }, queries: 'page_count,title' },
      {
        'Webhook-Url': `${r.base}/done`,
        'Webhook-Extra-Headers': JSON.stringify({ Authorization: 'Bearer receiver-token', 'X-Tenant': 'acme' }),
      },
    );
    assert.is(res.status, 202);
    const { requestId } = await res.json();
    assert.match(requestId, /^[0-9a-f-]{36}$/);
    await until('the webhook', () => r.hits.length === 1, MINUTE);
    const hit = r.hits[0];
    assert.is(hit.path, '/done');
    assert.is(hit.headers['content-type'], 'application/json');
    assert.is(hit.headers['quire-request-id'], requestId);
    assert.is(hit.headers.authorization, 'Bearer receiver-token');
    assert.is(hit.headers['x-tenant'], 'acme');
    verify(hit, SECRET);
    const body = JSON.parse(hit.body);
    assert.is(body.status, 'completed');
    assert.is(body.page_count, 1);
    assert.equal(body, await statusOf(t, requestId));
  } finally {
    await t.close();
    await r.close();
  }
});

test('a failing receiver (500, 500, then 200) gets the same signed body three times, in order', async () => {
  const r = await receiver({ '/flaky': [500, 500] });
  const t = await startApp({ URL_ALLOW: '127.0.0.0/8', WEBHOOK_SECRET: SECRET, METRICS: 'on' });
  try {
    const res = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count' }, { 'Webhook-Url': `${r.base}/flaky` });
    assert.is(res.status, 202);
    const { requestId } = await res.json();
    await until('three attempts', () => r.hits.length === 3, MINUTE);
    assert.equal(
      r.hits.map((h) => h.answered),
      [500, 500, 200],
    );
    for (const h of r.hits) verify(h, SECRET);
    assert.equal(new Set(r.hits.map((h) => h.body)).size, 1);
    assert.equal(JSON.parse(r.hits[2].body), await statusOf(t, requestId));
    // The receiver has answered; the outcome is counted once its answer is read back.
    await until(
      'the delivery counted',
      async () => /quire_webhook_deliveries_total\{outcome="delivered"\} 1/.test(await (await t.request('/metrics')).text()),
      MINUTE,
    );
  } finally {
    await t.close();
    await r.close();
  }
});

test('a failed request goes to Webhook-Error-Url; a 4xx receiver is not retried', async () => {
  const r = await receiver({ '/gone': [404] });
  const t = await startApp({ URL_ALLOW: 'localhost,127.0.0.1', WEBHOOK_SECRET: SECRET, METRICS: 'on' });
  try {
    const res = await t.form('/split-pdf', { file: BROKEN, pages: '1' }, { 'Webhook-Url': `${r.base}/ok`, 'Webhook-Error-Url': `${r.base}/err` });
    assert.is(res.status, 202);
    const { requestId } = await res.json();
    await until('the error webhook', () => r.hits.length === 1, MINUTE);
    assert.is(r.hits[0].path, '/err');
    verify(r.hits[0], SECRET);
    const body = JSON.parse(r.hits[0].body);
    assert.is(body.status, 'failed');
    assert.is(body.statusCode, 400);
    assert.equal(body, await statusOf(t, requestId));

    // 404 is final: the delivery is given up after one attempt (5 attempts would come before "failed").
    const gone = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count' }, { 'Webhook-Url': `${r.base}/gone` });
    assert.is(gone.status, 202);
    await until(
      'the failed delivery',
      async () => /quire_webhook_deliveries_total\{outcome="failed"\} 1/.test(await (await t.request('/metrics')).text()),
      MINUTE,
    );
    assert.is(r.hits.filter((h) => h.path === '/gone').length, 1);
  } finally {
    await t.close();
    await r.close();
  }
});

test('without WEBHOOK_SECRET the body is sent unsigned', async () => {
  const r = await receiver();
  const t = await startApp({ URL_ALLOW: '127.0.0.1' });
  try {
    const res = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count' }, { 'Webhook-Url': `${r.base}/plain` });
    assert.is(res.status, 202);
    await until('the webhook', () => r.hits.length === 1, MINUTE);
    assert.is(r.hits[0].headers['quire-signature'], undefined);
    assert.is(JSON.parse(r.hits[0].body).status, 'completed');
  } finally {
    await t.close();
    await r.close();
  }
});

test('private, loopback and metadata addresses are refused at submit time without URL_ALLOW (400 naming the header)', async () => {
  const t = await startApp({ WEBHOOK_SECRET: SECRET });
  try {
    const cases: [Record<string, string>, RegExp][] = [
      [{ 'Webhook-Url': 'http://127.0.0.1:9/x' }, /^Webhook-Url: the address 127\.0\.0\.1 .* is not public/],
      [{ 'Webhook-Url': 'http://localhost:9/x' }, /^Webhook-Url: the address .* of localhost is not public/],
      [{ 'Webhook-Url': 'http://169.254.169.254/latest' }, /^Webhook-Url: .*not public/],
      [{ 'Webhook-Url': 'http://10.1.2.3/hook' }, /^Webhook-Url: .*not public/],
      [{ 'Webhook-Url': 'http://[::1]:9/x' }, /^Webhook-Url: .*not public/],
      [{ 'Webhook-Url': 'http://93.184.216.34/ok', 'Webhook-Error-Url': 'http://192.168.1.1/err' }, /^Webhook-Error-Url: .*not public/],
      [{ 'Webhook-Url': 'ftp://93.184.216.34/x' }, /^Webhook-Url: only http and https/],
      [{ 'Webhook-Url': 'not a url' }, /^Webhook-Url: .*not a valid URL/],
      [{ 'Webhook-Error-Url': 'http://93.184.216.34/err' }, /^Webhook-Error-Url: needs Webhook-Url/],
    ];
    for (const [headers, message] of cases) {
      const res = await t.form('/pdf-info', { file: { file: PDF } }, headers);
      assert.is(res.status, 400, JSON.stringify(headers));
      assert.match((await res.json()).error, message);
    }
  } finally {
    await t.close();
  }
});

test('bad Webhook-Extra-Headers -> 400', async () => {
  const t = await startApp({ URL_ALLOW: '127.0.0.1' });
  try {
    const bad = [
      'not json',
      '["a"]',
      '"x"',
      '{"X-A": 1}',
      '{"Host": "evil"}',
      '{"Content-Length": "5"}',
      '{"quire-signature": "t=1,v1=00"}',
      '{"X-A": "a\\r\\nX-B: b"}',
      '{"bad name": "x"}',
    ];
    for (const extra of bad) {
      const res = await t.form('/pdf-info', { file: { file: PDF } }, { 'Webhook-Url': 'http://127.0.0.1:9/x', 'Webhook-Extra-Headers': extra });
      assert.is(res.status, 400, extra);
      assert.match((await res.json()).error, /^Webhook-Extra-Headers: /, extra);
    }
  } finally {
    await t.close();
  }
});

test('OpenAPI documents the webhook headers and the 202 on processing operations', async () => {
  const t = await startApp();
  try {
    const doc = await (await t.request('/openapi.json')).json();
    const post = doc.paths['/pdf-info'].post;
    const names = post.parameters.map((p: { name: string }) => p.name);
    for (const h of ['Webhook-Url', 'Webhook-Error-Url', 'Webhook-Extra-Headers']) assert.ok(names.includes(h), h);
    assert.ok(post.responses['202']);
    assert.match(post.parameters.find((p: { name: string }) => p.name === 'Webhook-Url').description, /Quire-Signature: t=<unix seconds>,v1=/);
  } finally {
    await t.close();
  }
});

// ---------------------------------------------------------------- cluster mode (real redis-server, two processes)

const REDIS = REDIS_SERVER;

/** The first CPU this process may run on (Cpus_allowed_list, e.g. "2-5"). */
const firstCpu = () => /^Cpus_allowed_list:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';

/**
 * A redis-server on a free loopback port and a way to start api / worker replicas on it, over one DATA_DIR. A
 * worker is pinned to one CPU: it recognises one page at a time, so an OCR job lasts as many Tesseract runs as
 * it has pages on any machine, however many cores it has.
 */
async function cluster(data: string) {
  const { url } = await startRedis(data);
  const common = { REDIS_URL: url, DATA_DIR: data, URL_ALLOW: '127.0.0.1', WEBHOOK_SECRET: SECRET, METRICS: 'on' };
  return (role: string) => startQuire(role, { ...common, ROLE: role }, role === 'worker' ? { cpus: firstCpu() } : {});
}

const tesseractsUnder = (p: Proc) => descendants(p.pid).filter((e) => e.comm === 'tesseract' && e.state !== 'Z');

if (REDIS) {
  test('cluster mode: the api replica answers 202, a worker delivers; a retry outlives the worker that failed', async () => {
    const r = await receiver({ '/later': [[503, { 'Retry-After': '30' }]] });
    const data = mkdtempSync(join(tmpdir(), 'quire-webhooks-'));
    try {
      const start = await cluster(data);
      const [api, worker] = await Promise.all([start('api'), start('worker')]);

      const fd = new FormData();
      fd.append('file', new Blob([readFileSync(PDF)]), 'doc.pdf');
      fd.append('queries', 'page_count');
      const res = await fetch(`${api.base}/pdf-info`, { method: 'POST', body: fd, headers: { 'Webhook-Url': `${r.base}/cluster` } });
      assert.is(res.status, 202, await res.clone().text());
      const { requestId } = await res.json();
      await until('the webhook from the worker', () => r.hits.length === 1, MINUTE);
      verify(r.hits[0], SECRET);
      const body = JSON.parse(r.hits[0].body);
      assert.is(body.status, 'completed');
      assert.is(body.page_count, 1);
      assert.equal(body, await (await fetch(`${api.base}/request-status/${requestId}`)).json());

      // The job ran (and was measured) on the worker; the api replica reads the queues from BullMQ.
      let workerMetrics = '';
      await until(
        'the delivery counted on the worker',
        async () => /quire_webhook_deliveries_total\{outcome="delivered"\} 1/.test((workerMetrics = await (await fetch(`${worker.base}/metrics`)).text())),
        MINUTE,
      );
      assert.match(workerMetrics, /quire_job_duration_seconds_count\{operation="\/pdf-info",lane="light",outcome="completed"\} 1/);
      const apiMetrics = await (await fetch(`${api.base}/metrics`)).text();
      assert.match(apiMetrics, /quire_queue_jobs\{lane="light",state="waiting"\} 0/);
      assert.match(apiMetrics, /quire_resources 1\n/);

      // The receiver asks for 30 s; the worker is stopped meanwhile; a new worker makes the second attempt.
      const later = await fetch(`${api.base}/pdf-info`, { method: 'POST', body: fd, headers: { 'Webhook-Url': `${r.base}/later` } });
      assert.is(later.status, 202);
      await until('the first attempt', () => r.hits.length === 2, MINUTE);
      assert.is(r.hits[1].answered, 503);
      await stop(worker);
      assert.ok(worker.exited);
      await start('worker');
      await until('the retry from the new worker', () => r.hits.length === 3, 2 * MINUTE);
      assert.is(r.hits[2].path, '/later');
      assert.is(r.hits[2].answered, 200);
      assert.is(r.hits[2].body, r.hits[1].body);
      verify(r.hits[2], SECRET);
    } finally {
      // Replicas first, redis last (they drain through it).
      for (const p of [...started].reverse()) await stop(p);
      await r.close();
      rmSync(data, { recursive: true, force: true });
    }
  });

  test('cluster mode: a job lost with two workers in a row is failed by the stalled-job check, and its Webhook-Error-Url is told', async () => {
    const r = await receiver();
    const data = mkdtempSync(join(tmpdir(), 'quire-webhooks-'));
    try {
      const start = await cluster(data);
      const [api, first] = await Promise.all([start('api'), start('worker')]);
      // 12 pages (the 4-page scan three times) read one after another: a tesseract seen leaves pages to come.
      const scans = join(data, 'scan-12-pages.pdf');
      tool('qpdf', ['--empty', '--pages', SCAN, SCAN, SCAN, '--', scans]);
      const fd = new FormData();
      fd.append('file', new Blob([readFileSync(scans)]), 'scan.pdf');
      const res = await fetch(`${api.base}/pdf-with-ocr-text`, {
        method: 'POST',
        body: fd,
        headers: { 'Webhook-Url': `${r.base}/done`, 'Webhook-Error-Url': `${r.base}/failed` },
      });
      assert.is(res.status, 202, await res.clone().text());
      const { requestId } = await res.json();

      // Each worker is killed while its tesseract runs the job (polled from before page 1 and seen during it, 11
      // pages before the job could end): the first loss reruns it, the second fails it.
      let worker = first;
      for (let lost = 0; lost < 2; lost++) {
        await until(`tesseract under worker ${lost + 1}`, () => tesseractsUnder(worker).length > 0, 2 * MINUTE);
        await crash(worker);
        worker = await start('worker');
      }
      await until('the failure at the error URL', () => r.hits.length > 0, 2 * MINUTE);
      assert.equal(
        r.hits.map((h) => h.path),
        ['/failed'],
      );
      verify(r.hits[0], SECRET);
      const body = JSON.parse(r.hits[0].body);
      assert.is(body.status, 'failed');
      assert.is(body.requestId, requestId);
      assert.match(body.error, /worker/i);
      assert.equal(body, await (await fetch(`${api.base}/request-status/${requestId}`)).json());
    } finally {
      // Replicas first, redis last (they drain through it).
      for (const p of [...started].reverse()) await stop(p);
      await r.close();
      rmSync(data, { recursive: true, force: true });
    }
  });
} else {
  console.log('webhooks.test.ts: cluster test SKIPPED - redis-server not found (Debian package redis-server)');
}

test.run();
