import { join } from 'node:path';
import { type QuarterTurn, rotatePages } from '../../engines/qpdf-edit.js';
import { openPdf, selectedPages } from '../document/index.js';
import { num, oneOf, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';
import { detectOrientations, MIN_ORIENTATION_CONFIDENCE } from '../impose/index.js';
import { openForRendering } from '../render/index.js';

const GRAMMAR = { reverse: true, parity: true };
const list = (pages: number[]) => pages.join(', ');

export default operation({
  path: '/rotated-pdf',
  tag: 'Assembly and creation',
  summary: 'Rotate pages',
  description: `rotation 90, 180 or 270 turns the selected pages clockwise, added to the turn they already have (their /Rotate), as viewers do; nothing is drawn again. rotation auto reads each selected page's text orientation with Tesseract's orientation detection (the page drawn in grey at 200 dpi) and turns the pages whose text is not upright; pages already upright, and pages where the detection's confidence is below min_confidence (default ${MIN_ORIENTATION_CONFIDENCE}, OCRmyPDF's default; Tesseract's own arbitrary units) or that hold too little text, are left as they are. The warning lists the pages turned and those left undecided.`,
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
    const found = await detectOrientations(input.path, boxes, selected, { dir, signal, timeoutMs, progress });
    const sure = found.filter((f) => f.found && f.found.confidence >= fields.min_confidence);
    const unsure = found.filter((f) => !sure.includes(f)).map((f) => f.page);
    const turns = ([90, 180, 270] as const).map((angle) => ({ angle, pages: sure.filter((f) => f.found!.rotate === angle).map((f) => f.page) }));
    await rotatePages(input.path, path, turns, ctx);
    const turned = turns.flatMap((t) => t.pages.map((p) => `${p} (${t.angle})`));
    const warning = [
      turned.length ? `Pages turned clockwise (degrees): ${turned.join(', ')}.` : 'No page needed turning.',
      unsure.length ? `Pages left as they were because their orientation could not be told with confidence: ${list(unsure)}.` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return { files: [{ path, name: `${outputName}.pdf` }], warning };
  },
});
