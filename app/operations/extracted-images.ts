import { mkdir } from 'node:fs/promises';
import { extname, join } from 'node:path';
import sharp from 'sharp';
import { output, pages } from '../http/fields.js';
import { operation, pdfInput, type OutputFile } from '../http/operation.js';
import { listImageObjects, writeImages, type ImageListing } from '../../engines/poppler-images.js';
import { selectPages } from '../document/index.js';

const pad = (n: number) => String(n).padStart(3, '0');

export default operation({
  path: '/extracted-images',
  tag: 'Information and extraction',
  summary: 'Extract the images of a PDF in their original encoding',
  description:
    'Each image once, named <output>-img###-page### (image number, page where it first appears). JPEG and JPEG 2000 keep their stored bytes; CMYK images become TIFF; CCITT fax images become CCITT G4 TIFF; JBIG2 and the other encodings become PNG (with the soft mask as alpha). No image: empty outputUrl and outputId and a warning.',
  inputs: pdfInput(),
  fields: { pages: pages(), output: output() },
  output: 'files',
  engines: ['qpdf', 'poppler'],
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const selected = await selectPages(input.path, fields.pages, ectx);
    const wanted = new Set(selected);
    const range = { first: selected[0], last: selected[selected.length - 1] };
    const listed = await listImageObjects(input.path, range, ectx);
    const none = { files: [], warning: 'No files of the specified type were found: the selected pages contain no images.' };
    if (!listed.some((im) => wanted.has(im.page) && isPicture(im))) return none;

    const raw = join(dir, 'raw');
    await mkdir(raw);
    const stored = await writeImages(input.path, join(raw, 'im'), range, 'all', ectx);
    progress(0.5);
    const needsDecode = [...stored.values()].some((p) => /\.(ccitt|jb2e)$/.test(p));
    const decoded = needsDecode ? await writeImages(input.path, join(raw, 'png'), range, 'png', ectx) : new Map<number, string>();

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
      const name = `${outputName}-img${pad(n)}-page${pad(im.page)}`;
      const out = join(dir, `out-${n}`);
      const ext = extname(src).slice(1);
      if (ext === 'ccitt') {
        // Fax images stay fax-compressed: CCITT G4 in a TIFF, which every viewer opens (raw .ccitt is unreadable).
        await sharp(decoded.get(im.num)!).toColourspace('b-w').tiff({ compression: 'ccittfax4', bitdepth: 1 }).toFile(`${out}.tif`);
        files.push({ path: `${out}.tif`, name: `${name}.tif` });
      } else if (ext === 'jb2e') {
        await sharp(decoded.get(im.num)!).toColourspace('b-w').png({ palette: true, colours: 2, compressionLevel: 9 }).toFile(`${out}.png`);
        files.push({ path: `${out}.png`, name: `${name}.png` });
      } else if (ext === 'png' && mask && stored.get(mask.num) && mask.width === im.width && mask.height === im.height) {
        const alpha = await sharp(stored.get(mask.num)!).toColourspace('b-w').raw().toBuffer();
        // sharp applies removeAlpha after joinChannel in one pipeline, so the colour channels are taken first.
        const colour = await sharp(src).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        await sharp(colour.data, { raw: { width: colour.info.width, height: colour.info.height, channels: colour.info.channels } })
          .joinChannel(alpha, { raw: { width: mask.width, height: mask.height, channels: 1 } })
          .png()
          .toFile(`${out}.png`);
        files.push({ path: `${out}.png`, name: `${name}.png` });
      } else {
        const e = ext === 'tif' ? 'tif' : ext;
        files.push({ path: src, name: `${name}.${e}` });
      }
    }
    return files.length ? { files } : none;
  },
});

/** Soft masks and explicit masks belong to the image they shape; stencil masks are drawn shapes, kept. */
const isPicture = (im: ImageListing) => im.type === 'image' || im.type === 'stencil';
