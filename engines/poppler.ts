import { type EngineContext, pageTimeout } from './context.js';
import { EngineError } from './errors.js';
import { expectOutput, run } from './run.js';

export interface FontRow {
  name: string;
  type: string;
  embedded: boolean;
  encoding: string;
  /** Has a ToUnicode CMap. */
  unicode: boolean;
}

/** `pdffonts`: every font used on the pages, with whether it is embedded. */
export async function listFonts(input: string, ctx: EngineContext, opts: { password?: string; page?: number } = {}): Promise<FontRow[]> {
  const pw = opts.password === undefined ? [] : ['-upw', opts.password];
  const range = opts.page === undefined ? [] : ['-f', String(opts.page), '-l', String(opts.page)];
  const r = await run('pdffonts', [...pw, ...range, input], ctx);
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
      return { name: cell(0), type: cell(1), encoding: cell(2), embedded: cell(3) === 'yes', unicode: cell(5) === 'yes' };
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

export interface PopplerWord {
  text: string;
  /** xMin, yMin, xMax, yMax in points, origin top-left of the displayed page. */
  box: [number, number, number, number];
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : (XML_ENTITIES[e] ?? m),
  );

/** `pdftotext -bbox-layout` words of one page: Poppler decodes CMaps MuPDF 1.21 cannot (non-embedded Shift-JIS). */
export async function popplerWords(input: string, page: number, ctx: EngineContext): Promise<PopplerWord[]> {
  return (await popplerPageWords(input, [page], ctx)).get(page) ?? [];
}

/**
 * popplerWords of several pages: one `pdftotext` per run of consecutive pages, one run after another, so a
 * document with many such pages costs a few processes at a time, not one per page all at once.
 */
export async function popplerPageWords(input: string, pages: number[], ctx: EngineContext): Promise<Map<number, PopplerWord[]>> {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const out = new Map<number, PopplerWord[]>();
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    const r = await run('pdftotext', ['-q', '-bbox-layout', '-f', String(sorted[i]), '-l', String(sorted[j]), input, '-'], ctx);
    // One <page> element per page of the run, in order.
    r.stdout
      .split(/<page\b/)
      .slice(1)
      .forEach((xml, k) => out.set(sorted[i] + k, parseWords(xml)));
    i = j + 1;
  }
  return out;
}

const parseWords = (xml: string): PopplerWord[] =>
  [...xml.matchAll(/<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    text: unescapeXml(m[5]),
    box: [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])],
  }));

/**
 * One page drawn by Poppler, as PNG bytes (pdftoppm writes a single page to stdout without an output root):
 * the second engine for pixels when MuPDF fails on a page. `rgba` draws with cairo on a transparent background.
 */
export async function popplerDrawPage(
  input: string,
  page: number,
  opts: { resolution: number; colour: 'rgb' | 'gray' | 'rgba' },
  ctx: EngineContext,
): Promise<Buffer> {
  const range = ['-r', String(opts.resolution), '-f', String(page), '-l', String(page), '-singlefile', '-png'];
  const r =
    opts.colour === 'rgba'
      ? await run('pdftocairo', [...range, '-transp', input, '-'], { ...ctx, timeoutMs: pageTimeout(ctx), binary: true })
      : await run('pdftoppm', [...range, ...(opts.colour === 'gray' ? ['-gray'] : []), input], { ...ctx, timeoutMs: pageTimeout(ctx), binary: true });
  if (!r.stdoutBuffer.length) throw new EngineError('pdftoppm', `drew nothing for page ${page}`, { stderr: r.stderr });
  return r.stdoutBuffer;
}

/** Text words of one page, as popplerWords, cut at the page's budget. */
export async function popplerPageText(input: string, page: number, ctx: EngineContext): Promise<PopplerWord[]> {
  return popplerWords(input, page, { ...ctx, timeoutMs: pageTimeout(ctx) });
}

/** The pages Poppler counts (`pdfinfo`, "Pages:"): the second opinion when qpdf cannot walk the page tree. */
export async function popplerPageCount(input: string, ctx: EngineContext): Promise<number> {
  const r = await run('pdfinfo', [input], ctx);
  const m = /^Pages:\s+(\d+)/m.exec(r.stdout);
  if (!m) throw new EngineError('pdfinfo', 'printed no page count', { stderr: r.stderr });
  return Number(m[1]);
}

/** The kind of form Poppler sees (`pdfinfo`, "Form:"): an AcroForm, an XFA form (an /XFA entry), or none. */
export async function popplerFormKind(input: string, ctx: EngineContext): Promise<'AcroForm' | 'XFA' | 'none'> {
  const r = await run('pdfinfo', [input], ctx);
  const m = /^Form:\s+(\S+)/m.exec(r.stdout);
  return m?.[1] === 'XFA' ? 'XFA' : m?.[1] === 'AcroForm' ? 'AcroForm' : 'none';
}

/**
 * One page as the image file Tesseract reads (PBM, PGM or PPM by `colors`, `output` ending in that extension),
 * drawn by Poppler: the second engine when MuPDF fails on the page.
 */
export async function popplerPageImage(
  input: string,
  page: number,
  output: string,
  opts: { dpi: number; colors: 'mono' | 'gray' | 'rgb' },
  ctx: EngineContext,
): Promise<void> {
  const colour = opts.colors === 'mono' ? ['-mono'] : opts.colors === 'gray' ? ['-gray'] : [];
  await run('pdftoppm', ['-r', String(opts.dpi), '-f', String(page), '-l', String(page), '-singlefile', ...colour, input, output.replace(/\.p[bgp]m$/, '')], {
    ...ctx,
    timeoutMs: pageTimeout(ctx),
  });
  await expectOutput('pdftoppm', output);
}
