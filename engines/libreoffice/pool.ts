import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EngineContext } from '../context.js';
import { EngineError, onceMoreOnFreshInstance } from '../errors.js';
import { groupRss } from '../process-group.js';
import { pageCount } from '../qpdf.js';
import { expectOutput } from '../run.js';

/**
 * A pool of warm LibreOffice instances. A cold `soffice --convert-to` pays ~1 s of start-up per document;
 * an instance that is already running converts in 60-350 ms. Each slot is one UNO helper process
 * (uno_helper.py, run by Debian's /usr/bin/python3 because only it can import `uno`) which starts its own
 * soffice with a private profile and pipe: two instances sharing a profile hand work to each other and the
 * listener exits. Slots start lazily, are recycled after `maxJobs` conversions or when their resident memory
 * passes `maxRssMb` between jobs (soffice grows and never shrinks), and are killed and replaced when they
 * crash or exceed a job's time limit.
 *
 * A dead instance is not the document's fault: the helper exits as soon as its soffice is gone (so an instance
 * killed between jobs is replaced before it is handed a job), and a conversion whose instance dies, loses its pipe
 * or cannot start is run once more on a fresh one. Only a failure that repeats there blames the document (or, for
 * a start, reports the engine unavailable: 503).
 *
 * These are long-lived processes talking over stdio, which engines/run.ts (one process per call, output
 * collected at exit) cannot host; they get the same treatment: argument arrays, a minimal environment,
 * their own process group, killed as a group.
 */

export interface PoolOptions {
  /** Instances at most; follows CONCURRENCY (one conversion per instance at a time). */
  size: number;
  /** Conversions before an instance is replaced. */
  maxJobs: number;
  /** Resident memory (helper + soffice, summed over the process group) above which an instance is replaced after its job. */
  maxRssMb: number;
  /** Time allowed for an instance to start (first start creates its profile: a few seconds). */
  startTimeoutMs: number;
  python: string;
  soffice: string;
}

export interface OfficeExportOptions {
  /** Lossless (Flate) instead of JPEG for images. */
  lossless: boolean;
  /** Largest image resolution kept, in DPI; null keeps every image as it is. */
  maxImageDpi: number | null;
  tagged: boolean;
  /** `en-US` or `de-DE`: number and date formats of spreadsheets. */
  locale: string;
  /** The input's extension, which chooses the import filter for CSV. */
  ext: string;
  /** Cuts for hostile documents (none when absent). */
  limits?: Partial<OfficeLimits>;
}

/** Each one exceeded throws an EngineError whose `details.limit` says which (the caller names its setting). */
export interface OfficeLimits {
  /** Time one conversion may take on its instance (capped by the job's own time left); the instance is then replaced. */
  timeoutMs: number;
  /** Pages the PDF may have. */
  maxPages: number;
}

/** LibreOffice asked for a password: the document is encrypted. */
export class OfficePasswordError extends EngineError {
  constructor() {
    super('soffice', 'document is password protected');
  }
}

const defaults: PoolOptions = {
  size: Math.max(1, availableParallelism() - 1),
  maxJobs: 200,
  maxRssMb: 1024,
  // A first start took 6 s on a loaded 2-core machine: room for one ten times slower before calling it down.
  startTimeoutMs: 180_000,
  python: '/usr/bin/python3',
  soffice: 'soffice',
};
let options: PoolOptions = { ...defaults };

/** Sets the pool's size and limits; call before the first conversion (app/main.ts passes CONCURRENCY). */
export function configurePool(opts: Partial<PoolOptions>): void {
  options = { ...options, ...opts };
}

/** tsc does not copy .py files: from dist/engines/libreoffice the helper is back in the source tree. */
export function helperPath(): string {
  const candidates = [new URL('./uno_helper.py', import.meta.url), new URL('../../../engines/libreoffice/uno_helper.py', import.meta.url)];
  for (const c of candidates) {
    const p = fileURLToPath(c);
    if (existsSync(p)) return p;
  }
  throw new EngineError('soffice', 'uno_helper.py not found next to the pool or in the source tree', { missing: true });
}

/** The PDF export filter's FilterData for our options. Pure, so the mapping is testable. */
export function exportFilterData(o: OfficeExportOptions): Record<string, boolean | number> {
  return {
    UseLosslessCompression: o.lossless,
    Quality: 90,
    ReduceImageResolution: o.maxImageDpi !== null,
    ...(o.maxImageDpi !== null ? { MaxImageResolution: o.maxImageDpi } : {}),
    UseTaggedPDF: o.tagged,
    ExportBookmarks: true,
    EmbedStandardFonts: true,
  };
}

interface Answer {
  id?: number;
  ok?: boolean;
  ready?: boolean;
  kind?: 'password' | 'invalid' | 'crashed';
  message?: string;
}

interface Slot {
  index: number;
  child: ChildProcess;
  ready: Promise<void>;
  busy: boolean;
  jobs: number;
  dead: boolean;
  pending: Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>;
}

const slots: Slot[] = [];
const waiters: ((s: Slot) => void)[] = [];
let nextId = 1;
/** Instances started, and replaced: for their job count, their memory, killed (hung, timed out, cancelled) or crashed. */
const stats = { started: 0, recycledForJobs: 0, recycledForMemory: 0, killed: 0, crashed: 0 };
let generation = 0;
let exitHookSet = false;
/** Why the last start failed, until an instance starts again: /health reports the pool down meanwhile. */
let startFailure: string | null = null;
/**
 * While the pool is down, a start is tried now and then without waiting for a job: a balancer sends none to a
 * replica whose /health fails, so a pool that only started on demand would stay down.
 */
let recovery: NodeJS.Timeout | undefined;
const RECOVERY_MS = 30_000;
/** shutdownPool is stopping the instances: their ends are no start failures. */
let stopping = false;
const rootDir = join(tmpdir(), `quire-lo-${process.pid}`);

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

function freeSlotIndex(): number {
  for (let i = 0; ; i++) if (!slots.some((s) => s.index === i)) return i;
}

function startSlot(): Slot {
  if (!exitHookSet) {
    exitHookSet = true;
    // Last resort: no soffice survives its owner, even when shutdownPool() was never called.
    process.once('exit', () => slots.forEach((s) => killGroup(s.child)));
  }
  stats.started++;
  const index = freeSlotIndex();
  const home = join(rootDir, `slot${index}`);
  mkdirSync(home, { recursive: true });
  const child = spawn(options.python, [helperPath(), join(home, 'profile'), `quire_${process.pid}_${index}_${generation++}`], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', QUIRE_SOFFICE: options.soffice },
    detached: true,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const slot: Slot = { index, child, busy: false, jobs: 0, dead: false, pending: new Map(), ready: Promise.resolve() };
  let onReady: { resolve: () => void; reject: (e: Error) => void } | undefined;
  slot.ready = new Promise<void>((resolve, reject) => (onReady = { resolve, reject }));
  slot.ready.then(
    () => {
      startFailure = null;
    },
    (err: Error) => {
      if (!stopping) startFailed(err);
    },
  );
  const cannotStart = (message: string) => new EngineError('soffice', message, { unavailable: true });
  const startTimer = setTimeout(() => {
    onReady?.reject(cannotStart(`did not start within ${options.startTimeoutMs} ms`));
    retire(slot, true);
  }, options.startTimeoutMs);
  startTimer.unref();

  createInterface({ input: child.stdout! }).on('line', (line) => {
    let a: Answer;
    try {
      a = JSON.parse(line) as Answer;
    } catch {
      return; // soffice may print to the inherited stdout of the helper; not ours to parse
    }
    if (a.ready !== undefined) {
      clearTimeout(startTimer);
      if (a.ready) onReady?.resolve();
      else {
        // The helper exits now; until then no job may take it.
        slot.dead = true;
        onReady?.reject(cannotStart(`failed to start: ${a.message ?? ''}`));
      }
      onReady = undefined;
      return;
    }
    if (a.kind === 'crashed' && !slot.dead) {
      // The helper exits after this answer: nothing more may be sent to it.
      stats.crashed++;
      slot.dead = true;
    }
    const p = a.id !== undefined ? slot.pending.get(a.id) : undefined;
    if (p) {
      slot.pending.delete(a.id!);
      p.resolve(a);
    }
  });
  child.on('error', (err) => {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    onReady?.reject(new EngineError('soffice', err.message, { missing, unavailable: !missing }));
    retire(slot, true);
  });
  // A helper gone mid-write: its exit below fails the job, which is then retried.
  child.stdin!.on('error', () => undefined);
  child.on('exit', () => {
    clearTimeout(startTimer);
    onReady?.reject(cannotStart('exited during start-up'));
    if (!slot.dead) stats.crashed++;
    slot.dead = true;
    for (const p of slot.pending.values()) p.reject(new EngineError('soffice', 'the LibreOffice instance crashed', { crashed: true }));
    slot.pending.clear();
    remove(slot);
  });
  slots.push(slot);
  return slot;
}

function startFailed(err: Error): void {
  startFailure = err.message;
  recovery ??= setTimeout(() => {
    recovery = undefined;
    if (!startFailure || stopping || poolSize() >= options.size) return;
    try {
      startSlot();
    } catch (e) {
      startFailed(e as Error); // no helper or no profile directory: still down
    }
  }, RECOVERY_MS).unref();
}

function remove(slot: Slot): void {
  const i = slots.indexOf(slot);
  if (i >= 0) slots.splice(i, 1);
  // A waiter can now have a fresh instance in this slot's place.
  if (waiters.length && slots.length < options.size) {
    const s = startSlot();
    s.busy = true;
    waiters.shift()!(s);
  }
}

/** Ends an instance: politely (stdin closed, soffice terminated by the helper) or by killing its group. */
function retire(slot: Slot, kill: boolean): void {
  if (slot.dead) return;
  slot.dead = true;
  if (kill) {
    stats.killed++;
    killGroup(slot.child);
    // A killed profile may be half-written; the replacement starts from a clean one.
    rmSync(join(rootDir, `slot${slot.index}`, 'profile'), { recursive: true, force: true });
  } else {
    slot.child.stdin?.end();
    const t = setTimeout(() => killGroup(slot.child), 10_000);
    t.unref();
  }
}

async function acquire(signal?: AbortSignal): Promise<Slot> {
  const idle = slots.find((s) => !s.busy && !s.dead);
  if (idle) {
    idle.busy = true;
    return idle;
  }
  if (slots.filter((s) => !s.dead).length < options.size) {
    const s = startSlot();
    s.busy = true;
    return s;
  }
  return new Promise<Slot>((resolve, reject) => {
    const waiter = (s: Slot) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(s);
    };
    const onAbort = () => {
      const i = waiters.indexOf(waiter);
      if (i >= 0) waiters.splice(i, 1);
      reject(new EngineError('soffice', 'cancelled', { aborted: true }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiters.push(waiter);
  });
}

async function release(slot: Slot): Promise<void> {
  let recycle = !slot.dead && slot.jobs >= options.maxJobs;
  if (recycle) stats.recycledForJobs++;
  else if (!slot.dead && slot.child.pid && (await groupRss(slot.child.pid)) > options.maxRssMb * 1024 * 1024) {
    recycle = true;
    stats.recycledForMemory++;
  }
  slot.busy = false;
  if (recycle && !slot.dead) {
    retire(slot, false);
    remove(slot);
    return;
  }
  if (slot.dead) return;
  const next = waiters.shift();
  if (next) {
    slot.busy = true;
    next(slot);
  }
}

/**
 * Converts one office document to PDF on a warm instance. Paths must be absolute and inside the job dir. With
 * `limits.maxPages`, LibreOffice exports at most one page more than allowed, and one more is refused.
 */
export async function officeToPdf(input: string, output: string, opts: OfficeExportOptions, ctx: EngineContext): Promise<void> {
  const maxPages = opts.limits?.maxPages ?? Infinity;
  const filter = { ...exportFilterData(opts), ...(Number.isFinite(maxPages) ? { PageRange: `1-${maxPages + 1}` } : {}) };
  await convertOnPool({ input, output, ext: opts.ext, locale: opts.locale, filter }, ctx, opts.limits?.timeoutMs);
  if (Number.isFinite(maxPages) && (await pageCount(output, ctx)) > maxPages) {
    await rm(output, { force: true });
    throw new EngineError('soffice', `the document has more than ${maxPages} pages`, { limit: 'pages' });
  }
}

/** LibreOffice filter names for a conversion other than office to PDF (e.g. a PDF into Impress, out as PPTX). */
export interface OfficeFilters {
  /** Import filter forced on load (`impress_pdf_import`); without it LibreOffice detects the type. */
  importFilter?: string;
  /** Export filter (`Impress MS PowerPoint 2007 XML`). */
  exportFilter: string;
  /** The conversion's time (pages: the output is not a PDF here, so the caller counts its input's). */
  limits?: Partial<Pick<OfficeLimits, 'timeoutMs'>>;
}

/** Converts `input` with the given import and export filters on a warm instance. Paths as for officeToPdf. */
export async function officeConvert(input: string, output: string, filters: OfficeFilters, ctx: EngineContext): Promise<void> {
  await convertOnPool({ input, output, import: filters.importFilter, export: filters.exportFilter }, ctx, filters.limits?.timeoutMs);
}

/** `limitMs`: the conversion's own time limit; past it (when nearer than the job's) the error has `limit` 'time'. */
async function convertOnPool(request: Record<string, unknown> & { output: string }, ctx: EngineContext, limitMs = Infinity): Promise<void> {
  await onceMoreOnFreshInstance(() => convertOnce(request, ctx, limitMs), ctx.signal);
}

async function convertOnce(request: Record<string, unknown> & { output: string }, ctx: EngineContext, limitMs: number): Promise<void> {
  const output = request.output;
  const slot = await acquire(ctx.signal);
  let answer: Answer;
  try {
    await slot.ready;
    const id = nextId++;
    slot.jobs++;
    answer = await new Promise<Answer>((resolve, reject) => {
      const fail = (err: EngineError) => {
        slot.pending.delete(id);
        // A hung or abandoned conversion leaves soffice in an unknown state: replace the instance.
        retire(slot, true);
        reject(err);
      };
      const jobMs = ctx.timeoutMs || Infinity;
      const timeoutMs = Math.min(jobMs, limitMs);
      const timedOut = () =>
        limitMs <= jobMs
          ? new EngineError('soffice', `the conversion took longer than ${limitMs} ms`, { timedOut: true, limit: 'time' })
          : new EngineError('soffice', `timed out after ${timeoutMs} ms`, { timedOut: true });
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => fail(timedOut()), Math.min(timeoutMs, 2 ** 31 - 1)) : undefined;
      const onAbort = () => fail(new EngineError('soffice', 'cancelled', { aborted: true }));
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        ctx.signal?.removeEventListener('abort', onAbort);
      };
      slot.pending.set(id, {
        resolve: (a) => (done(), resolve(a)),
        reject: (e) => (done(), reject(e)),
      });
      const req = { ...request, id };
      slot.child.stdin!.write(`${JSON.stringify(req)}\n`);
    });
  } finally {
    // Not awaited: the memory check runs while the job's answer goes out; the slot stays busy until it is done.
    void release(slot);
  }
  if (!answer.ok) {
    if (answer.kind === 'password') throw new OfficePasswordError();
    throw new EngineError('soffice', answer.message ?? 'conversion failed', { stderr: answer.message, crashed: answer.kind === 'crashed' });
  }
  await expectOutput('soffice', output);
}

/** Stops every instance (closing stdin lets soffice exit cleanly; stragglers are killed) and removes the profiles. */
export async function shutdownPool(graceMs = 5000): Promise<void> {
  stopping = true;
  clearTimeout(recovery);
  recovery = undefined;
  const all = [...slots];
  for (const w of waiters.splice(0)) void w; // nothing will serve them; their jobs time out or are drained
  await Promise.all(
    all.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
          const t = setTimeout(() => {
            killGroup(s.child);
            resolve();
          }, graceMs);
          s.child.once('exit', () => {
            clearTimeout(t);
            // The helper's soffice is in its group; make sure nothing of it lingers.
            killGroup(s.child);
            resolve();
          });
          s.dead = true;
          s.child.stdin?.end();
        }),
    ),
  );
  slots.splice(0);
  rmSync(rootDir, { recursive: true, force: true });
  startFailure = null;
  stopping = false;
}

/** Why the pool cannot start an instance (its last start failed), or null: for /health. */
export const poolDown = () => startFailure;

/** For the benchmark and tests: how many instances are running now. */
export const poolSize = () => slots.filter((s) => !s.dead).length;

/** For tests, the log and metrics: instances started and replaced (by reason), running and busy now, and the pool's size. */
export const poolStats = () => ({ ...stats, running: poolSize(), busy: slots.filter((s) => s.busy && !s.dead).length, size: options.size });
