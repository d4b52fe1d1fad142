// The worker thread of one archive job (started by thread.ts): runs zip.js (AES, inflate, deflate, the limits)
// off the main thread, reports progress, and answers once with the result or the error's kind and text.
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../errors.js';
import { extractZipHere, writeZipHere } from './zip.js';
import type { ArchiveJob, ArchiveReply } from './thread.js';

const job = workerData as ArchiveJob;
const reply = (message: ArchiveReply) => parentPort!.postMessage(message);

try {
  if (job.op === 'extract') {
    const files = await extractZipHere(job.path, job.dir, job.limits, {
      password: job.password,
      progress: (fraction) => reply({ progress: fraction }),
    });
    reply({ files });
  } else {
    await writeZipHere(job.files, job.out);
    reply({ files: [] });
  }
} catch (err) {
  // Only the kind and the text cross: AppError codes keep their status (401 password, 422 limit, 400 broken).
  reply({ error: { code: err instanceof AppError ? err.code : undefined, message: (err as Error)?.message ?? String(err) } });
}
