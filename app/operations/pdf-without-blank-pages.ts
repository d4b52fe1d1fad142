import { join } from 'node:path';
import { inputError, selectedPages } from '../document/index.js';
import { invalidInput } from '../errors.js';
import { reorderPdf } from '../impose/index.js';
import { openForRendering } from '../render/index.js';
import { num, output, pages } from '../requests/fields.js';
import { operation, pdfInput, perCore } from '../requests/operation.js';
import { BLANK_THRESHOLD, blankPages, EDGE_BAND, INK_DPI } from '../scan/index.js';

export default operation({
  path: '/pdf-without-blank-pages',
  tag: 'Assembly and creation',
  summary: 'Remove blank pages',
  description: [
    `Each page in \`pages\` is drawn in grey at ${INK_DPI} dpi and its ink measured: the share of the page covered by dark marks (darker than mid-grey), leaving out a band of ${EDGE_BAND * 100}% of the width and height along each edge (where scanners leave dark edges and shadows) and specks about half a millimetre across or smaller (dust, toner noise).`,
    `A page whose ink is below \`threshold\` (default ${BLANK_THRESHOLD}, i.e. ${BLANK_THRESHOLD * 100}% of the page: about half a word of 11-point text on a Letter page) is removed; pages outside \`pages\` are always kept.`,
    'The answer lists the removed pages in `removedPages`. A document whose every page would be removed is refused with 400 (a PDF cannot have no pages).',
  ].join(' '),
  inputs: pdfInput(),
  fields: {
    threshold: num(0, 1, BLANK_THRESHOLD).meta({ description: `Share of the page (0 to 1) that must be ink for a page to stay; default ${BLANK_THRESHOLD}.` }),
    pages: pages(),
    output: output(),
  },
  output: 'file',
  engines: ['mupdf', 'qpdf'],
  cost: perCore,
  thread: import.meta.url,
  run: async ({ fields, input, dir, signal, timeoutMs, progress, outputName, limits }) => {
    const ectx = { cwd: dir, signal, timeoutMs };
    const { boxes } = await openForRendering(input.path, ectx);
    const blank = new Set(
      await blankPages(input.path, boxes, selectedPages(fields.pages, boxes.length), fields.threshold, { dir, signal, timeoutMs, progress }),
    );
    const kept = boxes.map((b) => b.page).filter((p) => !blank.has(p));
    if (!kept.length) throw invalidInput(`every page is blank (ink below threshold ${fields.threshold}), and a PDF cannot have no pages`);
    const path = join(dir, 'without-blank-pages.pdf');
    // Outlines, form fields and metadata of the kept pages stay; outline entries and links to removed pages are pruned.
    await reorderPdf(input.path, kept, path, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }, ectx).catch((err) => {
      throw inputError(err);
    });
    return { files: [{ path, name: `${outputName}.pdf` }], json: { removedPages: [...blank] } };
  },
});
