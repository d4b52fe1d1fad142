import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { degrees, PDFDocument, type PDFEmbeddedPage, type PDFPage, rgb } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { AppError, invalidInput, limitExceeded } from '../errors.js';
import { INLINE_BYTES, runInThread, threadModule } from '../threads.js';
import { fitInto, type Rect } from './grid.js';

/** One output sheet: its size and which input page (1-based; null = left blank) goes into which cell. */
export interface Sheet {
  size: [number, number];
  items: { page: number | null; cell: Rect }[];
}

/** What a page shows: its crop box clipped to its media box, and /Rotate as a quarter turn. */
function visibleBox(page: PDFPage) {
  // A page without a usable media box (pdf-lib throws) is taken as Letter, as readers take it.
  const read = (get: () => { x: number; y: number; width: number; height: number }) => {
    try {
      return get();
    } catch {
      return { x: 0, y: 0, width: 612, height: 792 };
    }
  };
  const m = read(() => page.getMediaBox());
  const c = read(() => page.getCropBox());
  const left = Math.max(m.x, c.x);
  const bottom = Math.max(m.y, c.y);
  const right = Math.min(m.x + m.width, c.x + c.width);
  const top = Math.min(m.y + m.height, c.y + c.height);
  const box = right > left && top > bottom ? { left, bottom, right, top } : { left: m.x, bottom: m.y, right: m.x + m.width, top: m.y + m.height };
  const rotate = (((Math.round(page.getRotation().angle / 90) * 90) % 360) + 360) % 360;
  return { box, rotate };
}

const WORKER = threadModule('./place-worker', import.meta.url);

/**
 * Writes `sheets` as a new PDF of the pages of `input` (see drawSheets). qpdf decrypts the input first (a file
 * with only a permissions password opens without one); pdf-lib then holds the whole file, so it may be at most
 * `maxBytes` (MAX_STREAM_MB), and works in a worker thread unless the file is small: 300 pages take ~4 s of
 * pdf-lib, which must not hold the event loop that answers other requests.
 */
export async function placePages(
  input: string,
  output: string,
  sheets: Sheet[],
  opts: { border: boolean; maxBytes: number },
  ctx: EngineContext & { signal: AbortSignal },
): Promise<void> {
  const plain = join(ctx.cwd, 'place-input.pdf');
  await writePdf(input, plain, { decrypt: true }, ctx);
  const { size } = await stat(plain);
  if (size > opts.maxBytes)
    throw limitExceeded(`The PDF whose pages are placed (${Math.ceil(size / 1024 / 1024)} MB)`, 'MAX_STREAM_MB', Math.round(opts.maxBytes / 1024 / 1024));
  const job: PlaceJob = { input: plain, output, sheets, border: opts.border };
  try {
    if (size <= INLINE_BYTES) await drawSheets(job);
    else await runInThread<void>(WORKER, job, { what: 'page placement', signal: ctx.signal });
  } catch (err) {
    // A worker thread's error comes back as its code and text only: the cause is set again here.
    throw err instanceof AppError && err.message === unplaceable().message ? unplaceable() : err;
  }
}

/**
 * pdf-lib could not read the pages, as a read failure (its error as the cause), so the job runs again on repaired
 * copies: Ghostscript's re-written pages-loop (realworld-qpdf) is placed, where pdf-lib fails on qpdf's and MuPDF's.
 */
function unplaceable() {
  const err = invalidInput('the pages of this PDF could not be read to place them');
  err.cause = [new EngineError('pdf-lib', 'could not read the pages to place them')];
  return err;
}

export interface PlaceJob {
  input: string;
  output: string;
  sheets: Sheet[];
  border: boolean;
}

/**
 * Writes `sheets` as a new PDF: each page used is embedded once as a form XObject (its crop box, vector content
 * as it is) and drawn into its cells, scaled to fit keeping its aspect, centred, turned by its /Rotate so it
 * shows as a viewer shows it. Annotations, links and form fields of the pages are not carried over.
 */
export async function drawSheets(job: PlaceJob): Promise<void> {
  const bytes = await drawnSheets(job, await readFile(job.input)).catch((err) => {
    // pdf-lib fails on structures other readers repair (a catalog without a page tree...): the input's fault.
    throw err instanceof AppError ? err : unplaceable();
  });
  await writeFile(job.output, bytes);
}

async function drawnSheets({ sheets, border }: PlaceJob, input: Buffer): Promise<Uint8Array> {
  const src = await PDFDocument.load(input, { updateMetadata: false, throwOnInvalidObject: false });
  const doc = await PDFDocument.create();
  doc.setProducer('Quire');
  const pages = src.getPages();
  const used = [...new Set(sheets.flatMap((s) => s.items.map((i) => i.page)).filter((p): p is number => p !== null))].sort((a, b) => a - b);
  // pdf-lib cannot embed a page without content streams; such a page is blank anyway.
  if (used.some((p) => !pages[p - 1])) throw invalidInput(`pdf-lib reads ${pages.length} pages in this PDF, fewer than qpdf`);
  const drawable = used.filter((p) => pages[p - 1].node.Contents() !== undefined);
  const boxes = drawable.map((p) => visibleBox(pages[p - 1]));
  const embedded = new Map<number, { form: PDFEmbeddedPage; rotate: number }>();
  const forms = await doc.embedPages(
    drawable.map((p) => pages[p - 1]),
    boxes.map((b) => b.box),
  );
  forms.forEach((form, i) => embedded.set(drawable[i], { form, rotate: boxes[i].rotate }));
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
      if (border) out.drawRectangle({ ...at, borderColor: rgb(0, 0, 0), borderWidth: 0.5 });
    }
  }
  return doc.save();
}
