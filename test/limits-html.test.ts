import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browserStats, shutdownBrowser } from '../engines/chromium/browser.js';
import { convertToPdf, type FormValue, pdfPages, pdfText, sleep, startApp, type TestApp, tool, until } from './helpers.js';

/**
 * Hostile HTML cannot hold a job: an endless script, a DOM of millions of nodes, a page that prints too many
 * pages and one that loads too many bytes each end in a 422 naming the setting, soon after the limit, with no
 * renderer left spinning, the job's temp dir gone and the browser still printing the next page.
 */
const test = suite('limits-html');
/** HTML_MAX_MB=2 and HTML_TIMEOUT_SECONDS=300, a time no ordinary print comes near: its pages end by their bytes or print. */
let t: TestApp;
/** The same, with HTML_MAX_PAGES=5. */
let few: TestApp;
/** The same, with HTML_MAX_MEMORY_MB=300. */
let lean: TestApp;
/**
 * HTML_TIMEOUT_SECONDS=30, only for pages that never end: long past the moment a page starts spinning, so the
 * renderer running it is found busy when the job is cut.
 */
let hasty: TestApp;
let site: http.Server;
let base = '';
/** Bytes the local site has sent for /stream, and whether that response was cut. */
const stream = { sent: 0, closed: false };

const SPIN = '<html><body><p>Spinning page</p><script>for (;;) {}</script></body></html>';
// Style sheets are read to their end (an image that does not decode is dropped early).
const MEGABYTE = Buffer.concat([Buffer.from('/*'), Buffer.alloc(1024 * 1024, 'x'), Buffer.from('*/ p { color: #123 }')]);

test.before(async () => {
  site = http.createServer((q, r) => {
    if (q.url === '/spin') return r.writeHead(200, { 'content-type': 'text/html' }).end(SPIN);
    if (q.url === '/streaming-page')
      return r
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><head><link rel="stylesheet" href="/stream"></head><body><p>Streaming page</p></body></html>');
    if (q.url?.startsWith('/mb/')) return r.writeHead(200, { 'content-type': 'text/css' }).end(MEGABYTE);
    if (q.url === '/stream') {
      // A style sheet that never ends.
      r.writeHead(200, { 'content-type': 'text/css' });
      r.write('/*');
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!r.destroyed && r.write(chunk)) stream.sent += chunk.length;
        if (!r.destroyed) r.once('drain', pump);
      };
      r.on('close', () => (stream.closed = true));
      return pump();
    }
    r.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  const env = { HTML_TIMEOUT_SECONDS: '300', HTML_MAX_MB: '2', URL_ALLOW: '127.0.0.1' };
  t = await startApp(env);
  few = await startApp({ ...env, HTML_MAX_PAGES: '5' });
  lean = await startApp({ ...env, HTML_MAX_MEMORY_MB: '300' });
  hasty = await startApp({ ...env, HTML_TIMEOUT_SECONDS: '30' });
  // The browser started, and its own renderers settled, before a job is watched (a starting renderer is busy).
  await printsOrdinaryPage();
  await renderersIdle('after the browser started');
});

test.after(async () => {
  await Promise.all([t.close(), few.close(), lean.close(), hasty.close()]);
  await shutdownBrowser();
  site.close();
});

/** Process groups of every browser this suite has used (a browser replaced after a hang counts too). */
const groups = new Set<number>();
const noteBrowsers = () => browserStats().pids.forEach((p) => p && groups.add(p));

/** CPU used so far (utime + stime, in ticks of 10 ms) by each live Chromium renderer of those browsers (ps, /proc). */
function rendererTicks(): Map<number, number> {
  noteBrowsers();
  const pids = tool('ps', ['-eo', 'pid=,pgid=,stat=,args='])
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, pgid, stat, ...args]) => groups.has(Number(pgid)) && !stat?.startsWith('Z') && args.includes('--type=renderer'))
    .map(([pid]) => Number(pid));
  const ticks = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(f[11]) + Number(f[12]);
    } catch {
      return NaN; // gone between ps and /proc
    }
  };
  return new Map(pids.map((p) => [p, ticks(p)] as const).filter(([, t]) => Number.isFinite(t)));
}

/** Over half a core: a renderer using more ticks than this in one second is busy. */
const BUSY_TICKS = 50;

/**
 * The renderers that ran a cut job's page: those alive in the job's last 3 s and busy in their last second seen
 * (half a second at least), sampled every 250 ms while it ran. Only a job of 3 s or more has them: it was cut while
 * its page kept its renderer busy. A renderer Chromium starts for something else (a new browser's own window, the
 * spare page prepared after a job) is busy for a while as it starts, which a job that short could catch; the spare
 * page is prepared only after the job has been answered, and the suite's browser has settled before its first job.
 */
interface JobRenderers {
  ranPage: Set<number>;
}

async function watchedJob<T>(work: () => Promise<T>): Promise<{ value: T; renderers: JobRenderers }> {
  const samples: { at: number; ticks: Map<number, number> }[] = [];
  const started = Date.now();
  let done = false;
  const sampling = (async () => {
    while (!done) {
      samples.push({ at: Date.now(), ticks: rendererTicks() });
      await sleep(250);
    }
  })();
  try {
    const value = await work();
    const ended = Date.now();
    done = true;
    await sampling;
    const ranPage = new Set<number>();
    // Per renderer, the last second of its own samples: the cut page's renderer ends (its context closed) a little
    // before the answer arrives, more so on a busy machine, so the job's very last samples may miss it.
    const pids = new Set(samples.flatMap((s) => [...s.ticks.keys()]));
    if (ended - started >= 3000)
      for (const pid of pids) {
        const seen = samples.filter((s) => s.ticks.has(pid));
        const last = seen.at(-1)!;
        if (last.at < ended - 3000) continue; // ended well before the cut: not the page that was cut
        const recent = seen.filter((s) => s.at >= last.at - 1250);
        const span = last.at - recent[0].at;
        // Busy: over a twentieth of a core (ticks are 10 ms). A spinning page runs whenever the machine lets it, which
        // a slow or crowded machine may leave far less than a core; an idle renderer uses next to nothing.
        const usedMs = (last.ticks.get(pid)! - recent[0].ticks.get(pid)!) * 10;
        if (span >= 500 && usedMs > span / 20) ranPage.add(pid);
      }
    return { value, renderers: { ranPage } };
  } finally {
    done = true;
    await sampling;
  }
}

/** POST /pdf, timed; expects a 422 whose error names `setting`. */
async function refused(
  app: TestApp,
  fields: Record<string, FormValue | FormValue[]>,
  setting: RegExp,
): Promise<{ seconds: number; error: string; renderers: JobRenderers }> {
  const started = Date.now();
  const { value, renderers } = await watchedJob(() => convertToPdf(app, fields, 422));
  const seconds = (Date.now() - started) / 1000;
  assert.match(String(value.body.error), setting);
  return { seconds, error: String(value.body.error), renderers };
}

/**
 * How long renderers may stay busy after a job: ample for one that is starting (a spare page, a new browser's own)
 * on any machine; a spinning page never settles.
 */
const IDLE_WAIT_MS = 120_000;

/** Waits for no renderer of the suite to be busy; fails naming the busy ones after IDLE_WAIT_MS. */
async function renderersIdle(when: string): Promise<void> {
  let busy: [number, number][] = [];
  await until(
    'every renderer to idle',
    async () => {
      const before = rendererTicks();
      await sleep(1000);
      const after = rendererTicks();
      busy = [...after].map(([pid, t]) => [pid, t - (before.get(pid) ?? t)] as [number, number]).filter(([, used]) => used > BUSY_TICKS);
      return busy.length === 0;
    },
    IDLE_WAIT_MS,
  ).catch(() =>
    assert.unreachable(
      `renderers still busy ${IDLE_WAIT_MS / 1000} s ${when}: ${busy.map(([pid, used]) => `${pid} used ${used * 10} ms of CPU in one second`).join(', ')}`,
    ),
  );
}

/** An ordinary page prints (on `t`, whose time limit it is nowhere near; the browser is the one every app shares). */
async function printsOrdinaryPage(): Promise<void> {
  const { path } = await convertToPdf(t, {
    file: { bytes: Buffer.from('<html><body><h1>Ordinary page</h1><p>Still printing.</p></body></html>'), name: 'ordinary.html' },
  });
  assert.match(pdfText(path), /Ordinary page[\s\S]*Still printing/);
}

/**
 * What a cut job must leave: the renderer that ran its page gone, no renderer of the suite still busy once the
 * ones started meanwhile have settled, no temp dir in `app`, and a browser that still prints.
 */
async function leftClean(app: TestApp, cut: JobRenderers): Promise<void> {
  // Polled for long: the renderer of a cut page ends at once, and one left spinning never does.
  for (const pid of cut.ranPage) await until(`renderer ${pid}, busy running the cut page, to end`, () => !rendererTicks().has(pid), 60_000);
  await renderersIdle('after the cut');
  assert.equal(readdirSync(join(app.dataDir, 'work')), []);
  await printsOrdinaryPage();
}

// The job limit (MAX_PROCESS_SECONDS, 1800 s) would end these pages too, but it names no HTML setting.
test('an endless script is cut at HTML_TIMEOUT_SECONDS, uploaded or fetched', async () => {
  const upload = await refused(hasty, { file: { bytes: Buffer.from(SPIN), name: 'spin.html' } }, /HTML_TIMEOUT_SECONDS=30\b/);
  assert.match(upload.error, /load, scripts and printing/);
  // The spinning page's renderer was found, so leftClean checks that it ended.
  assert.ok(upload.renderers.ranPage.size > 0, 'no renderer was busy at the cut');
  await leftClean(hasty, upload.renderers);
  const fetched = await refused(hasty, { url: `${base}/spin` }, /HTML_TIMEOUT_SECONDS=30\b/);
  assert.ok(fetched.renderers.ranPage.size > 0, 'no renderer was busy at the cut');
  await leftClean(hasty, fetched.renderers);
});

test('a script growing its DOM past HTML_MAX_MEMORY_MB is cut by that limit, not HTML_TIMEOUT_SECONDS', async () => {
  // A megabyte of text per node, a gigabyte in all, then a spin: the memory passes 300 MB within a small part of
  // the work, and only a limit ends the page (without the memory limit, the time limit would, and the 422 would say so).
  const html =
    '<html><body><p>Swelling page</p><script>for (let i = 0; i < 1024; i++) document.body.append("x".repeat(1 << 20) + i); for (;;) {}</script></body></html>';
  const { seconds, error, renderers } = await refused(lean, { file: { bytes: Buffer.from(html), name: 'swell.html' } }, /HTML_MAX_MEMORY_MB=300\b/);
  assert.match(error, /memory/);
  console.log(`memory limit: cut after ${seconds} s, largest renderer seen ${Math.round(browserStats().rendererPeakBytes / 1024 / 1024)} MB`);
  await leftClean(lean, renderers);
});

test('a script building a DOM of nodes without end is cut at HTML_TIMEOUT_SECONDS or, first, HTML_MAX_MEMORY_MB', async () => {
  const html =
    '<html><body><p>Growing page</p><script>for (let i = 0; ; i++) { const d = document.createElement("div"); d.textContent = "Row " + i; document.body.append(d) }</script></body></html>';
  const { renderers } = await refused(hasty, { file: { bytes: Buffer.from(html), name: 'dom.html' } }, /HTML_TIMEOUT_SECONDS=30\b|HTML_MAX_MEMORY_MB=1024\b/);
  await leftClean(hasty, renderers);
});

test('a page printing more than HTML_MAX_PAGES is refused: estimated before printing, or counted on a bounded print', async () => {
  const rows = `<html><body>${Array.from({ length: 600 }, (_, i) => `<p>Row ${i}</p>`).join('')}</body></html>`;
  await refused(few, { file: { bytes: Buffer.from(rows), name: 'long.html' } }, /HTML_MAX_PAGES=5\b/);
  // Forced page breaks: tiny content, so only the print shows the pages.
  const breaks = (n: number) =>
    `<html><body>${Array.from({ length: n }, (_, i) => `<div style="break-after: page">Sheet ${i + 1}</div>`).join('')}</body></html>`;
  await refused(few, { file: { bytes: Buffer.from(breaks(40)), name: 'breaks.html' } }, /HTML_MAX_PAGES=5\b/);
  // Five pages are allowed.
  const { path } = await convertToPdf(few, { file: { bytes: Buffer.from(breaks(5)), name: 'five.html' } });
  assert.is(pdfPages(path), 5);
  assert.match(pdfText(path), /Sheet 5/);
  // E-mail is printed by the same Chromium, under the same limits (and runs no script).
  const eml = [
    'From: a@example.com',
    'To: b@example.com',
    'Subject: Long letter',
    'Content-Type: text/plain; charset=utf-8',
    '',
    ...Array.from({ length: 1500 }, (_, i) => `Line ${i}`),
  ].join('\r\n');
  const mail = await refused(few, { file: { bytes: Buffer.from(eml), name: 'long.eml' } }, /HTML_MAX_PAGES=5\b/);
  await leftClean(few, mail.renderers);
});

test('a page loading more than HTML_MAX_MB is stopped, and so is a larger upload', async () => {
  const big = Buffer.concat([Buffer.from('<html><body><p>Big</p><!-- '), Buffer.alloc(3 * 1024 * 1024, 'x'), Buffer.from(' --></body></html>')]);
  await refused(t, { file: { bytes: big, name: 'big.html' } }, /HTML_MAX_MB=2\b/);
  // Four sub-resources of 1 MB each, through the job's proxy.
  const sheets = `<html><head>${[1, 2, 3, 4].map((i) => `<link rel="stylesheet" href="${base}/mb/${i}">`).join('')}</head><body><p>Heavy page</p></body></html>`;
  const heavy = await refused(t, { file: { bytes: Buffer.from(sheets), name: 'heavy.html' } }, /HTML_MAX_MB=2\b/);
  await leftClean(t, heavy.renderers);
  // A web page whose style sheet never ends: cut once the page has loaded 2 MB (else at HTML_TIMEOUT_SECONDS).
  const fetched = await refused(t, { url: `${base}/streaming-page` }, /HTML_MAX_MB=2\b/);
  await until('the endless response to be cut', () => stream.closed, 30_000);
  assert.ok(stream.sent < 64 * 1024 * 1024, `${stream.sent} bytes sent`);
  await leftClean(t, fetched.renderers);
  // Under the limit, sub-resources load and the page prints.
  const { path } = await convertToPdf(t, {
    file: { bytes: Buffer.from(`<html><head><link rel="stylesheet" href="${base}/mb/1"></head><body><p>Light page</p></body></html>`), name: 'light.html' },
  });
  assert.match(pdfText(path), /Light page/);
});

test.run();
