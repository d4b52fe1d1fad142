// The worker thread that checks one large invoice against the EN 16931 rules (started by validate.ts).
import { readFile } from 'node:fs/promises';
import { serveThread } from '../threads.js';
import { checkEn16931 } from './en16931.js';

serveThread<{ path: string }, unknown>(async ({ path }) => checkEn16931(await readFile(path, 'utf8')));
