import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../errors.js';
import type { ExtractedFile, ZipLimits } from './zip.js';

/** What one worker is asked to do: only plain data (paths and settings) crosses, never streams or bytes. */
export type ArchiveJob =
  | { op: 'extract'; path: string; dir: string; limits: ZipLimits; password?: string }
  | { op: 'write'; files: { path: string; name: string }[]; out: string };

/** What a worker sends back: progress any number of times, then files or error once. */
export type ArchiveReply = { progress: number } | { files: ExtractedFile[] } | { error: { code?: ErrorCode; message: string } };

// The build (`npm start`) runs dist/app/archive/zip-worker.js next to this file. Under tsx (tests, `npm run
// dev`) this file is the .ts source: Node 20 does not carry tsx's loader hooks into worker threads, so a small
// bootstrap registers tsx inside the thread before importing zip-worker.ts.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER = new URL(`./zip-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);
const startWorker = (workerData: ArchiveJob) =>
  FROM_SOURCE
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(WORKER, { workerData });

/**
 * Runs one archive job in its own worker thread, so decryption, inflating and deflating never hold the event
 * loop that answers other requests. The job's signal terminates the thread (its open files are closed with it).
 */
function runArchiveJob(job: ArchiveJob, opts: { signal?: AbortSignal; progress?: (fraction: number) => void }): Promise<ExtractedFile[]> {
  opts.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const worker = startWorker(job);
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
    worker.on('message', (m: ArchiveReply) => {
      if ('progress' in m) {
        if (!settled) opts.progress?.(m.progress);
      } else if ('files' in m) settle(() => resolve(m.files));
      else settle(() => reject(m.error.code ? new AppError(m.error.code, m.error.message) : new Error(m.error.message)));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`The archive worker stopped (exit code ${code}) before answering.`))));
  });
}

/**
 * Extracts every file entry of the zip at `path` into `dir` under generated names, in a worker thread
 * (`extractZipHere` of zip.ts does the work there, limits included). Errors keep their kind: a missing or wrong
 * password is 401, a limit 422 naming its setting, a broken archive 400.
 */
export const extractZip = (
  path: string,
  dir: string,
  limits: ZipLimits,
  opts: { password?: string; signal?: AbortSignal; progress?: (fraction: number) => void } = {},
): Promise<ExtractedFile[]> =>
  runArchiveJob({ op: 'extract', path, dir, limits: { ...limits }, password: opts.password }, { signal: opts.signal, progress: opts.progress });

/** Writes `files` into one deflated zip at `out`, in order, under unique names, in a worker thread. */
export async function writeZip(files: { path: string; name: string }[], out: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
  await runArchiveJob({ op: 'write', files: files.map((f) => ({ path: f.path, name: f.name })), out }, { signal: opts.signal });
}
