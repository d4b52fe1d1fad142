import { join } from 'node:path';
import { openPdf, selectedPages } from '../document/index.js';
import { MIN_ORIENTATION_CONFIDENCE, type QuarterTurn, turnPages, turnUpright } from '../impose/index.js';
import { num, oneOf, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';

const GRAMMAR = { reverse: true, parity: true };

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
    const { pageCount } = await openPdf(input.path, { cwd: dir, signal, timeoutMs });
    const selected = selectedPages(fields.pages, pageCount, GRAMMAR);
    const path = join(dir, 'rotated.pdf');
    const files = [{ path, name: `${outputName}.pdf` }];
    if (fields.rotation !== 'auto') {
      await turnPages(input.path, path, selected, Number(fields.rotation) as QuarterTurn, { cwd: dir, signal, timeoutMs });
      return { files };
    }
    const { warning, orientations } = await turnUpright(input.path, path, selected, fields.min_confidence, { dir, signal, timeoutMs, progress });
    return { files, warning, json: { orientations } };
  },
});
