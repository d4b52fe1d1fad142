import { readdir } from 'node:fs/promises';
import type { EngineContext } from './context.js';
import { run } from './run.js';

/** One drawn image as `pdfimages -list` reports it; `object` is 0 for inline images. */
export interface ImageListing {
  page: number;
  num: number;
  type: string;
  width: number;
  height: number;
  color: string;
  encoding: string;
  object: number;
}

export function parseImageList(out: string): ImageListing[] {
  return out
    .split('\n')
    .slice(2)
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length > 10 && /^\d+$/.test(c[0]))
    .map((c) => ({
      page: Number(c[0]),
      num: Number(c[1]),
      type: c[2],
      width: Number(c[3]),
      height: Number(c[4]),
      color: c[5],
      encoding: c[8],
      object: c[10] === '[inline]' ? 0 : Number(c[10]),
    }));
}

export async function listImageObjects(input: string, range: { first: number; last: number }, ctx: EngineContext): Promise<ImageListing[]> {
  const r = await run('pdfimages', ['-list', '-f', String(range.first), '-l', String(range.last), input], ctx);
  return parseImageList(r.stdout);
}

/**
 * `pdfimages -p` writes `<prefix>-<page>-<num>.<ext>`, numbered in the same order as `-list`. `all` keeps
 * JPEG, JPEG 2000, JBIG2 and CCITT data as stored (JPEG byte for byte), CMYK as TIFF and the rest as PNG;
 * `png` decodes everything to PNG (for the encodings no viewer opens raw).
 */
export async function writeImages(
  input: string,
  prefix: string,
  range: { first: number; last: number },
  mode: 'all' | 'png',
  ctx: EngineContext,
): Promise<Map<number, string>> {
  await run('pdfimages', [`-${mode}`, '-p', '-f', String(range.first), '-l', String(range.last), input, prefix], ctx);
  const dir = prefix.slice(0, prefix.lastIndexOf('/'));
  const base = prefix.slice(prefix.lastIndexOf('/') + 1);
  const files = new Map<number, string>();
  for (const name of await readdir(dir)) {
    const m = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-\\d+-(\\d+)\\.(\\w+)$`).exec(name);
    if (m && !['params', 'jb2g'].includes(m[2])) files.set(Number(m[1]), `${dir}/${name}`);
  }
  return files;
}
