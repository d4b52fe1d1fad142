import { join } from 'node:path';
import { surveyPages } from '../../engines/mupdf-text-layer.js';
import { type QuarterTurn, rotatePages } from '../../engines/qpdf-edit.js';
import { inputError, openPdf, selectedPages } from '../document/index.js';
import { detectOrientations, MIN_ORIENTATION_CONFIDENCE } from '../impose/index.js';
import { openForRendering } from '../render/index.js';
import { num, oneOf, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };
const list = (pages: number[]) => pages.join(', ');

export default operation({
  path: '/rotated-pdf',
  tag: 'Assembly and creation',
  summary: 'Rotate pages',
  description: `rotation 90, 180 or 270 turns the selected pages clockwise, added to the turn they already have (their /Rotate), as viewers do; nothing is drawn again. rotation auto reads each selected page's text orientation with Tesseract's orientation detection, the page drawn in grey at the resolution it was scanned at (150-300 dpi; other pages at 300), and turns the pages whose text is not upright. A reading whose confidence reaches min_confidence (default ${MIN_ORIENTATION_CONFIDENCE}, OCRmyPDF's default; Tesseract's own units) decides alone; a weaker one is checked by reading the page's text-densest half and the whole page at another resolution, and the page is turned when every reading that finds text names the same turn and their confidences add up to min_confidence. Pages whose readings disagree or that hold too little text are left as they are. The warning lists the pages turned and those left undecided; \`orientations\` gives per page the turn decided (null: left as it is), the reason and each reading.`,
  inputs: pdfInput(),
  fields: {
    pages: pages(GRAMMAR),
    rotation: oneOf(['90', '180', '270', 'auto'], undefined, { '-90': '270', '-270': '90', '-180': '180' }),
    min_confidence: num(0, 100, MIN_ORIENTATION_CONFIDENCE),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'mupdf', 'poppler', 'tesseract'],
  cost: ({ fields }) => (fields.rotation === 'auto' ? perCore() : { lane: 'light' }),
  run: async ({ fields, input, dir, signal, timeoutMs, outputName, progress }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const { pageCount } = await openPdf(input.path, ctx);
    const selected = selectedPages(fields.pages, pageCount, GRAMMAR);
    const path = join(dir, 'rotated.pdf');
    if (fields.rotation !== 'auto') {
      await rotatePages(input.path, path, [{ angle: Number(fields.rotation) as QuarterTurn, pages: selected }], ctx);
      return { files: [{ path, name: `${outputName}.pdf` }] };
    }
    const { boxes } = await openForRendering(input.path, ctx);
    const surveys = await surveyPages(input.path, selected, ctx).catch((err) => {
      throw inputError(err);
    });
    const found = await detectOrientations(
      { input: input.path, boxes, pages: selected, surveys, minConfidence: fields.min_confidence },
      { dir, signal, timeoutMs, progress },
    );
    const unsure = found.filter((f) => f.turn === null).map((f) => f.page);
    const turns = ([90, 180, 270] as const).map((angle) => ({ angle, pages: found.filter((f) => f.turn === angle).map((f) => f.page) }));
    await rotatePages(input.path, path, turns, ctx);
    const turned = turns.flatMap((t) => t.pages.map((p) => `${p} (${t.angle})`));
    const warning = [
      turned.length ? `Pages turned clockwise (degrees): ${turned.join(', ')}.` : 'No page needed turning.',
      unsure.length ? `Pages left as they were because their orientation could not be told with confidence: ${list(unsure)}.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return { files: [{ path, name: `${outputName}.pdf` }], warning, json: { orientations: found } };
  },
});
