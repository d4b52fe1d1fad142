// Fault campaign (issue 39 part 4): each fault injected for real into running Quire processes (node + tsx, as in
// production), and per fault what the client saw (status and message), the time from the fault to that true
// status, and what was left on disk or in the bucket. Faults: kill -9 of LibreOffice's soffice.bin and of
// Chromium between and during jobs; a 40 MB tmpfs DATA_DIR filled by an upload and by a render; the same tmpfs
// remounted read-only; the S3 server (s3rver, a test double run as its own process) killed in the middle of an
// upload, frozen (SIGSTOP) during one, killed before a fetch; Redis restarted under a cluster-mode server with jobs
// in flight; SIGTERM and kill -9 during polled jobs.
// Needs root for the mounts (those rows say so otherwise). Run: npm run bench -- faults (FAULTS=<word> runs only
// the faults whose name contains it).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { crash, descendants, freePort, killSame, type Proc, type ProcEntry, REDIS_SERVER, redisPing, started, startQuire, stop } from '../../test/processes.js';
import { sleep, until } from '../../test/waiting.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? join(root, '../shared/corpus'));
const c = (rel: string) => join(CORPUS, rel);
const DOCX = c('office/gotenberg-pages_3.docx');
const REGISTER = c('pdf/federal-register-15-pages.pdf');
const MINIMAL = c('pdf/text-minimal-pdflatex.pdf');
const SCAN = c('scans/linn-scan-4-orientations.pdf');
const PAGE_SCAN = c('scans/huckleberry-finn-p22-scan.pdf');
const MB = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'qbench-faults-'));
const only = process.env.FAULTS;

interface Row {
  fault: string;
  saw: string;
  seconds: string;
  left: string;
}
const rows: Row[] = [];
const row = (fault: string, saw: string, seconds: number | string, left: string) => {
  const r = { fault, saw, seconds: typeof seconds === 'number' ? seconds.toFixed(1) : seconds, left };
  rows.push(r);
  console.log(`| ${r.fault} | ${r.saw} | ${r.seconds} | ${r.left} |`);
};

interface Answer {
  status: number;
  body: Record<string, any>;
  /** When the answer arrived (ms since epoch). */
  at: number;
}
type Part = string | { file: string; name?: string } | { bytes: Buffer; name: string };

/** POST a multipart form; the answer and when it came. A request that gets no answer within `limitMs` reads as status 0. */
async function form(
  base: string,
  path: string,
  fields: Record<string, Part | Part[]>,
  headers: Record<string, string> = {},
  limitMs = 600_000,
): Promise<Answer> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields))
    for (const item of Array.isArray(v) ? v : [v]) {
      if (typeof item === 'string') fd.append(k, item);
      else if ('file' in item) fd.append(k, new Blob([new Uint8Array(readFileSync(item.file))]), item.name ?? basename(item.file));
      else fd.append(k, new Blob([new Uint8Array(item.bytes)]), item.name);
    }
  return send(`${base}${path}`, { method: 'POST', body: fd, headers }, limitMs);
}
async function send(url: string, init: RequestInit, limitMs = 600_000): Promise<Answer> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(limitMs) });
    const body = (await res.json().catch(() => ({}))) as Record<string, any>;
    return { status: res.status, body, at: Date.now() };
  } catch (err) {
    return { status: 0, body: { error: `no answer: ${(err as Error).message}` }, at: Date.now() };
  }
}
const json = (base: string, path: string, body: unknown, headers: Record<string, string> = {}, limitMs?: number) =>
  send(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }, limitMs);
const get = (base: string, path: string) => send(`${base}${path}`, {});
/** "200", or "507 The request could not be stored..." (messages shortened to the first 110 characters). */
const saw = (a: Answer) => (a.status === 200 ? '200' : `${a.status || 'none'} ${firstSentence(String(a.body.error ?? ''))}`);
/** A client message up to its first full stop (the rest says what to do about it), at most 150 characters. */
const firstSentence = (text: string) => (/^.*?\.(?=\s|$)/.exec(text)?.[0] ?? text).slice(0, 150);
const since = (t0: number, a: Answer | number) => ((typeof a === 'number' ? a : a.at) - t0) / 1000;

/** What a DATA_DIR holds: resource files, `.part` files, index records, job dirs. */
function leftIn(dataDir: string): string {
  const list = (d: string) => (existsSync(d) ? readdirSync(d) : []);
  const files = list(join(dataDir, 'resources'));
  const records = list(join(dataDir, 'index'))
    .filter((f) => /^[0-9a-f]{2}\.json$/.test(f))
    .reduce((n, f) => n + Object.keys(JSON.parse(readFileSync(join(dataDir, 'index', f), 'utf8'))).length, 0);
  const jobs = list(join(dataDir, 'work')).filter((n) => !n.startsWith('.'));
  const parts = files.filter((f) => f.endsWith('.part')).length;
  return `${files.length - parts} stored, ${records} recorded, ${parts} partial, ${jobs.length} job dirs`;
}

/** Processes of a server, by what they are. */
const soffices = (p: Proc) => descendants(p.pid).filter((e) => e.comm === 'soffice.bin');
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};
/** Chromium's browser processes (no --type=): killing one ends every page of it, as a crash does. */
const browsers = (p: Proc) => descendants(p.pid).filter((e) => /chrom/i.test(cmdline(e.pid)) && !cmdline(e.pid).includes('--type='));
const renderers = (p: Proc) => descendants(p.pid).filter((e) => cmdline(e.pid).includes('--type=renderer'));
function cpuTicks(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
/** Waits until one of `candidates` is busy (50 ms of CPU between two looks), kills `victim` of it, and returns when. */
async function killWhenBusy(candidates: () => ProcEntry[], victims: () => ProcEntry[], settled: () => boolean): Promise<number | undefined> {
  const seen = new Map<number, number>();
  let at: number | undefined;
  await until(
    'an engine process at work',
    () => {
      if (settled()) return true;
      for (const e of candidates()) {
        const before = seen.get(e.pid);
        const now = cpuTicks(e.pid);
        seen.set(e.pid, now);
        if (before !== undefined && now - before >= 5) {
          at = Date.now();
          victims().forEach(killSame);
          return true;
        }
      }
      return false;
    },
    300_000,
  );
  return at;
}

const env = (dataDir: string, more: Record<string, string> = {}) => ({ DATA_DIR: dataDir, LOG_LEVEL: 'error', ...more });

async function libreOffice() {
  const dataDir = join(work, 'office');
  const q = await startQuire('office', env(dataDir, { OFFICE_INSTANCES: '1', OFFICE_MAX_PAGES: '100000' }));
  try {
    await form(q.base, '/pdf', { file: { file: DOCX } });
    soffices(q).forEach(killSame);
    let t0 = Date.now();
    let a = await form(q.base, '/pdf', { file: { file: DOCX } });
    row('LibreOffice: kill -9 of soffice.bin between jobs, then a .docx to /pdf', saw(a), since(t0, a), leftIn(dataDir));
    // A document long enough that the kill lands while soffice converts it (longer until one does).
    for (let n = 16_000; n <= 512_000; n *= 2) {
      const rtf = join(work, `long-${n}.rtf`);
      writeFileSync(
        rtf,
        `{\\rtf1\\ansi\n${Array.from({ length: n }, (_, i) => `Paragraph ${i} of a long generated document, wrapping onto a second line.\\par\n`).join('')}}`,
      );
      let settled = false;
      const pending = form(q.base, '/pdf', { file: { file: rtf } }).finally(() => (settled = true));
      const killed = await killWhenBusy(
        () => soffices(q),
        () => soffices(q),
        () => settled,
      );
      a = await pending;
      if (!killed) continue;
      t0 = killed;
      // The same conversion undisturbed, for what the rerun on a fresh instance cost.
      const t1 = Date.now();
      const b = await form(q.base, '/pdf', { file: { file: rtf } });
      row(
        `LibreOffice: kill -9 of soffice.bin during a conversion (${n} paragraphs of RTF; undisturbed: ${saw(b)} in ${since(t1, b).toFixed(1)} s)`,
        `${saw(a)} (run again on a fresh instance)`,
        since(t0, a),
        leftIn(dataDir),
      );
      break;
    }
  } finally {
    await stop(q);
  }
}

async function chromium() {
  const dataDir = join(work, 'chromium');
  const q = await startQuire('chromium', env(dataDir));
  const page = (text: string, script = '') => ({ bytes: Buffer.from(`<!doctype html><html><body><p>${text}</p>${script}</body></html>`), name: 'page.html' });
  try {
    await form(q.base, '/pdf', { file: page('warm') });
    browsers(q).forEach(killSame);
    let t0 = Date.now();
    let a = await form(q.base, '/pdf', { file: page('after the kill') });
    row('Chromium: kill -9 of the browser between jobs, then an HTML page to /pdf', saw(a), since(t0, a), leftIn(dataDir));
    await form(q.base, '/pdf', { file: page('warm') });
    // The page's script keeps its renderer busy for 8 s whatever the machine: the browser killed then is gone before printing.
    let settled = false;
    const spin = '<script>const end = Date.now() + 8000; while (Date.now() < end) {}</script>';
    const pending = form(q.base, '/pdf', { file: page('printed after all', spin) }).finally(() => (settled = true));
    const killed = await killWhenBusy(
      () => renderers(q),
      () => browsers(q),
      () => settled,
    );
    a = await pending;
    t0 = killed ?? Date.now();
    row(
      'Chromium: kill -9 of the browser during a print (a page script busy 8 s)',
      killed ? `${saw(a)} (printed again on a fresh browser, its 8 s script included)` : `${saw(a)} (printed before the kill)`,
      since(t0, a),
      leftIn(dataDir),
    );
  } finally {
    await stop(q);
  }
}

/** A 40 MB tmpfs for DATA_DIR; undefined (with a row saying why) where the machine cannot mount one. */
function smallDisk(fault: string): string | undefined {
  const mount = mkdtempSync(join(work, 'tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', mount], { stdio: 'pipe' });
    return mount;
  } catch (err) {
    row(fault, `not run: a tmpfs cannot be mounted here (needs root): ${(err as Error).message.split('\n')[0]}`, '-', '-');
    return undefined;
  }
}

async function diskFull() {
  const mount = smallDisk('DATA_DIR full (40 MB tmpfs)');
  if (!mount) return;
  const dataDir = join(mount, 'data');
  const q = await startQuire('disk', env(dataDir, { STORAGE_MIN_FREE_MB: '8' }));
  try {
    const big = { bytes: Buffer.alloc(30 * MB, 7), name: 'a.bin' };
    const t0 = Date.now();
    let a = await form(q.base, '/upload', { file: [big, { ...big, name: 'b.bin' }] });
    row('DATA_DIR full (40 MB tmpfs): one /upload of two 30 MB files', saw(a), since(t0, a), leftIn(dataDir));
    const id = (await form(q.base, '/upload', { file: { file: REGISTER } })).body.files?.[0]?.id;
    mkdirSync(join(mount, 'filler'));
    const s = statfsSync(mount);
    writeFileSync(join(mount, 'filler', 'fill'), Buffer.alloc(Math.max(0, s.bavail * s.bsize - MB)));
    const health = await get(q.base, '/health');
    const t1 = Date.now();
    a = await json(q.base, '/rasterized-pdf', { id, resolution: 300 });
    row(
      `DATA_DIR full (1 MB left): /rasterized-pdf of 15 pages at 300 dpi; /health before it: ${saw(health)}`,
      saw(a),
      since(t1, a),
      `${leftIn(dataDir)} (the input)`,
    );
  } finally {
    await stop(q);
    execFileSync('umount', ['-l', mount]);
  }
}

async function readOnly() {
  const mount = smallDisk('DATA_DIR remounted read-only');
  if (!mount) return;
  const dataDir = join(mount, 'data');
  const q = await startQuire('read-only', env(dataDir, { STORAGE_MIN_FREE_MB: '8' }));
  try {
    const id = (await form(q.base, '/upload', { file: { file: MINIMAL } })).body.files?.[0]?.id;
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    const t0 = Date.now();
    const a = await form(q.base, '/upload', { file: { file: REGISTER } });
    const b = await json(q.base, '/png', { id, resolution: 36 });
    const health = await get(q.base, '/health');
    execFileSync('mount', ['-o', 'remount,rw', mount]);
    const again = await form(q.base, '/upload', { file: { file: REGISTER } });
    row(
      `DATA_DIR remounted read-only under the server: /upload, then /png of a stored file (and /health; /upload once read-write: ${saw(again)})`,
      `${saw(a)}; /png ${saw(b)}; /health ${saw(health)}`,
      since(t0, b),
      `${leftIn(dataDir)} (the first upload, and the last)`,
    );
  } finally {
    await stop(q);
    execFileSync('umount', ['-l', mount]);
  }
}

async function s3Outage() {
  const port = await freePort();
  const s3dir = mkdtempSync(join(work, 's3rver-'));
  const bucket = 'quire-faults';
  const endpoint = `http://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;
  const startS3 = async () => {
    const script = `new (require('s3rver'))({ address: '127.0.0.1', port: ${port}, silent: true, directory: ${JSON.stringify(s3dir)}, configureBuckets: [{ name: '${bucket}', configs: [] }] }).run().then(() => console.log('listening'));`;
    const child = spawn(process.execPath, ['-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok) => child.stdout!.on('data', (d) => String(d).includes('listening') && ok()));
    server = child;
  };
  const killS3 = async () => {
    const child = server!;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const objects = async () => ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'resources/' }))).Contents ?? []).map((o) => o.Key!);
  const left = async (dataDir: string) => {
    const cache = join(dataDir, 'work', '.cache');
    return `${(await objects()).length} objects in the bucket, ${leftIn(dataDir).split(', ')[1]}, ${existsSync(cache) ? readdirSync(cache).length : 0} cached`;
  };
  await startS3();
  const dataDir = join(work, 's3');
  const s3env = env(dataDir, { S3_BUCKET: bucket, S3_ENDPOINT: endpoint, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' });
  let q = await startQuire('s3', s3env);
  try {
    // Killed mid-upload: 20 MB streamed in 1 MB chunks, the S3 server killed once 12 were sent.
    let sent = 0;
    let t0 = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        if (sent === 12) {
          t0 = Date.now();
          await killS3();
        }
        if (sent++ >= 20) ctl.close();
        else ctl.enqueue(new Uint8Array(MB));
      },
    });
    let a = await send(`${q.base}/upload`, { method: 'POST', headers: { 'content-filename': 'big.bin' }, body, duplex: 'half' } as RequestInit);
    await startS3();
    row('S3 server killed in the middle of a 20 MB streamed /upload (after 12 MB)', saw(a), since(t0, a), await left(dataDir));
    // Frozen (accepts connections, answers nothing) during an upload.
    server!.kill('SIGSTOP');
    t0 = Date.now();
    a = await form(q.base, '/upload', { file: { file: REGISTER } });
    server!.kill('SIGCONT');
    const woken = Date.now();
    const frozenLeft = await left(dataDir);
    const late = (await objects()).length;
    // A request the store had whole before it froze may complete once it is woken: an object without a record,
    // which the server's own orphan sweep (every minute, the second look after 5 s) removes.
    const swept = await until('the bucket is clean', async () => (await objects()).length === 0, 300_000).then(
      () => `; the server's orphan sweep removed ${late ? `it ${since(woken, Date.now()).toFixed(0)} s after` : 'nothing (none)'}`,
      () => '; still there after 300 s',
    );
    row('S3 server frozen (SIGSTOP) during an /upload, then woken', saw(a), since(t0, a), `${frozenLeft} once woken${swept}`);
    // Killed before a fetch: a new process (empty cache) runs a job on a stored id and serves a download.
    const id = (await form(q.base, '/upload', { file: { file: REGISTER } })).body.files?.[0]?.id;
    await stop(q);
    q = await startQuire('s3-again', s3env);
    await killS3();
    t0 = Date.now();
    a = await json(q.base, '/split-pdf', { id, pages: ['1'] });
    const d = await get(q.base, `/resource/${id}?format=file`);
    row(
      'S3 server killed before a fetch: a job on a stored input (not cached), then a download',
      `${saw(a)}; download ${saw(d)}`,
      since(t0, d),
      await left(dataDir).catch(() => 'bucket down'),
    );
    await startS3();
    a = await json(q.base, '/split-pdf', { id, pages: ['1'] });
    row('... the S3 server back: the same job', saw(a), '-', await left(dataDir));
  } finally {
    await stop(q);
    if (server) await killS3();
    s3.destroy();
  }
}

/**
 * Redis killed and started again on the same port under a cluster-mode server with jobs in flight: with an
 * append-only file (as production should run it), and without persistence (it comes back empty).
 */
async function redisRestart() {
  if (!REDIS_SERVER) {
    row('Redis restarted (cluster mode)', 'not run: redis-server is not installed', '-', '-');
    return;
  }
  await redisRestartWith(true);
  await redisRestartWith(false);
  await redisDown();
}

/** Redis gone for 20 s: a light request sent meanwhile, and when it is answered. */
async function redisDown() {
  const port = await freePort();
  const dir = mkdtempSync(join(work, 'redis-'));
  const startRedis = async () => {
    const child = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'], { stdio: 'ignore' });
    await until('redis answers PING', () => redisPing(port), 10_000);
    return child;
  };
  let redis = await startRedis();
  const dataDir = join(work, 'cluster-down');
  const q = await startQuire('cluster-down', env(dataDir, { REDIS_URL: `redis://127.0.0.1:${port}` }));
  try {
    const info = () => form(q.base, '/pdf-info', { file: { file: MINIMAL }, queries: 'page_count' }, {}, 120_000);
    await info();
    const t0 = Date.now();
    redis.kill('SIGKILL');
    const a = await info();
    const downFor = Date.now() - t0;
    await sleep(Math.max(0, 20_000 - downFor));
    const back = Date.now();
    redis = await startRedis();
    // Once Redis is back the server's connection comes back at its next retry (ioredis backs off up to 2 s).
    let next = await info();
    let refused = 0;
    while (next.status !== 200 && Date.now() - back < 30_000) {
      refused++;
      await sleep(250);
      next = await info();
    }
    const when = a.at - back < 0 ? 'while Redis was down' : `${since(back, a).toFixed(1)} s after Redis was back`;
    row(
      'Redis down for 20 s (killed, then started again with its append-only file): a /pdf-info sent at once, then one every 0.25 s once Redis is back',
      `${saw(a)} (${when}); Redis back: ${refused} more refused the same way, then ${saw(next)} ${since(back, next).toFixed(1)} s after`,
      since(t0, a),
      leftIn(dataDir).replace(/, \d+ recorded/, ''),
    );
  } finally {
    await stop(q);
    redis.kill('SIGKILL');
  }
}

async function redisRestartWith(persistent: boolean) {
  const port = await freePort();
  const dir = mkdtempSync(join(work, 'redis-'));
  const persistence = persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  let redis: ChildProcess;
  const startRedis = async () => {
    redis = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence], { stdio: 'ignore' });
    await until('redis answers PING', () => redisPing(port), 10_000);
  };
  await startRedis();
  const dataDir = join(work, `cluster-${persistent}`);
  const q = await startQuire('cluster', env(dataDir, { REDIS_URL: `redis://127.0.0.1:${port}` }));
  try {
    // Two OCR jobs of one page: one the client waits for, one polled; Redis killed while they run, back 2 s later.
    const waited = form(q.base, '/pdf-with-ocr-text', { file: { file: PAGE_SCAN } }, {}, 180_000);
    const polled = await form(q.base, '/pdf-with-ocr-text', { file: { file: PAGE_SCAN } }, { 'Request-Type': 'requestId' });
    await until('OCR at work', () => descendants(q.pid).some((e) => e.comm === 'tesseract'), 120_000);
    const t0 = Date.now();
    redis!.kill('SIGKILL');
    await sleep(2000);
    await startRedis();
    const a = await waited;
    let p: Answer = { status: 0, body: {}, at: 0 };
    await until(
      'the polled job settles',
      async () => {
        p = await get(q.base, `/request-status/${polled.body.requestId}`);
        return p.status !== 200 || p.body.status !== 'pending';
      },
      180_000,
    ).catch(() => undefined);
    const polledSaw = p.status === 200 ? `${p.body.status}${p.body.error ? ` ${p.body.statusCode} ${firstSentence(p.body.error)}` : ''}` : saw(p);
    row(
      `Redis killed (kill -9) under a cluster-mode server with 2 OCR jobs running, back after 2 s ${persistent ? 'with its append-only file' : 'empty (no persistence)'}`,
      `waiting client: ${saw(a)}; polled: ${polledSaw}`,
      since(t0, Math.max(a.at, p.at)),
      leftIn(dataDir).replace(/, \d+ recorded/, ''),
    );
  } finally {
    await stop(q);
    redis!.kill('SIGKILL');
  }
}

async function sigterm() {
  const dataDir = join(work, 'sigterm');
  const grace = 10;
  const q = await startQuire('sigterm', env(dataDir, { STOP_GRACE_SECONDS: String(grace), CPU_BUDGET: '2' }));
  try {
    const polled = await form(q.base, '/pdf-with-ocr-text', { file: { file: SCAN } }, { 'Request-Type': 'requestId' });
    const queued = await form(q.base, '/pdf-with-ocr-text', { file: { file: SCAN } }, { 'Request-Type': 'requestId' });
    await until('OCR at work', () => descendants(q.pid).some((e) => e.comm === 'tesseract'), 120_000);
    // Waited for: a conversion running in LibreOffice's lane, a render queued behind the OCR.
    const office = form(q.base, '/pdf', { file: { file: DOCX } });
    await until('LibreOffice at work', () => soffices(q).length > 0, 120_000);
    const waited = form(q.base, '/png', { file: { file: REGISTER }, resolution: '300' });
    await sleep(500);
    const t0 = Date.now();
    process.kill(q.pid, 'SIGTERM');
    const [o, a] = await Promise.all([office, waited]);
    await until('exit', () => q.exited, 120_000);
    const exitS = since(t0, Date.now());
    const q2 = await startQuire('sigterm-restarted', env(dataDir));
    const p1 = await get(q2.base, `/request-status/${polled.body.requestId}`);
    const p2 = await get(q2.base, `/request-status/${queued.body.requestId}`);
    const text = (s: Answer) => `${s.body.status}${s.body.error ? ` ${s.body.statusCode} ${s.body.error}` : ''}`;
    row(
      `SIGTERM (STOP_GRACE_SECONDS=${grace}) with a polled OCR job running and one queued, a /pdf of a .docx running and a /png queued; exit after ${exitS.toFixed(1)} s, ${q.log.find((l) => l.startsWith('[exited')) ?? ''}`,
      `waited for, running: ${saw(o)}; waited for, queued: ${saw(a)}; polled, after a restart: running ${text(p1)}; queued ${text(p2)}`,
      `running ${since(t0, o).toFixed(1)} (its result), queued ${since(t0, a).toFixed(1)}; polled: written by the exit, ${exitS.toFixed(1)}`,
      leftIn(dataDir),
    );
    await stop(q2);
  } finally {
    await stop(q);
  }
}

async function kill9() {
  const dataDir = join(work, 'kill9');
  let q = await startQuire('kill9', env(dataDir, { CPU_BUDGET: '2' }));
  try {
    const done = await form(q.base, '/pdf-info', { file: { file: MINIMAL }, queries: 'page_count' }, { 'Request-Type': 'requestId' });
    const running = await form(q.base, '/pdf-with-ocr-text', { file: { file: SCAN } }, { 'Request-Type': 'requestId' });
    const queued = await form(q.base, '/pdf-with-ocr-text', { file: { file: SCAN } }, { 'Request-Type': 'requestId' });
    await until('OCR at work', () => descendants(q.pid).some((e) => e.comm === 'tesseract'), 120_000);
    await crash(q);
    const t0 = Date.now();
    q = await startQuire('kill9-restarted', env(dataDir));
    const up = Date.now();
    const answers = await Promise.all([done, running, queued].map((r) => get(q.base, `/request-status/${r.body.requestId}`)));
    const text = (s: Answer) => `${s.status} ${s.body.status}${s.body.error ? ` ${s.body.statusCode} ${s.body.error}` : ''}`;
    row(
      `kill -9 of the server (and its engines) with polled jobs finished, running (OCR) and queued; restarted (${since(t0, up).toFixed(1)} s to answer /up)`,
      `finished: ${text(answers[0])}; running: ${text(answers[1])}; queued: ${text(answers[2])}`,
      `${since(up, Math.max(...answers.map((x) => x.at))).toFixed(1)} after the restart`,
      `${leftIn(dataDir)} (the uploads of the three, the job dirs swept at start)`,
    );
  } finally {
    await stop(q);
  }
}

const FAULTS: [string, () => Promise<void>][] = [
  ['libreoffice', libreOffice],
  ['chromium', chromium],
  ['disk-full', diskFull],
  ['read-only', readOnly],
  ['s3', s3Outage],
  ['redis', redisRestart],
  ['sigterm', sigterm],
  ['kill9', kill9],
];

console.log('| fault | what the client saw | fault to true status (s) | left on disk / in the bucket |');
console.log('|---|---|---|---|');
try {
  for (const [name, run] of FAULTS) {
    if (only && !name.includes(only)) continue;
    await run().catch((err) => row(name, `bench failed: ${(err as Error).message.split('\n')[0]}`, '-', '-'));
  }
} finally {
  for (const p of [...started].reverse()) await stop(p);
  rmSync(work, { recursive: true, force: true });
}
console.log('\nAll faults:\n');
console.log('| fault | what the client saw | fault to true status (s) | left on disk / in the bucket |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.fault} | ${r.saw} | ${r.seconds} | ${r.left} |`);
