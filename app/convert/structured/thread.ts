import { readFile, stat, writeFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../../errors.js';
import type { MarkdownImages } from './markdown.js';
import type { StructuredOptions } from './options.js';
import { typesetStructured, type StructuredFormat, type Typeset } from './typeset.js';

/** Only plain data crosses into the worker: paths and options. */
export interface TypesetJob {
  format: StructuredFormat;
  source: string;
  name: string;
  options: StructuredOptions;
  images: MarkdownImages;
  out: string;
}
export type TypesetPrint = Omit<Typeset, 'html'>;
export type TypesetReply = { print: TypesetPrint } | { error: { code?: ErrorCode; message: string } };

/** Larger sources take more than ~70 ms to typeset (parsing, HTML): a worker thread spares the event loop. */
const INLINE_BYTES = 256 * 1024;

// As in app/archive/thread.ts: the build runs the .js worker; under tsx a bootstrap registers tsx in the thread.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER = new URL(`./typeset-worker${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url);
const startWorker = (workerData: TypesetJob) =>
  FROM_SOURCE
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(WORKER, { workerData });

/**
 * Typesets the document at `job.source` and writes its HTML to `job.out`: small ones here, large ones in a
 * worker thread that the job's signal terminates.
 */
export async function typesetFile(job: TypesetJob, signal?: AbortSignal): Promise<TypesetPrint> {
  if ((await stat(job.source)).size <= INLINE_BYTES) {
    const { html, ...print } = await typesetStructured(job.format, await readFile(job.source), job.name, job.options, job.images);
    await writeFile(job.out, html);
    return print;
  }
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const worker = startWorker(job);
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
    worker.on('message', (m: TypesetReply) => {
      if ('print' in m) settle(() => resolve(m.print));
      else settle(() => reject(m.error.code ? new AppError(m.error.code, m.error.message) : new Error(m.error.message)));
    });
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`The typesetting worker stopped (exit code ${code}) before answering.`))));
  });
}
