import { readFile, stat } from 'node:fs/promises';
import { INLINE_BYTES, runInThread, threadModule } from '../threads.js';
import { type Invoice, readInvoice } from './cii.js';

const WORKER = threadModule('./parse-worker', import.meta.url);

/**
 * Reads the invoice XML at `path`: small ones here, larger ones in a worker thread (a 20 MB invoice takes seconds
 * to parse, which must not hold the event loop that answers other requests) that the job's signal terminates.
 */
export async function readInvoiceFile(path: string, signal?: AbortSignal): Promise<Invoice> {
  if ((await stat(path)).size <= INLINE_BYTES) return readInvoice(await readFile(path, 'utf8'));
  return runInThread<Invoice>(WORKER, { path }, { what: 'invoice', signal });
}
