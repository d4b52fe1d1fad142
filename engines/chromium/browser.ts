import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type BrowserContext, type CDPSession, type Page } from 'puppeteer-core';
import type { EngineContext } from '../context.js';
import { EngineError } from '../errors.js';
import { killGroupAndWait } from '../process-group.js';
import { reportProcessGroup } from '../run.js';

/**
 * One long-lived headless Chromium, driven over CDP (puppeteer-core, browser from Debian), shared by every
 * HTML job: a cold `chromium --print-to-pdf` pays ~0.5 s of start-up per document. Each job gets a fresh
 * incognito browser context (own cookies, cache and storage) with its own proxy, closed at the end. The
 * browser is replaced after `maxJobs` jobs (it grows), when it disconnects or crashes, and when a job's
 * context cannot be closed after a timeout (a hung renderer).
 *
 * A job whose browser dies under it is printed once more on a fresh one (print.ts); a browser that cannot be
 * launched is reported down (/health) until a launch succeeds, tried again every 30 s meanwhile.
 *
 * Puppeteer starts Chromium itself (a long-lived process engines/run.ts cannot host); it runs detached in
 * its own process group, and we kill that group on shutdown so no renderer or zygote survives.
 */

export interface BrowserOptions {
  executablePath: string;
  /** Jobs before the browser is replaced. */
  maxJobs: number;
}

const defaults: BrowserOptions = {
  executablePath: ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? 'chromium',
  maxJobs: 100,
};
let options: BrowserOptions = { ...defaults };

export function configureBrowser(opts: Partial<BrowserOptions>): void {
  options = { ...options, ...opts };
}

export const BROWSER_ARGS = [
  '--no-sandbox', // we run as root in a container; the per-job proxy, context and timeout are the fence
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--hide-scrollbars',
  '--mute-audio',
  // WebRTC may send UDP around the proxy, to any address: forbid it.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Chromium 156 gives every headless window (one per job's context) omnibox pop-up WebUI pages, each in a renderer
  // of its own that spends ~1 s of CPU starting; a headless print never shows an omnibox. (Puppeteer merges this
  // list with its own --disable-features.)
  '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup',
];

interface Instance {
  browser: Browser;
  pid?: number;
  dir: string;
  jobs: number;
  active: number;
  retiring: boolean;
  dead: boolean;
  /** Memory watches of the jobs running now (watchMemory), and the sampler serving them. */
  watches: Set<MemoryWatch>;
  sampler?: NodeJS.Timeout;
  session?: Promise<CDPSession>;
  /** When a renderer was last killed for its memory (ms since the epoch). */
  memoryKilledAt: number;
}

let currentInst: Instance | null = null;
let launching: Promise<Instance> | null = null;
const instances = new Set<Instance>();
let launches = 0;
/** Why the last launch failed, until one succeeds: /health reports Chromium down meanwhile. */
let launchFailure: string | null = null;
/** While Chromium is down, a launch is tried now and then without waiting for a job (see pool.ts, the same for LibreOffice). */
let recovery: NodeJS.Timeout | undefined;
const RECOVERY_MS = 30_000;
/** Browsers ended other than by shutdown: retired after maxJobs, crashed (disconnected unasked), hung (killed); renderers killed for memory. */
const ends = { recycled: 0, crashed: 0, hung: 0, rendererMemoryKills: 0 };
let exitHookSet = false;

function killGroup(pid?: number): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

async function launch(): Promise<Instance> {
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => instances.forEach((i) => killGroup(i.pid)));
  }
  // Chromium's singleton socket lives in TMPDIR and a socket path may not exceed 107 bytes: keep it short.
  const dir = mkdtempSync(join(tmpdir(), 'qchr-'));
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath: options.executablePath,
      headless: true,
      pipe: true,
      userDataDir: join(dir, 'profile'),
      args: BROWSER_ARGS,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir, LANG: 'C.UTF-8' },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      // A launch took 3-4 s on a loaded 2-core machine: room for one ten times slower before calling it down.
      timeout: 180_000,
      protocolTimeout: 600_000,
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const missing = /ENOENT|not found|no such file/i.test(String((err as Error).message));
    const failure = new EngineError('chromium', `could not start: ${(err as Error).message.split('\n')[0]}`, { missing, unavailable: !missing });
    launchFailure = failure.message;
    recovery ??= setTimeout(() => {
      recovery = undefined;
      if (launchFailure) current().catch(() => undefined);
    }, RECOVERY_MS).unref();
    throw failure;
  }
  launchFailure = null;
  launches++;
  const inst: Instance = { browser, pid: browser.process()?.pid, dir, jobs: 0, active: 0, retiring: false, dead: false, watches: new Set(), memoryKilledAt: 0 };
  instances.add(inst);
  // A browser started in a job thread is killed with the thread's other engines if the thread dies or is let go.
  if (inst.pid) reportProcessGroup(inst.pid, true);
  browser.on('disconnected', () => {
    if (inst.pid) reportProcessGroup(inst.pid, false);
    if (!inst.dead) ends.crashed++;
    void end(inst);
  });
  return inst;
}

/** Closes (or kills) an instance and forgets it; the next job starts a fresh one. */
async function end(inst: Instance, graceMs = 5000): Promise<void> {
  if (inst.dead) return;
  inst.dead = true;
  if (currentInst === inst) currentInst = null;
  clearInterval(inst.sampler);
  await Promise.race([inst.browser.close().catch(() => undefined), new Promise((r) => setTimeout(r, graceMs).unref())]);
  // Renderers and the zygote may outlive the main process: empty the whole group.
  await killGroupAndWait(inst.pid);
  instances.delete(inst);
  rmSync(inst.dir, { recursive: true, force: true });
}

/** The browser to use now, launched when there is none. */
async function current(): Promise<Instance> {
  while (!currentInst || currentInst.dead) {
    // Concurrent first jobs share one launch.
    launching ??= launch().finally(() => (launching = null));
    currentInst = await launching;
  }
  return currentInst;
}

async function acquire(): Promise<Instance> {
  const inst = await current();
  inst.jobs++;
  inst.active++;
  if (inst.jobs >= options.maxJobs) {
    ends.recycled++;
    inst.retiring = true;
    currentInst = null;
  }
  return inst;
}

function release(inst: Instance): void {
  inst.active--;
  if (inst.retiring && inst.active === 0) void end(inst);
}

export interface ContextOptions {
  /** `http://127.0.0.1:<port>`: every request of the context goes there, loopback included. */
  proxyServer: string;
}

/** A fresh incognito context with one page, on the current browser, held until closeLease. */
export interface Lease {
  inst: Instance;
  context: BrowserContext;
  page: Page;
}

export async function openLease(o: ContextOptions): Promise<Lease> {
  const inst = await acquire();
  let context: BrowserContext | undefined;
  try {
    context = await inst.browser.createBrowserContext({ proxyServer: o.proxyServer, proxyBypassList: ['<-loopback>'] });
    return { inst, context, page: await context.newPage() };
  } catch (err) {
    await context?.close().catch(() => undefined);
    release(inst);
    throw browserError(inst, err);
  }
}

/** Whether a lease's browser is still the one to use (not crashed, not replaced). */
export const leaseUsable = (l: Lease) => !l.inst.dead && l.inst.browser.connected;

/** Closes the lease's context; one that cannot be closed means a hung browser, which is killed and replaced. */
export async function closeLease(l: Lease): Promise<void> {
  const closed = l.inst.dead
    ? true
    : await Promise.race([
        l.context.close().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5000).unref()),
      ]);
  if (!closed && !l.inst.dead) {
    ends.hung++;
    void end(l.inst, 0);
  }
  release(l.inst);
}

/** Runs `fn` on the lease's page, bounded by the job's signal and time limit. */
export async function usePage<T>(l: Lease, fn: (page: Page) => Promise<T>, ctx: EngineContext): Promise<T> {
  try {
    return await bounded(() => fn(l.page), ctx);
  } catch (err) {
    throw browserError(l.inst, err);
  }
}

/**
 * `work`, unless the job's signal or time limit comes first; what `work` yields after that goes to `late`
 * (a lease opened for a job that is gone must still be closed).
 */
export async function bounded<T>(work: () => Promise<T>, ctx: EngineContext, late?: (value: T) => void): Promise<T> {
  ctx.signal?.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let settled = false;
  try {
    const stop = new Promise<never>((_, reject) => {
      if (ctx.timeoutMs)
        timer = setTimeout(() => reject(new EngineError('chromium', `timed out after ${ctx.timeoutMs} ms`, { timedOut: true })), ctx.timeoutMs);
      onAbort = () => reject(new EngineError('chromium', 'cancelled', { aborted: true }));
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
    });
    stop.catch(() => undefined);
    const running = work();
    running.then(
      (v) => settled && late?.(v),
      () => undefined,
    );
    return await Promise.race([running, stop]);
  } finally {
    settled = true;
    clearTimeout(timer);
    if (onAbort) ctx.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Renderer memory. A page's renderer cannot be named reliably from outside: CDP tells no target's pid, and
 * comparing renderer pids before and after a page opens is fooled by Chromium's spare renderer (made ahead,
 * taken by the next page) and by pages opening at once. So no page is mapped to a pid: while jobs with a memory
 * limit run on a browser, every 250 ms its renderers are listed (CDP SystemInfo.getProcessInfo, browser
 * session) and their resident memory read (/proc/<pid>/status, VmRSS); a renderer over the limit is killed at
 * once (SIGKILL, as closing its context would: its pages and nothing else die with it, each context having
 * renderers of its own). The job whose page this was learns it from its page crashing (Inspector.targetCrashed)
 * within a moment of such a kill, and is cut with the memory limit; every other job runs on. (A cross-site frame
 * over the limit is killed too; its page then prints without it.)
 */
interface MemoryWatch {
  maxBytes: number;
}

const SAMPLE_MS = 250;

/** Resident bytes of a process, or 0 once it is gone. */
function residentBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Largest renderer resident size seen over the run, for tests and the benchmark. */
let rendererPeakBytes = 0;

async function sample(inst: Instance): Promise<void> {
  if (inst.dead || !inst.watches.size) return;
  const maxBytes = Math.min(...[...inst.watches].map((w) => w.maxBytes));
  inst.session ??= inst.browser.target().createCDPSession();
  const session = await inst.session;
  const { processInfo } = (await session.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
  for (const p of processInfo) {
    if (p.type !== 'renderer') continue;
    const rss = residentBytes(p.id);
    rendererPeakBytes = Math.max(rendererPeakBytes, rss);
    if (rss <= maxBytes) continue;
    inst.memoryKilledAt = Date.now();
    ends.rendererMemoryKills++;
    try {
      process.kill(p.id, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/**
 * Watches the renderer memory of the lease's browser until the returned `stop`: `onExceeded` runs when the
 * lease's page crashes because its renderer passed `maxBytes` and was killed (see above).
 */
export function watchMemory(l: Lease, maxBytes: number, onExceeded: () => void): () => void {
  const inst = l.inst;
  const watch: MemoryWatch = { maxBytes };
  const onCrash = () => {
    // The kill is noted before it is sent; the crash reaches us after it.
    if (Date.now() - inst.memoryKilledAt < 5000) onExceeded();
  };
  l.page.on('error', onCrash);
  inst.watches.add(watch);
  let busy = false;
  inst.sampler ??= setInterval(() => {
    if (busy) return;
    busy = true;
    sample(inst)
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, SAMPLE_MS).unref();
  return () => {
    l.page.off('error', onCrash);
    inst.watches.delete(watch);
    if (!inst.watches.size) {
      clearInterval(inst.sampler);
      inst.sampler = undefined;
    }
  };
}

function browserError(inst: Instance, err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  if (inst.dead || !inst.browser.connected) return new EngineError('chromium', 'the browser crashed', { crashed: true });
  return new EngineError('chromium', (err as Error).message.split('\n')[0]);
}

/** A fresh page in a fresh context for one job (see openLease / usePage / closeLease). */
export async function withPage<T>(o: ContextOptions, fn: (page: Page) => Promise<T>, ctx: EngineContext): Promise<T> {
  const lease = await bounded(
    () => openLease(o),
    ctx,
    (l) => void closeLease(l),
  );
  try {
    return await usePage(lease, fn, ctx);
  } finally {
    await closeLease(lease);
  }
}

const shutdownHooks: (() => Promise<void>)[] = [];
/** Work to finish before the browsers go (a prepared page and its proxy). */
export function beforeBrowserShutdown(hook: () => Promise<void>): void {
  shutdownHooks.push(hook);
}

/** Closes every browser and kills what is left of their process groups. */
export async function shutdownBrowser(): Promise<void> {
  clearTimeout(recovery);
  recovery = undefined;
  for (const hook of shutdownHooks) await hook().catch(() => undefined);
  currentInst = null;
  await Promise.all([...instances].map((i) => end(i)));
  launchFailure = null;
}

/** Why Chromium cannot be launched (its last launch failed), or null: for /health. */
export const browserDown = () => launchFailure;

/** For tests, the benchmark and metrics: browsers running now, pages open on them, launches and ends so far. */
export const browserStats = () => ({
  running: [...instances].filter((i) => !i.dead).length,
  pagesOpen: [...instances].reduce((n, i) => n + i.active, 0),
  launches,
  ...ends,
  pids: [...instances].map((i) => i.pid),
  rendererPeakBytes,
});
