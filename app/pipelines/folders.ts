import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export type Place = 'in' | 'out' | 'done' | 'failed' | '.quire';
export interface Entry {
  name: string;
  size: number;
  mtimeMs: number;
}

/**
 * One watched folder's storage: `in`, `out`, `done`, `failed`, and `.quire` for the journal of files being
 * processed. Writes are atomic (a reader never sees half a file); moves never copy over an existing name.
 */
export interface Folder {
  readonly where: string;
  prepare(): Promise<void>;
  /** Regular files, without hidden ones (a name starting with a dot is still being written, by convention). */
  list(place: Place): Promise<Entry[]>;
  stat(place: Place, name: string): Promise<Entry | undefined>;
  read(place: Place, name: string): Promise<Readable>;
  write(place: Place, name: string, data: Readable | string): Promise<void>;
  move(from: Place, name: string, to: Place, toName: string): Promise<void>;
  remove(place: Place, name: string): Promise<void>;
  readText(place: Place, name: string): Promise<string | undefined>;
}

/** A directory on a local or mounted filesystem. */
export function directoryFolder(root: string): Folder {
  const path = (place: Place, name?: string) => (name === undefined ? join(root, place) : join(root, place, name));
  const statOf = async (place: Place, name: string) => {
    const s = await stat(path(place, name)).catch(() => undefined);
    return s?.isFile() ? { name, size: s.size, mtimeMs: s.mtimeMs } : undefined;
  };
  return {
    where: root,
    async prepare() {
      for (const p of ['in', 'out', 'done', 'failed', '.quire'] as const) await mkdir(path(p), { recursive: true });
      // Half-written outputs of a process that stopped: written again when their file is taken again.
      for (const n of await readdir(path('out'))) if (n.startsWith('.') && n.endsWith('.part')) await rm(path('out', n), { force: true });
    },
    async list(place) {
      const names = (await readdir(path(place))).filter((n) => !n.startsWith('.'));
      return (await Promise.all(names.map((n) => statOf(place, n)))).filter((e): e is Entry => !!e);
    },
    stat: statOf,
    read: async (place, name) => createReadStream(path(place, name)),
    async write(place, name, data) {
      const part = path(place, `.${name}.part`);
      if (typeof data === 'string') await writeFile(part, data);
      else await pipeline(data, createWriteStream(part));
      await rename(part, path(place, name));
    },
    async move(from, name, to, toName) {
      if (await statOf(to, toName)) throw new Error(`${to}/${toName} exists`);
      await rename(path(from, name), path(to, toName));
    },
    remove: (place, name) => rm(path(place, name), { force: true }),
    readText: (place, name) => readFile(path(place, name), 'utf8').catch(() => undefined),
  };
}
