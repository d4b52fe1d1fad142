import { runInThread, threadModule } from '../threads.js';
import type { ExtractedFile, ZipLimits } from './zip.js';

/** What one worker is asked to do: only plain data (paths and settings) crosses, never streams or bytes. */
export type ArchiveJob =
  | { op: 'extract'; path: string; dir: string; limits: ZipLimits; password?: string }
  | { op: 'write'; files: { path: string; name: string }[]; out: string };

const WORKER = threadModule('./zip-worker', import.meta.url);

/**
 * Extracts every file entry of the zip at `path` into `dir` under generated names, in a worker thread
 * (`extractZipHere` of zip.ts does the work there, limits included), so decryption and inflating never hold the
 * event loop. Errors keep their kind: a missing or wrong password is 401, a limit 422 naming its setting, a broken
 * archive 400.
 */
export const extractZip = (
  path: string,
  dir: string,
  limits: ZipLimits,
  opts: { password?: string; signal?: AbortSignal; progress?: (fraction: number) => void } = {},
): Promise<ExtractedFile[]> =>
  runInThread<ExtractedFile[]>(WORKER, { op: 'extract', path, dir, limits: { ...limits }, password: opts.password } satisfies ArchiveJob, {
    what: 'archive',
    ...opts,
  });

/** Writes `files` into one deflated zip at `out`, in order, under unique names, in a worker thread. */
export async function writeZip(files: { path: string; name: string }[], out: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
  await runInThread(WORKER, { op: 'write', files: files.map((f) => ({ path: f.path, name: f.name })), out } satisfies ArchiveJob, {
    what: 'archive',
    signal: opts.signal,
  });
}
