import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../errors.js';
import type { Invoice } from './cii.js';
import type { Finding } from './rules.js';

export type RulesReply = { invoice: Invoice; findings: Finding[] } | { error: { code?: ErrorCode; message: string } };

// As app/archive/thread.ts: the build runs dist/app/invoice/rules-worker.js; under tsx the thread registers tsx first.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER = new URL(`./rules-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);
const startWorker = (workerData: { path: string }) =>
  FROM_SOURCE
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(WORKER, { workerData });

/**
 * Parses the invoice XML at `path` and applies the business rules in a worker thread: a 20 MB invoice takes
 * seconds to parse, which must not hold the event loop that answers other requests. The job's signal
 * terminates the thread.
 */
export function checkInvoiceRules(path: string, signal?: AbortSignal): Promise<{ invoice: Invoice; findings: Finding[] }> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const worker = startWorker({ path });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      fn();
      void worker.terminate();
    };
    const abort = () => settle(() => reject(signal!.reason));
    signal?.addEventListener('abort', abort, { once: true });
    worker.on('message', (m: RulesReply) => {
      if ('error' in m) settle(() => reject(m.error.code ? new AppError(m.error.code, m.error.message) : new Error(m.error.message)));
      else settle(() => resolve(m));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`The invoice worker stopped (exit code ${code}) before answering.`))));
  });
}
