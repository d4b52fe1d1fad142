import { AsyncLocalStorage } from 'node:async_hooks';
import { type ChildProcess, fork } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { setPriority } from 'node:os';
import { execa, type ResultPromise } from 'execa';
import { EngineError } from './errors.js';

export interface RunOptions {
  /** Working directory: the job's own temp dir. Also HOME, so tools write their caches there. */
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Extra environment variables; the base env is minimal on purpose (no secrets of ours leak to tools). */
  env?: Record<string, string>;
  input?: string | Buffer;
  /** Exit codes that are not failures (qpdf exits 3 for warnings). */
  okExitCodes?: number[];
  /** Keep stdout as a Buffer instead of text. */
  binary?: boolean;
  /** Called with each stderr line (progress parsing). */
  onStderrLine?: (line: string) => void;
  /**
   * Bytes of stdout, and of stderr, kept in memory at most (default 512 MB): beyond, the process group is killed
   * and the call fails with `details.limit` 'bytes'. Callers whose tool runs client programs or dumps a client's
   * file set a cap that fits what they expect.
   */
  maxBuffer?: number;
  /**
   * Time one page may take: `starts` finds, in stderr, where the tool begins a page (group 1: its number); the
   * process is cut when no page begins for `ms` (also before the first), and fails with `details.stalledPage`.
   * So a page that loops costs its budget, not the whole job's time limit.
   */
  pageBudget?: { ms: number; starts: RegExp };
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stdoutBuffer: Buffer;
  stderr: string;
}

const STDERR_TAIL = 4000;
const MAX_BUFFER = 512 * 1024 * 1024;
const baseEnv = () => ({ PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });

/** Observers of finished processes (the app logs stderr through this; engines stay free of logging). */
type RunListener = (event: { tool: string; args: string[]; exitCode?: number; ms: number; stderr: string }) => void;
const listeners: RunListener[] = [];
export function onRun(listener: RunListener): void {
  listeners.push(listener);
}
/** Tells the observers of this thread about a process that ended in another (a job run in a worker thread). */
export function reportRun(event: Parameters<RunListener>[0]): void {
  for (const l of listeners) l(event);
}

/**
 * Observers of process groups as they start and end: a job run in a worker thread reports its engines' groups to
 * the main thread, which kills them when the thread dies without killing them itself (out of memory).
 */
type GroupListener = (pid: number, running: boolean) => void;
const groupListeners: GroupListener[] = [];
export function onProcessGroup(listener: GroupListener): void {
  groupListeners.push(listener);
}
/** For process groups started elsewhere than run() (Chromium through puppeteer). */
export function reportProcessGroup(pid: number, running: boolean): void {
  for (const l of groupListeners) l(pid, running);
}

const priority = new AsyncLocalStorage<number>();

/**
 * Runs `fn` so that every process it starts (and their children) runs at `niceness` (0-19): the scheduler
 * starts heavy jobs this way, so the kernel gives light requests' engines the CPU first.
 */
export function withPriority<T>(niceness: number, fn: () => Promise<T>): Promise<T> {
  return priority.run(niceness, fn);
}

/** The niceness withPriority set for the caller, to carry it into a worker thread. */
export const currentPriority = (): number | undefined => priority.getStore();

/**
 * The only place that starts processes: an argument array (never a shell string), the job dir as cwd and
 * HOME, a minimal environment, a timeout and an abort signal that kill the whole process group.
 */
export async function run(tool: string, args: string[], opts: RunOptions): Promise<RunResult> {
  return start(tool, args, opts, true).done;
}

/** A running process whose stdout is read as it comes, with backpressure (the tool blocks while we are busy). */
export interface Streamed {
  stdout: AsyncIterable<Buffer>;
  /** Settles when the process ends, as run() does; stdout fields are empty. */
  done: Promise<RunResult>;
}

/**
 * run() for tools whose output is large (raw pixels): stdout is not buffered. The consumer must read `stdout`
 * to the end (or abort through the signal) and await `done`.
 */
export function stream(tool: string, args: string[], opts: RunOptions): Streamed {
  return start(tool, args, opts, false);
}

/**
 * Processes running per caller signal. Each listens to it twice (execa's cancelSignal, the group kill) until it
 * ends, and a job runs several at once (pages in parallel, readers side by side): the signal's listener limit
 * follows what is in flight, so Node's leak warning still means a listener that was never removed.
 */
const inFlight = new WeakMap<AbortSignal, number>();
function listening(signal: AbortSignal | undefined, delta: 1 | -1): void {
  if (!signal) return;
  const n = (inFlight.get(signal) ?? 0) + delta;
  inFlight.set(signal, n);
  setMaxListeners(10 + 2 * n, signal);
}

function start(tool: string, args: string[], opts: RunOptions, buffer: boolean): Streamed {
  const started = Date.now();
  listening(opts.signal, 1);
  const child: ResultPromise = execa(tool, args, {
    cwd: opts.cwd,
    env: { ...baseEnv(), HOME: opts.cwd, TMPDIR: opts.cwd, ...opts.env },
    extendEnv: false,
    reject: false,
    detached: true, // own process group, so a kill reaches the tool's children too (gs, soffice, chromium)
    cancelSignal: opts.signal,
    timeout: opts.timeoutMs,
    forceKillAfterDelay: 2000,
    killSignal: 'SIGTERM',
    input: opts.input,
    stdin: opts.input === undefined ? 'ignore' : 'pipe',
    encoding: opts.binary || !buffer ? 'buffer' : 'utf8',
    buffer: buffer ? true : { stdout: false, stderr: true },
    stripFinalNewline: false,
    maxBuffer: opts.maxBuffer ?? MAX_BUFFER,
  });
  if (child.pid) for (const l of groupListeners) l(child.pid, true);
  const niceness = priority.getStore();
  if (niceness && child.pid) {
    try {
      setPriority(child.pid, niceness);
    } catch {
      /* exited already */
    }
  }
  const killGroup = () => {
    if (child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* group already gone */
      }
    }
  };
  opts.signal?.addEventListener('abort', killGroup, { once: true });
  const budget = opts.pageBudget && child.stderr ? watchPages(child.stderr, opts.pageBudget, killGroup) : undefined;
  if (opts.onStderrLine && child.stderr) {
    let rest = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split(/\r?\n|\r/);
      rest = lines.pop() ?? '';
      for (const line of lines) opts.onStderrLine!(line);
    });
  }
  const done = (async () => {
    const result = await child;
    opts.signal?.removeEventListener('abort', killGroup);
    listening(opts.signal, -1);
    if (result.timedOut || result.isCanceled || result.isMaxBuffer) killGroup();
    // With binary stdout (and in stream()) execa hands stderr over as bytes too.
    const rawStderr = result.stderr as unknown;
    const stderr = (rawStderr instanceof Uint8Array ? Buffer.from(rawStderr).toString('utf8') : String(rawStderr ?? '')).slice(-STDERR_TAIL).trim();
    const exitCode = result.exitCode ?? -1;
    budget?.stop();
    if (child.pid) for (const l of groupListeners) l(child.pid, false);
    for (const l of listeners) l({ tool, args, exitCode: result.exitCode, ms: Date.now() - started, stderr });

    if (budget?.stalledPage !== undefined && !opts.signal?.aborted) {
      const where = budget.stalledPage ? `page ${budget.stalledPage}` : 'opening the document';
      throw new EngineError(tool, `spent more than ${opts.pageBudget!.ms} ms on ${where}`, { timedOut: true, stalledPage: budget.stalledPage, stderr });
    }
    if (result.timedOut) throw new EngineError(tool, `timed out after ${opts.timeoutMs} ms`, { timedOut: true, stderr });
    if (result.isCanceled || opts.signal?.aborted) throw new EngineError(tool, 'cancelled', { aborted: true, stderr });
    if (result.isMaxBuffer) throw new EngineError(tool, `wrote more than ${opts.maxBuffer ?? MAX_BUFFER} bytes of output`, { limit: 'bytes', stderr });
    if ((result as { code?: string }).code === 'ENOENT' || (/ENOENT/.test(String(result.message ?? '')) && result.exitCode === undefined)) {
      throw new EngineError(tool, 'not installed', { missing: true });
    }
    const ok = exitCode === 0 || (opts.okExitCodes ?? []).includes(exitCode);
    if (!ok) throw new EngineError(tool, `exited with ${exitCode}`, { exitCode, stderr });
    // execa 9 hands binary output over as a Uint8Array.
    const out = buffer ? (result.stdout as unknown) : undefined;
    const stdoutBuffer = out instanceof Uint8Array ? Buffer.from(out.buffer, out.byteOffset, out.byteLength) : Buffer.from(String(out ?? ''));
    return { exitCode, stdout: opts.binary || !buffer ? '' : String(result.stdout ?? ''), stdoutBuffer, stderr };
  })();
  return { stdout: child.stdout as AsyncIterable<Buffer>, done };
}

/** Kills (through `kill`) a process whose stderr shows no page starting for `budget.ms`; says which page it was on. */
function watchPages(stderr: NodeJS.ReadableStream, budget: { ms: number; starts: RegExp }, kill: () => void) {
  const state = { stalledPage: undefined as number | undefined, stop: () => clearTimeout(timer) };
  let page = 0;
  let tail = '';
  const arm = () => setTimeout(() => ((state.stalledPage = page), kill()), budget.ms);
  let timer = arm();
  const starts = new RegExp(budget.starts.source, budget.starts.flags.includes('g') ? budget.starts.flags : `${budget.starts.flags}g`);
  stderr.on('data', (chunk: Buffer) => {
    // A page's mark may come in two chunks: look at it again with the end of the previous one.
    const text = tail + chunk.toString('latin1');
    let seen = false;
    for (const m of text.matchAll(starts)) {
      if (m.index! + m[0].length <= tail.length) continue;
      page = Number(m[1]);
      seen = true;
    }
    tail = text.slice(-200);
    if (seen && state.stalledPage === undefined) {
      clearTimeout(timer);
      timer = arm();
    }
  });
  return state;
}

/** Fails when a tool reported success but did not write what it was asked to (Ghostscript does this). */
export async function expectOutput(tool: string, path: string): Promise<void> {
  const { stat } = await import('node:fs/promises');
  const s = await stat(path).catch(() => null);
  if (!s || s.size === 0) throw new EngineError(tool, `produced no output at ${path}`);
}

/**
 * A Node.js child process running `module` (a file path) with `execArgv`, talking over IPC with structured clone
 * (Buffers cross as they are): where the app runs its own JavaScript apart from the server (jobs whose heap must
 * be capped), its output on the server's stdout and stderr.
 */
export function forkNode(module: string, execArgv: string[]): ChildProcess {
  return fork(module, [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
