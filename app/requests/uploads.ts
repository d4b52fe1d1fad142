/**
 * A request's fields and uploads as every front door hands them to the core (HTTP parses multipart or JSON into
 * this; MCP stores its uploads the same way), and the uploads streamed into the store under the size limit.
 */
import { type Readable, Transform } from 'node:stream';
import { AppError } from '../errors.js';
import type { ResourceRecord, Store } from '../store/index.js';

export interface Body {
  /** Field name (without a trailing `[]`) -> value; repeated fields become arrays. */
  fields: Record<string, unknown>;
  /** File part name -> stored resources, in the order they arrived. */
  files: Record<string, ResourceRecord[]>;
}

export interface BodyOptions {
  store: Store;
  owner: string | null;
  maxBytes: number;
  /** File part names the route takes; other file parts are read and dropped. */
  fileFields: Set<string>;
}

export const tooLarge = (maxBytes: number) =>
  new AppError('too_large', `The upload is larger than this server's limit of ${Math.round(maxBytes / 1048576)} MB (MAX_UPLOAD_MB).`);

/** A stream stage that fails once more than `max` bytes passed (raw uploads carry no per-file limit). */
function byteLimit(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) cb(tooLarge(max));
      else cb(null, chunk);
    },
  });
}

/** Streams one upload into the store (a file, or an S3 object) and registers it; memory stays flat whatever the size. */
export function storeStream(stream: Readable, name: string, opts: BodyOptions, type?: string): Promise<ResourceRecord> {
  return opts.store.addStream(stream, { name, owner: opts.owner, type }, [byteLimit(opts.maxBytes)]);
}

/** Removes the uploads of a request that failed before its job ran (their ids were never returned). */
export async function discardUploads(store: Store, body: Body | undefined): Promise<void> {
  if (!body) return;
  await Promise.all(
    Object.values(body.files)
      .flat()
      .filter(Boolean)
      .map((r) => store.remove(r.id).catch(() => undefined)),
  );
}
