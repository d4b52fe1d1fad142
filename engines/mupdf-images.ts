import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { run } from './run.js';

/** One image XObject drawn on a page, as `mutool info -I` lists it (inline images are not listed). */
export interface MupdfImage {
  page: number;
  object: number;
  width: number;
  height: number;
  /** The stream's filters as MuPDF names them (DCT, JPX, Flate, CCITTFax, JBIG2...). */
  filters: string[];
}

export function parseImageInfo(out: string): MupdfImage[] {
  const images: MupdfImage[] = [];
  for (const m of out.matchAll(/^\t(\d+)\t\(\d+ \d+ R\):\t\[ ([^\]]*)\] (\d+)x(\d+) .*\((\d+) \d+ R\)\s*$/gm)) {
    images.push({ page: Number(m[1]), filters: m[2].trim().split(/\s+/), width: Number(m[3]), height: Number(m[4]), object: Number(m[5]) });
  }
  return images;
}

/** The image XObjects of pages `first` to `last`, in page order (MuPDF's own parser and repair: Poppler's second). */
export async function listImagesMupdf(input: string, range: { first: number; last: number }, ctx: EngineContext): Promise<MupdfImage[]> {
  const r = await run('mutool', ['info', '-I', '--', input, `${range.first}-${range.last}`], ctx);
  return parseImageInfo(r.stdout);
}

/**
 * `mutool extract -a` of the given image objects into `dir`: JPEG data as stored, everything else decoded to PNG
 * with its soft mask as alpha; CMYK (which MuPDF writes as PAM, a format few viewers open) again as RGB PNG.
 * Keyed by object number.
 */
export async function extractImagesMupdf(input: string, objects: number[], dir: string, ctx: EngineContext): Promise<Map<number, string>> {
  await mkdir(dir, { recursive: true });
  const written = async (args: string[], ids: number[]) => {
    if (ids.length) await run('mutool', ['extract', ...args, '--', input, ...ids.map(String)], { ...ctx, cwd: dir });
    const files = new Map<number, string>();
    for (const name of await readdir(dir)) {
      const m = /^image-(\d+)\.(\w+)$/.exec(name);
      if (m) files.set(Number(m[1]), join(dir, name));
    }
    return files;
  };
  const files = await written(['-a'], objects);
  const cmyk = [...files].filter(([, path]) => path.endsWith('.pam'));
  for (const [, path] of cmyk) await rm(path);
  return cmyk.length
    ? written(
        ['-a', '-r'],
        cmyk.map(([id]) => id),
      )
    : files;
}
