import { readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../engines/errors.js';
import type { PageBox } from '../../engines/mupdf.js';
import { drawPageImage, type PageSurvey } from '../../engines/mupdf-text-layer.js';
import { popplerPageImage } from '../../engines/poppler.js';
import { detectOrientation, type Orientation } from '../../engines/tesseract.js';
import { firstThatReads, inputError, readBudgets } from '../document/index.js';
import { inParallel, MAX_OCR_PIXELS } from '../render/index.js';

/**
 * How a page is looked at, the way a person would: drawn at the resolution it was scanned at (kept between 150
 * and 300 dpi; a page that is not mostly image at 300), since Tesseract's orientation confidence falls quickly
 * below the scan's own resolution (the corpus's 150 ppi Huckleberry Finn scan: 13.96 at 150 dpi, 0.25 at 100).
 */
const MIN_DPI = 150;
const MAX_DPI = 300;
/** The second look at a weak page: at 300 dpi, or at 200 when the first already was at 300. */
const OTHER_DPI = 200;
/** OCRmyPDF's default for --rotate-pages-threshold: one reading at least this confident is trusted alone. */
export const MIN_ORIENTATION_CONFIDENCE = 14;

export type Turn = 0 | 90 | 180 | 270;

/** One run of Tesseract's orientation detection. */
export interface OrientationReading {
  /** What was read: the whole page, or its part with the most text. */
  of: 'page' | 'text-densest half';
  dpi: number;
  /** The clockwise turn that makes the text upright, null when Tesseract found too little text. */
  rotate: Turn | null;
  confidence: number;
}

export interface PageOrientation {
  page: number;
  /** The clockwise turn decided on (0: already upright), null when left undecided. */
  turn: Turn | null;
  /** The decision's confidence: the one reading's, or the sum of agreeing readings (see `decide`). */
  confidence: number;
  /** Why, in words: one confident reading, readings that agree, or why the page is left as it is. */
  reason: string;
  readings: OrientationReading[];
}

export interface DetectContext {
  dir: string;
  signal: AbortSignal;
  timeoutMs: number;
  progress: (fraction: number) => void;
}

export interface DetectRequest {
  input: string;
  boxes: PageBox[];
  pages: number[];
  /** The pages' images (surveyPages): a scan is looked at at its own resolution. */
  surveys: Map<number, PageSurvey>;
  minConfidence: number;
}

/** The resolution a page is first looked at: a scan's own (150-300), else 300; within MAX_OCR_PIXELS. */
export function orientationDpi(box: PageBox, survey?: PageSurvey): number {
  const scan = survey && survey.ppi > 0 && survey.cover >= 0.5 ? survey : null;
  const wanted = scan ? Math.max(MIN_DPI, Math.min(MAX_DPI, Math.round(scan.ppi))) : MAX_DPI;
  return capped(box, wanted);
}

const capped = (box: PageBox, dpi: number) => Math.max(1, Math.min(dpi, Math.floor(72 * Math.sqrt(MAX_OCR_PIXELS / (box.width * box.height)))));

/**
 * One confident reading decides, as in OCRmyPDF. Below that, the page is looked at again (its text-densest half,
 * and the whole page at another resolution) and turned only when every reading that found text names the same
 * turn and their confidences add up to `min`: Tesseract's confidence is itself a sum over the characters it
 * sampled, so agreeing readings of more of the page's characters weigh as one reading of all of them. Readings
 * that disagree, or too little text, leave the page as it is.
 */
export function decide(readings: OrientationReading[], min: number): Omit<PageOrientation, 'page' | 'readings'> {
  const [first] = readings;
  if (first?.rotate != null && first.confidence >= min) {
    return { turn: first.rotate, confidence: round(first.confidence), reason: `one reading confident enough (${round(first.confidence)} >= ${min})` };
  }
  const found = readings.filter((r) => r.rotate !== null);
  if (!found.length) return { turn: null, confidence: 0, reason: 'too little text to tell' };
  const sum = found.reduce((s, r) => s + r.confidence, 0);
  if (found.some((r) => r.rotate !== found[0].rotate)) {
    return { turn: null, confidence: 0, reason: `the readings disagree (${found.map((r) => r.rotate).join(', ')})` };
  }
  if (sum < min) {
    return {
      turn: null,
      confidence: round(sum),
      reason: `too weak: ${found.length} reading${found.length > 1 ? 's' : ''} adding up to ${round(sum)} (< ${min})`,
    };
  }
  return { turn: found[0].rotate, confidence: round(sum), reason: `${found.length} readings agree, adding up to ${round(sum)} (>= ${min})` };
}

const round = (x: number) => Math.round(x * 100) / 100;

/** Each page's text orientation, one page per core, each drawn image deleted once read; in page order. */
export async function detectOrientations(req: DetectRequest, ctx: DetectContext): Promise<PageOrientation[]> {
  const deadline = Date.now() + ctx.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const { renderPageMs, ocrPageMs } = readBudgets();
  const queue = [...req.pages];
  const found: PageOrientation[] = [];

  const worker = async (_: unknown, _k: number, signal: AbortSignal) => {
    for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
      const box = req.boxes[page - 1];
      const files: string[] = [];
      const draw = async (dpi: number) => {
        const image = join(ctx.dir, `osd-${page}-${dpi}.pgm`);
        files.push(image);
        const opts = { cwd: ctx.dir, signal, timeoutMs: left(), pageMs: renderPageMs };
        await firstThatReads(
          `Drawing page ${page} for orientation detection`,
          [
            () => drawPageImage(req.input, page, image, { dpi, colors: 'gray' }, { ...opts, timeoutMs: Math.min(renderPageMs, left()) }),
            () => popplerPageImage(req.input, page, image, { dpi, colors: 'gray' }, opts),
          ],
          'renderPageMs',
        ).catch((err) => {
          throw inputError(err);
        });
        return image;
      };
      const read = async (image: string, dpi: number, of: OrientationReading['of']): Promise<OrientationReading | 'timeout'> => {
        const cap = Math.min(ocrPageMs, left());
        try {
          const o: Orientation | null = await detectOrientation(image, dpi, { cwd: ctx.dir, signal, timeoutMs: cap });
          return { of, dpi, rotate: o ? (o.rotate as Turn) : null, confidence: o?.confidence ?? 0 };
        } catch (err) {
          // The page's own cap, not the job's deadline: the page is left as it is, the others go on.
          if (!(err instanceof EngineError && err.details.timedOut && cap === ocrPageMs)) throw err;
          return 'timeout';
        }
      };
      try {
        const readings: OrientationReading[] = [];
        const dpi = orientationDpi(box, req.surveys.get(page));
        const image = await draw(dpi);
        let timedOut = false;
        const take = (r: OrientationReading | 'timeout') => {
          if (r === 'timeout') timedOut = true;
          else readings.push(r);
        };
        take(await read(image, dpi, 'page'));
        if (!timedOut && decide(readings, req.minConfidence).turn === null) {
          const half = await densestHalf(image, join(ctx.dir, `osd-${page}-half.pgm`));
          if (half) {
            files.push(half);
            take(await read(half, dpi, 'text-densest half'));
          }
          const other = capped(box, dpi < MAX_DPI ? MAX_DPI : OTHER_DPI);
          if (!timedOut && other !== dpi) take(await read(await draw(other), other, 'page'));
        }
        const decision = timedOut
          ? { turn: null, confidence: 0, reason: `orientation detection took longer than ${ocrPageMs / 1000} s (OCR_PAGE_SECONDS)` }
          : decide(readings, req.minConfidence);
        found.push({ page, ...decision, readings });
      } finally {
        await Promise.all(files.map((f) => rm(f, { force: true })));
      }
      ctx.progress(found.length / req.pages.length);
    }
  };
  await inParallel(Array.from({ length: Math.min(availableParallelism(), req.pages.length) }), worker, ctx.signal);
  return found.sort((a, b) => a.page - b.page);
}

/** Cells across the page when looking for its text: text is many dark-light edges per cell, a photo few. */
const GRID = 16;

/**
 * The half of a page (half its width and height, anywhere on it in steps of a 16th) with the most dark-light
 * edges, across and down, so text in any orientation counts and illustrations and margins are left out; written
 * as a PGM next to it. Null for an image without any edge (a blank page) or one that is not a binary PGM.
 */
export async function densestHalf(image: string, output: string): Promise<string | null> {
  const pgm = parsePgm(await readFile(image));
  if (!pgm || pgm.width < GRID || pgm.height < GRID) return null;
  const { width, height, data, offset } = pgm;
  const edges = new Float64Array(GRID * GRID);
  const dark = (i: number) => data[offset + i] < 128;
  for (let y = 1; y < height; y++) {
    const row = Math.min(GRID - 1, Math.floor((y * GRID) / height)) * GRID;
    for (let x = 1; x < width; x++) {
      const i = y * width + x;
      const d = dark(i);
      if (d !== dark(i - 1) || d !== dark(i - width)) edges[row + Math.min(GRID - 1, Math.floor((x * GRID) / width))]++;
    }
  }
  const span = GRID / 2;
  let best = { sum: 0, cx: 0, cy: 0 };
  for (let cy = 0; cy + span <= GRID; cy++) {
    for (let cx = 0; cx + span <= GRID; cx++) {
      let sum = 0;
      for (let j = cy; j < cy + span; j++) for (let i = cx; i < cx + span; i++) sum += edges[j * GRID + i];
      if (sum > best.sum) best = { sum, cx, cy };
    }
  }
  if (!best.sum) return null;
  const x0 = Math.floor((best.cx * width) / GRID);
  const y0 = Math.floor((best.cy * height) / GRID);
  const w = Math.floor(((best.cx + span) * width) / GRID) - x0;
  const h = Math.floor(((best.cy + span) * height) / GRID) - y0;
  const out = Buffer.alloc(w * h);
  for (let y = 0; y < h; y++) data.copy(out, y * w, offset + (y0 + y) * width + x0, offset + (y0 + y) * width + x0 + w);
  await writeFile(output, Buffer.concat([Buffer.from(`P5\n${w} ${h}\n255\n`), out]));
  return output;
}

/** A binary 8-bit PGM (P5) as MuPDF and Poppler write it: its size and where its samples start. */
function parsePgm(data: Buffer): { width: number; height: number; data: Buffer; offset: number } | null {
  const fields: string[] = [];
  let i = 0;
  while (fields.length < 4 && i < data.length) {
    if (data[i] === 0x23) {
      while (i < data.length && data[i] !== 0x0a) i++;
    } else if (data[i] <= 0x20) {
      i++;
    } else {
      const start = i;
      while (i < data.length && data[i] > 0x20) i++;
      fields.push(data.subarray(start, i).toString('latin1'));
    }
  }
  const [magic, w, h, max] = fields;
  const width = Number(w);
  const height = Number(h);
  const offset = i + 1;
  if (magic !== 'P5' || max !== '255' || !(width > 0 && height > 0) || data.length < offset + width * height) return null;
  return { width, height, data, offset };
}
