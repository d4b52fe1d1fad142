import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../../engines/errors.js';
import { currentPriority, forkNode, reportRun } from '../../engines/run.js';
import { readBudgets } from '../document/index.js';
import { AppError, type ErrorCode, limitExceeded } from '../errors.js';
import type { OperationResult, RunContext } from '../requests/operation.js';
import { threadModule } from '../threads.js';

/**
 * Operations whose JavaScript work grows with the document (page models, Word/Excel/PowerPoint, redaction,
 * comparison, summaries) run in a child Node process whose V8 heap is capped at JOB_MAX_MEMORY_MB: a document past
 * the cap ends its own job with a 422 naming the setting, where it would otherwise end the server and every other
 * client's work with it. A process, not a worker thread: V8 ends the whole process for some allocations past a
 * thread's heap limit (flattening a long string: the 2,010-page /word took the server down from a thread capped at
 * 2,048 MB). The processes are kept warm between jobs (the first job loads the operation's modules, ~1 s), one job
 * at a time each, and thrown away when a job dies in them, leaves them grown past WARM_MAX_RSS_MB, or is cancelled
 * (client gone, time budget spent, shutdown). (Named threads still: they are the job's threads of work.)
 */

/** What crosses to the thread: the run's context without its functions (progress comes back as messages; a cancel ends the process). */
type Plain = Omit<RunContext<unknown>, 'signal' | 'progress'>;

export type ThreadReply =
  | { progress: number }
  | { result: OperationResult; rss?: number }
  | { error: SerializedError; rss?: number }
  | { group: number; running: boolean }
  | { ran: Parameters<typeof reportRun>[0] };

/** Errors keep their kind across: the repair and the error mapper look at AppError codes and engine failures. */
export type SerializedError =
  | { kind: 'app'; code: ErrorCode; message: string; field?: string; headers: Record<string, string>; cause?: SerializedError[] }
  | { kind: 'engine'; tool: string; message: string; details: EngineError['details'] }
  | { kind: 'other'; message: string };

export function serializeError(err: unknown): SerializedError {
  if (err instanceof AppError) {
    const cause = Array.isArray(err.cause) ? err.cause.map(serializeError) : undefined;
    return { kind: 'app', code: err.code, message: err.message, field: err.field, headers: err.headers, cause };
  }
  if (err instanceof EngineError) return { kind: 'engine', tool: err.tool, message: err.message.slice(err.tool.length + 2), details: err.details };
  return { kind: 'other', message: (err as Error)?.message ?? String(err) };
}

function deserializeError(e: SerializedError): Error {
  if (e.kind === 'engine') return new EngineError(e.tool, e.message, e.details);
  if (e.kind === 'other') return new Error(e.message);
  const err = new AppError(e.code, e.message, e.headers);
  if (e.field) err.field = e.field;
  if (e.cause) err.cause = e.cause.map(deserializeError);
  return err;
}

type ChildProcess = ReturnType<typeof forkNode>;

interface Slot {
  worker: ChildProcess;
  /** Process groups the thread's engines are running in. */
  groups: Set<number>;
  idleTimer?: NodeJS.Timeout;
}

/** Idle threads per heap cap (tests run apps with different caps in one process). */
const idle = new Map<number, Slot[]>();
const IDLE_MS = 60_000;
/**
 * A process a big job left larger than this (or than half its heap cap) is let go, not kept warm: V8 keeps the heap
 * it grew (the 2,010-page /markdown left one holding ~1 GB), and idle processes holding that much would make the
 * server's memory grow with the largest documents it has seen rather than stay flat. A fresh one costs ~1 s.
 */
const WARM_MAX_RSS_MB = 512;
/**
 * V8's young generation (MB a semi-space), larger than its default: reading a page of text makes ~0.6 MB of glyph
 * objects that live until the page is built. In a small young generation they outlive a scavenge, are copied and
 * promoted, and the old generation collects them. MuPDF's text of 50 dense pages, parsed and built: 16-20 ms a page
 * at 4 MB, 13-15 at 16 MB, 8-10 at 32 MB (the fastest of 7 runs, in several trials); 2,010 pages read: 39.6 -> 29.2
 * CPU s from 4 to 32 MB, peak RSS 407 -> 460 MB. A warm process gives the pages back after each job (settledRss).
 */
const SEMI_SPACE_MB = 32;
/**
 * How far V8 lets the old generation grow past what the last full collection kept (percent): by default it grows to
 * several times that on a big machine. /word of 300 dense pages, ~150 MB alive: 948 MB peak RSS by default, 577 MB
 * at 100 % for 6 % more CPU; /markdown of 2,010 pages unchanged (~590 MB, same CPU).
 */
const HEAP_GROWING_PERCENT = 100;
/** A SIGKILLed process is gone at once; past this the job ends anyway (a process stuck in the kernel). */
const GONE_WAIT_MS = 10_000;
const workerModule = threadModule('operation-worker', import.meta.url);

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** Child processes of `pid` (engines start in groups of their own, still its children). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return []; // gone, or no /proc
  }
}

function takeSlot(maxMb: number): Slot {
  const slot = idle.get(maxMb)?.pop();
  if (slot) {
    clearTimeout(slot.idleTimer);
    hold(slot.worker, true);
    return slot;
  }
  // Under tsx (tests, `npm run dev`) the worker is .ts source: the child loads tsx first.
  const tsx = workerModule.pathname.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : [];
  const worker = forkNode(fileURLToPath(workerModule), [
    ...tsx,
    `--max-old-space-size=${maxMb}`,
    `--max-semi-space-size=${SEMI_SPACE_MB}`,
    `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    '--expose-gc',
  ]);
  return { worker, groups: new Set() };
}

/** Keeps the process alive while a job runs in the child, and not while it idles. */
function hold(worker: ChildProcess, held: boolean): void {
  if (held) {
    worker.ref();
    worker.channel?.ref();
  } else {
    worker.unref();
    worker.channel?.unref();
  }
}

/**
 * A thread let go, with every engine it started (a Chromium for an XFA form, a job's readers): stopped first, so it
 * starts none while they are found, from its reports and from /proc (one started as it was stopped may not be
 * reported yet).
 */
function discard(slot: Slot): void {
  clearTimeout(slot.idleTimer);
  const { pid } = slot.worker;
  if (pid && slot.worker.exitCode === null && slot.worker.signalCode === null) {
    try {
      process.kill(pid, 'SIGSTOP');
    } catch {
      /* exited meanwhile */
    }
    for (const child of childrenOf(pid)) slot.groups.add(child);
  }
  for (const group of slot.groups) killGroup(group);
  slot.groups.clear();
  slot.worker.kill('SIGKILL');
}

function release(slot: Slot, maxMb: number, rss = 0): void {
  const list = idle.get(maxMb) ?? [];
  idle.set(maxMb, list);
  if (list.length >= availableParallelism() || rss > Math.min(WARM_MAX_RSS_MB, maxMb / 2) * 1048576) {
    discard(slot);
    return;
  }
  // An idle thread holds no job: it neither keeps the process alive nor lives forever.
  hold(slot.worker, false);
  slot.idleTimer = setTimeout(() => {
    list.splice(list.indexOf(slot), 1);
    discard(slot);
  }, IDLE_MS).unref();
  list.push(slot);
}

/** Lets every idle thread go (shutdown; tests closing an app). Threads running a job end with it. */
export function shutdownThreads(): void {
  for (const list of idle.values()) for (const slot of list.splice(0)) discard(slot);
}

/**
 * Runs the operation declared at `module` (its path `path`) in a warm thread with the job's context; progress comes
 * back as it is reported. The job's signal ends the thread and its engines at once (its JavaScript may be in a loop
 * that never looks at a signal, and its heap holds the document), and the job ends only once the process is gone,
 * so nothing works or writes in the job's dir after the job has removed it.
 */
export function runOperationInThread(module: string, path: string, ctx: RunContext<unknown>, maxMb: number): Promise<OperationResult> {
  ctx.signal.throwIfAborted();
  const { signal, progress, ...rest } = ctx;
  const plain: Plain = rest;
  const slot = takeSlot(maxMb);
  const { worker } = slot;
  return new Promise((resolve, reject) => {
    let finished = false;
    /** Ends the run once: the thread kept warm with the answer's rss, else let go. */
    const finish = (keep: { rss?: number } | false) => {
      if (finished) return false;
      finished = true;
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
      if (keep) release(slot, maxMb, keep.rss);
      else discard(slot);
      return true;
    };
    const onMessage = (m: ThreadReply) => {
      if ('group' in m) m.running ? slot.groups.add(m.group) : slot.groups.delete(m.group);
      else if ('ran' in m) reportRun(m.ran);
      else if ('progress' in m) progress(m.progress);
      else if (finish({ rss: m.rss })) 'result' in m ? resolve(m.result) : reject(deserializeError(m.error));
    };
    const onError = (err: Error) => finish(false) && reject(err);
    const onExit = (code: number | null, exitSignal: NodeJS.Signals | null) => {
      if (!finish(false)) return;
      // V8 out of heap aborts the process (SIGABRT); the kernel's OOM killer sends SIGKILL (ours come after finish).
      const outOfMemory = exitSignal === 'SIGABRT' || exitSignal === 'SIGKILL' || code === 134;
      reject(
        outOfMemory
          ? limitExceeded('The memory the job needed for this document', 'JOB_MAX_MEMORY_MB', maxMb)
          : new Error(`The process running ${path} stopped (exit code ${code}, ${exitSignal ?? 'no signal'}) before answering.`),
      );
    };
    const onAbort = () => {
      // Reports still in the channel name engines started just before the stop: they go too.
      worker.on('message', (m: ThreadReply) => 'group' in m && m.running && killGroup(m.group));
      const ended = () => reject(signal.reason);
      worker.once('close', ended);
      setTimeout(ended, GONE_WAIT_MS).unref();
      finish(false);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.send({ run: { module, path, ctx: plain, budgets: readBudgets(), niceness: currentPriority() } });
  });
}
