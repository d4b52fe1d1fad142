import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isResourceId } from './names.js';

/** A byte source and the stages it runs through on its way in (e.g. a size limit). */
export type StreamSource = [Readable, ...NodeJS.ReadWriteStream[]];

/**
 * Where the bytes of resources live: a local (or shared, NFS/EFS) directory, or an S3 bucket. Records stay in
 * the ResourceIndex; the store keeps the two together. Every method takes an id checked by the store.
 */
export interface ResourceBytes {
  init(): Promise<void>;
  /** Streams bytes in as `id` and returns their size; nothing of it is left behind on failure. */
  write(id: string, source: StreamSource): Promise<number>;
  /** Where a caller may write a file that `put` then moves in cheaply. */
  staging(id: string): string;
  /** Moves a finished local file in as `id` (or copies it, `copy`) and returns its size. */
  put(id: string, src: string, copy: boolean): Promise<number>;
  /** A stream of the bytes; undefined when there are none. */
  read(id: string): Promise<Readable | undefined>;
  /** The first bytes (type sniffing). */
  head(id: string, bytes: number): Promise<Buffer>;
  /**
   * A local path holding the bytes, for engines (read only): the stored file itself, or a download linked into
   * `dir` (the job's temp dir, removed with it).
   */
  localPath(id: string, dir: string): Promise<string>;
  remove(id: string): Promise<void>;
  /** Removes bytes without a record (`known` says which have one); `atStart`: nothing else of this process writes yet. */
  sweepOrphans(known: (id: string) => Promise<boolean>, atStart: boolean): Promise<number>;
  /** Whether the storage takes writes now (/ready). */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Streams `source` into a new file at `path`; when it fails, the file is gone by the time this rejects. pipeline()
 * rejects as soon as the source fails, which may be before the file's open() has run in the thread pool: removing it
 * then would race the open and leave the file behind (a cut upload left `<id>.part` files this way), so the removal
 * waits for the file stream to close.
 */
export async function streamToFile(source: Readable[] | StreamSource, path: string): Promise<void> {
  const file = createWriteStream(path, { flags: 'wx' });
  let opened = false;
  file.once('open', () => (opened = true));
  try {
    await pipeline([...source, file]);
  } catch (err) {
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()).destroy());
    // An open that failed (the name exists) created nothing of ours to remove.
    if (opened) await rm(path, { force: true });
    throw err;
  }
}

/** How long a file may sit in the store without a record before a sweep removes it: the moment between another replica moving it in and recording it (milliseconds in practice). */
const ORPHAN_GRACE_MS = 5_000;

/** Bytes in a directory (DATA_DIR/resources, shared by replicas when they run): `<dir>/<id>`, `<id>.part` while written. */
export class DirBytes implements ResourceBytes {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  private path(id: string): string {
    return join(this.dir, id);
  }

  staging(id: string): string {
    return `${this.path(id)}.part`;
  }

  async write(id: string, source: StreamSource): Promise<number> {
    const part = this.staging(id);
    await streamToFile(source, part);
    try {
      return await this.put(id, part, false);
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
  }

  /** A rename; a copy when the source is on another filesystem. */
  async put(id: string, src: string, copy: boolean): Promise<number> {
    const dest = this.path(id);
    if (copy) await copyFile(src, dest);
    else
      await rename(src, dest).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EXDEV') throw err;
        await copyFile(src, `${dest}.part`);
        await rename(`${dest}.part`, dest);
      });
    return (await stat(dest)).size;
  }

  async read(id: string): Promise<Readable | undefined> {
    // Opened before answering, so a missing file is a 404 rather than a response cut short.
    const fh = await open(this.path(id), 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    return fh?.createReadStream();
  }

  head(id: string, bytes: number): Promise<Buffer> {
    return readHead(this.path(id), bytes);
  }

  async localPath(id: string): Promise<string> {
    return this.path(id);
  }

  async remove(id: string): Promise<void> {
    await rm(this.path(id), { force: true });
  }

  async sweepOrphans(known: (id: string) => Promise<boolean>, atStart: boolean): Promise<number> {
    let removed = 0;
    const graceMs = atStart ? 0 : ORPHAN_GRACE_MS;
    for (const name of await readdir(this.dir)) {
      const id = name.replace(/\.part$/, '');
      // Only what we write: anything else in the directory (lost+found on a volume...) is left alone.
      if (!isResourceId(id)) continue;
      if (!name.endsWith('.part') && (await known(id))) continue;
      const s = await stat(join(this.dir, name)).catch(() => null);
      // A .part is an upload in progress: only one an hour old (or any at start) is a leftover.
      const grace = name.endsWith('.part') && graceMs ? 3600_000 : graceMs;
      if (!s || Date.now() - s.mtimeMs < grace) continue;
      await rm(join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }

  /** Whether DATA_DIR takes a write (an NFS mount gone read-only or stale fails here). */
  async ready(): Promise<boolean> {
    const probe = join(dirname(this.dir), `.ready-${process.pid}`);
    try {
      await writeFile(probe, 'ok');
      await rm(probe, { force: true });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}
}

/** The first bytes of a file (type sniffing). */
export async function readHead(path: string, bytes = 1024): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
