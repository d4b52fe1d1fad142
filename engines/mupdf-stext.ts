import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { pageBudget } from './mupdf.js';
import { run } from './run.js';

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

const PAGE_END = Buffer.from('</page>');
let stextFiles = 0;

/**
 * MuPDF's structured text of the given pages (1-based, in the order given), page by page: each page is parsed and
 * handed to `onPage` as it is read back, so only one page's XML and characters are held at a time. What MuPDF
 * finished is kept when it fails part way (a page past ctx.pageMs, a crash): `done` lists those pages, `failure`
 * says why (its details.stalledPage names the page it was cut on). MuPDF writes to a file in the job dir, not to a pipe: through
 * a pipe it could run at most the pipe's 64 KB ahead of our parsing (a page is ~0.5 MB), and the two would take
 * turns instead of running side by side. `onWritten` is called once MuPDF is done, before the parsing, so the
 * caller can start MuPDF on its next pages meanwhile.
 */
export async function structuredTextPages(
  input: string,
  pages: number[],
  ctx: EngineContext,
  onPage: (page: StextPage) => void,
  onWritten?: () => void,
): Promise<{ done: number[]; failure?: EngineError }> {
  const file = join(ctx.cwd, `stext-${++stextFiles}.xml`);
  let failure: EngineError | undefined;
  try {
    // Not -q: the per-page progress lines on stderr time each page.
    await run('mutool', ['draw', '-F', 'stext', '-o', file, '--', input, pageArg(pages)], { ...ctx, pageBudget: pageBudget(input, ctx) });
  } catch (err) {
    if (!(err instanceof EngineError) || err.details.aborted) {
      await rm(file, { force: true });
      throw err;
    }
    failure = err;
  }
  onWritten?.();
  const done: number[] = [];
  // The batch's XML is read at once (bounded by the batch: ~0.6 MB a page of text) and parsed in place page by
  // page, each closed by </page>: chunks would have to be joined again for every page that straddles them. What
  // follows the last </page> is a page MuPDF did not finish.
  try {
    const xml = await readFile(file);
    for (let start = 0, end = xml.indexOf(PAGE_END); end >= 0; start = end + PAGE_END.length, end = xml.indexOf(PAGE_END, start)) {
      for (const p of parseStext(xml.subarray(start, end + PAGE_END.length))) {
        done.push(p.page);
        onPage(p);
      }
    }
  } catch (err) {
    // No file: MuPDF failed before writing a page.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  } finally {
    await rm(file, { force: true });
  }
  return { done, failure };
}

/** Each page's boxes and rotation, to map device space back to PDF user space. */
export async function pageGeometry(input: string, pages: number[], ctx: EngineContext): Promise<PageGeometry[]> {
  const r = await run('mutool', ['pages', '--', input, pageArg(pages)], ctx);
  return parsePages(r.stdout);
}

/** Pages per `mutool trace` run: its XML lists every glyph (~0.3 MB a page of text), read whole for each run. */
const TRACE_BATCH = 50;

/**
 * `mutool trace` of the pages, TRACE_BATCH pages a run, each run's XML handed to `each` in page order: a long
 * document's trace is never one string.
 */
export async function traceBatches(input: string, pages: number[], ctx: EngineContext, each: (xml: string) => void): Promise<void> {
  for (let i = 0; i < pages.length; i += TRACE_BATCH) each((await run('mutool', ['trace', '--', input, pageArg(pages.slice(i, i + TRACE_BATCH))], ctx)).stdout);
}

/** Every glyph drawn, with its colour space and values, and those drawn invisibly (`mutool trace`). */
export async function glyphColours(input: string, pages: number[], ctx: EngineContext): Promise<Map<number, TraceGlyph[]>> {
  const out = new Map<number, TraceGlyph[]>();
  await traceBatches(input, pages, ctx, (xml) => {
    for (const [page, glyphs] of parseTrace(xml)) out.set(page, glyphs);
  });
  return out;
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

/**
 * A cursor over the tags of MuPDF's XML, in document order: a page of text is ~4,000 `<char>` tags of ~140 bytes,
 * 1.1 GB for 2,000 pages, so tags and attributes are read in place (indexOf and char codes), never through a
 * regular expression, a split or an object per attribute, and on the bytes MuPDF wrote (only the values asked for
 * become strings): parsing then costs less than MuPDF's writing it.
 * MuPDF's output never has CDATA or comments inside elements, and quotes its attribute values with '"'.
 */
class Tags {
  name = '';
  close = false;
  private at = 0;
  // Where each attribute of the current tag has its name and its value (no string is made until one is asked for).
  private nameStarts: number[] = [];
  private nameEnds: number[] = [];
  private starts: number[] = [];
  private ends: number[] = [];
  private count = 0;
  private readonly xml: Buffer;
  constructor(xml: Buffer | string) {
    this.xml = typeof xml === 'string' ? Buffer.from(xml) : xml;
  }

  next(): boolean {
    const xml = this.xml;
    for (;;) {
      const lt = xml.indexOf(60, this.at); // '<'
      if (lt < 0) return false;
      let i = lt + 1;
      this.close = xml[i] === 47; // '/'
      if (this.close) i++;
      const first = xml[i];
      // '<?xml', '<!--': not elements.
      if (!isNameStart(first)) {
        this.at = i;
        continue;
      }
      const nameStart = i;
      while (isNameChar(xml[i])) i++;
      this.name = tagName(xml, nameStart, i);
      this.count = 0;
      this.glyph = undefined;
      if (this.name === 'char' && !this.close) {
        const end = this.readGlyph(i);
        if (end > 0) {
          this.at = end;
          return true;
        }
      }
      // Attributes: name="value" pairs up to '>' (a '>' inside a value does not end the tag).
      for (;;) {
        let c: number | undefined = xml[i];
        while (c === 32 || c === 10 || c === 13 || c === 9) c = xml[++i];
        if (c === 62 || c === undefined) break; // '>' or the end
        if (c === 47) {
          i++;
          continue;
        }
        const a = i;
        while (isNameChar(xml[i])) i++;
        if (i === a || xml[i] !== 61 || xml[i + 1] !== 34) {
          // Not name="...": stray bytes, passed over.
          i = Math.max(i, a + 1);
          continue;
        }
        const valueEnd = xml.indexOf(34, i + 2); // '"'
        if (valueEnd < 0) return false;
        this.nameStarts[this.count] = a;
        this.nameEnds[this.count] = i;
        this.starts[this.count] = i + 2;
        this.ends[this.count] = valueEnd;
        this.count++;
        i = valueEnd + 1;
      }
      this.at = i + 1;
      return true;
    }
  }

  /**
   * The glyph of a `<char>` tag as MuPDF 1.21 writes every one (quad="8 numbers" x="n" y="n" color="#rrggbb" c="…"),
   * read in one pass over its bytes; 0 when the tag is laid out otherwise (it is then read attribute by attribute).
   * Most of a text page's XML is such tags, so this is where the parse spends its time.
   */
  private readGlyph(from: number): number {
    const xml = this.xml;
    let i = expect(xml, from, QUAD);
    if (i < 0) return 0;
    const quad: Quad = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let k = 0; k < 8; k++) {
      if (k > 0) {
        if (xml[i] !== 32) return 0;
        i++;
      }
      quad[k] = readNumber(xml, i);
      if (numberEnd === i || !Number.isFinite(quad[k])) return 0;
      i = numberEnd;
    }
    if ((i = expect(xml, i, X)) < 0) return 0;
    const x = readNumber(xml, i);
    if ((i = expect(xml, numberEnd, Y)) < 0) return 0;
    const y = readNumber(xml, i);
    if ((i = expect(xml, numberEnd, COLOR)) < 0) return 0;
    const colourEnd = xml.indexOf(34, i);
    if (colourEnd < 0) return 0;
    const colour = this.glyphColour;
    this.glyphColour = colourEnd - i === colour.length && same(xml, i, colour) ? colour : decodeEntities(xml.toString('utf8', i, colourEnd));
    if ((i = expect(xml, colourEnd, C)) < 0) return 0;
    const cEnd = xml.indexOf(34, i);
    if (cEnd < 0 || xml[cEnd + 1] !== 47 || xml[cEnd + 2] !== 62) return 0; // '"/>'
    const c = cEnd === i + 1 && xml[i] < 128 && xml[i] !== 38 ? String.fromCharCode(xml[i]) : decodeEntities(xml.toString('utf8', i, cEnd));
    this.glyph = { c, quad, x, y, color: this.glyphColour };
    return cEnd + 3;
  }

  /** The glyph of the current `<char>` tag when readGlyph could read it. */
  glyph: StextChar | undefined;
  private glyphColour = '#000000';

  private find(name: string): number {
    for (let k = 0; k < this.count; k++) if (this.nameEnds[k] - this.nameStarts[k] === name.length && same(this.xml, this.nameStarts[k], name)) return k;
    return -1;
  }

  /** attr, returning `same` itself when the value is that string (a colour repeated on every glyph is one string, not thousands). */
  attrLike(name: string, like: string): string | undefined {
    const k = this.find(name);
    if (k < 0) return undefined;
    if (this.ends[k] - this.starts[k] === like.length && same(this.xml, this.starts[k], like)) return like;
    return decodeEntities(this.xml.toString('utf8', this.starts[k], this.ends[k]));
  }

  /** The attribute's value, entities decoded; undefined when the tag has none. */
  attr(name: string): string | undefined {
    const k = this.find(name);
    if (k < 0) return undefined;
    const [start, end] = [this.starts[k], this.ends[k]];
    // One ASCII character (a glyph's c="a"): V8's cached one-character string, not a new one.
    if (end === start + 1 && this.xml[start] < 128 && this.xml[start] !== 38) return String.fromCharCode(this.xml[start]);
    return decodeEntities(this.xml.toString('utf8', start, end));
  }

  /** The attribute as one number (NaN when absent or not a number). */
  number(name: string): number {
    const k = this.find(name);
    return k < 0 ? Number.NaN : numberAt(this.xml, this.starts[k], this.ends[k]);
  }

  /**
   * The attribute as exactly eight finite numbers (a glyph's quad), else undefined: read straight into one array
   * of eight, the hottest path of the parse (a page of text has ~4,000 of them).
   */
  quad(name: string): Quad | undefined {
    const k = this.find(name);
    if (k < 0) return undefined;
    const xml = this.xml;
    const end = this.ends[k];
    const q: Quad = [0, 0, 0, 0, 0, 0, 0, 0];
    let n = 0;
    for (let i = this.starts[k]; i < end; ) {
      while (i < end && xml[i] <= 32) i++;
      if (i >= end) break;
      const s = i;
      while (i < end && xml[i] > 32) i++;
      if (n === 8) return undefined;
      const v = numberAt(xml, s, i);
      if (!Number.isFinite(v)) return undefined;
      q[n++] = v;
    }
    return n === 8 ? q : undefined;
  }

  /** The attribute's space-separated numbers (none when absent). */
  numbers(name: string): number[] {
    const k = this.find(name);
    const out: number[] = [];
    if (k < 0) return out;
    const xml = this.xml;
    const end = this.ends[k];
    for (let i = this.starts[k]; i < end; ) {
      while (i < end && xml[i] <= 32) i++;
      if (i >= end) break;
      const s = i;
      while (i < end && xml[i] > 32) i++;
      out.push(numberAt(xml, s, i));
    }
    return out;
  }
}

const NAMES = ['char', 'font', 'line', 'block', 'page', 'g', 'fill_text', 'stroke_text', 'ignore_text'];

/** The tag's name, the same string for every tag of a common name. */
function tagName(xml: Buffer, start: number, end: number): string {
  for (const name of NAMES) if (name.length === end - start && same(xml, start, name)) return name;
  return xml.toString('latin1', start, end);
}

/** Whether xml holds the ASCII string s at `at`. */
function same(xml: Buffer, at: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (xml[at + k] !== s.charCodeAt(k)) return false;
  return true;
}

const isNameStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isNameChar = (c: number) => isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 58;

// The bytes between a `<char` tag's values, in the order MuPDF writes them.
const QUAD = Buffer.from(' quad="');
const X = Buffer.from('" x="');
const Y = Buffer.from('" y="');
const COLOR = Buffer.from('" color="');
const C = Buffer.from('" c="');

/** The position after `bytes` when xml holds them at `at`, else -1. */
function expect(xml: Buffer, at: number, bytes: Buffer): number {
  for (let k = 0; k < bytes.length; k++) if (xml[at + k] !== bytes[k]) return -1;
  return at + bytes.length;
}

/** Where the last decimalAt or readNumber stopped. */
let numberEnd = 0;

/** The number starting at xml[start], up to a space or a quote (numberEnd says where it stopped). */
function readNumber(xml: Buffer, start: number): number {
  const value = decimalAt(xml, start, xml.length);
  const c = xml[numberEnd];
  if ((c === 32 || c === 34) && !Number.isNaN(value)) return value;
  // Anything else ("1e-05", "nan") is read whole by numberAt.
  let i = numberEnd;
  while (i < xml.length && xml[i] !== 32 && xml[i] !== 34) i++;
  numberEnd = i;
  return i === start ? Number.NaN : numberAt(xml, start, i);
}

/**
 * The number written in xml[start, end): plain decimals ("-12.5", MuPDF's %g without an exponent) are read digit
 * by digit (decimalAt); anything else ("1e-05", "nan", "inf") by Number, as before.
 */
function numberAt(xml: Buffer, start: number, end: number): number {
  const value = decimalAt(xml, start, end);
  return numberEnd === end && !Number.isNaN(value) ? value : Number(xml.toString('latin1', start, end));
}

/**
 * The plain decimal at xml[start], read no further than `end`: NaN without a digit or past 15 of them (where the
 * running sums lose precision Number keeps); numberEnd is where it stopped. Digits are gathered into one integer
 * and divided once by a power of ten: both exact below 2^53, so the quotient is the correctly rounded value, the
 * one Number gives.
 */
function decimalAt(xml: Buffer, start: number, end: number): number {
  let i = start;
  let c = xml[i];
  const negative = c === 45;
  if (negative || c === 43) c = xml[++i];
  let mantissa = 0;
  let scale = 1;
  let digits = 0;
  while (i < end && c >= 48 && c <= 57) {
    mantissa = mantissa * 10 + (c - 48);
    digits++;
    c = xml[++i];
  }
  if (i < end && c === 46) {
    c = xml[++i];
    while (i < end && c >= 48 && c <= 57) {
      mantissa = mantissa * 10 + (c - 48);
      scale *= 10;
      digits++;
      c = xml[++i];
    }
  }
  numberEnd = Math.min(i, end);
  if (!digits || digits > 15) return Number.NaN;
  return negative ? -mantissa / scale : mantissa / scale;
}

/**
 * A line's writing direction as a unit vector. MuPDF prints "0 0" when the text matrix is degenerate (a zero
 * font size, a zero scale): such text is written left to right like any other, not taken for vertical.
 */
function unitDir(d: number[]): [number, number] {
  const [x, y] = [d[0] ?? 1, d[1] ?? 0];
  const length = Math.hypot(x, y);
  return Number.isFinite(length) && length > 1e-6 ? [x / length, y / length] : [1, 0];
}

export function parseStext(xml: Buffer | string): StextPage[] {
  const pages: StextPage[] = [];
  let page: StextPage | null = null;
  let line: StextLine | null = null;
  let span: StextSpan | null = null;
  let color = '#000000';
  const t = new Tags(xml);
  while (t.next()) {
    if (t.close) {
      if (t.name === 'line') line = null;
      else if (t.name === 'font') span = null;
      continue;
    }
    switch (t.name) {
      case 'char': {
        if (!span) break;
        if (t.glyph) {
          span.chars.push(t.glyph);
          color = t.glyph.color;
          break;
        }
        const quad = t.quad('quad');
        // A glyph whose quad is not all finite numbers has no place on the page to lay it out at.
        if (!quad) break;
        color = t.attrLike('color', color) ?? '#000000';
        span.chars.push({ c: t.attr('c') ?? '', quad, x: t.number('x'), y: t.number('y'), color });
        break;
      }
      case 'page': {
        const id = t.attr('id') ?? '';
        page = { page: Number(/(\d+)$/.exec(id)?.[1] ?? pages.length + 1), width: t.number('width'), height: t.number('height'), lines: [] };
        pages.push(page);
        break;
      }
      case 'line': {
        if (!page) break;
        const b = t.numbers('bbox');
        const wmode = t.attr('wmode');
        line = { bbox: [b[0], b[1], b[2], b[3]], wmode: wmode === undefined ? 0 : Number(wmode), dir: unitDir(t.numbers('dir')), spans: [] };
        page.lines.push(line);
        break;
      }
      case 'font': {
        if (!line) break;
        const size = t.attr('size');
        span = { font: t.attr('name') ?? '', size: size === undefined ? 0 : Number(size), chars: [] };
        line.spans.push(span);
        break;
      }
    }
  }
  return pages;
}

export function parsePages(xml: string): PageGeometry[] {
  const out: PageGeometry[] = [];
  let cur: PageGeometry | null = null;
  const box = (a: (name: string) => string | undefined): [number, number, number, number] => [Number(a('l')), Number(a('b')), Number(a('r')), Number(a('t'))];
  const t = new Tags(xml);
  while (t.next()) {
    if (t.close) continue;
    const a = (name: string) => t.attr(name);
    if (t.name === 'page') {
      cur = { page: Number(a('pagenum')), mediaBox: [0, 0, 612, 792], cropBox: [0, 0, 612, 792], rotate: 0 };
      out.push(cur);
    } else if (cur && t.name === 'MediaBox') {
      cur.mediaBox = box(a);
      cur.cropBox = cur.mediaBox;
    } else if (cur && t.name === 'CropBox') cur.cropBox = box(a);
    else if (cur && t.name === 'Rotate') cur.rotate = Number(a('v')) || 0;
    else if (cur && t.name === 'UserUnit') cur.userUnit = Number(a('v'));
  }
  return out;
}

export function parseTrace(xml: string): Map<number, TraceGlyph[]> {
  const out = new Map<number, TraceGlyph[]>();
  let glyphs: TraceGlyph[] | null = null;
  let colour: { space: string; values: number[]; m: number[]; invisible: boolean } | null = null;
  const drawn = (name: string) => name === 'fill_text' || name === 'stroke_text' || name === 'ignore_text';
  const t = new Tags(xml);
  while (t.next()) {
    if (t.close) {
      if (drawn(t.name)) colour = null;
      continue;
    }
    if (t.name === 'g' && glyphs && colour) {
      const x = t.number('x');
      const y = t.number('y');
      const [ma, mb, mc, md, me, mf] = colour.m.length === 6 ? colour.m : [1, 0, 0, 1, 0, 0];
      glyphs.push({
        c: t.attr('unicode') ?? '',
        x: x * ma + y * mc + me,
        y: x * mb + y * md + mf,
        space: colour.space,
        values: colour.values,
        ...(colour.invisible ? { invisible: true } : {}),
      });
    } else if (t.name === 'page') {
      glyphs = [];
      out.set(Number(t.attr('number')), glyphs);
    } else if (drawn(t.name)) {
      // Invisible text has no colour: it keeps the default black the structured text gives it too.
      const color = t.attr('color');
      colour = {
        space: t.attr('colorspace') ?? 'DeviceRGB',
        values: color ? t.numbers('color') : [0, 0, 0],
        m: t.numbers('transform'),
        invisible: t.name === 'ignore_text',
      };
    }
  }
  return out;
}
