// Cluster mode (REDIS_URL, issue 13) against real processes: a redis-server on a free loopback port and Quire
// processes (node + tsx) in their roles, all measured in this run:
// 1. /pdf-info latency (15 pages), p50 over 50 sequential requests: embedded (no REDIS_URL) vs Redis mode
//    (1 api + 1 worker, the job goes through BullMQ), requests interleaved so both see the same machine.
//    Goal: <= +5 ms p50.
// 2. Throughput of 40 mixed jobs (pdf-info, png 72 dpi, split, office, OCR), 8 in flight, sent to one api
//    process: 1 worker vs 2 worker processes (goal >= 1.7x). Measured twice: workers with default settings
//    (each sees every core), and each worker pinned to one core (taskset; like replicas given `cpus: 1`),
//    where the second worker brings a core of its own.
// Run: npm run bench -- scale
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Proc, REDIS_SERVER, started, startQuire, startRedis, stop } from '../../test/processes.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? join(root, '../shared/corpus'));
const c = (rel: string) => join(CORPUS, rel);
const work = mkdtempSync(join(tmpdir(), 'qbench-scale-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const REDIS = REDIS_SERVER;

async function post(
  base: string,
  path: string,
  file: string,
  fields: Record<string, string> = {},
): Promise<{ status: number; ms: number; body: Record<string, unknown> }> {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const t = process.hrtime.bigint();
  const res = await fetch(`${base}${path}`, { method: 'POST', body: fd });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: res.status, ms: ms(t), body };
}

const INFO = c('pdf/federal-register-15-pages.pdf');
const SCAN = c('scans/linn-scan-4-orientations.pdf');
const DOC = c('office/poi-SampleDoc.docx');
const info = (base: string) => post(base, '/pdf-info', INFO, { queries: 'page_count,title,uses_embedded_fonts,contains_annotations' });
const kinds: Array<[string, (base: string) => ReturnType<typeof post>]> = [
  ['pdf-info', info],
  ['png 72 dpi', (b) => post(b, '/png', c('pdf/text-4-pages-pdflatex.pdf'), { resolution: '72' })],
  ['split', (b) => post(b, '/split-pdf', INFO, { pages: '1-5' })],
  ['office', (b) => post(b, '/pdf', DOC)],
  ['ocr', (b) => post(b, '/pdf-with-ocr-text', SCAN)],
];

/** Runs `jobs` with at most `inFlight` requests open; returns the wall time and the non-200 answers. */
async function throughput(base: string, jobs: typeof kinds, inFlight: number): Promise<{ s: number; failed: string[] }> {
  const failed: string[] = [];
  let next = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < jobs.length) {
        const [name, fn] = jobs[next++];
        const r = await fn(base);
        if (r.status !== 200) failed.push(`${name} ${r.status} ${String(r.body.error ?? '').slice(0, 80)}`);
      }
    }),
  );
  return { s: ms(t) / 1000, failed };
}

/** Every kind twice, all at once: LibreOffice instances started, Tesseract data and fonts in the page cache. */
const warm = (base: string) => throughput(base, [...kinds, ...kinds], 10);

async function main() {
  if (!REDIS) {
    console.log('| scale | skipped: redis-server not installed (Debian package redis-server) |');
    return;
  }
  try {
    const redisUrl = (await startRedis(work)).url;
    const shared = mkdtempSync(join(work, 'shared-'));
    const cluster = (role: string) => ({ REDIS_URL: redisUrl, ROLE: role, DATA_DIR: shared });

    // 1. Added latency of Redis mode for a light request.
    const embedded = await startQuire('embedded', { DATA_DIR: mkdtempSync(join(work, 'embedded-')) });
    const api = await startQuire('api', cluster('api'));
    let workers = [await startQuire('worker-1', cluster('worker'))];
    for (let i = 0; i < 5; i++) await Promise.all([info(embedded.base), info(api.base)]);
    const lat = { embedded: [] as number[], redis: [] as number[] };
    for (let i = 0; i < 50; i++) {
      const e = await info(embedded.base);
      const r = await info(api.base);
      if (e.status !== 200 || r.status !== 200) throw new Error(`pdf-info ${e.status} / ${r.status}: ${JSON.stringify(r.body)}`);
      lat.embedded.push(e.ms);
      lat.redis.push(r.ms);
    }
    await stop(embedded);
    const [e50, r50] = [pct(lat.embedded, 50), pct(lat.redis, 50)];
    console.log(
      `| /pdf-info (15 pages), p50 of 50 sequential requests: embedded vs Redis mode (1 api + 1 worker, BullMQ) | ${e50.toFixed(1)} vs ${r50.toFixed(1)} ms (${r50 - e50 >= 0 ? '+' : ''}${(r50 - e50).toFixed(1)} ms; goal <= +5 ms; p95 ${pct(lat.embedded, 95).toFixed(1)} vs ${pct(lat.redis, 95).toFixed(1)} ms) |`,
    );

    // 2. Throughput, 40 mixed jobs, 8 in flight: 1 worker vs 2.
    const mixed = Array.from({ length: 8 }, () => kinds).flat();
    const compare = async (label: string, start: (n: number) => Promise<Proc>) => {
      for (const w of workers) await stop(w);
      workers = [await start(1)];
      await warm(api.base);
      const one = await throughput(api.base, mixed, 8);
      workers.push(await start(2));
      await warm(api.base);
      const two = await throughput(api.base, mixed, 8);
      const bad = [...one.failed, ...two.failed];
      console.log(
        `| 40 mixed jobs (pdf-info, png 72 dpi, split, office, OCR), 8 in flight, one api: 1 vs 2 worker processes, ${label} | ${one.s.toFixed(1)} vs ${two.s.toFixed(1)} s (${(one.s / two.s).toFixed(2)}x throughput; goal >= 1.7x)${bad.length ? `; ${bad.length} failed: ${bad.slice(0, 3).join('; ')}` : ''} |`,
      );
    };
    const cores = availableParallelism();
    await compare(`default settings (each worker sees all ${cores} cores)`, (n) => startQuire(`worker-${n}`, cluster('worker')));
    if (cores >= 2 && spawnSync('taskset', ['-V']).status === 0) {
      await compare('each worker pinned to its own core (taskset; a `cpus: 1` replica)', (n) =>
        startQuire(`pinned-${n}`, cluster('worker'), { cpus: String(n - 1) }),
      );
    }
    for (const w of workers) await stop(w);
    await stop(api);
  } finally {
    for (const p of [...started].reverse()) await stop(p);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
