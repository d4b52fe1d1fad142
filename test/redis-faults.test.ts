// Redis restarted under a cluster-mode server (REDIS_URL) while a client waits for its job: with its append-only
// file the job carries on and the client gets its result; restarted empty (no persistence), the job is gone from
// the queue and the client is told so (503) instead of waiting for a completion event that never comes. The job is
// held at a language model on loopback until the test releases it, so Redis restarts while it runs on any machine.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { until } from './helpers.js';
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

test.run();
