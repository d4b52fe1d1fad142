import { runInThread, threadModule } from '../threads.js';
import type { Invoice } from './cii.js';
import type { Finding } from './rules.js';

const WORKER = threadModule('./rules-worker', import.meta.url);

/**
 * Parses the invoice XML at `path` and applies the business rules in a worker thread: a 20 MB invoice takes
 * seconds to parse, which must not hold the event loop that answers other requests. The job's signal
 * terminates the thread.
 */
export const checkInvoiceRules = (path: string, signal?: AbortSignal) =>
  runInThread<{ invoice: Invoice; findings: Finding[] }>(WORKER, { path }, { what: 'invoice', signal });
