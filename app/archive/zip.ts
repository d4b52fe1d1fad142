import { createWriteStream, openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobReader, configure, ERR_ENCRYPTED, ERR_INVALID_PASSWORD, ERR_INVALID_UNCOMPRESSED_SIZE, type FileEntry, ZipReader } from '@zip.js/zip.js';
import { ZipFile } from 'yazl';
import { AppError, invalidInput, limitExceeded, TEXT } from '../errors.js';

// In-process codecs only: zip.js would otherwise start web workers from blob URLs.
configure({ useWebWorkers: false });

/** What one archive may expand to (ZIP_MAX_ENTRIES, ZIP_MAX_MB, ZIP_MAX_RATIO). */
export interface ZipLimits {
  maxEntries: number;
  maxBytes: number;
  /** Uncompressed / compressed size of one entry. */
  maxRatio: number;
}

/**
 * Below this size an entry's ratio is not judged: small runs of repeated text legitimately compress 1000:1,
 * and a bomb needs size to hurt. Total bytes are still counted.
 */
export const RATIO_GRACE_BYTES = 1024 * 1024;

/** The docs' text for an archive that cannot be read. */
export const CORRUPT_ZIP = 'The provided zip may be corrupt or require a password.';

/**
 * Names made unique case-insensitively, keeping the extension: `a.pdf`, `a (2).pdf`, `a (3).pdf`
 * (archivers on Windows and macOS would otherwise overwrite one with the other).
 */
export function uniqueNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    let candidate = name;
    const [, stem, ext] = /^(.+?)(\.[A-Za-z0-9]{1,8})?$/s.exec(name) ?? [name, name, ''];
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${stem} (${n})${ext ?? ''}`;
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}

/** The last segment of an entry's name, whichever separator it uses (the caller still sanitises it). */
export const entryBaseName = (entryName: string) => entryName.replace(/[\\/]+$/, '').replace(/^.*[\\/]/, '');

/**
 * Writes `files` into one deflated zip at `out`, in order, under the names given (safe, made unique), in the
 * calling thread (the service runs it in a worker: `writeZip` of thread.ts). yazl streams each file through Node's
 * zlib when its turn comes: a Word package of 2,010 pages (a 151 MB document.xml) zips in 4.0 s and +49 MB, where
 * zip.js's writer (web streams) took 5.7 s and +154 MB.
 */
export async function writeZipHere(files: { path: string; name: string }[], out: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
  const names = uniqueNames(files.map((f) => f.name));
  const zip = new ZipFile();
  const stream = zip.outputStream as Readable;
  // A file that cannot be read ends the archive's stream with its error, and so the write.
  zip.on('error', (err: Error) => stream.destroy(err));
  for (const [i, f] of files.entries()) zip.addFile(f.path, names[i], { compressionLevel: 6 });
  zip.end();
  await pipeline(stream, createWriteStream(out), { signal: opts.signal });
}

export interface ExtractedFile {
  /** A generated path inside the job dir (`entry-<n>`), never derived from the entry's name. */
  path: string;
  /** The entry's base name (last segment); the caller sanitises it before showing or storing it. */
  name: string;
}

const sizeLies = () => invalidInput(`${CORRUPT_ZIP} An entry inflates past the size its header declares.`);
const passwordNeeded = () => new AppError('password', `${TEXT.password} Its entries are encrypted: send the archive's password in password.`);
const passwordWrong = () => new AppError('password', `${TEXT.password} The password given does not open its encrypted entries.`);

async function openZip(path: string): Promise<{ reader: ZipReader<Blob>; entries: FileEntry[]; total: number }> {
  // Names are never paths here (entries go to generated names; only the base name is kept, sanitised), so a
  // hostile name is stored safely rather than refused.
  const reader = new ZipReader(new BlobReader(await openAsBlob(path)), { filenameValidation: 'tolerant' });
  try {
    const all = await reader.getEntries();
    return { reader, entries: all.filter((e): e is FileEntry => !e.directory), total: all.length };
  } catch {
    await reader.close().catch(() => undefined);
    throw invalidInput(`${CORRUPT_ZIP} It is not a readable ZIP archive.`);
  }
}

/**
 * Extracts every file entry of the zip at `path` into `dir` under generated names. Limits are checked on the
 * central directory before anything is inflated, then on the bytes really produced (declared sizes lie):
 * an entry that inflates past its declared size, past the ratio or past the total stops the job with a 422.
 * Nested archives come out as files; nothing is extracted recursively. Directory entries are skipped.
 * Runs in the calling thread (the service runs it in a worker: `extractZip` of thread.ts).
 */
export async function extractZipHere(
  path: string,
  dir: string,
  limits: ZipLimits,
  opts: { password?: string; signal?: AbortSignal; progress?: (fraction: number) => void } = {},
): Promise<ExtractedFile[]> {
  const { reader, entries, total } = await openZip(path);
  try {
    if (total > limits.maxEntries) throw limitExceeded(`The archive's ${total} entries`, 'ZIP_MAX_ENTRIES', limits.maxEntries);
    let declared = 0;
    for (const e of entries) {
      declared += e.uncompressedSize;
      if (e.uncompressedSize > RATIO_GRACE_BYTES && e.uncompressedSize > limits.maxRatio * Math.max(1, e.compressedSize)) {
        throw limitExceeded(
          `The compression ratio of an entry (${Math.round(e.uncompressedSize / Math.max(1, e.compressedSize))}:1)`,
          'ZIP_MAX_RATIO',
          limits.maxRatio,
        );
      }
    }
    if (declared > limits.maxBytes) throw limitExceeded(`The archive's uncompressed size (${declared} bytes)`, 'ZIP_MAX_MB', limits.maxBytes / 1024 / 1024);
    if (entries.some((e) => e.encrypted) && !opts.password) throw passwordNeeded();

    const out: ExtractedFile[] = [];
    let inflated = 0;
    for (const [n, entry] of entries.entries()) {
      opts.signal?.throwIfAborted();
      const target = join(dir, `entry-${n + 1}`);
      let written = 0;
      let cut: AppError | undefined;
      const file = createWriteStream(target, { flags: 'wx' });
      const sink = Writable.toWeb(file) as WritableStream<Uint8Array>;
      const counter = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          written += chunk.byteLength;
          inflated += chunk.byteLength;
          if (inflated > limits.maxBytes) cut = limitExceeded(`The archive's uncompressed size`, 'ZIP_MAX_MB', limits.maxBytes / 1024 / 1024);
          else if (written > RATIO_GRACE_BYTES && written > limits.maxRatio * Math.max(1, entry.compressedSize))
            cut = limitExceeded('The compression ratio of an entry', 'ZIP_MAX_RATIO', limits.maxRatio);
          else if (written > entry.uncompressedSize) cut = sizeLies();
          if (cut) return controller.error(cut);
          controller.enqueue(chunk);
        },
      });
      const piped = counter.readable.pipeTo(sink).catch(() => undefined);
      try {
        await entry.getData(counter.writable, {
          password: entry.encrypted ? opts.password : undefined,
          signal: opts.signal,
          checkSignature: true,
          useWebWorkers: false,
        });
      } catch (err) {
        // Closed before the job dir is removed: an open() still pending would recreate the file inside it.
        await new Promise<void>((resolve) => (file.closed ? resolve() : file.once('close', () => resolve()).destroy()));
        if (cut) throw cut;
        opts.signal?.throwIfAborted();
        const message = (err as Error)?.message;
        if (message === ERR_INVALID_PASSWORD) throw passwordWrong();
        if (message === ERR_ENCRYPTED) throw passwordNeeded();
        // zip.js counts too: an entry inflating past its declared size is stopped by whichever sees it first.
        if (message === ERR_INVALID_UNCOMPRESSED_SIZE) throw sizeLies();
        throw invalidInput(`${CORRUPT_ZIP} An entry could not be extracted.`);
      }
      await piped;
      if (cut) throw cut;
      out.push({ path: target, name: entryBaseName(entry.filename) });
      opts.progress?.((n + 1) / entries.length);
    }
    return out;
  } finally {
    await reader.close().catch(() => undefined);
  }
}
