// The worker thread of one invoice check (started by thread.ts): parses the CII and applies the business rules
// off the main thread.
import { readFile } from 'node:fs/promises';
import { serveThread } from '../threads.js';
import { readInvoice } from './cii.js';
import { businessRules } from './rules.js';

serveThread<{ path: string }, unknown>(async ({ path }) => {
  const invoice = readInvoice(await readFile(path, 'utf8'));
  return { invoice, findings: businessRules(invoice) };
});
