import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { degrees, PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import { z } from 'zod';
import { assemblePages } from '../../engines/qpdf-edit.js';
import { applyStamps, colorOf, drawLines, FontSet, LINE_SPACING, type PageFrame, pageFrames, resolveFont, turnedExtents, wrapText } from '../compose/index.js';
import { inputError, selectedPages } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { colorValues, int, looseNumber, num, oneOf, output, pages, text, trueFalse } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

/** Where the centre of a w x h box turned by `rotation` goes, from the alignments and offsets (spec 4.6). */
export function placeCentre(
  frame: PageFrame,
  w: number,
  h: number,
  f: { rotation: number; horizontal_alignment: string; vertical_alignment: string; x: number; y: number },
) {
  const { ex, ey } = turnedExtents(w, h, f.rotation);
  const cx = f.horizontal_alignment === 'left' ? ex : f.horizontal_alignment === 'right' ? frame.width - ex : frame.width / 2;
  const cy = f.vertical_alignment === 'bottom' ? ey : f.vertical_alignment === 'top' ? frame.height - ey : frame.height / 2;
  return { x: cx + f.x, y: cy + f.y };
}

/** `p` turned by `degrees` about the origin. */
const turn = (p: { x: number; y: number }, deg: number) => {
  const a = (deg * Math.PI) / 180;
  return { x: p.x * Math.cos(a) - p.y * Math.sin(a), y: p.x * Math.sin(a) + p.y * Math.cos(a) };
};

// Where a page's own lower-left corner lands in its visible frame under /Rotate, in units of its box size.
const ROTATED_ORIGIN: Record<number, (w: number, h: number) => { x: number; y: number }> = {
  0: () => ({ x: 0, y: 0 }),
  90: (w) => ({ x: 0, y: w }),
  180: (w, h) => ({ x: w, y: h }),
  270: (_w, h) => ({ x: h, y: 0 }),
};

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
    const ctx = { cwd: dir, signal, timeoutMs };
    const wmFile = inputs.watermark_file[0];
    if (wmFile && f.watermark_text !== undefined)
      throw new AppError('both_inputs', 'This route will only accept a watermark_text or a watermark_file, not both.');
    if (!wmFile && f.watermark_text === undefined) throw new AppError('missing_input', 'watermark_text, watermark_file or watermark_file_id is required');

    const frames = await pageFrames(inputs.file[0].path, ctx);
    const targets = selectedPages(f.pages, frames.length).map((page) => ({ page, frame: frames[page - 1], key: 'watermark' }));
    const doc = await PDFDocument.create();
    let paint: Parameters<typeof applyStamps>[4];

    if (wmFile) {
      const { page: wm, rotate } = await watermarkPage(doc, wmFile.path, dir, ctx);
      const turned = rotate % 180 !== 0;
      const s = f.watermark_file_scale;
      const [w, h] = [(turned ? wm.height : wm.width) * s, (turned ? wm.width : wm.height) * s];
      paint = (page, { frame }) => {
        const c = placeCentre(frame, w, h, f);
        const o = ROTATED_ORIGIN[rotate](wm.width * s, wm.height * s);
        const at = turn({ x: o.x - w / 2, y: o.y - h / 2 }, f.rotation);
        page.drawPage(wm, { x: c.x + at.x, y: c.y + at.y, xScale: s, yScale: s, rotate: degrees(f.rotation - rotate), opacity: f.opacity });
      };
    } else {
      const fonts = new FontSet(doc);
      const chars = [...f.watermark_text!.replace(/\r\n?/g, '\n')];
      const lines = wrapText(chars, await fonts.fontsFor(chars, resolveFont(f.font)), f.text_size, Infinity);
      const size = f.text_size;
      const w = Math.max(0, ...lines.map((l) => l.width));
      // The box: every line's height, the first from 0.75 of the size above its baseline (about cap height).
      const h = (lines.length - 1) * size * LINE_SPACING + size;
      const style = { size, color: colorOf(f.text_color_rgb, f.text_color_cmyk), opacity: f.opacity, rotation: f.rotation, rtl: false };
      paint = (page, { frame }) => {
        const c = placeCentre(frame, w, h, f);
        const at = turn({ x: -w / 2, y: h / 2 - 0.75 * size }, f.rotation);
        drawLines(page, lines, { x: c.x + at.x, y: c.y + at.y }, w, 'center', style);
      };
    }
    const path = join(dir, 'watermarked.pdf');
    await applyStamps(inputs.file[0].path, path, doc, targets, paint, f.behind_page, ctx);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});

/**
 * The watermark PDF's first page, embedded in the stamp document as a form over its crop box. qpdf copies that
 * page out first: it reads what pdf-lib cannot (damaged files, object streams with errors), removes
 * encryption that needs no password, and gives the 401 / 400 of a password-protected or broken watermark.
 */
async function watermarkPage(
  doc: PDFDocument,
  path: string,
  dir: string,
  ctx: { cwd: string; signal?: AbortSignal; timeoutMs?: number },
): Promise<{ page: PDFEmbeddedPage; rotate: number }> {
  const first = join(dir, 'watermark-page.pdf');
  await assemblePages([{ path, pages: [1] }], first, ctx).catch((err) => {
    throw inputError(err);
  });
  try {
    const src = await PDFDocument.load(await readFile(first), { updateMetadata: false });
    const page = src.getPage(0);
    const box = page.getCropBox();
    const rotate = (((Math.round(page.getRotation().angle / 90) * 90) % 360) + 360) % 360;
    const embedded = await doc.embedPage(page, { left: box.x, bottom: box.y, right: box.x + box.width, top: box.y + box.height });
    return { page: embedded, rotate };
  } catch {
    throw invalidInput('the watermark PDF could not be read');
  }
}
