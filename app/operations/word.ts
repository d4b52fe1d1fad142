import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { output } from '../http/fields.js';
import { operation, pdfInput } from '../http/operation.js';
import type { EngineContext } from '../../engines/context.js';
import { drawnImages, renderRegion, type DrawnImage } from '../../engines/page-images.js';
import { listImages } from '../../engines/poppler.js';
import { pagesToDocx, type PlacedImage } from '../export/index.js';
import { inputError, noTextWarning, readPages, selectPages, textlessPages } from '../document/index.js';

/** Pictures smaller than this (points) are rules, bullets or specks, not content. */
const MIN_IMAGE_PT = 12;
/** Images rendered per document at most (one pdftoppm each): a bound on time for image-heavy files. */
const MAX_IMAGES = 60;
const IMAGE_DPI = 150;

export default operation({
  path: '/word',
  tag: 'Conversion',
  summary: 'Convert a PDF to an editable Word document (.docx)',
  description:
    'Text flows as editable paragraphs in reading order (columns read one after the other), joined across line breaks; headings (from font size and weight) use the Heading 1-6 styles, bulleted and numbered lists are Word lists, tables are Word tables. Each PDF page starts a new section with the page size and orientation of the PDF. Images are placed (as rendered at 150 dpi) before the text that follows them in their column; at most 60 per document. Fonts and colours are not kept. A page without text (a scan) keeps its image only: run /pdf-with-ocr-text first to get editable text, a warning says so.',
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  engines: ['qpdf', 'mupdf', 'poppler'],
  run: async ({ input, dir, signal, timeoutMs, progress }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ectx);
    const [model, drawn] = await Promise.all([readPages(input.path, pages, ectx), placedImages(input.path, ectx)]);
    progress(0.4);
    const sizes = new Map(model.map((p) => [p.page, p]));
    const wanted = pictures(drawn, sizes).slice(0, MAX_IMAGES);
    const images: PlacedImage[] = [];
    if (wanted.length) await mkdir(join(dir, 'images'));
    // One pdftoppm per image, as many at once as there are cores.
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < wanted.length; i = next++) {
        const im = wanted[i];
        const png = await renderRegion(input.path, im.page, im, IMAGE_DPI, join(dir, 'images', `im${i}`), ectx).catch((err) => {
          throw inputError(err);
        });
        images.push({ page: im.page, box: im, png });
      }
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), wanted.length) }, worker));
    progress(0.8);
    const path = join(dir, 'document.docx');
    await writeFile(path, await pagesToDocx(model, images));
    return { files: [{ path, ext: 'docx' }], warning: noTextWarning(textlessPages(model), model.length) };
  },
});

/** Where images are drawn. The trace lists every glyph too, so only pages that have images are traced. */
async function placedImages(path: string, ectx: EngineContext): Promise<DrawnImage[]> {
  try {
    const withImages = [...new Set((await listImages(path, ectx)).filter((i) => i.type !== 'smask').map((i) => i.page))];
    return withImages.length ? await drawnImages(path, withImages, ectx) : [];
  } catch (err) {
    throw inputError(err);
  }
}

/** Images clipped to their page, without tiny ones and without the same one drawn twice at one place. */
function pictures(drawn: DrawnImage[], pages: Map<number, { width: number; height: number }>): DrawnImage[] {
  const seen = new Set<string>();
  const out: DrawnImage[] = [];
  for (const d of drawn) {
    const p = pages.get(d.page);
    if (!p) continue;
    const im = { page: d.page, x0: Math.max(0, d.x0), y0: Math.max(0, d.y0), x1: Math.min(p.width, d.x1), y1: Math.min(p.height, d.y1) };
    const key = [im.page, im.x0, im.y0, im.x1, im.y1].map(Math.round).join(',');
    if (im.x1 - im.x0 < MIN_IMAGE_PT || im.y1 - im.y0 < MIN_IMAGE_PT || seen.has(key)) continue;
    seen.add(key);
    out.push(im);
  }
  return out;
}
