import type { EngineContext } from './context.js';
import { run } from './run.js';

/** One page's trim box (Poppler's fallbacks: crop box, then media box) and its /Rotate, from `pdfinfo -box`. */
export interface TrimFrame {
  page: number;
  box: [number, number, number, number];
  rotate: number;
}

/**
 * Every page's trim box and rotation in one `pdfinfo` run (40 ms for 300 pages, where qpdf's object dump
 * takes 5-10x longer). The caller has already opened the file (passwords, damage) with qpdf.
 */
export async function trimFrames(input: string, pageCount: number, ctx: EngineContext): Promise<TrimFrame[]> {
  const r = await run('pdfinfo', ['-box', '-f', '1', '-l', String(pageCount), input], ctx);
  return parseTrimFrames(r.stdout);
}

export function parseTrimFrames(out: string): TrimFrame[] {
  const pages = new Map<number, TrimFrame>();
  const at = (n: number) => pages.get(n) ?? pages.set(n, { page: n, box: [0, 0, 612, 792], rotate: 0 }).get(n)!;
  for (const m of out.matchAll(/^Page\s+(\d+)\s+(rot|TrimBox):\s+(.*)$/gm)) {
    const p = at(Number(m[1]));
    if (m[2] === 'rot') p.rotate = ((Number(m[3]) % 360) + 360) % 360;
    else p.box = m[3].trim().split(/\s+/).map(Number) as TrimFrame['box'];
  }
  return [...pages.values()].sort((a, b) => a.page - b.page);
}

/** One page's media and crop boxes (crop clipped to media, as Poppler and MuPDF show it) and /Rotate, from `pdfinfo -box`. */
export interface PopplerPageGeometry {
  page: number;
  mediaBox: [number, number, number, number];
  cropBox: [number, number, number, number];
  rotate: number;
}

/** Every page's boxes and rotation: the second opinion when MuPDF cannot read them. */
export async function popplerGeometry(input: string, pageCount: number, ctx: EngineContext): Promise<PopplerPageGeometry[]> {
  const r = await run('pdfinfo', ['-box', '-f', '1', '-l', String(pageCount), input], ctx);
  return parsePopplerGeometry(r.stdout);
}

export function parsePopplerGeometry(out: string): PopplerPageGeometry[] {
  const pages = new Map<number, PopplerPageGeometry>();
  const at = (n: number) => pages.get(n) ?? pages.set(n, { page: n, mediaBox: [0, 0, 612, 792], cropBox: [0, 0, 612, 792], rotate: 0 }).get(n)!;
  for (const m of out.matchAll(/^Page\s+(\d+)\s+(rot|MediaBox|CropBox):\s+(.*)$/gm)) {
    const p = at(Number(m[1]));
    if (m[2] === 'rot') p.rotate = ((Number(m[3]) % 360) + 360) % 360;
    else if (m[2] === 'MediaBox') p.mediaBox = m[3].trim().split(/\s+/).map(Number) as PopplerPageGeometry['mediaBox'];
    else p.cropBox = m[3].trim().split(/\s+/).map(Number) as PopplerPageGeometry['cropBox'];
  }
  return [...pages.values()].sort((a, b) => a.page - b.page);
}
