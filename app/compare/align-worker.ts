// The worker thread that aligns the words of two large documents (started by compare.ts).
import { serveThread } from '../threads.js';
import { alignWords } from './align.js';

serveThread<{ a: string[]; b: string[] }, unknown>(async ({ a, b }) => alignWords(a, b));
