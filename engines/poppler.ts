import type { EngineContext } from './context.js';
import { run } from './run.js';

export interface FontRow {
  name: string;
  type: string;
  embedded: boolean;
}

/** `pdffonts`: every font used on the pages, with whether it is embedded. */
export async function listFonts(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<FontRow[]> {
  const pw = opts.password === undefined ? [] : ['-upw', opts.password];
  const r = await run('pdffonts', [...pw, input], ctx);
  return parseFonts(r.stdout);
}

export function parseFonts(out: string): FontRow[] {
  const lines = out.split('\n');
  const ruler = lines.findIndex((l) => l.startsWith('-----'));
  if (ruler < 0) return [];
  // Columns are fixed-width; the ruler's dashes give their extents.
  const cols = [...lines[ruler].matchAll(/-+/g)].map((m) => [m.index!, m.index! + m[0].length] as const);
  return lines
    .slice(ruler + 1)
    .filter((l) => l.trim())
    .map((l) => {
      const cell = (i: number) => l.slice(cols[i][0], i + 1 < cols.length ? cols[i + 1][0] : undefined).trim();
      return { name: cell(0), type: cell(1), embedded: cell(3) === 'yes' };
    });
}

export interface ImageRow {
  page: number;
  type: string;
  width: number;
  height: number;
  encoding: string;
}

/** `pdfimages -list`: every image drawn, per page, with its encoding. */
export async function listImages(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<ImageRow[]> {
  const pw = opts.password === undefined ? [] : ['-upw', opts.password];
  const r = await run('pdfimages', ['-list', ...pw, input], ctx);
  return r.stdout
    .split('\n')
    .slice(2)
    .map((l) => l.trim().split(/\s+/))
    .filter((c) => c.length > 8 && /^\d+$/.test(c[0]))
    .map((c) => ({ page: Number(c[0]), type: c[2], width: Number(c[3]), height: Number(c[4]), encoding: c[8] }));
}
