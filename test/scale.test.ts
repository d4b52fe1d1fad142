// Cluster mode (issue 13), black box: real redis-server, real Quire processes (node + tsx) over HTTP.
// Two api replicas (A, B) and two workers on one Redis and one DATA_DIR: a resource and a request are answered
// by any replica; a worker killed with SIGKILL mid-OCR loses nothing (the job reruns on the other worker);
// RESOURCE_TTL_SECONDS expires records (Redis) and bytes (the sweep) on a separate pair.
// Each worker is pinned to one CPU, so it recognises one page at a time whatever the machine's core count: an
// OCR job of 4 pages is then 4 Tesseract runs in a row, and the first one seen leaves the job far from its end.
// Nothing here imports app/: the processes are observed only through HTTP, DATA_DIR and /proc.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  descendants,
  killAllNow,
  killSame,
  type Proc,
  type ProcEntry,
  processTable,
  REDIS_SERVER,
  signal,
  started,
  startQuire,
  startRedis,
  stop,
  tail,
} from './processes.js';
import { sleep, until } from './waiting.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CORPUS = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
const corpus = (rel: string) => join(CORPUS, rel);
const FED = corpus('pdf/federal-register-15-pages.pdf');
const SCAN = corpus('scans/linn-scan-4-orientations.pdf');
const tool = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status} ${r.stderr}`);
  return r.stdout;
};
const words = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The CPUs this process may run on (Cpus_allowed_list, e.g. "0-3,8"), for pinning each worker to one. */
function allowedCpus(): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return list.split(',').flatMap((r) => {
    const [lo, hi = lo] = r.split('-').map(Number);
    return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  });
}

const REDIS = REDIS_SERVER;

/** Engine processes of workers killed on purpose (orphaned at once): killed too, by pid, at the end. */
const orphans: ProcEntry[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'quire-scale-'));
const startRedisIn = (name: string) => startRedis(mkdtempSync(join(tmp, `${name}-`)), name);

// ---------------------------------------------------------------- /proc

/** The first of `pids` on the parent chain of `pid`, or undefined. */
function ancestorIn(pid: number, pids: number[], table: Map<number, ProcEntry>): number | undefined {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (pids.includes(p)) return p;
    const e = table.get(p);
    if (!e) return undefined;
    p = e.ppid;
  }
  return undefined;
}

/** Live tesseract processes and the spawned process (if any) each descends from. */
function tesseracts(of: Proc[]): Array<{ pid: number; owner?: Proc; chain: string }> {
  const table = processTable();
  return [...table.values()]
    .filter((e) => e.comm === 'tesseract' && e.state !== 'Z')
    .map((e) => {
      const owner = ancestorIn(
        e.pid,
        of.map((p) => p.pid),
        table,
      );
      const chain: string[] = [];
      for (let p: number | undefined = e.pid, i = 0; p && p > 1 && i < 8; i++, p = table.get(p)?.ppid) chain.push(`${p}:${table.get(p)?.comm}`);
      return { pid: e.pid, owner: of.find((p) => p.pid === owner), chain: chain.join(' <- ') };
    });
}

process.on('exit', () => orphans.forEach(killSame));
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killAllNow();
    orphans.forEach(killSame);
    rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  });
}

// ---------------------------------------------------------------- HTTP

type Json = Record<string, any>;

async function call(base: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(300_000), ...init });
  const text = await res.text();
  let body: Json;
  try {
    body = JSON.parse(text);
  } catch {
    body = { raw: text.slice(0, 300) };
  }
  return { status: res.status, body };
}

const postJson = (base: string, path: string, json: unknown, headers: Record<string, string> = {}) =>
  call(base, path, { method: 'POST', body: JSON.stringify(json), headers: { 'content-type': 'application/json', ...headers } });

function postFile(base: string, path: string, file: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  return call(base, path, { method: 'POST', body: fd, headers });
}

async function upload(base: string, file: string): Promise<string> {
  const r = await postFile(base, '/upload', file);
  assert.is(r.status, 200, `upload: ${JSON.stringify(r.body)}`);
  assert.is(r.body.files?.length, 1);
  return r.body.files[0].id as string;
}

async function download(base: string, id: string): Promise<string> {
  const res = await fetch(`${base}/resource/${id}?format=file`, { signal: AbortSignal.timeout(60_000) });
  assert.is(res.status, 200, `download ${id}: ${res.status} ${res.status === 200 ? '' : await res.text()}`);
  const out = join(mkdtempSync(join(tmp, 'dl-')), 'out.pdf');
  writeFileSync(out, Buffer.from(await res.arrayBuffer()));
  return out;
}

/** Polls /request-status until the request is no longer pending; `each` runs between polls. */
async function settle(base: string, requestId: string, timeoutMs: number, each?: () => void): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(base, `/request-status/${requestId}`);
    assert.is(r.status, 200, `request-status ${requestId}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.status !== 'pending') return r.body;
    if (Date.now() > deadline) throw new Error(`request ${requestId} still pending after ${timeoutMs / 1000} s: ${JSON.stringify(r.body)}`);
    each?.();
    await sleep(100);
  }
}

// ---------------------------------------------------------------- the cluster

let cluster: { redis: Proc; data: string; a: Proc; b: Proc; w1: Proc; w2: Proc } | undefined;
const need = () => {
  if (!cluster) throw new Error('the cluster did not start (see the first test)');
  return cluster;
};

if (!REDIS) {
  console.log('scale.test.ts: SKIPPED - redis-server not found (/usr/bin/redis-server; Debian package redis-server, listed in scripts/apt-packages.txt)');
  test('cluster mode: skipped, redis-server is not installed', () => {});
  test.run();
} else {
  test.after(async () => {
    // Workers first (a worker stopping drains), then the api replicas, Redis last.
    const order = [...started].sort((x, y) => rank(x) - rank(y));
    await Promise.all(order.filter((p) => rank(p) === 0).map((p) => stop(p)));
    await Promise.all(order.filter((p) => rank(p) === 1).map((p) => stop(p)));
    await Promise.all(order.filter((p) => rank(p) === 2).map((p) => stop(p, 5000)));
    orphans.forEach(killSame);
    rmSync(tmp, { recursive: true, force: true });
  });
  const rank = (p: Proc) => (p.name.startsWith('redis') ? 2 : p.name.startsWith('worker') ? 0 : 1);

  test('cluster: 2 api + 2 worker processes on one Redis and one DATA_DIR start; /ready reports redis and storage', async () => {
    const redis = await startRedisIn('redis');
    const data = join(tmp, 'data');
    mkdirSync(data);
    const env = (role: string) => ({ REDIS_URL: redis.url, ROLE: role, DATA_DIR: data, METRICS: 'on' });
    const cpus = allowedCpus();
    const [a, b, w1, w2] = await Promise.all([
      startQuire('api-A', env('api')),
      startQuire('api-B', env('api')),
      startQuire('worker-1', env('worker'), { cpus: String(cpus[0]) }),
      startQuire('worker-2', env('worker'), { cpus: String(cpus[1 % cpus.length]) }),
    ]);
    cluster = { redis: redis.proc, data, a, b, w1, w2 };
    for (const p of [a, b, w1, w2]) {
      const r = await call(p.base, '/ready');
      assert.is(r.status, 200, `${p.name} /ready ${r.status}`);
      assert.equal(r.body.redis?.ok, true, `${p.name} /ready redis: ${JSON.stringify(r.body.redis)}`);
      assert.equal(r.body.storage?.ok, true, `${p.name} /ready storage: ${JSON.stringify(r.body.storage)}`);
      assert.is((await call(p.base, '/health')).status, 200, `${p.name} /health`);
    }
    // A worker serves only /health, /ready and /up.
    for (const w of [w1, w2]) {
      assert.is((await postFile(w.base, '/upload', FED)).status, 404, `${w.name} must not accept uploads`);
      assert.is((await call(w.base, '/resource/00000000-0000-4000-8000-000000000000?format=info')).status, 404);
    }
  });

  test('any replica: upload on A, process through B, poll on A, download from B, delete on A -> 404 on B', async () => {
    const { a, b, data } = need();
    const id = await upload(a.base, FED);
    assert.ok(existsSync(join(data, 'resources', id)), 'upload bytes in the shared DATA_DIR/resources/<id>');

    // B knows A's upload.
    const info = await call(b.base, `/resource/${id}?format=info`);
    assert.is(info.status, 200, JSON.stringify(info.body));
    assert.is(info.body.name, 'federal-register-15-pages.pdf');
    assert.is(info.body.size, readFileSync(FED).length);

    // A synchronous request through B waits for its job wherever it runs.
    const pdfInfo = await postJson(b.base, '/pdf-info', { id, queries: 'page_count' });
    assert.is(pdfInfo.status, 200, JSON.stringify(pdfInfo.body));
    assert.is(pdfInfo.body.page_count, 15);

    // A polled request sent to B, polled on A (and on B).
    const sent = await postJson(b.base, '/split-pdf', { id, pages: ['1-2', '3'] }, { 'Request-Type': 'requestId' });
    assert.is(sent.status, 200, JSON.stringify(sent.body));
    assert.type(sent.body.requestId, 'string');
    const done = await settle(a.base, sent.body.requestId, 120_000);
    assert.is(done.status, 'completed', JSON.stringify(done));
    assert.is(done.inputId, id);
    assert.is(done.outputId?.length, 2, JSON.stringify(done));
    const [first, second] = done.outputId as string[];
    const onB = await call(b.base, `/request-status/${sent.body.requestId}`);
    assert.is(onB.body.status, 'completed');
    assert.equal(onB.body.outputId, done.outputId);

    // Download from B; the bytes are what qpdf and pdftotext (not Quire) say they should be.
    const out1 = await download(b.base, first);
    assert.is(Number(tool('qpdf', ['--show-npages', out1]).trim()), 2);
    assert.is(words(tool('pdftotext', [out1, '-'])), words(tool('pdftotext', ['-f', '1', '-l', '2', FED, '-'])));
    const out2 = await download(a.base, second);
    assert.is(Number(tool('qpdf', ['--show-npages', out2]).trim()), 1);
    assert.ok(existsSync(join(data, 'resources', first)), 'output bytes in the shared DATA_DIR');
    const url = await call(a.base, `/resource/${second}?format=url`);
    assert.is(url.status, 200);
    assert.ok(String(url.body.url).includes(`/resource/${second}`), url.body.url);

    // Delete on A -> gone on B.
    const del = await call(a.base, `/resource/${first}`, { method: 'DELETE' });
    assert.is(del.status, 200, JSON.stringify(del.body));
    assert.is(del.body.deletionResponses?.[first], 'Successfully Deleted');
    assert.is((await call(b.base, `/resource/${first}?format=info`)).status, 404);
    assert.is((await fetch(`${b.base}/resource/${first}?format=file`)).status, 404);
    assert.is((await call(b.base, `/resource/${first}`, { method: 'DELETE' })).status, 404, 'deleted twice');

    // POST /delete on B -> gone on A.
    const bulk = await postJson(b.base, '/delete', { ids: [id, second] });
    assert.is(bulk.status, 200, JSON.stringify(bulk.body));
    assert.equal(bulk.body.deletionResponses, { [id]: 'Successfully Deleted', [second]: 'Successfully Deleted' });
    for (const gone of [id, second]) assert.is((await call(a.base, `/resource/${gone}?format=info`)).status, 404, gone);

    // Unknown request ids are 404 on every replica.
    assert.is((await call(b.base, '/request-status/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.is((await call(a.base, '/request-status/00000000-0000-4000-8000-000000000000')).status, 404);
  });

  test('kill -9 of the worker running an OCR job: the job reruns on the other worker and completes', async () => {
    const { a, b, w1, w2, data } = need();
    const sent = await postFile(a.base, '/pdf-with-ocr-text', SCAN, {}, { 'Request-Type': 'requestId' });
    assert.is(sent.status, 200, JSON.stringify(sent.body));
    const requestId = sent.body.requestId as string;

    // Which worker runs it: a tesseract process whose parent chain reaches one of our worker pids. Polled from
    // before the first page, so seen during it (a page is read for several polls) with the other pages still to
    // come: the kill, a /proc scan later, lands mid-job on any machine.
    const everyone = [a, b, w1, w2];
    let victim: Proc | undefined;
    const seen: string[] = [];
    const deadline = Date.now() + 300_000;
    while (!victim) {
      for (const t of tesseracts(everyone)) {
        if (t.owner === w1 || t.owner === w2) victim = t.owner;
        // Under an api replica: wrong (api runs no engines). Tesseracts of unrelated processes are ignored.
        else if (t.owner && !seen.includes(`${t.owner.name}: ${t.chain}`)) seen.push(`${t.owner.name}: ${t.chain}`);
      }
      if (victim) break;
      if (Date.now() > deadline)
        throw new Error(`no tesseract under a worker within 300 s (under an api replica: ${seen.join('; ') || 'none'})${tail(w1)}${tail(w2)}`);
      const st = await call(a.base, `/request-status/${requestId}`);
      if (st.body.status !== 'pending') throw new Error(`the request ended before a tesseract was seen under a worker: ${JSON.stringify(st.body)}`);
      await sleep(50);
    }
    const survivor = victim === w1 ? w2 : w1;
    assert.ok(!seen.length, `tesseract ran under an api replica: ${seen.join('; ')}`);

    // The machine's view of a crash: the worker and its engine processes are gone at once.
    const below = descendants(victim.pid);
    signal(victim.pid, 'SIGKILL');
    orphans.push(...below);
    below.forEach(killSame);
    await until('the killed worker exits', () => victim!.exited, 60_000);
    const killedAt = Date.now();

    // Stalled-job recovery (check ~5 s, lock 10 s) hands it to the survivor; OCR of 4 pages then runs again, one
    // page after another (half an hour allows for a machine ten times slower than a loaded 2-core one).
    const done = await settle(b.base, requestId, 1_800_000);
    assert.is(done.status, 'completed', `after the kill: ${JSON.stringify(done)}${tail(survivor)}`);
    console.log(`scale.test.ts: killed ${victim.name} mid-OCR; the job completed on ${survivor.name} ${((Date.now() - killedAt) / 1000).toFixed(1)} s later`);
    // The survivor counts the job among those it completed (its own counters; the victim's died with it).
    const ranOcr = /quire_job_duration_seconds_count\{operation="\/pdf-with-ocr-text",lane="[^"]+",outcome="completed"\} 1\n/;
    let metrics = '';
    const jobCounts = () => metrics.split('\n').filter((l) => l.startsWith('quire_job_duration_seconds_count'));
    await until(
      `${survivor.name} counts the OCR job completed`,
      async () => ranOcr.test((metrics = await (await fetch(`${survivor.base}/metrics`)).text())),
      60_000,
    ).catch((err) => assert.unreachable(`${err.message}; its job counts: ${jobCounts().join('; ') || 'none'}`));
    assert.ok(!survivor.exited, `${survivor.name} is still running`);

    // Nothing stored is lost: the input is still there, the output is on the shared disk and reads with OCR text.
    assert.type(done.inputId, 'string');
    assert.is((await call(b.base, `/resource/${done.inputId}?format=info`)).status, 200, 'the input survived');
    const outputId = done.outputId as string;
    assert.type(outputId, 'string', JSON.stringify(done));
    assert.ok(existsSync(join(data, 'resources', outputId)));
    const out = await download(b.base, outputId);
    assert.is(Number(tool('qpdf', ['--show-npages', out]).trim()), 4);
    const text = tool('pdftotext', [out, '-']);
    assert.match(text, /LinnSequencer/i, `OCR text of the scan: ${text.slice(0, 200)}`);
    assert.match(text, /sequencer/i);
  });

  // Everything the test does before the records expire (an upload, a read, a split through the worker: under
  // 0.5 s here on a loaded 2-core machine) fits many times in the TTL even ten times slower; the expiry and the
  // sweep (every TTL/4) are then awaited.
  const TTL_S = 30;
  test(`RESOURCE_TTL_SECONDS=${TTL_S}: Redis expires the records (404) and the sweep removes the bytes`, async () => {
    // A separate Redis, api and worker: the short TTL must not touch the cluster above.
    const redis = await startRedisIn('redis-ttl');
    const data = join(tmp, 'data-ttl');
    mkdirSync(data);
    const env = (role: string) => ({ REDIS_URL: redis.url, ROLE: role, DATA_DIR: data, RESOURCE_TTL_SECONDS: String(TTL_S) });
    const [api, worker] = await Promise.all([startQuire('api-ttl', env('api')), startQuire('worker-ttl', env('worker'))]);

    const id = await upload(api.base, FED);
    assert.ok(existsSync(join(data, 'resources', id)), 'bytes stored');
    const fresh = await call(api.base, `/resource/${id}?format=info`);
    assert.is(fresh.status, 200, 'readable before it expires');
    // An output written by the worker expires the same way.
    const split = await postFile(api.base, '/split-pdf', FED, { pages: '1' });
    assert.is(split.status, 200, JSON.stringify(split.body));
    const outputId = (split.body.outputId as string[])[0];
    assert.is((await call(api.base, `/resource/${outputId}?format=info`)).status, 200, 'the output is readable before it expires');
    const ids = [id, outputId, split.body.inputId as string];

    // Each was recorded before now, so expires within TTL_S from here.
    for (const x of ids) {
      await until(`record ${x} expires (404)`, async () => (await call(api.base, `/resource/${x}?format=info`)).status === 404, (TTL_S + 60) * 1000);
    }
    const waited = await until(
      `bytes of ${ids.join(', ')} removed from DATA_DIR/resources`,
      () => ids.every((x) => !existsSync(join(data, 'resources', x))),
      (TTL_S / 4 + 60) * 1000,
    );
    if (waited > (TTL_S / 4 + 5) * 1000) console.log(`scale.test.ts: expired bytes removed ${(waited / 1000).toFixed(1)} s after the records`);
    assert.is((await fetch(`${api.base}/resource/${outputId}?format=file`)).status, 404);
    await Promise.all([stop(worker), stop(api)]);
    await stop(redis.proc, 5000);
  });

  test.run();
}
