import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Color, cmyk, type PDFDocument, type PDFPage, rgb } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { stampPagesIncrementally } from '../../engines/mupdf-stamp.js';
import { trimFrames } from '../../engines/poppler-boxes.js';
import { type StampPlan, stampPages } from '../../engines/qpdf-edit.js';
import { inputError, openPdf } from '../document/index.js';
import { invalidInput } from '../errors.js';

/**
 * Adding things to pages (watermarks, text, images) without rewriting the document: what is added is drawn
 * with pdf-lib on small "stamp" pages, one per distinct page size and content, and qpdf lays them over (or
 * under) the target pages. The original objects are copied as they are (each page's content wrapped in a form),
 * and the heavy work stays out of our process: on a 300-page, 14 MB file qpdf --overlay took 0.3 s where
 * pdf-lib's load, draw and save took 0.7-0.9 s in the event loop (scripts/bench/insert.bench.ts).
 *
 * Coordinates are those of the page as seen: origin at the lower-left corner of its trim box (else crop box,
 * else media box), after /Rotate, in PDF units. A stamp page has exactly that visible size, and qpdf
 * (placeFormXObject) fits it into the trim box upright, so offset origins and rotated pages come out right.
 */

export interface PageFrame {
  /** Visible width and height (after /Rotate) of the trim box. */
  width: number;
  height: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Every page's frame. qpdf opens the file first (a password-protected input is a 401, a broken one a 400);
 * Poppler reads the boxes, with qpdf's fallbacks for the trim box (crop box, then media box).
 */
export async function pageFrames(path: string, ctx: EngineContext): Promise<PageFrame[]> {
  const { pageCount } = await openPdf(path, ctx);
  if (pageCount < 1) throw invalidInput('the PDF has no pages');
  const frames = await trimFrames(path, pageCount, ctx).catch((err) => {
    throw inputError(err);
  });
  if (frames.length !== pageCount) throw invalidInput();
  return frames.map(({ box, rotate }) => {
    const [w, h] = [round(Math.abs(box[2] - box[0])), round(Math.abs(box[3] - box[1]))];
    return rotate % 180 ? { width: h, height: w } : { width: w, height: h };
  });
}

export interface StampTarget {
  /** 1-based page of the input. */
  page: number;
  frame: PageFrame;
  /** Targets with the same key (and frame) share one stamp page. */
  key: string;
}

/**
 * Draws one stamp page per distinct key and page size with `paint`, then lays them on the targets.
 * `doc` is the stamp document (created by the caller, which embeds its fonts and images into it).
 */
export async function applyStamps(
  input: string,
  output: string,
  doc: PDFDocument,
  targets: StampTarget[],
  paint: (page: PDFPage, target: StampTarget) => void | Promise<void>,
  behind: boolean,
  ctx: EngineContext,
): Promise<void> {
  const sorted = [...targets].sort((a, b) => a.page - b.page);
  const stampOf = new Map<string, number>();
  const from: number[] = [];
  for (const t of sorted) {
    const key = `${t.frame.width}x${t.frame.height}:${t.key}`;
    if (!stampOf.has(key)) {
      const page = doc.addPage([t.frame.width, t.frame.height]);
      await paint(page, t);
      stampOf.set(key, doc.getPageCount());
    }
    from.push(stampOf.get(key)!);
  }
  const stamp = join(ctx.cwd, 'stamp.pdf');
  await writeFile(stamp, await doc.save({ useObjectStreams: false }));
  await layStamps(input, stamp, output, { to: sorted.map((t) => t.page), from, behind }, ctx);
}

/**
 * Lays the stamp file's pages on the input's: MuPDF appends the changes to the file (cost grows with the pages
 * stamped, not with the document); qpdf's overlay, which rewrites every page it stamps, takes what MuPDF cannot
 * (an encrypted input, whose encryption qpdf keeps; a file MuPDF fails on).
 */
export async function layStamps(input: string, stamp: string, output: string, plan: StampPlan, ctx: EngineContext): Promise<void> {
  try {
    await stampPagesIncrementally(input, stamp, output, plan, ctx);
  } catch (err) {
    // Out of time is out of time for qpdf too.
    if (!(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
    await stampPages(input, stamp, output, plan, ctx);
  }
}

/** The pdf-lib colour of an RGB (0-255) or CMYK (0-100) field; black when neither is given. */
export function colorOf(rgbValues: number[] | undefined, cmykValues: number[] | undefined): Color {
  if (cmykValues) return cmyk(cmykValues[0] / 100, cmykValues[1] / 100, cmykValues[2] / 100, cmykValues[3] / 100);
  if (rgbValues) return rgb(rgbValues[0] / 255, rgbValues[1] / 255, rgbValues[2] / 255);
  return rgb(0, 0, 0);
}

/** The axis-aligned half extents of a w x h box turned by `degrees`. */
export function turnedExtents(w: number, h: number, degrees: number): { ex: number; ey: number } {
  const a = (degrees * Math.PI) / 180;
  const [c, s] = [Math.abs(Math.cos(a)), Math.abs(Math.sin(a))];
  return { ex: (w * c + h * s) / 2, ey: (w * s + h * c) / 2 };
}
