// The worker thread of one large structured-text document (started by thread.ts): typesets it off the main
// thread, writes the HTML beside the job's other files and answers once with the print settings or the error.
import { readFile, writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../../errors.js';
import type { TypesetJob, TypesetReply } from './thread.js';
import { typesetStructured } from './typeset.js';

const job = workerData as TypesetJob;
const reply = (message: TypesetReply) => parentPort!.postMessage(message);

try {
  const { html, ...print } = await typesetStructured(job.format, await readFile(job.source), job.name, job.options, job.images);
  await writeFile(job.out, html);
  reply({ print });
} catch (err) {
  // Only the kind and the text cross: AppError codes keep their status (400 bad input, 422 a limit).
  reply({ error: { code: err instanceof AppError ? err.code : undefined, message: (err as Error)?.message ?? String(err) } });
}
