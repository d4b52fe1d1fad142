import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { EngineError } from '../../engines/errors.js';
import { currentPriority, reportRun } from '../../engines/run.js';
import { readBudgets } from '../document/index.js';
import { AppError, type ErrorCode, limitExceeded } from '../errors.js';
import type { OperationResult, RunContext } from '../http/operation.js';
import { startWorker, threadModule } from '../threads.js';

/**
 * Operations whose JavaScript work grows with the document (page models, Word/Excel/PowerPoint, redaction,
 * comparison, summaries) run in a worker thread whose V8 heap is capped at JOB_MAX_MEMORY_MB: a document past the
 * cap ends its own job with a 422 naming the setting, where it would otherwise end the process and every other
 * client's work with it. Threads are kept warm between jobs (a thread's first job loads the operation's modules,
 * ~1 s), one job at a time each, and thrown away when a job dies in them.
 */

/** What crosses to the thread: the run's context without its functions (signal and progress travel as messages). */
type Plain = Omit<RunContext<unknown>, 'signal' | 'progress'>;

export type ThreadReply =
  | { progress: number }
  | { result: OperationResult }
  | { error: SerializedError }
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

interface Slot {
  worker: Worker;
  /** Process groups the thread's engines are running in. */
  groups: Set<number>;
  idleTimer?: NodeJS.Timeout;
}

/** Idle threads per heap cap (tests run apps with different caps in one process). */
const idle = new Map<number, Slot[]>();
const IDLE_MS = 60_000;
const workerModule = threadModule('operation-worker', import.meta.url);

function killGroups(slot: Slot): void {
  for (const pid of slot.groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  slot.groups.clear();
}

function takeSlot(maxMb: number): Slot {
  const slot = idle.get(maxMb)?.pop();
  if (slot) {
    clearTimeout(slot.idleTimer);
    slot.worker.ref();
    return slot;
  }
  return { worker: startWorker(workerModule, null, { resourceLimits: { maxOldGenerationSizeMb: maxMb } }), groups: new Set() };
}

/** A thread let go: its warm engines (a Chromium it started for an XFA form) go with it. */
function discard(slot: Slot): void {
  clearTimeout(slot.idleTimer);
  killGroups(slot);
  void slot.worker.terminate();
}

function release(slot: Slot, maxMb: number): void {
  const list = idle.get(maxMb) ?? [];
  idle.set(maxMb, list);
  if (list.length >= availableParallelism()) {
    discard(slot);
    return;
  }
  // An idle thread holds no job: it neither keeps the process alive nor lives forever.
  slot.worker.unref();
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
 * Runs the operation declared at `module` (its path `path`) in a warm thread with the job's context; the job's
 * signal cancels it there (its engines are killed), progress comes back as it is reported.
 */
export function runOperationInThread(module: string, path: string, ctx: RunContext<unknown>, maxMb: number): Promise<OperationResult> {
  ctx.signal.throwIfAborted();
  const { signal, progress, ...rest } = ctx;
  const plain: Plain = rest;
  const slot = takeSlot(maxMb);
  const { worker } = slot;
  return new Promise((resolve, reject) => {
    let settled = false;
    let finished = false;
    const finish = (reusable: boolean) => {
      if (finished) return;
      finished = true;
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
      if (reusable) release(slot, maxMb);
      else {
        killGroups(slot);
        void worker.terminate();
      }
    };
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    const onMessage = (m: ThreadReply) => {
      if ('group' in m) m.running ? slot.groups.add(m.group) : slot.groups.delete(m.group);
      else if ('ran' in m) reportRun(m.ran);
      else if ('progress' in m) !settled && progress(m.progress);
      else {
        // After a cancel the thread still answers once its engines are stopped: then it is clean to reuse.
        finish(true);
        settle(() => ('result' in m ? resolve(m.result) : reject(deserializeError(m.error))));
      }
    };
    const onError = (err: Error & { code?: string }) => {
      finish(false);
      settle(() =>
        reject(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? limitExceeded('The memory the job needed for this document', 'JOB_MAX_MEMORY_MB', maxMb) : err),
      );
    };
    const onExit = (code: number) => {
      finish(false);
      settle(() => reject(new Error(`The thread running ${path} stopped (exit code ${code}) before answering.`)));
    };
    const onAbort = () => {
      settle(() => reject(signal.reason));
      worker.postMessage({ abort: true });
      // A thread that does not answer the cancel soon (its JavaScript busy in a loop) is not worth waiting for.
      setTimeout(() => finish(false), 5_000).unref();
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.postMessage({ run: { module, path, ctx: plain, budgets: readBudgets(), niceness: currentPriority() } });
  });
}
