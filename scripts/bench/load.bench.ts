// The service under load and attack, against a real server process (node + tsx, default settings):
// 1. /pdf-info latency (15-page PDF) idle vs while 2 OCR jobs and 2 office conversions run, p50/p95.
// 2. Throughput of a mixed workload (pdf-info, png at 72 dpi, split, office, OCR), all sent at once, vs the
//    same jobs one after another (what a CONCURRENCY=1 FIFO server does: each job waits for the previous).
// 3. How long a hostile HTML (endless script), PostScript (endless loop) and a PDF whose stream inflates to
//    2 GB occupy the service before they are cut, with default limits.
// Run: npm run bench -- load
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pdfFromObjects, zerosZlib } from '../../test/fixtures.js';

const CORPUS = resolve(process.env.QUIRE_CORPUS ?? '../shared/corpus');
const c = (rel: string) => join(CORPUS, rel);
const work = mkdtempSync(join(tmpdir(), 'qbench-load-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

async function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

async function startServer(env: Record<string, string> = {}): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: mkdtempSync(join(work, 'data-')), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${base}/up`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { base, child };
    await sleep(100);
  }
  throw new Error('server did not start');
}

async function post(
  base: string,
  path: string,
  file: string | { bytes: Buffer; name: string },
  fields: Record<string, string> = {},
): Promise<{ status: number; ms: number; body: Record<string, unknown> }> {
  const fd = new FormData();
  if (typeof file === 'string') fd.append('file', new Blob([readFileSync(file)]), basename(file));
  else fd.append('file', new Blob([file.bytes]), file.name);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const t = process.hrtime.bigint();
  const res = await fetch(`${base}${path}`, { method: 'POST', body: fd });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, ms: ms(t), body };
}

const INFO = c('pdf/federal-register-15-pages.pdf');
const SCAN = c('scans/linn-scan-4-orientations.pdf');
const DOC = c('office/poi-SampleDoc.docx');
const info = (base: string) => post(base, '/pdf-info', INFO, { queries: 'page_count,title,uses_embedded_fonts,contains_annotations' });
const ocr = (base: string) => post(base, '/pdf-with-ocr-text', SCAN);
const office = (base: string) => post(base, '/pdf', DOC);

async function latency(base: string, n: number): Promise<{ info: number[]; up: number[] }> {
  const out = { info: [] as number[], up: [] as number[] };
  for (let i = 0; i < n; i++) {
    const r = await info(base);
    if (r.status !== 200) throw new Error(`pdf-info ${r.status}`);
    out.info.push(r.ms);
    // /up does no work: its latency is the server's event loop (and network) alone.
    const t = process.hrtime.bigint();
    await fetch(`${base}/up`);
    out.up.push(ms(t));
  }
  return out;
}

/** A PDF whose one content stream inflates to `mb` MB of zeros (Flate). */
const inflatingPdf = (mb: number) =>
  pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    ['<< /Filter /FlateDecode >>', zerosZlib(mb * 1024 * 1024)],
  ]);

async function main() {
  const { base, child } = await startServer();
  try {
    // Warm the pools (LibreOffice instance, Tesseract data in the page cache) so idle figures are steady.
    await Promise.all([office(base), ocr(base), info(base)]);

    const idle = await latency(base, 30);
    let loading = true;
    const heavy = async (fn: () => Promise<unknown>) => {
      while (loading) await fn();
    };
    const loaders = [heavy(() => ocr(base)), heavy(() => ocr(base)), heavy(() => office(base)), heavy(() => office(base))];
    await sleep(1500);
    const loaded = await latency(base, 30);
    loading = false;
    await Promise.all(loaders);
    const [i50, i95, l50, l95] = [pct(idle.info, 50), pct(idle.info, 95), pct(loaded.info, 50), pct(loaded.info, 95)];
    console.log(`| /pdf-info (15 pages) p50 / p95, idle | ${i50.toFixed(0)} / ${i95.toFixed(0)} ms (/up p95 ${pct(idle.up, 95).toFixed(1)} ms) |`);
    console.log(
      `| same while 2 OCR + 2 office jobs run | ${l50.toFixed(0)} / ${l95.toFixed(0)} ms (p95 ${(l95 / i95).toFixed(2)}x idle; goal <= 3x; /up p95 ${pct(loaded.up, 95).toFixed(1)} ms) |`,
    );

    // Mixed workload: 4 rounds of 5 kinds, 20 jobs.
    const kinds: Array<[string, () => Promise<{ status: number }>]> = [
      ['pdf-info', () => info(base)],
      ['png 72 dpi', () => post(base, '/png', c('pdf/text-4-pages-pdflatex.pdf'), { resolution: '72' })],
      ['split', () => post(base, '/split-pdf', INFO, { pages: '1-5' })],
      ['office', () => office(base)],
      ['ocr', () => ocr(base)],
    ];
    const mixed = Array.from({ length: 4 }, () => kinds).flat();
    let t = process.hrtime.bigint();
    for (const [, fn] of mixed) await fn();
    const fifo = ms(t);
    t = process.hrtime.bigint();
    const statuses = await Promise.all(mixed.map(([, fn]) => fn().then((r) => r.status)));
    const lanes = ms(t);
    if (statuses.some((s) => s !== 200)) throw new Error(`mixed: ${statuses.join(',')}`);
    console.log(
      `| mixed workload, 20 jobs (pdf-info, png 72 dpi, split, office, OCR): one at a time (CONCURRENCY=1 FIFO) vs all at once | ${(fifo / 1000).toFixed(1)} vs ${(lanes / 1000).toFixed(1)} s (${(fifo / lanes).toFixed(2)}x throughput) |`,
    );

    // Hostile inputs with default limits: how long each holds a slot, and whether /up stays responsive meanwhile.
    const bomb = inflatingPdf(2048);
    const hostile: Array<[string, () => Promise<{ status: number; ms: number; body: Record<string, unknown> }>]> = [
      [
        'HTML endless script',
        () => post(base, '/pdf', { bytes: Buffer.from('<html><body><p>x</p><script>for(;;){}</script></body></html>'), name: 'loop.html' }),
      ],
      ['PostScript endless loop', () => post(base, '/pdf', { bytes: Buffer.from('%!PS\n{ 1 pop } loop\n'), name: 'loop.ps' })],
      ['pdf-info, stream inflating to 2 GB', () => post(base, '/pdf-info', { bytes: bomb, name: 'bomb.pdf' }, { queries: 'all' })],
    ];
    for (const [name, fn] of hostile) {
      let upWorst = 0;
      let going = true;
      const probe = (async () => {
        while (going) {
          const s = process.hrtime.bigint();
          await fetch(`${base}/up`);
          upWorst = Math.max(upWorst, ms(s));
          await sleep(200);
        }
      })();
      const r = await fn();
      going = false;
      await probe;
      const what = r.status === 200 ? `200 ${String(r.body.warning ?? '').slice(0, 80)}` : `${r.status} ${String(r.body.error).slice(0, 90)}`;
      console.log(`| ${name} | cut after ${(r.ms / 1000).toFixed(1)} s (goal <= 30 s): ${what}; slowest /up meanwhile ${upWorst.toFixed(0)} ms |`);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
