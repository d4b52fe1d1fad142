import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { AppError } from '../app/errors.js';
import { type Cost, Jobs } from '../app/jobs/index.js';
import { int } from '../app/requests/fields.js';
import { type Operation, operation } from '../app/requests/operation.js';
import { run } from '../engines/run.js';
import { corpus, startApp, until } from './helpers.js';

/**
 * The scheduler: lanes with their own limits, a budget of cores for cpu jobs, round-robin between clients,
 * lower CPU priority for heavy engines. Order is asserted (which job started when), never durations.
 */

const work = mkdtempSync(join(tmpdir(), 'quire-sched-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

const jobs = (over: Partial<ConstructorParameters<typeof Jobs>[0]> = {}) =>
  new Jobs({
    concurrency: 10,
    cpuBudget: 2,
    lightConcurrency: 2,
    officeInstances: 1,
    browserPages: 2,
    queueMax: 100,
    timeoutMs: 60_000,
    workDir: work,
    keepMs: 60_000,
    ...over,
  });

/**
 * Waits until `n` jobs have started (starting involves a mkdir). A job that should not have started is told by
 * the scheduler's counts, which change with its decision rather than a mkdir later, not by waiting a while more.
 */
async function started(log: string[], n: number) {
  await until(`${n} jobs started`, () => log.length >= n, 60_000);
}

/** A job that records when it started and runs until released. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const work = async () => {
    log.push(name);
    await released;
    return { name };
  };
  return { work, release };
}

test('light jobs start at once while the cpu budget and the pools are full', async () => {
  const j = jobs();
  const log: string[] = [];
  const heavy = [gate(log, 'ocr'), gate(log, 'office'), gate(log, 'html')];
  const costs: Cost[] = [{ lane: 'cpu', processes: 2 }, { lane: 'office' }, { lane: 'browser' }];
  const done = heavy.map((g, k) => j.submit(g.work, { owner: null, cost: costs[k] }).done);
  const more = gate(log, 'ocr2');
  const waiting = j.submit(more.work, { owner: null, cost: { lane: 'cpu', processes: 2 } }).done;
  await started(log, 3);
  // Starting involves a mkdir, so jobs started together log in any order.
  assert.equal([...log].sort(), ['html', 'ocr', 'office']);
  assert.is(j.stats.running, 3, 'ocr2 started too');
  const info = gate(log, 'info');
  const light = j.submit(info.work, { owner: null, cost: { lane: 'light' } }).done;
  await started(log, 4);
  assert.is(log.at(-1), 'info', 'the light job did not wait');
  assert.is(log.length, 4);
  assert.is(j.stats.lanes.cpu.waiting, 1);
  info.release();
  await light;
  heavy.forEach((g) => g.release());
  await Promise.all(done);
  await started(log, 5);
  assert.equal(log.at(-1), 'ocr2');
  more.release();
  await waiting;
});

test('cpu budget: a job counts its processes; a smaller job behind a larger one does not overtake it', async () => {
  const j = jobs({ cpuBudget: 2 });
  const log: string[] = [];
  const one = gate(log, 'one');
  const two = gate(log, 'two');
  const small = gate(log, 'small');
  const p1 = j.submit(one.work, { owner: null, client: 'a', cost: { lane: 'cpu', processes: 1 } }).done;
  const p2 = j.submit(two.work, { owner: null, client: 'b', cost: { lane: 'cpu', processes: 2 } }).done;
  const p3 = j.submit(small.work, { owner: null, client: 'c', cost: { lane: 'cpu', processes: 1 } }).done;
  await started(log, 1);
  assert.equal(log, ['one'], '1 core free: the 2-core job waits and the 1-core job behind it waits its turn');
  assert.is(j.stats.cpuUsed, 1);
  assert.is(j.stats.lanes.cpu.waiting, 2);
  one.release();
  await p1;
  await started(log, 2);
  assert.equal(log, ['one', 'two']);
  assert.is(j.stats.cpuUsed, 2);
  two.release();
  await p2;
  await started(log, 3);
  assert.equal(log, ['one', 'two', 'small']);
  small.release();
  await p3;
  // A job asking for more than the whole budget still runs (alone).
  const big = gate(log, 'big');
  const pb = j.submit(big.work, { owner: null, cost: { lane: 'cpu', processes: 64 } }).done;
  await started(log, 4);
  assert.is(log.at(-1), 'big');
  assert.is(j.stats.cpuUsed, 2);
  big.release();
  await pb;
});

test("fairness: one client with 50 queued jobs does not starve another client's single job", async () => {
  const j = jobs({ cpuBudget: 1 });
  const log: string[] = [];
  const gates = Array.from({ length: 50 }, (_, k) => gate(log, `a${k}`));
  const done = gates.map((g) => j.submit(g.work, { owner: null, client: 'a', cost: { lane: 'cpu', processes: 1 } }).done);
  const b = gate(log, 'b');
  const pb = j.submit(b.work, { owner: null, client: 'b', cost: { lane: 'cpu', processes: 1 } }).done;
  await started(log, 1);
  assert.is(j.stats.running, 1);
  gates[0].release();
  await started(log, 2);
  assert.equal(log, ['a0', 'b'], 'b runs second, not 51st');
  b.release();
  await pb;
  for (const g of gates) g.release();
  await Promise.all(done);
  assert.equal(log.slice(2, 5), ['a1', 'a2', 'a3']);
});

test('queue full: 429 for a client that already waits, while a client with nothing waiting still gets in', async () => {
  const j = jobs({ cpuBudget: 1, queueMax: 3 });
  const log: string[] = [];
  const gates = Array.from({ length: 4 }, (_, k) => gate(log, `a${k}`));
  const done = gates.map((g) => j.submit(g.work, { owner: null, client: 'a', cost: { lane: 'cpu', processes: 1 } }).done);
  try {
    j.submit(gate(log, 'a-extra').work, { owner: null, client: 'a', cost: { lane: 'cpu', processes: 1 } });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, AppError);
    assert.is((e as AppError).status, 429);
    assert.ok(Number((e as AppError).headers['Retry-After']) >= 1);
  }
  const b = gate(log, 'b');
  const pb = j.submit(b.work, { owner: null, client: 'b', cost: { lane: 'cpu', processes: 1 } }).done;
  // Light work never queues behind the full cpu lane.
  const light = j.submit(async () => ({ ok: true }), { owner: null, client: 'a', cost: { lane: 'light' } }).done;
  assert.equal(await light, { ok: true });
  for (const g of [...gates, b]) g.release();
  await Promise.all([...done, pb]);
});

test('CONCURRENCY bounds the heavy lanes together', async () => {
  const j = jobs({ concurrency: 1, cpuBudget: 2, officeInstances: 2 });
  const log: string[] = [];
  const a = gate(log, 'cpu');
  const b = gate(log, 'office');
  const pa = j.submit(a.work, { owner: null, cost: { lane: 'cpu', processes: 1 } }).done;
  const pb = j.submit(b.work, { owner: null, cost: { lane: 'office' } }).done;
  await started(log, 1);
  assert.equal(log, ['cpu']);
  assert.is(j.stats.running, 1, 'the office job started too');
  assert.is(j.stats.lanes.office.waiting, 1);
  a.release();
  await pa;
  await started(log, 2);
  assert.equal(log, ['cpu', 'office']);
  b.release();
  await pb;
});

test('engine processes of heavy lanes run niced; light ones do not', async () => {
  const j = jobs();
  const niceOf = (cost: Cost) =>
    j.submit(async ({ dir }) => ({ ni: (await run('sh', ['-c', 'sleep 0.3; ps -o ni= -p $$'], { cwd: dir })).stdout.trim() }), { owner: null, cost }).done;
  assert.equal(await niceOf({ lane: 'cpu', processes: 1 }), { ni: '10' });
  assert.equal(await niceOf({ lane: 'light' }), { ni: '0' });
});

/** Jobs of /test-sleep held until the test releases them, by tag (a tag not held only sleeps `ms`). */
const held = new Map<string, { released: Promise<void>; release: () => void }>();
const hold = (tag: string) => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  held.set(tag, { released, release });
};
/** Tags of /test-sleep jobs in the order they started. */
const startedTags: string[] = [];

/** An endpoint whose engine sleeps, in the cpu lane (the default cost). */
const slow = operation({
  path: '/test-sleep',
  tag: 'test',
  summary: 'sleeps',
  inputs: {},
  fields: { ms: int(0, 60_000, 100), tag: z.string().optional() },
  output: 'json',
  engines: [],
  run: async ({ fields, dir, signal }) => {
    startedTags.push(fields.tag ?? '');
    await held.get(fields.tag ?? '')?.released;
    await run('sleep', [String(fields.ms / 1000)], { cwd: dir, signal });
    return { json: { tag: fields.tag ?? null, finished: Date.now() } };
  },
}) as unknown as Operation;

const keyA = 'key-aaaaaaaaaaaaaaaaaaaa';
const keyB = 'key-bbbbbbbbbbbbbbbbbbbb';

test('HTTP: fair between API keys; /pdf-info answers while real OCR and office jobs hold the heavy lanes', async () => {
  const t = await startApp({ API_KEYS: `${keyA},${keyB}`, CPU_BUDGET: '2' }, { operations: [slow] });
  const poll = async (id: string, key: string, timeoutMs = 120_000) => {
    let st: Record<string, any> = {};
    await until(
      `request ${id} settles`,
      async () => (st = await (await t.request(`/request-status/${id}`, { headers: { 'Api-Key': key } })).json()).status !== 'pending',
      timeoutMs,
    );
    return st;
  };
  try {
    // Key A queues 8 jobs held by the test (2 run, 6 wait); key B then sends one: it runs in the next free slot.
    // The slots free when the test says so, not after some duration, so no machine's speed changes the order.
    const a = [];
    for (let k = 0; k < 8; k++) {
      hold(`a${k}`);
      a.push((await (await t.json('/test-sleep', { ms: 0, tag: `a${k}` }, { 'Api-Key': keyA, 'Request-Type': 'requestId' })).json()).requestId);
    }
    await until("two of A's jobs started", () => startedTags.length >= 2, 60_000);
    assert.equal([...startedTags].sort(), ['a0', 'a1']);
    const b = (await (await t.json('/test-sleep', { ms: 100, tag: 'b' }, { 'Api-Key': keyB, 'Request-Type': 'requestId' })).json()).requestId;
    held.get('a0')!.release();
    await until('the freed slot is taken', () => startedTags.length >= 3, 60_000);
    assert.is(startedTags[2], 'b', `started: ${startedTags.join(', ')}`);
    assert.is((await poll(b, keyB)).status, 'completed');
    for (const h of held.values()) h.release();
    for (const st of await Promise.all(a.map((id) => poll(id, keyA)))) assert.is(st.status, 'completed', JSON.stringify(st));

    // Real heavy work: two OCR jobs of a 4-page scan and two office conversions, then a light request.
    const heavy = [
      t.form('/pdf-with-ocr-text', { file: { file: corpus('scans/linn-scan-4-orientations.pdf') } }, { 'Api-Key': keyA, 'Request-Type': 'requestId' }),
      t.form('/pdf-with-ocr-text', { file: { file: corpus('scans/linn-scan-4-orientations.pdf') } }, { 'Api-Key': keyA, 'Request-Type': 'requestId' }),
      t.form('/pdf', { file: { file: corpus('office/poi-SampleDoc.docx') } }, { 'Api-Key': keyA, 'Request-Type': 'requestId' }),
      t.form('/pdf', { file: { file: corpus('office/poi-SampleDoc.docx') } }, { 'Api-Key': keyA, 'Request-Type': 'requestId' }),
    ];
    const ids = await Promise.all(heavy.map(async (r) => (await (await r).json()).requestId as string));
    // Once one has started, both stay pending for at least one OCR run of 4 pages (seconds here, hundreds of
    // milliseconds on a machine 10x faster), far longer than one light request and one poll.
    await until('OCR is running', () => t.deps.jobs.stats.lanes.cpu.running >= 1, 60_000);
    const info = await t.form('/pdf-info', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, queries: 'page_count' }, { 'Api-Key': keyB });
    assert.is(info.status, 200);
    assert.is((await info.json()).page_count, 1);
    const stillRunning = await Promise.all(
      ids.slice(0, 2).map(async (id) => (await (await t.request(`/request-status/${id}`, { headers: { 'Api-Key': keyA } })).json()).status),
    );
    assert.ok(stillRunning.includes('pending'), 'pdf-info answered before the OCR jobs ended');
    // Two OCR runs one after the other took 40-75 s here under load: minutes on a machine 10x slower.
    for (const st of await Promise.all(ids.map((id) => poll(id, keyA, 1_200_000)))) assert.is(st.status, 'completed', JSON.stringify(st));
  } finally {
    for (const h of held.values()) h.release();
    await t.close();
  }
});

test.run();
