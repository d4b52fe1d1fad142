import { join } from 'node:path';
import { checkNumberTemplate, colorOf, fillNumberTemplate, pageFrames, resolveFont, stampPageNumbers } from '../compose/index.js';
import { selectedPages } from '../document/index.js';
import { AppError } from '../errors.js';
import { colorValues, int, num, oneOf, output, pages, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

const GRAMMAR = { parity: true };

export default operation({
  path: '/pdf-with-page-numbers',
  tag: 'Content insertion',
  summary: 'Add page numbers or Bates numbers to pages',
  description:
    'Each selected page gets text made from the template `text`: {page} is its number, {pages} the number of the last numbered page, and {page:06} / {pages:06} pad them with zeros to 6 (or N) digits, for Bates numbering (`ABC-{page:06}`). Numbering counts the selected pages in page order from `start`. The number is placed by horizontal_alignment (left, center, right) and vertical_alignment (bottom, top), horizontal_margin points from the left or right edge and vertical_margin points from the bottom or top edge to its box, on the page as seen (trim box, else crop box, after /Rotate: on a turned page it sits at the bottom as displayed). It is real text in the font given (the fonts of /pdf-with-added-text), selectable and found by text extraction; the page content is kept as it is.',
  inputs: pdfInput(),
  fields: {
    text: text({ min: 1, max: 1000 }).optional().default('{page}'),
    start: int(0, 999_999_999, 1),
    pages: pages(GRAMMAR),
    horizontal_alignment: oneOf(['left', 'center', 'right'], 'center', { centre: 'center' }),
    vertical_alignment: oneOf(['bottom', 'top'], 'bottom'),
    horizontal_margin: num(0, 100000, 36),
    vertical_margin: num(0, 100000, 24),
    font: text({ min: 1, max: 200 }).optional().default('Helvetica'),
    text_size: num(5, 100, 10),
    text_color_rgb: colorValues(3, 255).optional(),
    text_color_cmyk: colorValues(4, 100).optional(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  check: (f) => {
    if (f.text_color_rgb && f.text_color_cmyk) throw new AppError('out_of_range', 'text_color_rgb and text_color_cmyk cannot both be given: send one of them');
    checkNumberTemplate(f.text);
    resolveFont(f.font);
  },
  run: async ({ fields: f, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const frames = await pageFrames(input.path, ctx);
    const numbered = selectedPages(f.pages, frames.length, GRAMMAR);
    const last = f.start + numbered.length - 1;
    const labels = numbered.map((_, i) => fillNumberTemplate(f.text, f.start + i, last));
    const path = join(dir, 'numbered.pdf');
    await stampPageNumbers(
      input.path,
      path,
      frames,
      numbered,
      labels,
      {
        font: resolveFont(f.font),
        size: f.text_size,
        color: colorOf(f.text_color_rgb, f.text_color_cmyk),
        horizontal: f.horizontal_alignment,
        vertical: f.vertical_alignment,
        marginX: f.horizontal_margin,
        marginY: f.vertical_margin,
      },
      ctx,
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
