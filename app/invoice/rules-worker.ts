// The worker thread of one invoice check (started by thread.ts): parses the CII and applies the business rules
// off the main thread, and answers once with the invoice and its findings, or the error's kind and text.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../errors.js';
import { readInvoice } from './cii.js';
import { businessRules } from './rules.js';
import type { RulesReply } from './thread.js';

const reply = (message: RulesReply) => parentPort!.postMessage(message);

try {
  const invoice = readInvoice(await readFile((workerData as { path: string }).path, 'utf8'));
  reply({ invoice, findings: businessRules(invoice) });
} catch (err) {
  reply({ error: { code: err instanceof AppError ? err.code : undefined, message: (err as Error)?.message ?? String(err) } });
}
