// The worker thread of one large structured-text document (started by thread.ts): typesets it off the main
// thread and writes the HTML beside the job's other files.
import { readFile, writeFile } from 'node:fs/promises';
import { serveThread } from '../../threads.js';
import type { TypesetJob } from './thread.js';
import { typesetStructured } from './typeset.js';

serveThread<TypesetJob, unknown>(async (job) => {
  const { html, ...print } = await typesetStructured(job.format, await readFile(job.source), job.name, job.options, job.images);
  await writeFile(job.out, html);
  return print;
});
