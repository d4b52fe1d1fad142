import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { pageBudget } from './mupdf.js';
import { run, stream } from './run.js';

/**
 * MuPDF as the text engine for extraction, Markdown and (later) redaction.
 *
 * Why MuPDF and not Poppler (measured on the corpus, mutool 1.21 / poppler 22.12):
 * - `mutool draw -F stext` gives every character with its font name, effective size, colour and a quad in
 *   the displayed page's space (page /Rotate already applied), plus each line's writing mode (vertical
 *   Japanese is wmode 1) and direction. `pdftotext -bbox-layout` has word boxes but no fonts or colours, and
 *   `pdftohtml -xml` has runs with font and an RGB colour but no per-word boxes and no rotation handling.
 * - Neither engine's text output keeps the colour space: both flatten colours to sRGB hex. `mutool trace`
 *   replays the same content through the same interpreter and prints each glyph with its original colour
 *   space and component values, at the same device position, so the two are joined by position.
 * Parsing is a small reader for MuPDF's own regular XML (no general XML parser is needed or installed).
 */

export type Quad = [number, number, number, number, number, number, number, number]; // ul, ur, ll, lr

export interface StextChar {
  c: string;
  quad: Quad;
  /** Glyph origin, device space. */
  x: number;
  y: number;
  /** sRGB as MuPDF reports it (#rrggbb). */
  color: string;
}

export interface StextSpan {
  font: string;
  size: number;
  chars: StextChar[];
}

export interface StextLine {
  bbox: [number, number, number, number];
  wmode: number;
  /** Unit vector of the writing direction in device space. */
  dir: [number, number];
  spans: StextSpan[];
}

export interface StextPage {
  /** 1-based page number. */
  page: number;
  /** Displayed size (after /Rotate), in points; device space has its origin at the top-left. */
  width: number;
  height: number;
  lines: StextLine[];
}

export interface PageGeometry {
  page: number;
  mediaBox: [number, number, number, number];
  cropBox: [number, number, number, number];
  rotate: number;
  /** Points per unit of user space (/UserUnit, PDF 1.6); MuPDF scales device space by it. */
  userUnit?: number;
}

export interface TraceGlyph {
  c: string;
  /** Device space, as the stext quads. */
  x: number;
  y: number;
  space: string;
  values: number[];
  /** Drawn invisibly (text render mode 3, as an OCR layer under a scan is): MuPDF's trace lists it as ignore_text. */
  invisible?: boolean;
}

/**
 * MuPDF's page list for the given pages, in their order, consecutive runs as ranges ("1-25000" rather than an
 * argument beyond the kernel's 128 KB per argument). Never "N": that is the /Count a file claims, not its pages.
 */
export function pageArg(pages: number[]): string {
  if (!pages.length) throw new EngineError('mutool', 'no pages to read');
  const parts: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j] + 1) j++;
    parts.push(j > i ? `${pages[i]}-${pages[j]}` : String(pages[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/** Structured text of the given pages (1-based, in the order given). */
export async function structuredText(input: string, pages: number[], ctx: EngineContext): Promise<StextPage[]> {
  const read = await structuredTextUntilFailure(input, pages, ctx);
  if (read.failure) throw read.failure;
  return read.pages;
}

/**
 * structuredText that keeps what MuPDF finished when it fails part way (a page past ctx.pageMs, a crash): the
 * complete pages, and the failure (its details.stalledPage names the page it was cut on).
 */
export async function structuredTextUntilFailure(input: string, pages: number[], ctx: EngineContext): Promise<{ pages: StextPage[]; failure?: EngineError }> {
  // stdout: `-o -` writes the XML there; the per-page progress lines go to stderr (not -q: they time each page).
  const proc = stream('mutool', ['draw', '-F', 'stext', '-o', '-', '--', input, pageArg(pages)], { ...ctx, pageBudget: pageBudget(input, ctx) });
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of proc.stdout) chunks.push(chunk);
  } catch {
    // The stream ends in an error when the process is killed; done says why.
  }
  const xml = Buffer.concat(chunks).toString('utf8');
  try {
    await proc.done;
    return { pages: parseStext(xml) };
  } catch (err) {
    if (!(err instanceof EngineError) || err.details.aborted) throw err;
    // Pages are written whole, each closed by </page>: what follows the last one is cut off.
    const end = xml.lastIndexOf('</page>');
    return { pages: end < 0 ? [] : parseStext(xml.slice(0, end + '</page>'.length)), failure: err };
  }
}

/** Each page's boxes and rotation, to map device space back to PDF user space. */
export async function pageGeometry(input: string, pages: number[], ctx: EngineContext): Promise<PageGeometry[]> {
  const r = await run('mutool', ['pages', '--', input, pageArg(pages)], ctx);
  return parsePages(r.stdout);
}

/** Every glyph drawn, with its colour space and values, and those drawn invisibly (one `mutool trace` pass). */
export async function glyphColours(input: string, pages: number[], ctx: EngineContext): Promise<Map<number, TraceGlyph[]>> {
  const r = await run('mutool', ['trace', '--', input, pageArg(pages)], ctx);
  return parseTrace(r.stdout);
}

// ---- parsing (pure) ----

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (m, e: string) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(cp) && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
    }
    return ENTITIES[e] ?? m;
  });
}

function attrs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([\w:-]+)="([^"]*)"/g)) out[m[1]] = decodeEntities(m[2]);
  return out;
}

/** Tags of MuPDF's XML in document order; its output never has CDATA, comments inside elements or '>' in attributes. */
function* tags(xml: string): Generator<{ close: boolean; name: string; attrs: string }> {
  const re = /<(\/?)([A-Za-z_][\w-]*)([^>]*)>/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) yield { close: m[1] === '/', name: m[2], attrs: m[3] };
}

const nums = (s: string | undefined) => (s ?? '').trim().split(/\s+/).filter(Boolean).map(Number);

/**
 * A line's writing direction as a unit vector. MuPDF prints "0 0" when the text matrix is degenerate (a zero
 * font size, a zero scale): such text is written left to right like any other, not taken for vertical.
 */
function unitDir(d: number[]): [number, number] {
  const [x, y] = [d[0] ?? 1, d[1] ?? 0];
  const length = Math.hypot(x, y);
  return Number.isFinite(length) && length > 1e-6 ? [x / length, y / length] : [1, 0];
}

export function parseStext(xml: string): StextPage[] {
  const pages: StextPage[] = [];
  let page: StextPage | null = null;
  let line: StextLine | null = null;
  let span: StextSpan | null = null;
  for (const t of tags(xml)) {
    if (t.close) {
      if (t.name === 'line') line = null;
      else if (t.name === 'font') span = null;
      continue;
    }
    switch (t.name) {
      case 'page': {
        const a = attrs(t.attrs);
        page = { page: Number(/(\d+)$/.exec(a.id ?? '')?.[1] ?? pages.length + 1), width: Number(a.width), height: Number(a.height), lines: [] };
        pages.push(page);
        break;
      }
      case 'line': {
        if (!page) break;
        const a = attrs(t.attrs);
        const b = nums(a.bbox);
        line = { bbox: [b[0], b[1], b[2], b[3]], wmode: Number(a.wmode ?? 0), dir: unitDir(nums(a.dir)), spans: [] };
        page.lines.push(line);
        break;
      }
      case 'font': {
        if (!line) break;
        const a = attrs(t.attrs);
        span = { font: a.name ?? '', size: Number(a.size ?? 0), chars: [] };
        line.spans.push(span);
        break;
      }
      case 'char': {
        if (!span) break;
        const a = attrs(t.attrs);
        const q = nums(a.quad);
        // A glyph whose quad is not all finite numbers has no place on the page to lay it out at.
        if (q.length !== 8 || !q.every(Number.isFinite)) break;
        span.chars.push({ c: a.c ?? '', quad: q as Quad, x: Number(a.x), y: Number(a.y), color: a.color ?? '#000000' });
        break;
      }
    }
  }
  return pages;
}

export function parsePages(xml: string): PageGeometry[] {
  const out: PageGeometry[] = [];
  let cur: PageGeometry | null = null;
  const box = (a: Record<string, string>): [number, number, number, number] => [Number(a.l), Number(a.b), Number(a.r), Number(a.t)];
  for (const t of tags(xml)) {
    if (t.close) continue;
    const a = attrs(t.attrs);
    if (t.name === 'page') {
      cur = { page: Number(a.pagenum), mediaBox: [0, 0, 612, 792], cropBox: [0, 0, 612, 792], rotate: 0 };
      out.push(cur);
    } else if (cur && t.name === 'MediaBox') {
      cur.mediaBox = box(a);
      cur.cropBox = cur.mediaBox;
    } else if (cur && t.name === 'CropBox') cur.cropBox = box(a);
    else if (cur && t.name === 'Rotate') cur.rotate = Number(a.v) || 0;
    else if (cur && t.name === 'UserUnit') cur.userUnit = Number(a.v);
  }
  return out;
}

export function parseTrace(xml: string): Map<number, TraceGlyph[]> {
  const out = new Map<number, TraceGlyph[]>();
  let glyphs: TraceGlyph[] | null = null;
  let colour: { space: string; values: number[]; m: number[]; invisible: boolean } | null = null;
  const drawn = (name: string) => name === 'fill_text' || name === 'stroke_text' || name === 'ignore_text';
  for (const t of tags(xml)) {
    if (t.close) {
      if (drawn(t.name)) colour = null;
      continue;
    }
    if (t.name === 'page') {
      glyphs = [];
      out.set(Number(attrs(t.attrs).number), glyphs);
    } else if (drawn(t.name)) {
      const a = attrs(t.attrs);
      // Invisible text has no colour: it keeps the default black the structured text gives it too.
      colour = { space: a.colorspace ?? 'DeviceRGB', values: a.color ? nums(a.color) : [0, 0, 0], m: nums(a.transform), invisible: t.name === 'ignore_text' };
    } else if (t.name === 'g' && glyphs && colour) {
      const a = attrs(t.attrs);
      const x = Number(a.x);
      const y = Number(a.y);
      const [ma, mb, mc, md, me, mf] = colour.m.length === 6 ? colour.m : [1, 0, 0, 1, 0, 0];
      glyphs.push({
        c: a.unicode ?? '',
        x: x * ma + y * mc + me,
        y: x * mb + y * md + mf,
        space: colour.space,
        values: colour.values,
        ...(colour.invisible ? { invisible: true } : {}),
      });
    }
  }
  return out;
}
