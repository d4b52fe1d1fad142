// The worker thread that aligns the words of two large documents (started by compare.ts).
import { serveThread } from '../threads.js';
import { alignDocuments, type WordIds } from './align.js';

serveThread<{ a: WordIds; b: WordIds }, unknown>(async ({ a, b }) => alignDocuments(a, b));
