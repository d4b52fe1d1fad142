import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { lineArtPages } from '../../engines/ghostscript-background.js';
import { type DrawnImage, renderRegion } from '../../engines/page-images.js';
import { noTextWarning, pageLinks, pagesTime, readBudgets, readPages, selectPages, textlessPages, unlessUnreadable } from '../document/index.js';
import { type PageArt, type PlacedImage, pagesToDocx, readPageArt } from '../export/index.js';
import { output } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

/**
 * Pages that draw text invisibly with no picture under it (an OCR layer whose scan is missing, hidden text): the
 * PDF shows none of it and neither does the Word page, which keeps it as hidden text. Said, so a blank-looking page
 * is not taken for lost text.
 */
function hiddenTextWarning(art: Map<number, PageArt>): string | undefined {
  const pages = [...art].filter(([, a]) => a.invisible.length && !a.images.length).map(([p]) => p);
  if (!pages.length) return undefined;
  const many = pages.length > 1;
  return `Page${many ? 's' : ''} ${pages.join(', ')} draw${many ? '' : 's'} text invisibly with no picture under it (an OCR layer without its scan, or hidden text): it is kept as Word hidden text, searchable but not shown or printed unless Word is set to show hidden text.`;
}

const joinWarnings = (...ws: (string | undefined)[]) => ws.filter(Boolean).join(' ') || undefined;

/** Pictures smaller than this (points) are rules, bullets or specks, not content. */
const MIN_IMAGE_PT = 12;
/** Images rendered per document at most (one pdftoppm each): a bound on time for image-heavy files. */
const MAX_IMAGES = 60;
const IMAGE_DPI = 150;
/** A page drawing fewer paths (a rule under its running head, a box) keeps them as table borders or not at all. */
const MIN_ART_PATHS = 4;
/** Pages whose line art becomes a picture, at most (one Ghostscript page each): a bound on time and size. */
const MAX_ART_PAGES = 200;

export default operation({
  path: '/word',
  tag: 'Conversion',
  summary: 'Convert a PDF to an editable Word document (.docx)',
  description:
    "The PDF's look, as editable Word text, one Word page per PDF page: each PDF page is a new-page section with the page's size and orientation, and each text block a paragraph in a frame at its place on the page, so text never flows onto a page the PDF does not have, whatever fonts Word substitutes; tables (in the page's flow) that do not fit where they are come up, and set smaller when taller together than the page's body, and text repeated at the top or bottom of the pages is a header or footer only when it is a band above or below all the page's other text (a form's repeated first rows stay on the page), so the Word document has the PDF's page count. Paragraphs keep their alignment, indents, exact line pitch and the PDF's line breaks (a paragraph is still one paragraph; one that goes on in the next column is two frames); a row Word's font sets wider than the PDF did is condensed to its width, and a wide gap inside a row is a tab. Runs keep font family (mapped to a family Word and LibreOffice have: Times New Roman, Arial, Courier New, Calibri, Cambria keep their names; TeX fonts become Times New Roman), size, bold, italic and colour. Headings keep their look and get the Heading 1-6 styles for navigation; bulleted and numbered lists are Word lists; tables are Word tables at their height on the page with the page's column widths and row heights, and where the PDF draws them (its line art) the rules are cell borders on the sides where they are drawn, filled rectangles behind cells are shading, vertical rules set the columns and the ruled grid merges cells (a header over a group of ruled columns spans them, a cell over rows no rule separates spans them vertically); tables without line art have no borders. A rule just under a run's baseline spanning its words underlines it (links too). A page whose blocks stand side by side again and again (a grid not recognised as a table) is written row by row at tab stops, except rows that two or more vertical rules run through, which are a ruled table as above. Text repeated at the top or bottom of the pages becomes the header or footer, a page number in it a PAGE field counting from the printed number; web links (URI link annotations) are hyperlinks. Images (rendered at 150 dpi, at most 60 per document) float behind the text at their size and place, and the page's line art (rules, shading, charts, diagrams) is one transparent picture behind everything. A table cell split top to bottom by a rule, whose sides are ruled into rows at their own heights, is read as two tables side by side. Text set a quarter turn stays turned: in a table's cells, cells that turn their text (btLr/tbRl); elsewhere (a stamp along the margin, a label up a chart's axis, column heads set sideways), text boxes at its place that turn it (vert270/vert), a paragraph set sideways one box; text at other angles is set upright at its place. Text drawn invisibly (render mode 3: the OCR layer under a scan, one whose scan is missing, hidden text) is kept as Word hidden text, searchable in Word but neither shown nor printed, as in the PDF; a warning names the pages that draw it with no picture under it. A page without text (a scan) keeps its image only: run /pdf-with-ocr-text first to get editable text, a warning says so.",
  inputs: pdfInput(),
  fields: { output: output() },
  output: 'file',
  produces: ['docx'],
  engines: ['qpdf', 'mupdf', 'poppler', 'ghostscript'],
  thread: import.meta.url,
  run: async ({ input, dir, signal, timeoutMs, progress }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const pages = await selectPages(input.path, '1-last', ectx);
    // The trace gives the line art (table rules and fills, underlines) and where the pictures are, in one pass.
    // Line art, links and pictures only enrich the text: a file MuPDF or qpdf cannot trace or list (or not within
    // the pages' time) is still converted, without them.
    const [model, art, links] = await Promise.all([
      readPages(input.path, pages, ectx),
      readPageArt(input.path, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable(new Map<number, PageArt>())),
      pageLinks(input.path, pages, pagesTime(ectx, pages.length)).catch(unlessUnreadable([])),
    ]);
    const drawn = [...art.values()].flatMap((a) => a.images);
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
        const png = await renderRegion(input.path, im.page, im, IMAGE_DPI, join(dir, 'images', `im${i}`), pagesTime(ectx, 1, 'renderPageMs')).catch(
          unlessUnreadable(null),
        );
        if (png) images.push({ page: im.page, box: im, png });
      }
    };
    // The line art (rules, shading, charts, diagrams) of each page that draws any, as one transparent picture
    // behind everything else, Word having no shape for most of it; rendered while the pictures are. A page
    // Ghostscript does not draw in time goes without.
    const drawing = pages.filter((p) => (art.get(p)?.paths ?? 0) >= MIN_ART_PATHS).slice(0, MAX_ART_PAGES);
    const lineArt = async () => {
      if (!drawing.length) return [];
      await mkdir(join(dir, 'art'));
      const files = await lineArtPages(input.path, join(dir, 'art', 'page-%d.png'), drawing, IMAGE_DPI, { ...ectx, pageMs: readBudgets().renderPageMs }).catch(
        unlessUnreadable([] as string[]),
      );
      return files.map((png, i) => ({ page: drawing[i], box: { x0: 0, y0: 0, x1: sizes.get(drawing[i])!.width, y1: sizes.get(drawing[i])!.height }, png }));
    };
    const [behind] = await Promise.all([lineArt(), ...Array.from({ length: Math.min(availableParallelism(), wanted.length) }, worker)]);
    progress(0.8);
    const path = join(dir, 'document.docx');
    await writeFile(path, await pagesToDocx(model, [...behind, ...images], links, art));
    return { files: [{ path, ext: 'docx' }], warning: joinWarnings(noTextWarning(textlessPages(model), model.length), hiddenTextWarning(art)) };
  },
});

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
