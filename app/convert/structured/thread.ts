import { readFile, stat, writeFile } from 'node:fs/promises';
import { INLINE_BYTES, runInThread, threadModule } from '../../threads.js';
import type { MarkdownImages } from './markdown.js';
import type { StructuredOptions } from './options.js';
import { type StructuredFormat, type Typeset, typesetStructured } from './typeset.js';

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

const WORKER = threadModule('./typeset-worker', import.meta.url);

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
  return runInThread<TypesetPrint>(WORKER, job, { what: 'typesetting', signal });
}
