import type { Readable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { s3Client } from '../store/s3-bytes.js';
import type { Entry, Folder, Place } from './folders.js';

const missing = (err: unknown) =>
  err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata.httpStatusCode === 404);

/**
 * A watched folder under an S3 prefix (`s3://bucket/prefix/<pipeline>/in/...`). An object appears whole when its
 * upload completes, and a write here is one upload, so readers never see half a file; a move is a copy then a
 * delete of the source (the copy first: a stop between the two leaves the file in both places, never in none).
 */
export function s3Folder(url: string, endpoint: { endpoint?: string; region: string }): Folder {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m) throw new Error(`not an s3:// URL: ${url}`);
  const [, bucket, prefix] = m;
  const client = s3Client(endpoint);
  const key = (place: Place, name = '') => `${prefix.replace(/\/+$/, '')}/${place}/${name}`;
  const head = async (place: Place, name: string): Promise<Entry | undefined> => {
    try {
      const h = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key(place, name) }));
      return { name, size: h.ContentLength ?? 0, mtimeMs: h.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  };
  return {
    where: url,
    async prepare() {},
    async list(place) {
      const entries: Entry[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key(place), Delimiter: '/', ContinuationToken: token }));
        for (const o of page.Contents ?? []) {
          const name = o.Key!.slice(key(place).length);
          if (name && !name.startsWith('.')) entries.push({ name, size: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 });
        }
        token = page.NextContinuationToken;
      } while (token);
      return entries;
    },
    stat: head,
    async read(place, name) {
      const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key(place, name) }));
      return r.Body as Readable;
    },
    async write(place, name, data) {
      await new Upload({ client, params: { Bucket: bucket, Key: key(place, name), Body: typeof data === 'string' ? Buffer.from(data) : data } }).done();
    },
    async move(from, name, to, toName) {
      if (await head(to, toName)) throw new Error(`${to}/${toName} exists`);
      await client.send(new CopyObjectCommand({ Bucket: bucket, Key: key(to, toName), CopySource: encodeURI(`${bucket}/${key(from, name)}`) }));
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key(from, name) }));
    },
    async remove(place, name) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key(place, name) }));
    },
    async readText(place, name) {
      try {
        const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key(place, name) }));
        return await r.Body!.transformToString();
      } catch (err) {
        if (missing(err)) return undefined;
        throw err;
      }
    },
  };
}
