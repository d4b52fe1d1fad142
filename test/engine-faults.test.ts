import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeZip } from '../app/archive/index.js';
import { browserStats } from '../engines/chromium/browser.js';
import { poolStats, shutdownPool } from '../engines/libreoffice/pool.js';
import { corpus, expectError, type FormValue, pdfText, startApp, type TestApp, until } from './helpers.js';
import { descendants, killSame, type ProcEntry, processTable } from './processes.js';

/**
 * Engine faults are not input faults (issue 39). LibreOffice and Chromium are killed for real (SIGKILL, as the
 * OOM killer or a crash would), between jobs and in the middle of one: the client still gets its document, from
 * a fresh instance. A file LibreOffice refuses is refused once on a fresh instance, not retried without end; an
 * engine that cannot start answers 503 naming it, and so does /health until it starts again.
 */
const test = suite('engine-faults');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-faults-'));
const DOCX = corpus('office/gotenberg-pages_3.docx');

test.before(async () => {
  // One instance, so "the pool's soffice" is one process; pages enough for the long generated document.
  t = await startApp({ OFFICE_INSTANCES: '1', OFFICE_MAX_PAGES: '100000' });
});

test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

/** POST /pdf; the status and, on 200, the PDF's text read back with pdftotext. */
async function toPdf(file: FormValue): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const res = await t.form('/pdf', { file });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, text: res.status === 200 ? pdfText(await t.download(String(body.outputUrl))) : '' };
}

async function assertPages3(file: FormValue, what: string) {
  const r = await toPdf(file);
  assert.is(r.status, 200, `${what}: ${JSON.stringify(r.body)}`);
  for (const p of ['Page 1', 'Page 2', 'Page 3']) assert.match(r.text, p, `${what}: ${p}`);
}

/** The pool's soffice.bin processes: the app runs in this process, so they are its descendants. */
const soffices = () => descendants(process.pid).filter((e) => e.comm === 'soffice.bin');

/** CPU time a process has used so far, in clock ticks (utime + stime of /proc/<pid>/stat); 0 once it is gone. */
function cpuTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return ''; // gone meanwhile
  }
};

/**
 * Runs `request` and, once one of `candidates()` is seen working on it (100 ms of CPU time since its first look,
 * however small a share of a core a busy machine leaves it; the engines are idle otherwise), kills `victim` of it
 * with SIGKILL. Whether that was in the middle of the job is for the caller to tell (an instance started
 * meanwhile): a job may end first.
 */
async function killWhileWorking<T>(request: () => Promise<T>, candidates: () => ProcEntry[], victim: (busy: ProcEntry) => ProcEntry): Promise<T> {
  let settled = false;
  const pending = request().finally(() => (settled = true));
  const first = new Map<number, number>();
  await until(
    'an engine process working on the job',
    () => {
      if (settled) return true;
      for (const e of candidates()) {
        const ticks = cpuTicks(e.pid);
        if (!first.has(e.pid)) first.set(e.pid, ticks);
        if (ticks - first.get(e.pid)! >= 10) {
          killSame(victim(e));
          return true;
        }
      }
      return false;
    },
    120_000,
  );
  return pending;
}

test('LibreOffice killed between jobs: the next .docx converts (200, its text intact), at once or after the pool noticed', async () => {
  await assertPages3({ file: DOCX }, 'first conversion');
  const before = poolStats();
  const victims = soffices();
  assert.ok(victims.length > 0, 'no soffice.bin of the pool found');
  victims.forEach(killSame);
  // At once: the instance may not know yet that its soffice is gone; the job is then run on a fresh one.
  await assertPages3({ file: DOCX }, 'right after the kill');
  soffices().forEach(killSame);
  // Later: the dead instance has left the pool, and the job starts a fresh one.
  await until('the pool drops its dead instance', () => poolStats().running === 0, 60_000);
  await assertPages3({ file: DOCX }, 'after the pool dropped the dead instance');
  const after = poolStats();
  assert.is(after.crashed - before.crashed, 2, JSON.stringify([before, after]));
  assert.is(after.started - before.started, 2, 'one fresh instance per kill');
});

test('LibreOffice killed in the middle of a conversion: the job runs again on a fresh instance (200, every paragraph)', async () => {
  const paragraph = (i: number) => `Paragraph ${i} of the generated document, long enough to wrap onto a second line at ordinary margins.\\par\n`;
  for (let n = 4000; ; n *= 4) {
    await assertPages3({ file: DOCX }, 'a warm instance');
    const path = join(work, `long-${n}.rtf`);
    writeFileSync(path, `{\\rtf1\\ansi\n${Array.from({ length: n }, (_, i) => paragraph(i)).join('')}}`);
    const started = poolStats().started;
    const result = await killWhileWorking(
      () => toPdf({ file: path }),
      soffices,
      (e) => e,
    );
    assert.is(result.status, 200, JSON.stringify(result.body));
    assert.match(result.text, 'Paragraph 0 of the generated document');
    assert.match(result.text, `Paragraph ${n - 1} of the generated document`);
    const fresh = poolStats().started - started;
    if (fresh === 0) {
      // Converted before its soffice was killed: a longer document.
      assert.ok(n < 256_000, 'no conversion lasted long enough to be killed midway');
      continue;
    }
    assert.is(fresh, 1, 'run again on one fresh instance');
    break;
  }
});

test('a file LibreOffice cannot open is 400 after its instance was killed: tried on one fresh instance, not again and again', async () => {
  await assertPages3({ file: DOCX }, 'a warm instance');
  writeFileSync(join(work, 'notes.txt'), 'a zip with no office document in it');
  const notOffice = join(work, 'not-office.docx');
  await writeZip([{ path: join(work, 'notes.txt'), name: 'notes.txt' }], notOffice);
  const before = poolStats();
  soffices().forEach(killSame);
  await expectError(await t.form('/pdf', { file: { file: notOffice } }), 400, /not-office\.docx could not be opened as an office document/);
  assert.is(poolStats().started - before.started, 1, 'one fresh instance');
  // Refusing a document is no crash: the instance stays.
  await assertPages3({ file: DOCX }, 'after the refusal');
  assert.is(poolStats().started - before.started, 1, 'the instance that refused the file is kept');
});

test('Chromium killed right after a job and in the middle of one: the page still prints (200)', async () => {
  const html = (text: string, script = '') => ({ bytes: Buffer.from(`<!doctype html><html><body><p>${text}</p>${script}</body></html>`), name: 'page.html' });
  const first = await toPdf(html('before the kill'));
  assert.is(first.status, 200, JSON.stringify(first.body));
  for (const pid of browserStats().pids) if (pid) process.kill(pid, 'SIGKILL');
  const next = await toPdf(html('right after the kill'));
  assert.is(next.status, 200, JSON.stringify(next.body));
  assert.match(next.text, 'right after the kill');

  // The page's script keeps its renderer busy for seconds of wall-clock time, whatever the machine: the browser
  // killed then is gone before anything is printed. (Below HTML_TIMEOUT_SECONDS, 20.)
  for (let seconds = 3; ; seconds *= 2) {
    const warm = await toPdf(html('a browser running'));
    assert.is(warm.status, 200, JSON.stringify(warm.body));
    const launches = browserStats().launches;
    const spin = `<script>const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}</script>`;
    const browsers = () => browserStats().pids.filter((p) => p !== undefined);
    const renderers = () => browsers().flatMap((pid) => descendants(pid).filter((e) => cmdline(e.pid).includes('--type=renderer')));
    // The browser process itself: every page of it ends, as when Chromium crashes.
    const browserOf = (renderer: ProcEntry) => {
      const table = processTable();
      const pid = browsers().find((p) => descendants(p, table).some((e) => e.pid === renderer.pid));
      return table.get(pid ?? renderer.pid) ?? renderer;
    };
    const result = await killWhileWorking(() => toPdf(html('printed after all', spin)), renderers, browserOf);
    assert.is(result.status, 200, JSON.stringify(result.body));
    assert.match(result.text, 'printed after all');
    if (browserStats().launches === launches) {
      // Printed before the browser was killed.
      assert.ok(seconds < 12, 'no print lasted long enough to be killed midway');
      continue;
    }
    break;
  }
});

test('/health: 200 with every engine named; /up stays pure liveness', async () => {
  const res = await t.request('/health');
  const body = (await res.json()) as { status: string; engines: Record<string, string> };
  assert.is(res.status, 200, JSON.stringify(body));
  assert.is(body.engines.libreoffice, 'ok');
  assert.is(body.engines.chromium, 'ok');
  assert.is(body.engines.qpdf, 'ok');
  assert.is(body.status, Object.values(body.engines).includes('missing') ? 'degraded' : 'ok');
  assert.is((await t.request('/up')).status, 200);
});

test('LibreOffice that cannot start: the job answers 503 naming it after one more try, /health and /ready 503 naming it, until it starts again', async () => {
  await shutdownPool(); // so that the next job must start an instance
  // soffice gone from PATH after the probe at start found it, as an upgrade or a broken install would leave it.
  const path = process.env.PATH;
  const empty = mkdtempSync(join(work, 'path-'));
  const started = poolStats().started;
  process.env.PATH = empty;
  try {
    await expectError(await t.form('/pdf', { file: { file: DOCX } }), 503, /^soffice could not be started on this server/);
    assert.is(poolStats().started - started, 2, 'one start, then one more on a fresh instance');
    const health = await t.request('/health');
    const body = (await health.json()) as { status: string; engines: Record<string, string>; error: string };
    assert.is(health.status, 503, JSON.stringify(body));
    assert.is(body.status, 'unavailable');
    assert.is(body.engines.libreoffice, 'down');
    assert.is(body.engines.chromium, 'ok');
    assert.match(body.error, /libreoffice/);
    const ready = await t.request('/ready');
    assert.is(ready.status, 503);
    assert.is(((await ready.json()) as { engines: Record<string, { down?: boolean }> }).engines.libreoffice.down, true);
    assert.is((await t.request('/up')).status, 200, '/up is liveness only');
  } finally {
    process.env.PATH = path;
  }
  await assertPages3({ file: DOCX }, 'soffice back on PATH');
  assert.is((await t.request('/health')).status, 200);
});

test.run();
