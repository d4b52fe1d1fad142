import { parentPort, type ResourceLimits, Worker, workerData } from 'node:worker_threads';
import { AppError, type ErrorCode } from './errors.js';

/**
 * Work that would hold the event loop answering other requests (zip.js, parsing a large invoice, typesetting a
 * large document) runs in a worker thread per job, through these functions: one protocol (progress messages, then
 * one result or one error), AppError codes kept across (401 password, 422 limit, 400 bad input), and the job's
 * signal terminating the thread (its open files close with it).
 */
type Reply<T> = { progress: number } | { result: T } | { error: { code?: ErrorCode; message: string } };

/**
 * Inputs up to this size are worked on in the caller: a thread's start costs more than they take (typesetting
 * ~70 ms, parsing an invoice ~30 ms at this size).
 */
export const INLINE_BYTES = 256 * 1024;

/**
 * The worker module `name` beside the caller: the build runs dist/.../<name>.js; under tsx (tests, `npm run dev`)
 * the caller is .ts source, and so is its worker.
 */
export const threadModule = (name: string, callerUrl: string) => new URL(`${name}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl);

// Node 20 does not carry tsx's loader hooks into worker threads: a bootstrap registers tsx there first.
export function startWorker(module: URL, data: unknown, opts: { resourceLimits?: ResourceLimits } = {}): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, { workerData: data, ...opts });
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data, ...opts });
}

/** Runs `module` (written with `serveThread`) on `data` in a new worker thread; only plain data crosses. */
export function runInThread<T>(module: URL, data: unknown, opts: { what: string; signal?: AbortSignal; progress?: (fraction: number) => void }): Promise<T> {
  opts.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const worker = startWorker(module, data);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', abort);
      fn();
      void worker.terminate();
    };
    const abort = () => settle(() => reject(opts.signal!.reason));
    opts.signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (m: Reply<T>) => {
      if ('progress' in m) {
        if (!settled) opts.progress?.(m.progress);
      } else if ('result' in m) settle(() => resolve(m.result));
      else settle(() => reject(m.error.code ? new AppError(m.error.code, m.error.message) : new Error(m.error.message)));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`The ${opts.what} worker stopped (exit code ${code}) before answering.`))));
  });
}

/** The worker side: runs `work` on the thread's data and answers once with its result or its error's kind and text. */
export function serveThread<D, T>(work: (data: D, progress: (fraction: number) => void) => Promise<T>): void {
  const reply = (m: Reply<T>) => parentPort!.postMessage(m);
  work(workerData as D, (fraction) => reply({ progress: fraction })).then(
    (result) => reply({ result }),
    (err) => reply({ error: { code: err instanceof AppError ? err.code : undefined, message: (err as Error)?.message ?? String(err) } }),
  );
}
