// The worker thread of one archive job (started by thread.ts): runs zip.js (AES, inflate, deflate, the limits)
// off the main thread and reports progress.
import { serveThread } from '../threads.js';
import type { ArchiveJob } from './thread.js';
import { extractZipHere, writeZipHere } from './zip.js';

serveThread<ArchiveJob, unknown>(async (job, progress) => {
  if (job.op === 'extract') return extractZipHere(job.path, job.dir, job.limits, { password: job.password, progress });
  await writeZipHere(job.files, job.out);
  return [];
});
