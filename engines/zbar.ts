import { basename } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { run } from './run.js';

/**
 * zbar's `zbarimg` as the barcode reader: QR codes and the common 1-D symbologies (Code 128, Code 39, EAN/UPC,
 * Interleaved 2 of 5, ...) in one or more page images, one process for many images. Its XML output says which
 * image each symbol came from.
 */

export interface Barcode {
  /** The image the symbol was found in, as passed. */
  image: string;
  /** zbar's symbology name: `QR-Code`, `CODE-128`, `EAN-13`, ... */
  type: string;
  text: string;
}

/** zbarimg exits 4 when some image holds no symbol: not a failure. */
const NONE_FOUND = [4];

export const zbarArgs = (images: string[]): string[] => ['--quiet', '--nodbus', '--xml', '--', ...images];

/** The symbols of each `<source href>` block; data may be split over several CDATA sections (a `]]>` inside it). */
export function parseZbarXml(xml: string, images: string[]): Barcode[] {
  const byName = new Map(images.map((i) => [i, i]));
  for (const i of images) byName.set(basename(i), i);
  const found: Barcode[] = [];
  for (const source of xml.matchAll(/<source href='([^']*)'>([\s\S]*?)<\/source>/g)) {
    const image = byName.get(source[1].replace(/&apos;/g, "'").replace(/&amp;/g, '&')) ?? source[1];
    for (const s of source[2].matchAll(/<symbol type='([^']*)'[^>]*><data>([\s\S]*?)<\/data>/g)) {
      const text = [...s[2].matchAll(/<!\[CDATA\[([\s\S]*?)\]\]>/g)].map((c) => c[1]).join('');
      found.push({ image, type: s[1], text });
    }
  }
  return found;
}

/** Every symbol zbar reads in `images` (PNG, TIFF, PNM...), in image order. */
export async function readBarcodes(images: string[], ctx: EngineContext): Promise<Barcode[]> {
  if (!images.length) return [];
  const r = await run('zbarimg', zbarArgs(images), { ...ctx, okExitCodes: NONE_FOUND });
  if (!r.stdout.includes('<barcodes')) throw new EngineError('zbarimg', 'printed no XML', { stderr: r.stderr });
  return parseZbarXml(r.stdout, images);
}
