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
  return (await popplerGeometry(input, pageCount, ctx)).map((g) => ({ page: g.page, box: g.trimBox, rotate: g.rotate }));
}

type Box = [number, number, number, number];

/** One page's boxes as Poppler gives them (crop clipped to media; trim falling back to crop, then media) and /Rotate. */
export interface PopplerPageGeometry {
  page: number;
  mediaBox: Box;
  cropBox: Box;
  trimBox: Box;
  rotate: number;
}

/** Every page's boxes and rotation (`pdfinfo -box`): the trim frames above, and the second opinion when MuPDF cannot read them. */
export async function popplerGeometry(input: string, pageCount: number, ctx: EngineContext): Promise<PopplerPageGeometry[]> {
  const r = await run('pdfinfo', ['-box', '-f', '1', '-l', String(pageCount), input], ctx);
  return parsePopplerGeometry(r.stdout);
}

export function parsePopplerGeometry(out: string): PopplerPageGeometry[] {
  const pages = new Map<number, PopplerPageGeometry>();
  const letter = (): Box => [0, 0, 612, 792];
  const at = (n: number) => pages.get(n) ?? pages.set(n, { page: n, mediaBox: letter(), cropBox: letter(), trimBox: letter(), rotate: 0 }).get(n)!;
  const keys = { MediaBox: 'mediaBox', CropBox: 'cropBox', TrimBox: 'trimBox' } as const;
  for (const m of out.matchAll(/^Page\s+(\d+)\s+(rot|MediaBox|CropBox|TrimBox):\s+(.*)$/gm)) {
    const p = at(Number(m[1]));
    if (m[2] === 'rot') p.rotate = ((Number(m[3]) % 360) + 360) % 360;
    else p[keys[m[2] as keyof typeof keys]] = m[3].trim().split(/\s+/).map(Number) as Box;
  }
  return [...pages.values()].sort((a, b) => a.page - b.page);
}
