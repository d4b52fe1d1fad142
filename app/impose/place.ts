import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument, type PDFEmbeddedPage, type PDFPage, degrees, rgb } from '@cantoo/pdf-lib';
import { limitExceeded } from '../errors.js';
import type { EngineContext } from '../../engines/context.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { fitInto, type Rect } from './grid.js';

/** One output sheet: its size and which input page (1-based; null = left blank) goes into which cell. */
export interface Sheet {
  size: [number, number];
  items: { page: number | null; cell: Rect }[];
}

/** What a page shows: its crop box clipped to its media box, and /Rotate as a quarter turn. */
function visibleBox(page: PDFPage) {
  const m = page.getMediaBox();
  const c = page.getCropBox();
  const left = Math.max(m.x, c.x);
  const bottom = Math.max(m.y, c.y);
  const right = Math.min(m.x + m.width, c.x + c.width);
  const top = Math.min(m.y + m.height, c.y + c.height);
  const box = right > left && top > bottom ? { left, bottom, right, top } : { left: m.x, bottom: m.y, right: m.x + m.width, top: m.y + m.height };
  const rotate = (((Math.round(page.getRotation().angle / 90) * 90) % 360) + 360) % 360;
  return { box, rotate };
}

/** The visible size (after /Rotate) of every page of a PDF already loaded. */
export function visibleSizes(doc: PDFDocument): [number, number][] {
  return doc.getPages().map((p) => {
    const { box, rotate } = visibleBox(p);
    const [w, h] = [box.right - box.left, box.top - box.bottom];
    return rotate % 180 ? [h, w] : [w, h];
  });
}

/**
 * The input for placing: decrypted by qpdf (an owner-password-only file opens without one), then loaded by
 * pdf-lib, within `maxBytes` (the whole file is held in the process).
 */
export async function loadForPlacing(input: string, maxBytes: number, ctx: EngineContext): Promise<PDFDocument> {
  const plain = join(ctx.cwd, 'place-input.pdf');
  await writePdf(input, plain, { decrypt: true }, ctx);
  const { size } = await stat(plain);
  if (size > maxBytes) throw limitExceeded(`The PDF loaded to place its pages (${Math.ceil(size / 1024 / 1024)} MB)`, 'MAX_STREAM_MB', Math.round(maxBytes / 1024 / 1024));
  return PDFDocument.load(await readFile(plain), { updateMetadata: false, throwOnInvalidObject: false });
}

/**
 * Writes `sheets` as a new PDF: each page used is embedded once as a form XObject (its crop box, vector content
 * as it is) and drawn into its cells, scaled to fit keeping its aspect, centred, turned by its /Rotate so it
 * shows as a viewer shows it. Annotations, links and form fields of the pages are not carried over.
 */
export async function placePages(src: PDFDocument, output: string, sheets: Sheet[], opts: { border: boolean }): Promise<void> {
  const doc = await PDFDocument.create();
  doc.setProducer('Quire');
  const pages = src.getPages();
  const used = [...new Set(sheets.flatMap((s) => s.items.map((i) => i.page)).filter((p): p is number => p !== null))].sort((a, b) => a - b);
  // pdf-lib cannot embed a page without content streams; such a page is blank anyway.
  const drawable = used.filter((p) => pages[p - 1].node.Contents() !== undefined);
  const boxes = drawable.map((p) => visibleBox(pages[p - 1]));
  const embedded = new Map<number, { form: PDFEmbeddedPage; rotate: number }>();
  (await doc.embedPages(drawable.map((p) => pages[p - 1]), boxes.map((b) => b.box))).forEach((form, i) => embedded.set(drawable[i], { form, rotate: boxes[i].rotate }));
  for (const sheet of sheets) {
    const out = doc.addPage(sheet.size);
    for (const { page, cell } of sheet.items) {
      const e = page === null ? undefined : embedded.get(page);
      if (!e) continue;
      const { width: w, height: h } = e.form;
      const shown: [number, number] = e.rotate % 180 ? [h, w] : [w, h];
      const at = fitInto(shown, cell);
      const s = at.width / shown[0];
      // pdf-lib turns about (x, y) counter-clockwise; /Rotate turns clockwise: the anchor is the corner the turn brings to the lower left.
      const anchor = { 0: [0, 0], 90: [0, w * s], 180: [w * s, h * s], 270: [h * s, 0] }[e.rotate as 0 | 90 | 180 | 270];
      out.drawPage(e.form, { x: at.x + anchor[0], y: at.y + anchor[1], xScale: s, yScale: s, rotate: degrees(-e.rotate) });
      if (opts.border) out.drawRectangle({ ...at, borderColor: rgb(0, 0, 0), borderWidth: 0.5 });
    }
  }
  await writeFile(output, await doc.save());
}
