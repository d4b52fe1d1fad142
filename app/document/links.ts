import type { EngineContext } from '../../engines/context.js';
import { pageGeometry } from '../../engines/mupdf-stext.js';
import { readPdfJson } from '../../engines/qpdf.js';
import { type Box, deviceToUser } from './layout.js';
import { inputError } from './pdf-access.js';
import { PdfObjects, pdfText } from './pdf-objects.js';

/** A web link of a page: the area of its Link annotation (device space, like the page model) and its URI. */
export interface PageLink {
  page: number;
  box: Box;
  uri: string;
}

/** The URI links (Link annotations with a URI action) of the selected pages; internal links are left out. */
export async function pageLinks(path: string, pages: number[], ctx: EngineContext): Promise<PageLink[]> {
  try {
    const [{ json }, geometry] = await Promise.all([readPdfJson(path, ctx), pageGeometry(path, pages, ctx)]);
    const objects = new PdfObjects(json);
    const geo = new Map(geometry.map((g) => [g.page, g]));
    const out: PageLink[] = [];
    for (const p of json.pages ?? []) {
      const g = geo.get(p.pageposfrom1);
      if (!g) continue;
      const toDevice = userToDevice(deviceToUser(g));
      for (const ref of objects.array(objects.dict(p.object)?.['/Annots'])) {
        const a = objects.dict(ref);
        const action = objects.dict(a?.['/A']);
        if (a?.['/Subtype'] !== '/Link' || action?.['/S'] !== '/URI') continue;
        const uri = pdfText(objects.resolve(action['/URI'])).trim();
        const rect = objects.array(a['/Rect']).map((v) => Number(objects.resolve(v)));
        if (!/^(https?|mailto|ftp):/i.test(uri) || rect.length !== 4 || rect.some((v) => !Number.isFinite(v))) continue;
        const c = [toDevice({ x: rect[0], y: rect[1] }), toDevice({ x: rect[2], y: rect[3] })];
        out.push({
          page: g.page,
          uri,
          box: { x0: Math.min(c[0].x, c[1].x), y0: Math.min(c[0].y, c[1].y), x1: Math.max(c[0].x, c[1].x), y1: Math.max(c[0].y, c[1].y) },
        });
      }
    }
    return out;
  } catch (err) {
    throw inputError(err);
  }
}

/** The inverse of an axis-aligned affine map (rotations by quarter turns and flips), from three points of it. */
export function userToDevice(f: (p: { x: number; y: number }) => { x: number; y: number }) {
  const o = f({ x: 0, y: 0 });
  const ex = f({ x: 1, y: 0 });
  const ey = f({ x: 0, y: 1 });
  const [a, b, c, d] = [ex.x - o.x, ex.y - o.y, ey.x - o.x, ey.y - o.y];
  const det = a * d - b * c || 1;
  return ({ x, y }: { x: number; y: number }) => {
    const u = x - o.x;
    const v = y - o.y;
    return { x: (d * u - c * v) / det, y: (-b * u + a * v) / det };
  };
}
