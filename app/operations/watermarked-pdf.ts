import { join } from 'node:path';
import { z } from 'zod';
import { resolveFont, watermarkPdf } from '../compose/index.js';
import { AppError } from '../errors.js';
import { colorValues, int, looseNumber, num, oneOf, output, pages, text, trueFalse } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

export default operation({
  path: '/watermarked-pdf',
  tag: 'Watermarking',
  summary: 'Add a text or PDF watermark to pages',
  description:
    'watermark_text, or the first page of a PDF (watermark_file / watermark_file_id) scaled by watermark_file_scale, is placed on each selected page by horizontal_alignment / vertical_alignment, then moved by x / y (PDF units), turned by rotation (degrees, counter-clockwise, about its centre; alignment uses the turned outline), with opacity, over the content or behind it (behind_page). Positions are in the page as seen: its trim box (else crop box) after /Rotate. Lines of watermark_text (split at line breaks) are centred on each other. The original page content is kept as it is.',
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF to watermark' },
    watermark_file: { idField: 'watermark_file_id', kind: 'pdf', required: false, description: 'A PDF whose first page is the watermark' },
  },
  fields: {
    watermark_text: text({ max: 10000 }).optional(),
    font: text({ max: 200 }).optional().default('Arial'),
    text_size: int(5, 100, 72),
    text_color_rgb: colorValues(3, 255).optional(),
    text_color_cmyk: colorValues(4, 100).optional(),
    watermark_file_scale: z.preprocess(looseNumber, z.number().gt(0).max(100)).optional().default(0.5),
    opacity: num(0, 1, 0.5),
    horizontal_alignment: oneOf(['left', 'right', 'center'], 'center', { centre: 'center' }),
    vertical_alignment: oneOf(['top', 'bottom', 'center'], 'center', { centre: 'center', middle: 'center' }),
    x: num(-100000, 100000, 0),
    y: num(-100000, 100000, 0),
    rotation: num(-100000, 100000, 0),
    pages: pages(),
    behind_page: trueFalse(false),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  check: (f) => {
    if (f.text_color_rgb && f.text_color_cmyk) throw new AppError('out_of_range', 'text_color_rgb and text_color_cmyk cannot both be given: send one of them');
    if (f.watermark_text !== undefined) resolveFont(f.font);
  },
  run: async ({ fields: f, inputs, dir, signal, timeoutMs, outputName }) => {
    const wmFile = inputs.watermark_file[0];
    if (wmFile && f.watermark_text !== undefined)
      throw new AppError('both_inputs', 'This route will only accept a watermark_text or a watermark_file, not both.');
    if (!wmFile && f.watermark_text === undefined) throw new AppError('missing_input', 'watermark_text, watermark_file or watermark_file_id is required');
    const path = join(dir, 'watermarked.pdf');
    await watermarkPdf(inputs.file[0].path, wmFile?.path, f, path, dir, { cwd: dir, signal, timeoutMs });
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
