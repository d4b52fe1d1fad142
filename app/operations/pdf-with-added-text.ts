import { join } from 'node:path';
import { PDFDocument, type PDFFont } from '@cantoo/pdf-lib';
import { z } from 'zod';
import { applyStamps, colorOf, drawLines, FontSet, pageFrames, resolveFont, type StampTarget, wrapText } from '../compose/index.js';
import { AppError, outOfRange } from '../errors.js';
import { colorValues, json, looseBool, looseNumber, num, output, text } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

const flag = z.preprocess(looseBool, z.boolean()).optional();

/** One text object (spec 4.9); values may be strings or JSON numbers and booleans. */
const textObject = z.object({
  font: text({ min: 1, max: 200 }),
  text: text({ min: 1, max: 100000 }),
  text_size: num(5, 100),
  x: num(-100000, 100000),
  y: num(-100000, 100000),
  page: z.preprocess(
    (v) => (typeof v === 'string' && v.trim().toLowerCase() === 'all' ? 'all' : looseNumber(v)),
    z.union([z.literal('all'), z.number().int().min(1)]),
  ),
  // Required by the spec; defaults here cost nothing and spare clients that leave them out.
  max_width: z.preprocess(looseNumber, z.number().gt(0)).optional(),
  opacity: num(0, 1, 1),
  rotation: num(-100000, 100000, 0),
  text_color_rgb: colorValues(3, 255).optional(),
  text_color_cmyk: colorValues(4, 100).optional(),
  is_rtl: flag,
  // The Python SDK's name for is_rtl.
  is_right_to_left: flag,
});
type TextObject = z.infer<typeof textObject>;

export default operation({
  path: '/pdf-with-added-text',
  tag: 'Content insertion',
  summary: 'Add text to pages',
  description:
    'text_objects is a JSON array of objects {font, text, text_size (5-100), x, y, page (a number or "all"), max_width, opacity, rotation, text_color_rgb or text_color_cmyk, is_rtl}. (x, y) is where the first line\'s baseline starts, in PDF units from the lower-left corner of the page as seen (trim box, after /Rotate); text wraps at max_width (default: to the page\'s right edge) and further lines go below; rotation turns the block counter-clockwise about (x, y). Right-to-left text (is_rtl) is aligned right in the column [x, x + max_width]. Text outside WinAnsi (Cyrillic, Greek, Arabic, Hebrew, CJK, ...) is drawn with embedded Unicode fonts and stays extractable.',
  inputs: { file: { idField: 'id', kind: 'pdf', description: 'The PDF' } },
  fields: {
    text_objects: json(z.array(textObject).min(1).max(1000)).meta({ type: 'string', description: 'JSON array of text objects' }),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'poppler'],
  check: (f) => {
    f.text_objects.forEach((o, i) => {
      if (o.text_color_rgb && o.text_color_cmyk)
        throw new AppError('out_of_range', `text_objects[${i}]: text_color_rgb and text_color_cmyk cannot both be given`);
      resolveFont(o.font);
    });
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const frames = await pageFrames(input.path, ctx);
    const objects = fields.text_objects;
    objects.forEach((o, i) => {
      if (o.page !== 'all' && o.page > frames.length) throw outOfRange(o.page, `text_objects[${i}].page (the PDF has ${frames.length} pages)`);
    });

    const doc = await PDFDocument.create();
    const fonts = new FontSet(doc);
    const prepared = await Promise.all(
      objects.map(async (o) => {
        const chars = [...o.text.replace(/\r\n?/g, '\n')];
        return { o, chars, fonts: await fonts.fontsFor(chars, resolveFont(o.font)) };
      }),
    );
    // Pages with the same objects (and size) share one stamp page.
    const targets: StampTarget[] = [];
    frames.forEach((frame, i) => {
      const on = objects.flatMap((o, n) => (o.page === 'all' || o.page === i + 1 ? [n] : []));
      if (on.length) targets.push({ page: i + 1, frame, key: on.join(',') });
    });
    const path = join(dir, 'with-text.pdf');
    await applyStamps(
      input.path,
      path,
      doc,
      targets,
      (page, t) => {
        for (const n of t.key.split(',').map(Number)) drawObject(page, prepared[n], t.frame.width);
      },
      false,
      ctx,
    );
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});

function drawObject(page: Parameters<typeof drawLines>[0], p: { o: TextObject; chars: string[]; fonts: PDFFont[] }, frameWidth: number): void {
  const { o } = p;
  const rtl = o.is_rtl ?? o.is_right_to_left ?? false;
  const room = frameWidth - o.x;
  const column = o.max_width ?? (room > 0 ? room : Infinity);
  const lines = wrapText(p.chars, p.fonts, o.text_size, column);
  const width = Number.isFinite(column) ? column : Math.max(0, ...lines.map((l) => l.width));
  drawLines(page, lines, { x: o.x, y: o.y }, width, rtl ? 'right' : 'left', {
    size: o.text_size,
    color: colorOf(o.text_color_rgb, o.text_color_cmyk),
    opacity: o.opacity,
    rotation: o.rotation,
    rtl,
  });
}
