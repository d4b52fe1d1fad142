import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, tool } from './helpers.js';
import { descendants, type Proc, startQuire, stop } from './processes.js';
import { until } from './waiting.js';

/**
 * A job whose work is JavaScript in its own process (/markdown, /word: operations with `thread`) stops when nobody
 * waits for it any more: its client gone, or its time budget (MAX_PROCESS_SECONDS) spent. Its process is ended with
 * its engines (JavaScript in a loop does not look at a signal, and its heap holds the document), its temp dir is
 * emptied, and other jobs and their processes carry on. A real server, as a user meets it: requests over HTTP, the
 * client's connection destroyed. The input is 6,030 pages (minutes of work), far longer than any wait below.
 */
const test = suite('job-abandon');
let scratch: string;
let big: string;
const small = corpus('pdf/text-minimal-pdflatex.pdf');

test.before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'quire-abandon-'));
  big = join(scratch, 'register-6030.pdf');
  tool('qpdf', ['--empty', '--pages', ...Array(402).fill(corpus('pdf/federal-register-15-pages.pdf')), '--', big]);
});
test.after(() => rmSync(scratch, { recursive: true, force: true }));

/** The job processes (operation-worker) below a server, with the CPU ticks they have used. */
function jobProcesses(server: number): { pid: number; ticks: number }[] {
  return descendants(server).flatMap((e) => {
    try {
      if (!readFileSync(`/proc/${e.pid}/cmdline`, 'latin1').includes('operation-worker')) return [];
      const stat = readFileSync(`/proc/${e.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ pid: e.pid, ticks: Number(fields[11]) + Number(fields[12]) }];
    } catch {
      return []; // gone meanwhile
    }
  });
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

async function upload(server: Proc, file: string): Promise<string> {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), 'input.pdf');
  const res = await fetch(`${server.base}/upload`, { method: 'POST', body: fd });
  assert.is(res.status, 200);
  return (await res.json()).files[0].id;
}

/** A synchronous request by id over node:http, which the test can walk away from (its socket destroyed). */
function send(server: Proc, path: string, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  let req!: ReturnType<typeof httpRequest>;
  const answer = new Promise<{ status: number; body: any } | { gone: string }>((done) => {
    req = httpRequest(`${server.base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', (err) => done({ gone: err.message }));
    req.end(payload);
  });
  return { answer, leave: () => req.destroy() };
}

async function queue(server: Proc): Promise<{ running: number }> {
  return (await (await fetch(`${server.base}/ready`)).json()).queue;
}

/** The heavy job's process is gone, the small job beside it answered, and nothing runs or stays in the work dir. */
async function carriedOn(server: Proc, dataDir: string, pid: number, other: ReturnType<typeof send>) {
  assert.not.ok(alive(pid), 'the job process is gone when its job ends');
  const answered = await other.answer;
  assert.ok('status' in answered && answered.status === 200, JSON.stringify(answered));
  assert.match(JSON.stringify(answered), /Lorem ipsum/);
  await until('no job running', async () => (await queue(server)).running === 0, 60_000);
  assert.equal(readdirSync(join(dataDir, 'work')), []);
}

/** Starts the heavy request and returns once its job process has worked a few CPU seconds (loading its modules takes ~1). */
async function heavyRunning(server: Proc, dataDir: string, path: string, id: string) {
  const heavy = send(server, path, { id });
  let worker: { pid: number; ticks: number } | undefined;
  await until(
    'the job process works on the document',
    () => {
      worker = jobProcesses(server.pid).find((p) => p.ticks > 300);
      return !!worker;
    },
    600_000,
  );
  const dirs = readdirSync(join(dataDir, 'work'));
  assert.is(dirs.length, 1, 'one job dir');
  return { heavy, pid: worker!.pid, dir: join(dataDir, 'work', dirs[0]) };
}

test('a client that goes away mid-way through a thread operation: its job process is ended, its dir emptied; another job answers', async () => {
  const dataDir = join(scratch, 'gone');
  const server = await startQuire('abandon-gone', { DATA_DIR: dataDir });
  try {
    const id = await upload(server, big);
    const { heavy, pid, dir } = await heavyRunning(server, dataDir, '/markdown', id);
    const other = send(server, '/markdown', { id: await upload(server, small) });
    heavy.leave();
    await until('its work dir is removed', () => !existsSync(dir), 60_000);
    // A job ends once its process is gone: nothing works on (or writes in its dir) for a job counted as over.
    await carriedOn(server, dataDir, pid, other);
    assert.ok('gone' in (await heavy.answer));
  } finally {
    await stop(server);
  }
});

test('a thread operation past MAX_PROCESS_SECONDS: 422 naming the setting, its job process ended, its dir emptied; another job answers', async () => {
  const dataDir = join(scratch, 'budget');
  // 30 s against /word of 6,030 pages: three times the 255 s that 2,010 took here, still minutes on a machine ten
  // times faster (a heap large enough that memory does not end it first); the small job below has the same 30 s for
  // a cold job process and one page.
  const server = await startQuire('abandon-budget', { DATA_DIR: dataDir, MAX_PROCESS_SECONDS: '30', JOB_MAX_MEMORY_MB: '4096' });
  try {
    const id = await upload(server, big);
    const smallId = await upload(server, small);
    const heavy = send(server, '/word', { id });
    let pid = 0;
    await until(
      'the heavy job has its job process',
      () => {
        pid = jobProcesses(server.pid)[0]?.pid ?? 0;
        return pid > 0;
      },
      60_000,
    );
    const other = send(server, '/extracted-text', { id: smallId });
    const answer = await heavy.answer;
    assert.ok('status' in answer && answer.status === 422, JSON.stringify(answer));
    assert.match(JSON.stringify(answer), /MAX_PROCESS_SECONDS=30/);
    await carriedOn(server, dataDir, pid, other);
  } finally {
    await stop(server);
  }
});

test.run();
