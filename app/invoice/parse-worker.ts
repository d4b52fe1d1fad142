// The worker thread that reads one invoice (started by thread.ts): a 20 MB CII takes seconds to parse.
import { readFile } from 'node:fs/promises';
import { serveThread } from '../threads.js';
import { readInvoice } from './cii.js';

serveThread<{ path: string }, unknown>(async ({ path }) => readInvoice(await readFile(path, 'utf8')));
