import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { int } from '../app/requests/fields.js';
import { type Operation, operation, pdfInput } from '../app/requests/operation.js';
import { EngineError } from '../engines/errors.js';
import { run } from '../engines/run.js';
import { corpus, pdfText, settledStatus, startApp, UUID_V4, until } from './helpers.js';

/** Running, and not a zombie (a killed orphan stays a zombie until an init that may not reap it does). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A test endpoint whose engine runs `seconds` long and leaves its child's pid and its job dir behind for inspection. */
const slow = operation({
  path: '/test-slow',
  tag: 'test',
  summary: 'sleeps in a child process group',
  inputs: {},
  fields: { seconds: int(0, 3600, 1), tag: z.string().optional() },
  output: 'json',
  engines: [],
  run: async ({ fields, dir, signal, progress }) => {
    writeFileSync(join(dir, 'marker'), 'x');
    progress(0.5);
    // A grandchild in the same process group: the kill must reach it too.
    await run('sh', ['-c', `sleep ${fields.seconds} & echo $! > pid; wait`], { cwd: dir, signal });
    return { json: { slept: fields.seconds, dir } };
  },
}) as unknown as Operation;

const failing = operation({
  path: '/test-fail',
  tag: 'test',
  summary: 'engine fails on the input',
  inputs: pdfInput(),
  fields: {},
  output: 'file',
  engines: [],
  run: async ({ dir, signal }) => {
    await run('sh', ['-c', 'echo "secret stderr /etc/x" >&2; exit 2'], { cwd: dir, signal });
    return {};
  },
}) as unknown as Operation;

/**
 * A test endpoint that makes a folder under a fixed name, as Ghostscript's colour conversion makes its profiles dir,
 * and then fails to read its input unless it is a repaired copy: the run again on qpdf's copy must not find the
 * first run's folder in its way (it was a 500, EEXIST).
 */
const fixedNames = operation({
  path: '/test-fixed-names',
  tag: 'test',
  summary: 'fails on the original input after making a folder of a fixed name',
  inputs: pdfInput(),
  fields: {},
  output: 'file',
  engines: [],
  run: async ({ input, dir }) => {
    await mkdir(join(dir, 'profiles'));
    if (!/repaired-/.test(input.path)) throw new EngineError('qpdf', 'could not read the input (as a damaged file is not)');
    const path = join(dir, 'out.pdf');
    await copyFile(input.path, path);
    return { files: [{ path, name: 'out.pdf' }] };
  },
}) as unknown as Operation;

test('a run again on a repaired copy starts in a dir of its own: what the failed run made there is not in its way', async () => {
  const t = await startApp({}, { operations: [fixedNames] });
  try {
    const res = await t.form('/test-fixed-names', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } });
    const body = (await res.json()) as { warning?: string; outputUrl?: string };
    assert.is(res.status, 200, JSON.stringify(body));
    assert.match(String(body.warning), /repaired \(rewritten by qpdf\)/);
    assert.ok(pdfText(await t.download(body.outputUrl!)).trim().length > 0);
  } finally {
    await t.close();
  }
});

test('polling: Request-Type answers {requestId} at once, then pending with progress, then completed', async () => {
  const t = await startApp({}, { operations: [slow] });
  try {
    const res = await t.json('/test-slow', { seconds: 3 }, { 'Request-Type': 'requestId' });
    assert.is(res.status, 200);
    const { requestId } = await res.json();
    assert.match(requestId, UUID_V4);
    let pending: { progress?: number } | undefined;
    // Progress 0.5 stays up for the engine's 3 s of sleep, wall-clock seconds on any machine: far longer than one
    // poll.
    await until(
      'the job reports its progress',
      async () => (pending = await (await t.request(`/request-status/${requestId}`)).json()).progress === 0.5,
      60_000,
    );
    assert.equal(pending, { status: 'pending', requestId, progress: 0.5 });
    const done = await settledStatus(t, requestId);
    assert.is(done.status, 'completed', JSON.stringify(done));
    assert.is(done.slept, 3);
    // The n8n node's check, also with Response-Type.
    const n8n = await t.request('/request-status/00000000-0000-0000-0000-000000000000');
    assert.is(n8n.status, 404);
    assert.match((await n8n.json()).error, /^requestID not found\./);
    const viaResponseType = await (await t.json('/test-slow', { seconds: 0 }, { 'Response-Type': 'requestId' })).json();
    assert.match(viaResponseType.requestId, UUID_V4);
  } finally {
    await t.close();
  }
});

test('polling survives a restart: a finished request is still answered, an interrupted one reads as failed', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-restart-'));
  try {
    const a = await startApp({}, { operations: [slow], dataDir });
    const { requestId } = await (await a.json('/test-slow', { seconds: 0 }, { 'Request-Type': 'requestId' })).json();
    const done = await settledStatus(a, requestId);
    assert.is(done.status, 'completed', JSON.stringify(done));
    await a.close();
    const b = await startApp({}, { operations: [slow], dataDir });
    try {
      assert.equal(await (await b.request(`/request-status/${requestId}`)).json(), done);
      // A record an earlier process left pending (it died before finishing).
      const lost = '5b0f8c52-3f8e-4a51-9d0e-1c2b3a4d5e6f';
      writeFileSync(join(dataDir, 'requests', `${lost}.json`), JSON.stringify({ id: lost, owner: null, status: 'pending', progress: 0.3 }));
      const failed = await (await b.request(`/request-status/${lost}`)).json();
      assert.equal(failed, { status: 'failed', requestId: lost, error: 'The server restarted before this request finished; send it again.', statusCode: 503 });
      // Ids that are not UUIDs never reach the file system.
      assert.is((await b.request('/request-status/..%2F..%2Fetc%2Fpasswd')).status, 404);
    } finally {
      await b.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('polling a failed job shows failed with the client error, never the engine stderr', async () => {
  const t = await startApp({}, { operations: [failing] });
  try {
    const { requestId } = await (
      await t.form('/test-fail', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }, { 'Request-Type': 'requestId' })
    ).json();
    const st = await settledStatus(t, requestId);
    assert.is(st.status, 'failed');
    // Which engine failed is said (the file's pages can be read, so it is not unreadable), never what it printed.
    assert.is(
      st.status === 'failed' && st.error,
      'Uploaded file is not valid input for this route: its pages can be read, but sh failed on it, and on its repaired copies',
    );
    assert.not.match(JSON.stringify(st), /secret|\/etc/);
    const sync = await t.form('/test-fail', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } });
    assert.is(sync.status, 400);
  } finally {
    await t.close();
  }
});

test('queue: CONCURRENCY running, QUEUE_MAX waiting, then 429 with Retry-After', async () => {
  const t = await startApp({ CONCURRENCY: '1', QUEUE_MAX: '1' }, { operations: [slow] });
  try {
    // Still running at the checks below on any machine (the close cuts it after its 1 s grace).
    const a = await (await t.json('/test-slow', { seconds: 600 }, { 'Request-Type': 'requestId' })).json();
    const b = await (await t.json('/test-slow', { seconds: 0 }, { 'Request-Type': 'requestId' })).json();
    assert.ok(a.requestId && b.requestId);
    assert.equal(t.deps.jobs.stats.running, 1);
    assert.equal(t.deps.jobs.stats.waiting, 1);
    const c = await t.json('/test-slow', { seconds: 0 });
    assert.is(c.status, 429);
    assert.ok(Number(c.headers.get('retry-after')) >= 1);
    assert.match((await c.json()).error, /retry/i);
  } finally {
    await t.close();
  }
});

test('timeout: MAX_PROCESS_SECONDS stops the job, kills the engine process group, removes the temp dir', async () => {
  // The pid must be read while the job runs: 5 s against ~0.1 s here to start the engine, write the pid and see it
  // (one poll of 0.1 s of that).
  const t = await startApp({ MAX_PROCESS_SECONDS: '5' }, { operations: [slow] });
  try {
    // 600 s: a grandchild seen gone within the 60 s waits below was killed, not finished.
    const { requestId } = await (await t.json('/test-slow', { seconds: 600 }, { 'Request-Type': 'requestId' })).json();
    const work = join(t.dataDir, 'work', requestId);
    await until('the engine writes its pid', () => existsSync(join(work, 'pid')) && readFileSync(join(work, 'pid'), 'utf8').endsWith('\n'), 60_000);
    const pid = Number(readFileSync(join(work, 'pid'), 'utf8'));
    assert.ok(alive(pid));
    const st = await settledStatus(t, requestId);
    assert.is(st.status, 'failed');
    assert.is(st.status === 'failed' && st.status, 'failed');
    assert.match(st.error, /limit of 5 s/);
    await until('the grandchild sleep is killed', () => !alive(pid), 60_000);
    assert.not.ok(existsSync(work), 'temp dir removed');
    const sync = await t.json('/test-slow', { seconds: 30 });
    assert.is(sync.status, 422);
  } finally {
    await t.close();
  }
});

test('cancellation: a synchronous client that goes away stops its job and its processes', async () => {
  const t = await startApp({}, { operations: [slow] });
  try {
    const ac = new AbortController();
    // 600 s: a grandchild seen gone within the 60 s wait below was killed, not finished.
    const pending = t
      .request('/test-slow', { method: 'POST', body: JSON.stringify({ seconds: 600 }), headers: { 'content-type': 'application/json' }, signal: ac.signal })
      .catch((e) => e);
    const pidOf = (job: string) => join(t.dataDir, 'work', job, 'pid');
    await until(
      'the engine writes its pid',
      () => readdirSync(join(t.dataDir, 'work')).some((j) => existsSync(pidOf(j)) && readFileSync(pidOf(j), 'utf8').endsWith('\n')),
      60_000,
    );
    const work = readdirSync(join(t.dataDir, 'work'));
    assert.is(work.length, 1);
    const pid = Number(readFileSync(join(t.dataDir, 'work', work[0], 'pid'), 'utf8'));
    ac.abort();
    await pending;
    await until('the job stops', () => !alive(pid) && readdirSync(join(t.dataDir, 'work')).length === 0, 60_000);
    assert.is(t.deps.jobs.stats.running, 0);
  } finally {
    await t.close();
  }
});

test('temp dirs: removed after success and after failure; stale ones swept at start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-stale-'));
  const t = await startApp({}, { operations: [slow, failing], dataDir });
  const ok = await (await t.json('/test-slow', { seconds: 0 })).json();
  assert.ok(ok.dir.startsWith(join(dataDir, 'work')));
  assert.not.ok(existsSync(ok.dir));
  await t.form('/test-fail', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } });
  assert.equal(readdirSync(join(dataDir, 'work')), []);
  await t.close();
  const stale = join(dataDir, 'work', 'left-by-a-crash');
  mkdirSync(join(dataDir, 'work'), { recursive: true });
  mkdirSync(stale);
  const t2 = await startApp({}, { dataDir });
  assert.not.ok(existsSync(stale));
  await t2.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test.run();
