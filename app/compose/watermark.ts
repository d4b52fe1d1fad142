import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { degrees, PDFDocument, type PDFEmbeddedPage } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { assemblePages } from '../../engines/qpdf-edit.js';
import { inputError, selectedPages } from '../document/index.js';
import { invalidInput } from '../errors.js';
import { FontSet, resolveFont } from './fonts.js';
import { applyStamps, colorOf, type PageFrame, pageFrames, turnedExtents } from './stamp.js';
import { drawLines, LINE_SPACING, wrapText } from './text-block.js';

/** Where the watermark goes: alignments, offsets and turn (spec 4.6). */
export interface WatermarkPlace {
  rotation: number;
  horizontal_alignment: string;
  vertical_alignment: string;
  x: number;
  y: number;
}

export interface WatermarkSpec extends WatermarkPlace {
  watermark_text?: string;
  font: string;
  text_size: number;
  text_color_rgb?: number[];
  text_color_cmyk?: number[];
  watermark_file_scale: number;
  opacity: number;
  pages: string;
  behind_page: boolean;
}

/** Where the centre of a w x h box turned by `rotation` goes, from the alignments and offsets (spec 4.6). */
export function placeCentre(frame: PageFrame, w: number, h: number, f: WatermarkPlace) {
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

/**
 * `input` with the watermark (the first page of `watermarkFile`, else `f.watermark_text`) on each selected page,
 * over its content or behind it.
 */
export async function watermarkPdf(input: string, watermarkFile: string | undefined, f: WatermarkSpec, output: string, dir: string, ctx: EngineContext) {
  const frames = await pageFrames(input, ctx);
  const targets = selectedPages(f.pages, frames.length).map((page) => ({ page, frame: frames[page - 1], key: 'watermark' }));
  const doc = await PDFDocument.create();
  let paint: Parameters<typeof applyStamps>[4];

  if (watermarkFile) {
    const { page: wm, rotate } = await watermarkPage(doc, watermarkFile, dir, ctx);
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
  await applyStamps(input, output, doc, targets, paint, f.behind_page, ctx);
}

/**
 * The watermark PDF's first page, embedded in the stamp document as a form over its crop box. qpdf copies that
 * page out first: it reads what pdf-lib cannot (damaged files, object streams with errors), removes
 * encryption that needs no password, and gives the 401 / 400 of a password-protected or broken watermark.
 */
async function watermarkPage(doc: PDFDocument, path: string, dir: string, ctx: EngineContext): Promise<{ page: PDFEmbeddedPage; rotate: number }> {
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
