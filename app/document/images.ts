/**
 * The images of a PDF's pages in their stored encoding where it can be kept: Poppler's pdfimages first (inline
 * images too), MuPDF when Poppler cannot read the file or finds none where MuPDF sees some.
 */
import { mkdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import sharp from 'sharp';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { extractImagesMupdf, listImagesMupdf, type MupdfImage } from '../../engines/mupdf-images.js';
import { type ImageListing, listImageObjects, writeImages } from '../../engines/poppler-images.js';
import { limitExceeded } from '../errors.js';
import { firstThatReads, pagesTime, unlessUnreadable } from './read-chain.js';

type OutputFile = { path: string; name: string };
const pad = (n: number) => String(n).padStart(3, '0');

/** The images of the `selected` pages, written in `dir` as `<outputName>-img###-page###.<ext>`; a warning when there is none. */
export async function extractImages(
  input: string,
  selected: number[],
  o: { dir: string; outputName: string; maxPixels: number; progress: (fraction: number) => void },
  ctx: { cwd: string; signal: AbortSignal; timeoutMs?: number },
): Promise<{ files: OutputFile[]; warning?: string }> {
  const { dir, outputName, maxPixels, progress } = o;
  // Decoding is the work, a page's worth of rendering time per page at most.
  const ectx = pagesTime(ctx, selected.length, 'renderPageMs');
  // MuPDF's listing, read once: Poppler's attempt asks it whether there is anything Poppler missed, MuPDF's uses it.
  let listing: Promise<MupdfImage[]> | undefined;
  const mupdfImages = () => (listing ??= listImagesMupdf(input, { first: selected[0], last: selected[selected.length - 1] }, ectx));
  const job: Extraction = { input, selected, dir, outputName, maxPixels, progress, mupdfImages };
  const none = { files: [], warning: 'No files of the specified type were found: the selected pages contain no images.' };
  // Poppler first (inline images, stored encodings); MuPDF when Poppler fails or finds none MuPDF sees.
  return (await firstThatReads('Extracting the images', [() => withPoppler(job, ectx), () => withMupdf(job, ectx)])) ?? none;
}

interface Extraction {
  input: string;
  selected: number[];
  dir: string;
  outputName: string;
  maxPixels: number;
  progress: (fraction: number) => void;
  mupdfImages: () => Promise<MupdfImage[]>;
}

type Extracted = { files: OutputFile[]; warning?: string } | null;

const fileName = (job: Extraction, n: number, page: number, ext: string) => `${job.outputName}-img${pad(n)}-page${pad(page)}.${ext}`;

/** Poppler's pdfimages: every image (inline ones too), JPEG, JPEG 2000 and CCITT kept as stored. Null: none on the pages. */
async function withPoppler(job: Extraction, ectx: EngineContext): Promise<Extracted> {
  const { dir, selected } = job;
  const wanted = new Set(selected);
  const range = { first: selected[0], last: selected[selected.length - 1] };
  const listed = await listImageObjects(job.input, range, ectx);
  if (!listed.some((im) => wanted.has(im.page) && isPicture(im))) {
    // Nothing Poppler sees: MuPDF's own parser may find what a damaged file hides from it.
    const mupdf = await job.mupdfImages().catch(unlessUnreadable([]));
    if (mupdf.some((im) => wanted.has(im.page))) throw new EngineError('pdfimages', 'listed no image where MuPDF lists some');
    return null;
  }

  // pdfimages writes every image of a page range, decoding all but JPEG and JPEG 2000 (a few MB of Flate can
  // inflate to 48000x48000 pixels): pages holding an image above MAX_IMAGE_PIXELS are left out of its runs.
  const over = listed.filter((im) => !STORED_AS_IS.has(im.encoding) && im.width * im.height > job.maxPixels);
  const blocked = new Set(over.map((im) => im.page));
  const lost = listed.filter((im) => blocked.has(im.page) && wanted.has(im.page) && isPicture(im));
  const tooLarge = over.find((im) => wanted.has(im.page));
  if (tooLarge && lost.length === listed.filter((im) => wanted.has(im.page) && isPicture(im)).length) {
    throw limitExceeded(`An image on page ${tooLarge.page} (${tooLarge.width}x${tooLarge.height} pixels)`, 'MAX_IMAGE_PIXELS', job.maxPixels);
  }
  // Only pages where a wanted picture is first drawn are written: pdfimages decodes every image of its pages, and
  // a logo on every page, or a document repeated, would be decoded again for each page only to be dropped below.
  const firsts = new Set<number>();
  const needed = new Set<number>();
  for (const im of listed) {
    if (!wanted.has(im.page) || !isPicture(im) || (im.object && firsts.has(im.object))) continue;
    if (im.object) firsts.add(im.object);
    needed.add(im.page);
  }
  const runs = pageRuns(range, (p) => blocked.has(p) || !needed.has(p));

  const raw = join(dir, 'raw');
  await mkdir(raw, { recursive: true });
  const stored = await writeRuns(job.input, join(raw, 'im'), runs, listed, 'all', ectx);
  job.progress(0.5);
  const needsDecode = [...stored.values()].some((p) => /\.(ccitt|jb2e)$/.test(p));
  const decoded = needsDecode ? await writeRuns(job.input, join(raw, 'png'), runs, listed, 'png', ectx) : new Map<number, string>();

  const files: OutputFile[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < listed.length; i++) {
    const im = listed[i];
    if (!wanted.has(im.page) || !isPicture(im)) continue;
    // The same image object drawn again (a logo on every page) is extracted once, at its first page.
    if (im.object && seen.has(im.object)) continue;
    if (im.object) seen.add(im.object);
    const src = stored.get(im.num);
    if (!src) continue;
    const mask = listed[i + 1]?.type === 'smask' && listed[i + 1].page === im.page ? listed[i + 1] : undefined;
    const n = files.length + 1;
    const out = join(dir, `out-${n}`);
    const ext = extname(src).slice(1);
    if (ext === 'ccitt') {
      // Fax images stay fax-compressed: CCITT G4 in a TIFF, which every viewer opens (raw .ccitt is unreadable).
      await sharp(decoded.get(im.num)!).toColourspace('b-w').tiff({ compression: 'ccittfax4', bitdepth: 1 }).toFile(`${out}.tif`);
      files.push({ path: `${out}.tif`, name: fileName(job, n, im.page, 'tif') });
    } else if (ext === 'jb2e') {
      await sharp(decoded.get(im.num)!).toColourspace('b-w').png({ palette: true, colours: 2, compressionLevel: 9 }).toFile(`${out}.png`);
      files.push({ path: `${out}.png`, name: fileName(job, n, im.page, 'png') });
    } else if (ext === 'png' && mask && stored.get(mask.num) && mask.width === im.width && mask.height === im.height) {
      const alpha = await sharp(stored.get(mask.num)!).toColourspace('b-w').raw().toBuffer();
      // sharp applies removeAlpha after joinChannel in one pipeline, so the colour channels are taken first.
      const colour = await sharp(src).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      await sharp(colour.data, { raw: { width: colour.info.width, height: colour.info.height, channels: colour.info.channels } })
        .joinChannel(alpha, { raw: { width: mask.width, height: mask.height, channels: 1 } })
        .png()
        .toFile(`${out}.png`);
      files.push({ path: `${out}.png`, name: fileName(job, n, im.page, 'png') });
    } else {
      files.push({ path: src, name: fileName(job, n, im.page, ext) });
    }
  }
  return files.length ? { files, warning: lostWarning(lost, job.maxPixels) } : null;
}

/**
 * MuPDF's extract: each image XObject once (no inline images), JPEG as stored, the rest decoded to PNG with the
 * soft mask as alpha. Images above MAX_IMAGE_PIXELS that need decoding are left out and listed in the warning.
 */
async function withMupdf(job: Extraction, ectx: EngineContext): Promise<Extracted> {
  const wanted = new Set(job.selected);
  const listed = (await job.mupdfImages()).filter((im) => wanted.has(im.page));
  const first = new Map<number, MupdfImage>();
  for (const im of listed) if (!first.has(im.object)) first.set(im.object, im);
  if (!first.size) return null;
  const decodes = (im: MupdfImage) => !im.filters.includes('DCT');
  const lost = [...first.values()].filter((im) => decodes(im) && im.width * im.height > job.maxPixels);
  if (lost.length === first.size)
    throw limitExceeded(`An image on page ${lost[0].page} (${lost[0].width}x${lost[0].height} pixels)`, 'MAX_IMAGE_PIXELS', job.maxPixels);
  const kept = [...first.values()].filter((im) => !lost.includes(im));
  const written = await extractImagesMupdf(
    job.input,
    kept.map((im) => im.object),
    join(job.dir, 'mupdf'),
    ectx,
  );
  const files: OutputFile[] = [];
  for (const im of kept) {
    const path = written.get(im.object);
    if (path) files.push({ path, name: fileName(job, files.length + 1, im.page, extname(path).slice(1)) });
  }
  return files.length ? { files, warning: lostWarning(lost, job.maxPixels) } : null;
}

function lostWarning(lost: { page: number }[], maxPixels: number): string | undefined {
  const pages = [...new Set(lost.map((im) => im.page))];
  if (!pages.length) return undefined;
  return `Page${pages.length > 1 ? 's' : ''} ${pages.join(', ')} ${pages.length > 1 ? 'hold' : 'holds'} an image larger than the limit MAX_IMAGE_PIXELS=${maxPixels}: ${lost.length} image${lost.length > 1 ? 's' : ''} of ${pages.length > 1 ? 'those pages were' : 'that page was'} not extracted.`;
}

/** Encodings pdfimages writes as stored, without decoding them. */
const STORED_AS_IS = new Set(['jpeg', 'jp2']);

/** The pages of `range` not skipped, as runs of consecutive pages. */
function pageRuns(range: { first: number; last: number }, skip: (page: number) => boolean): { first: number; last: number }[] {
  const runs: { first: number; last: number }[] = [];
  for (let p = range.first; p <= range.last; p++) {
    if (skip(p)) continue;
    const last = runs[runs.length - 1];
    if (last && last.last === p - 1) last.last = p;
    else runs.push({ first: p, last: p });
  }
  return runs;
}

/**
 * writeImages over each run, keyed by the image numbers of the listing of the whole range: pdfimages numbers a
 * run's images from 0 in the listing's order, so the k-th image of a run is the k-th listed on its pages.
 */
async function writeRuns(
  input: string,
  prefix: string,
  runs: { first: number; last: number }[],
  listed: ImageListing[],
  mode: 'all' | 'png',
  ectx: EngineContext,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const [r, run] of runs.entries()) {
    const inRun = listed.filter((im) => im.page >= run.first && im.page <= run.last);
    if (!inRun.length) continue;
    const written = await writeImages(input, `${prefix}${r}`, run, mode, ectx);
    for (const [k, path] of written) if (inRun[k]) out.set(inRun[k].num, path);
  }
  return out;
}

/** Soft masks and explicit masks belong to the image they shape; stencil masks are drawn shapes, kept. */
const isPicture = (im: ImageListing) => im.type === 'image' || im.type === 'stencil';
