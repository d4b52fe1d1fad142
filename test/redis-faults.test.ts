// Redis restarted under a cluster-mode server (REDIS_URL) while a client waits for its job: with its append-only
// file the job carries on and the client gets its result; restarted empty (no persistence), the job is gone from
// the queue and the client is told so (503) instead of waiting for a completion event that never comes. The job is
// held at a language model on loopback until the test releases it, so Redis restarts while it runs on any machine.
// Redis down when a request comes: 503 naming the job queue at once, nothing of the request kept, not a wait as long
// as the outage; Redis back, requests succeed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, until } from './helpers.js';
import { freePort, REDIS_SERVER, startQuire, stop } from './processes.js';

const test = suite('redis-faults');

/** A model that holds every request until `open()`, then answers them all. */
async function heldModel() {
  const held: ServerResponse[] = [];
  let open = false;
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'A summary.' }, finish_reason: 'stop' }],
      }),
    );
  const server = createServer((req, res) => {
    req.resume().on('end', () => (open ? answer(res) : held.push(res)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`,
    holding: () => held.filter((r) => !r.destroyed).length,
    open() {
      open = true;
      for (const r of held.splice(0)) if (!r.destroyed) answer(r);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A redis-server on `port` over `dir`, with or without its append-only file; resolves once it takes connections. */
async function startRedis(port: number, dir: string, persistent: boolean): Promise<ChildProcess> {
  const persistence = persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const child = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence], { stdio: 'ignore' });
  const listening = () =>
    new Promise<boolean>((res) => {
      const sock = connect(port, '127.0.0.1')
        .once('connect', () => res(true))
        .once('error', () => res(false));
      sock.unref();
      setTimeout(() => sock.destroy(), 100);
    });
  await until('redis listens', listening, 10_000);
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

const summaryRequest = (base: string) => {
  const fd = new FormData();
  fd.append('file', new Blob([new TextEncoder().encode('A report. It says three things. It ends here.\n')]), 'report.txt');
  fd.append('summary_format', 'abstract');
  return fetch(`${base}/summarized-pdf-text`, { method: 'POST', body: fd });
};

for (const persistent of [true, false]) {
  test(`Redis killed and started again ${persistent ? 'with its append-only file: the waiting client gets its result' : 'empty (no persistence): the waiting client gets 503 naming the lost request, not an endless wait'}`, async () => {
    if (!REDIS_SERVER) {
      console.log('  skipped: redis-server is not installed (Debian package redis-server)');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'quire-redis-faults-'));
    const port = await freePort();
    let redis = await startRedis(port, dir, persistent);
    const model = await heldModel();
    const q = await startQuire('cluster', {
      DATA_DIR: join(dir, 'data'),
      REDIS_URL: `redis://127.0.0.1:${port}`,
      LLM_URL: model.url,
      LLM_MODEL: 'held',
      LLM_TIMEOUT_SECONDS: '600',
    });
    try {
      const answer = summaryRequest(q.base);
      await until('the job is held at the model', () => model.holding() === 1, 180_000);
      await killed(redis);
      redis = await startRedis(port, dir, persistent);
      if (persistent) {
        model.open();
        const res = await answer;
        const body = await res.json();
        assert.is(res.status, 200, JSON.stringify(body));
        assert.is(body.summary, 'A summary.');
      } else {
        const res = await answer;
        const body = await res.json();
        assert.is(res.status, 503, JSON.stringify(body));
        assert.match(body.error, /The job queue \(Redis\) lost this request: it restarted without its data\. Send it again\./);
        model.open();
      }
    } finally {
      await stop(q);
      await killed(redis);
      await model.close();
    }
  });
}

/** What the cluster keeps in Redis: resource records and jobs (BullMQ's job hashes, named by the request id). */
async function kept(port: number): Promise<{ resources: string[]; jobs: string[] }> {
  const r = new Redis(port, '127.0.0.1');
  try {
    const resources = (await r.keys('quire:resource:*')).map((k) => k.split(':').pop()!);
    const jobs = (await r.keys('bull:quire-*')).filter((k) => /:[0-9a-f-]{36}$/.test(k)).map((k) => k.split(':').pop()!);
    return { resources: resources.sort(), jobs: jobs.sort() };
  } finally {
    r.disconnect();
  }
}

test('Redis down: a request answers 503 naming the job queue within 10 s and keeps nothing; Redis back, requests succeed', async () => {
  if (!REDIS_SERVER) {
    console.log('  skipped: redis-server is not installed (Debian package redis-server)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'quire-redis-down-'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  let redis = await startRedis(port, dir, true);
  const q = await startQuire('cluster', { DATA_DIR: dataDir, REDIS_URL: `redis://127.0.0.1:${port}` });
  const pdf = readFileSync(corpus('pdf/text-minimal-pdflatex.pdf'));
  const info = (headers: Record<string, string> = {}) => {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(pdf)]), 'a.pdf');
    fd.append('queries', 'page_count');
    return fetch(`${q.base}/pdf-info`, { method: 'POST', body: fd, headers });
  };
  const resources = () => readdirSync(join(dataDir, 'resources')).filter((n) => !n.startsWith('.'));
  try {
    const first = await info();
    assert.is(first.status, 200, await first.text());
    const before = { files: resources(), redis: await kept(port) };

    await killed(redis);
    for (const [what, headers] of [
      ['waited', {}],
      ['polled', { 'Request-Type': 'requestId' }],
    ] as const) {
      const t0 = Date.now();
      const res = await info(headers);
      const s = (Date.now() - t0) / 1000;
      const body = await res.json();
      console.log(`  Redis down, ${what} /pdf-info: ${res.status} in ${s.toFixed(2)} s`);
      assert.is(res.status, 503, JSON.stringify(body));
      assert.match(body.error, /^The job queue \(Redis\) is unavailable: no connection\./);
      assert.is(body.requestId, undefined);
      assert.ok(s < 10, `answered after ${s} s`);
    }
    assert.equal(resources(), before.files, 'no bytes kept of the refused requests');

    const t1 = Date.now();
    redis = await startRedis(port, dir, true);
    await until(
      'a request succeeds again',
      async () => {
        const res = await info();
        if (res.status !== 200 && res.status !== 503) assert.unreachable(`${res.status} ${await res.text()}`);
        return res.status === 200;
      },
      60_000,
    );
    console.log(`  Redis started again -> 200: ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    // One more record and job, the 200's: none for the refused requests, even once Redis is back (nothing was kept to send later).
    const after = await kept(port);
    assert.is(after.resources.length, before.redis.resources.length + 1, JSON.stringify(after));
    assert.is(after.jobs.length, before.redis.jobs.length + 1, JSON.stringify(after));
    assert.is(resources().length, before.files.length + 1);
  } finally {
    await stop(q);
    if (redis.exitCode === null && redis.signalCode === null) await killed(redis);
  }
});

test.run();
