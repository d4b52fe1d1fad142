// The real-world campaign (issue 24): damaged, fuzzed and odd PDFs against a real server process, judged by what
// the reference tools make of the same files in the same run.
// - Files: every PDF of <corpus>/realworld-qpdf (QUIRE_CORPUS, default ../shared/corpus) plus every PDF of each
//   folder (or each file) given on the command line.
// - Requests, at most 2 at a time (2 cores): /pdf-info (every query), /png (72 dpi, page 1: `1-3` is a 400 on a
//   1-page file), /extracted-text, /word, /pdfa (output_type=PDF/A-2b, the one required field), /compressed-pdf
//   (medium). Per request: status, seconds, and the error text of non-200 answers. REALWORLD_OPS=wide adds every
//   other operation that takes one PDF (32 more); a refusal that is the operation's own precondition (every page
//   blank, no form, a signed file that does not read) is counted apart.
// - References, 20 s each: Poppler (pdfinfo, pdftoppm page 1 at 30 dpi, pdftotext -l 3), MuPDF (mutool info,
//   mutool draw page 1 as PNG and as text), qpdf (--show-npages, --check, --requires-password). A file is readable
//   when pdftoppm or mutool draw wrote a non-empty image (exit codes alone lie: MuPDF exits 1 on recovered errors).
// - Meanwhile: GET /up every 250 ms (its latency is the server's event loop) and the summed RSS of the server's
//   process tree (server and every descendant, shared pages counted per process) every 500 ms.
// - Then a stalled lane: two polled /png (Request-Type: requestId) of a page every renderer spins on (a tiling
//   pattern of 0.01 pt cells), and right behind them an ordinary /png from another client (source address
//   127.0.0.2) and one from the same client: how long each waits, and how the spinning jobs end.
// - Goal: no 5xx, no dropped connection, no answer over 60 s, no 4xx for a file a reference reads (other than 401
//   for a file that needs a password; 422 limits count, listed apart), /up max under 2 s, the other client's
//   ordinary /png behind the spinning ones answered within 30 s. Exits 0 either way.
// Run: npm run bench -- realworld [folder...]   (QUIRE_URL=http://host:port uses that server instead of starting one)
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { PDF_INFO_QUERIES as QUERIES } from '../../app/document/index.js';
import { tinyTiles } from '../../test/fixtures.js';

const CORPUS = resolve(process.env.QUIRE_CORPUS ?? '../shared/corpus');
const work = mkdtempSync(join(tmpdir(), 'qbench-realworld-'));
const now = () => process.hrtime.bigint();
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));
const secs = (n: number) => (n / 1000).toFixed(1);
const SLOW_MS = 60_000;

/** name, path, fields; and the refusals that are the operation's own precondition (no form to export), not a refusal of a readable file. */
type Endpoint = [name: string, path: string, fields: Record<string, string>, own?: RegExp];

const CORE: Endpoint[] = [
  ['pdf-info', '/pdf-info', { queries: QUERIES.join(',') }],
  ['png', '/png', { resolution: '72', pages: '1' }],
  ['text', '/extracted-text', {}],
  ['word', '/word', {}],
  ['pdfa', '/pdfa', { output_type: 'PDF/A-2b' }],
  ['compress', '/compressed-pdf', { compression_level: 'medium' }],
];

/** REALWORLD_OPS=wide: every other operation that takes one PDF, with its required fields. */
const WIDE: Endpoint[] = [
  ['markdown', '/markdown', {}],
  ['split', '/split-pdf', { pages: '1' }],
  ['rotate', '/rotated-pdf', { rotation: '90' }],
  ['reorder', '/reordered-pdf', { pages: 'last-1' }],
  ['watermark', '/watermarked-pdf', { watermark_text: 'DRAFT' }],
  ['numbers', '/pdf-with-page-numbers', {}],
  ['add-text', '/pdf-with-added-text', { text_objects: JSON.stringify([{ font: 'Helvetica', text: 'Hi', page: 1, x: 10, y: 10, text_size: 12 }]) }],
  [
    'boxes',
    '/pdf-with-page-boxes-set',
    { boxes: JSON.stringify({ boxes: [{ box: 'crop', pages: [{ range: '1', left: 10, top: 10, bottom: 10, right: 10 }] }] }) },
  ],
  ['redact-view', '/pdf-with-redacted-text-preview', { redactions: JSON.stringify([{ type: 'regex', value: '[0-9]+' }]) }],
  ['forms-flat', '/flattened-forms-pdf', {}],
  ['annots-flat', '/flattened-annotations-pdf', {}],
  ['transp-flat', '/flattened-transparencies-pdf', {}],
  ['encrypt', '/encrypted-pdf', { new_open_password: 'Secret-1' }, /has a permissions password: send it as current_permissions_password/],
  ['pdfx', '/pdfx', { output_type: 'PDF/X-4' }],
  ['colors', '/pdf-with-converted-colors', { color_profile: 'srgb' }],
  ['n-up', '/n-up-pdf', { pages_per_sheet: '4' }],
  ['resize', '/resized-pdf', { page_size: 'A4' }],
  ['sanitize', '/sanitized-pdf', {}],
  ['tdm', '/tdm-reserved-pdf', {}],
  ['linearize', '/linearized-pdf', {}],
  ['raster', '/rasterized-pdf', {}],
  ['postscript', '/postscript', {}],
  ['excel', '/excel', {}],
  ['powerpoint', '/powerpoint', {}],
  ['images', '/extracted-images', {}],
  ['separate', '/separated-pdf', {}],
  ['deskew', '/deskewed-pdf', {}],
  ['jpg', '/jpg', { pages: '1', resolution: '36' }],
  ['tif', '/tif', { pages: '1', resolution: '36' }],
  ['no-blanks', '/pdf-without-blank-pages', {}, /every page is blank/],
  ['signatures', '/pdf-signatures', {}, /a repaired copy would not hold the bytes that were signed/],
  ['form-data', '/exported-form-data', { data_format: 'xfdf' }, /has no form fields to export/],
];

const ENDPOINTS: Endpoint[] = process.env.REALWORLD_OPS === 'wide' ? [...CORE, ...WIDE] : CORE;

/** Every .pdf under each folder (a file argument is taken as it is), named relative to the folder's parent. */
function inputs(args: string[]): Array<{ path: string; name: string }> {
  return args.flatMap((a) => {
    const root = resolve(a);
    if (statSync(root).isFile()) return [{ path: root, name: basename(root) }];
    return (readdirSync(root, { recursive: true }) as string[])
      .filter((n) => /\.pdf$/i.test(n) && statSync(join(root, n)).isFile())
      .sort()
      .map((n) => ({ path: join(root, n), name: relative(resolve(root, '..'), join(root, n)) }));
  });
}

// ---- references ----
type Tool = { code: number | null; out: string };
/** No shell; killed at 20 s; stderr can be megabytes of warnings on these files, hence the large buffer. */
const tool = (cmd: string, args: string[], cwd: string) =>
  new Promise<Tool>((res) =>
    execFile(cmd, args, { cwd, timeout: 20_000, killSignal: 'SIGKILL', maxBuffer: 1 << 30 }, (err, out) =>
      res({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, out: String(out ?? '') }),
    ),
  );
const nonEmpty = (p: string) => {
  try {
    return statSync(p).size > 0;
  } catch {
    return false;
  }
};
const chars = (s: string) => s.replace(/\s+/g, '').length;
const num = (m: RegExpExecArray | null) => (m ? Number(m[1]) : null);

type Ref = {
  pages: [number | null, number | null, number | null];
  poppler: boolean;
  mupdf: boolean;
  text: [number, number];
  check: number | null;
  password: boolean;
};

async function reference(file: string, dir: string): Promise<Ref> {
  mkdirSync(dir);
  const pdfinfo = await tool('pdfinfo', [file], dir);
  await tool('pdftoppm', ['-r', '30', '-f', '1', '-l', '1', '-png', file, join(dir, 'p')], dir);
  const ptext = await tool('pdftotext', ['-l', '3', file, '-'], dir);
  const minfo = await tool('mutool', ['info', file], dir);
  await tool('mutool', ['draw', '-q', '-r', '30', '-o', join(dir, 'm.png'), file, '1'], dir);
  const mtext = await tool('mutool', ['draw', '-q', '-F', 'txt', '-o', '-', file, '1'], dir);
  const npages = await tool('qpdf', ['--show-npages', file], dir);
  const check = await tool('qpdf', ['--check', file], dir);
  const password = (await tool('qpdf', ['--requires-password', file], dir)).code === 0;
  return {
    pages: [
      pdfinfo.code === 0 ? num(/^Pages:\s+(\d+)/m.exec(pdfinfo.out)) : null,
      num(/^Pages:\s+(\d+)/m.exec(minfo.out)),
      npages.code === 0 || npages.code === 3 ? num(/^(\d+)\s*$/m.exec(npages.out)) : null,
    ],
    poppler: readdirSync(dir).some((n) => /^p-\d+\.png$/.test(n) && nonEmpty(join(dir, n))),
    mupdf: nonEmpty(join(dir, 'm.png')),
    text: [ptext.code === 0 ? chars(ptext.out) : 0, chars(mtext.out)],
    check: check.code,
    password,
  };
}

// ---- server ----
async function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

async function startServer(log: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: mkdtempSync(join(work, 'data-')), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.pipe(createWriteStream(log));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
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

/** Summed VmRSS (kB) of a process and all its descendants, through /proc/<pid>/task/<tid>/children. */
function treeRssKb(pid: number): number {
  let kb = 0;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop()!;
    try {
      kb += num(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))) ?? 0;
      for (const t of readdirSync(`/proc/${p}/task`)) {
        todo.push(...readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      }
    } catch {
      /* ended between two reads */
    }
  }
  return kb;
}

type Answer = { status: number; ms: number; error: string };

async function post(base: string, path: string, file: string, fields: Record<string, string>): Promise<Answer> {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const t = now();
  try {
    const res = await fetch(`${base}${path}`, { method: 'POST', body: fd });
    const text = await res.text();
    if (res.status === 200) return { status: 200, ms: ms(t), error: '' };
    let error = text;
    try {
      error = String(JSON.parse(text).error ?? text);
    } catch {
      /* not JSON: the raw text */
    }
    return { status: res.status, ms: ms(t), error: error.slice(0, 300) };
  } catch (err) {
    const e = err as Error & { cause?: Error };
    return { status: 0, ms: ms(t), error: `no answer: ${e.cause?.message ?? e.message}` };
  }
}

/** Runs the tasks with at most `n` at a time, in order. */
async function pool<T>(tasks: Array<() => Promise<T>>, n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]();
      }
    }),
  );
  return out;
}

/** A multipart POST from a chosen source address (another client, as the server's fairness sees it). */
function postFrom(localAddress: string, base: string, path: string, file: string, fields: Record<string, string>): Promise<Answer> {
  const boundary = `----quire${Date.now()}`;
  const part = (head: string, body: Buffer) => Buffer.concat([Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`), body, Buffer.from('\r\n')]);
  const body = Buffer.concat([
    ...Object.entries(fields).map(([k, v]) => part(`Content-Disposition: form-data; name="${k}"`, Buffer.from(v))),
    part(`Content-Disposition: form-data; name="file"; filename="${basename(file)}"\r\nContent-Type: application/pdf`, readFileSync(file)),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
  const t = now();
  return new Promise((resolveAnswer) => {
    const req = httpRequest(
      `${base}${path}`,
      { method: 'POST', localAddress, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveAnswer({ status: res.statusCode ?? 0, ms: ms(t), error: res.statusCode === 200 ? '' : Buffer.concat(chunks).toString().slice(0, 300) }),
        );
      },
    );
    req.on('error', (err) => resolveAnswer({ status: 0, ms: ms(t), error: `no answer: ${err.message}` }));
    req.end(body);
  });
}

/** The stalled lane (see the header): each request's name, status and time. */
async function stalledLane(base: string): Promise<[string, Answer][]> {
  const spin = join(work, 'spinning-tiles.pdf');
  writeFileSync(spin, tinyTiles(0.01));
  const ordinary = join(CORPUS, 'pdf/text-minimal-pdflatex.pdf');
  const polled = await Promise.all(
    [1, 2].map(async () => {
      const fd = new FormData();
      fd.append('file', new Blob([readFileSync(spin)]), 'spinning-tiles.pdf');
      fd.append('resolution', '72');
      const t = now();
      const { requestId } = (await (await fetch(`${base}/png`, { method: 'POST', body: fd, headers: { 'Request-Type': 'requestId' } })).json()) as {
        requestId: string;
      };
      return { requestId, t };
    }),
  );
  // Each polled job is followed from the start, so its end is timed while the ordinary requests wait.
  const ends = polled.map(async ({ requestId, t }, i): Promise<[string, Answer]> => {
    for (;;) {
      const status = (await (await fetch(`${base}/request-status/${requestId}`)).json()) as { status: string; error?: string };
      if (status.status !== 'pending')
        return [
          `spinning page ${i + 1}, polled: ${String(status.error ?? status.status).slice(0, 120)}`,
          { status: status.status === 'completed' ? 200 : 422, ms: ms(t), error: status.error ?? '' },
        ];
      await sleep(250);
    }
  });
  const [other, same, ...spun] = await Promise.all([
    postFrom('127.0.0.2', base, '/png', ordinary, { resolution: '72' }),
    post(base, '/png', ordinary, { resolution: '72' }),
    ...ends,
  ]);
  const out: [string, Answer][] = [
    ['ordinary, another client', other as Answer],
    ['ordinary, same client as the spinning ones', same as Answer],
    ...(spun as [string, Answer][]),
  ];
  return out;
}

async function main() {
  const files = inputs([join(CORPUS, 'realworld-qpdf'), ...process.argv.slice(2)]);
  const started = now();
  console.log(`${files.length} files; references first (20 s limit each), then ${ENDPOINTS.length} endpoints per file, 2 requests at a time`);
  const refs = await pool(
    files.map((f, i) => () => reference(f.path, join(work, `ref-${i}`))),
    2,
  );
  console.log(`references: ${secs(ms(started))} s`);

  const log = join(tmpdir(), `quire-realworld-${Date.now()}.log`);
  const server = process.env.QUIRE_URL ? null : await startServer(log);
  const base = process.env.QUIRE_URL?.replace(/\/$/, '') ?? server!.base;
  const up: number[] = [];
  let peakKb = 0;
  let going = true;
  const poller = (async () => {
    while (going) {
      const t = now();
      await fetch(`${base}/up`).then(
        (r) => r.arrayBuffer(),
        () => null,
      );
      up.push(ms(t));
      await sleep(250);
    }
  })();
  const sampler = server && setInterval(() => (peakKb = Math.max(peakKb, treeRssKb(server.child.pid!))), 500);
  const campaign = now();
  let answers: Answer[][];
  let stalled: Awaited<ReturnType<typeof stalledLane>> | undefined;
  try {
    const tasks = files.flatMap((f) =>
      ENDPOINTS.map(
        ([, path, fields]) =>
          () =>
            post(base, path, f.path, fields),
      ),
    );
    const flat = await pool(tasks, 2);
    answers = files.map((_, i) => flat.slice(i * ENDPOINTS.length, (i + 1) * ENDPOINTS.length));
    stalled = await stalledLane(base);
  } finally {
    going = false;
    await poller;
    if (sampler) clearInterval(sampler);
    if (server) {
      const exited = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => server.child.kill('SIGKILL'))]);
    }
    rmSync(work, { recursive: true, force: true });
  }
  const campaignMs = ms(campaign);
  const stall = stalled!;

  // ---- per-file table ----
  const w = Math.max(4, ...files.map((f) => f.name.length));
  const cell = (a: Answer) => `${a.status || '---'} ${secs(a.ms)}`.padEnd(9);
  console.log(`\n| ${'file'.padEnd(w)} | pages P/M/Q | read P/M | pw | check | text P/M    | ${ENDPOINTS.map(([n]) => n.padEnd(9)).join(' | ')} |`);
  files.forEach((f, i) => {
    const r = refs[i];
    const pages = r.pages.map((p) => p ?? '-').join('/');
    const read = `${r.poppler ? 'y' : 'n'}/${r.mupdf ? 'y' : 'n'}`;
    console.log(
      `| ${f.name.padEnd(w)} | ${pages.padEnd(11)} | ${read.padEnd(8)} | ${r.password ? 'y ' : 'n '} | ${String(r.check ?? '-').padEnd(5)} | ${r.text.join('/').padEnd(11)} | ${answers[i].map(cell).join(' | ')} |`,
    );
  });

  // ---- summary ----
  type Row = {
    n: number;
    ok: number;
    s5xx: number;
    slow: number;
    dropped: number;
    refusals: number;
    limits: number;
    unreadable4xx: number;
    own: number;
    times: number[];
  };
  const rows = new Map<string, Row>();
  const listed: string[] = [];
  const limits: string[] = [];
  const failures: string[] = [];
  for (const name of [...ENDPOINTS.map(([n]) => n), 'overall'])
    rows.set(name, { n: 0, ok: 0, s5xx: 0, slow: 0, dropped: 0, refusals: 0, limits: 0, unreadable4xx: 0, own: 0, times: [] });
  files.forEach((f, i) => {
    const r = refs[i];
    const readable = r.poppler || r.mupdf;
    answers[i].forEach((a, k) => {
      const where = `${f.name} ${ENDPOINTS[k][1]}: ${a.status || 'no answer'} in ${secs(a.ms)} s`;
      const own = a.status === 400 && readable && !!ENDPOINTS[k][3]?.test(a.error);
      for (const row of [rows.get(ENDPOINTS[k][0])!, rows.get('overall')!]) {
        row.n++;
        row.times.push(a.ms);
        if (a.status === 200) row.ok++;
        if (a.status >= 500) row.s5xx++;
        if (a.status === 0) row.dropped++;
        if (a.ms > SLOW_MS) row.slow++;
        if (own) row.own++;
        else if (a.status >= 400 && a.status < 500) {
          if (!readable) row.unreadable4xx++;
          else if (!(a.status === 401 && r.password)) {
            row.refusals++;
            if (a.status === 422) row.limits++;
          }
        }
      }
      if (a.status >= 500 || a.status === 0 || a.ms > SLOW_MS) failures.push(`${where}: ${a.error}`);
      if (!own && a.status >= 400 && a.status < 500 && readable && !(a.status === 401 && r.password))
        (a.status === 422 ? limits : listed).push(`${where}: ${a.error}`);
    });
  });
  const readableCount = refs.filter((r) => r.poppler || r.mupdf).length;
  console.log(
    `\n${files.length} files (${readableCount} readable by a reference, ${refs.filter((r) => r.password).length} need a password); requests ${secs(campaignMs)} s, whole run ${secs(ms(started))} s`,
  );
  console.log(
    `| endpoint | requests | 200 | 5xx | no answer | over 60 s | refusals of readable files | of them 422 | the operation's own refusals | 4xx of unreadable files | median s | max s |`,
  );
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|---|`);
  for (const [name, r] of rows) {
    console.log(
      `| ${name} | ${r.n} | ${r.ok} | ${r.s5xx} | ${r.dropped} | ${r.slow} | ${r.refusals} | ${r.limits} | ${r.own} | ${r.unreadable4xx} | ${secs(pct(r.times, 50))} | ${secs(Math.max(...r.times))} |`,
    );
  }
  const upMax = Math.max(0, ...up);
  console.log(`| /up (${up.length} polls) | max ${upMax.toFixed(0)} ms | p95 ${pct(up, 95).toFixed(0)} ms |`);
  console.log(`| peak RSS, server process tree | ${server ? `${(peakKb / 1024).toFixed(0)} MB` : 'n/a (QUIRE_URL)'} |`);
  if (server) console.log(`server log: ${log}`);
  if (failures.length) console.log(`\n5xx, dropped and slow answers:\n${failures.map((l) => `- ${l}`).join('\n')}`);
  if (listed.length) console.log(`\nRefusals of reference-readable files:\n${listed.map((l) => `- ${l}`).join('\n')}`);
  if (limits.length) console.log(`\nLimit refusals (422) of reference-readable files:\n${limits.map((l) => `- ${l}`).join('\n')}`);
  console.log(`\nStalled lane: two polled /png of a page every renderer spins on, then ordinary /png requests`);
  console.log(`| request | status | seconds |`);
  console.log(`|---|---|---|`);
  for (const [name, a] of stall) console.log(`| ${name} | ${a.status} | ${secs(a.ms)} |`);
  const other = stall.find(([n]) => n.startsWith('ordinary, another client'))![1];
  const all = rows.get('overall')!;
  const met = all.s5xx === 0 && all.dropped === 0 && all.slow === 0 && all.refusals === 0 && upMax < 2000 && other.status === 200 && other.ms < 30_000;
  console.log(
    `\n${met ? 'GOAL MET' : 'GOAL NOT MET'} (0 5xx: ${all.s5xx}, 0 dropped: ${all.dropped}, 0 over 60 s: ${all.slow}, 0 refusals of readable files: ${all.refusals}, /up max < 2 s: ${upMax.toFixed(0)} ms, another client's /png behind the spinning pages < 30 s: ${secs(other.ms)} s)`,
  );
}

await main();
