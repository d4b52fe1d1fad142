import type { PageGeometry, StextChar, StextLine, StextPage, StextSpan, TraceGlyph } from '../../engines/mupdf-stext.js';
import { logicalOrder, mayBeRtl, mostlyRtl } from './bidi.js';

/**
 * The page model every text-reading endpoint shares (extracted text, Markdown, and later redaction, PDF to
 * Word/Excel, summaries): words with page, geometry and style, built once from MuPDF's structured text, then
 * grouped into rows, columns, tables, paragraphs, headings and lists. Everything here is pure.
 *
 * Two coordinate systems: layout works in device space (the page as displayed, /Rotate applied, origin at the
 * top-left, y down); what clients see is PDF user space (origin bottom-left of the unrotated page, y up),
 * like every other coordinate in the API, so a word's corners can be fed straight to redaction or stamping.
 */

export interface Point {
  x: number;
  y: number;
}

export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface Word {
  text: string;
  page: number;
  /** Device space, axis-aligned: for layout. */
  box: Box;
  /** PDF user space; the corners are named as the word is seen on the displayed page. */
  corners: { topLeft: Point; topRight: Point; bottomLeft: Point; bottomRight: Point };
  font: { name: string; size: number };
  bold: boolean;
  italic: boolean;
  color: { space: string; values: number[] };
}

export interface Line {
  page: number;
  words: Word[];
  box: Box;
  /** Dominant font size (by characters). */
  size: number;
  bold: boolean;
  /** Vertical writing (CJK) or a line not running left-to-right on the displayed page. */
  vertical: boolean;
  /** The direction the line runs in on the displayed page (device space, y down), when the reader says. */
  dir?: [number, number];
  text: string;
}

export interface PageModel {
  page: number;
  width: number;
  height: number;
  /** Rows of text in reading order (see readingOrder); `items` keeps the tables found on the way. */
  lines: Line[];
  items: Item[];
}

export type Item = { kind: 'line'; line: Line } | TableItem;

/** A table: the text of each cell, the rows it was read from, and where they sit (for layout-keeping exports). */
export interface TableItem {
  kind: 'table';
  rows: string[][];
  lines: Line[];
  /** The rows of each cell (row by column), and the x of the gutters between columns. */
  cells?: Line[][][];
  cuts?: number[];
}

// ---------------------------------------------------------------- building

const round = (n: number) => Math.round(n * 1000) / 1000;
const BOLD = /bold|black|heavy|semibold|demi|[-,]medi|CMBX|SFBX|CMB\d|-B$|,B$|Bd$/i;
const ITALIC = /italic|oblique|CMTI|CMSL|SFTI|-It$|,I$/i;

type Rect = [number, number, number, number];

/**
 * The box MuPDF 1.21 makes the page of (pdf_page_obj_transform): an empty /MediaBox is US Letter, the /CropBox
 * cuts it when it is not empty itself, and a box narrower or lower than one unit is the unit square. The page
 * model's sizes and every mapping to user space start from it, so no zero or negative extent reaches them.
 */
function pageBox(geo: Pick<PageGeometry, 'mediaBox' | 'cropBox'>): Rect {
  const empty = (b: number[]) => !(b[2] > b[0] && b[3] > b[1]);
  const m: Rect = empty(geo.mediaBox) ? [0, 0, 612, 792] : geo.mediaBox;
  const c = geo.cropBox;
  const cut = empty(c) ? m : [Math.max(m[0], c[0]), Math.max(m[1], c[1]), Math.min(m[2], c[2]), Math.min(m[3], c[3])];
  const box: Rect = [Math.min(cut[0], cut[2]), Math.min(cut[1], cut[3]), Math.max(cut[0], cut[2]), Math.max(cut[1], cut[3])];
  return box[2] - box[0] < 1 || box[3] - box[1] < 1 ? [0, 0, 1, 1] : box;
}

/** /UserUnit as MuPDF applies it; one that is not positive maps every point to one, so nothing can be mapped back: 1. */
const unitOf = (geo: Pick<PageGeometry, 'userUnit'>) => (geo.userUnit !== undefined && Number.isFinite(geo.userUnit) && geo.userUnit > 0 ? geo.userUnit : 1);

/**
 * Device space to PDF user space for one page, as MuPDF builds its page transform (scale by /UserUnit and 1,-1;
 * rotate; translate to 0,0).
 */
export function deviceToUser(geo: Pick<PageGeometry, 'mediaBox' | 'cropBox' | 'rotate' | 'userUnit'>): (p: Point) => Point {
  const box = pageBox(geo);
  const unit = unitOf(geo);
  const rot = (((Math.round((geo.rotate || 0) / 90) * 90) % 360) + 360) % 360;
  const t = (-rot * Math.PI) / 180;
  const cos = Math.round(Math.cos(t));
  const sin = Math.round(Math.sin(t));
  // forward: rotate by -rot, flip y, then translate so the box's image starts at 0,0
  const fwd = (x: number, y: number) => ({ x: x * cos - y * sin, y: -(x * sin + y * cos) });
  const corners = [fwd(box[0], box[1]), fwd(box[2], box[1]), fwd(box[0], box[3]), fwd(box[2], box[3])];
  const tx = Math.min(...corners.map((p) => p.x));
  const ty = Math.min(...corners.map((p) => p.y));
  return ({ x, y }) => {
    const u = x / unit + tx;
    const v = -(y / unit + ty); // undo the flip: v = x*sin + y*cos
    // undo the rotation (orthogonal: the inverse is the transpose)
    return { x: round(u * cos + v * sin), y: round(-u * sin + v * cos) };
  };
}

/** A quarter-turn count of /Rotate as 0, 90, 180 or 270 (negative and odd values normalised as viewers do). */
export const quarterTurn = (rotate: number) => (((Math.round((rotate || 0) / 90) * 90) % 360) + 360) % 360;
/** A box with its corners in order: left, bottom, right, top. */
export const orderedBox = ([x0, y0, x1, y1]: [number, number, number, number]): [number, number, number, number] => [
  Math.min(x0, x1),
  Math.min(y0, y1),
  Math.max(x0, x1),
  Math.max(y0, y1),
];

/**
 * A point of PDF user space on the page as seen through `box` (the coordinates the placing endpoints take): the
 * box's lower-left corner as seen, after /Rotate, is the origin.
 */
export function seenPoint(p: Point, box: [number, number, number, number], rotate: number): Point {
  const [left, bottom, right, top] = orderedBox(box);
  const r = quarterTurn(rotate);
  if (r === 90) return { x: p.y - bottom, y: right - p.x };
  if (r === 180) return { x: right - p.x, y: top - p.y };
  if (r === 270) return { x: top - p.y, y: p.x - left };
  return { x: p.x - left, y: p.y - bottom };
}

/** The inverse of seenPoint: a point on the page as seen through `box`, in PDF user space. */
export function userPoint(p: Point, box: [number, number, number, number], rotate: number): Point {
  const [left, bottom, right, top] = orderedBox(box);
  const r = quarterTurn(rotate);
  if (r === 90) return { x: right - p.y, y: bottom + p.x };
  if (r === 180) return { x: right - p.x, y: top - p.y };
  if (r === 270) return { x: left + p.y, y: top - p.x };
  return { x: left + p.x, y: bottom + p.y };
}

/** The displayed size of the page in device space (points): the box, turned by /Rotate, scaled by /UserUnit. */
export function displayedSize(geo: Pick<PageGeometry, 'mediaBox' | 'cropBox' | 'rotate' | 'userUnit'>): { width: number; height: number } {
  const [x0, y0, x1, y1] = pageBox(geo);
  const unit = unitOf(geo);
  const turned = Math.round((geo.rotate || 0) / 90) % 2 !== 0;
  return turned ? { width: (y1 - y0) * unit, height: (x1 - x0) * unit } : { width: (x1 - x0) * unit, height: (y1 - y0) * unit };
}

// A page's words share a few colours and fonts: each is worked out once per page, not once per word.
const hexColours = new Map<string, number[]>();
const hexColour = (hex: string) => {
  let values = hexColours.get(hex);
  if (!values) {
    const n = parseInt(hex.replace('#', ''), 16) || 0;
    values = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((v) => round(v / 255));
    if (hexColours.size < 4096) hexColours.set(hex, values);
  }
  return { space: 'DeviceRGB', values: [...values] };
};
const fontStyles = new Map<string, { bold: boolean; italic: boolean }>();
const fontStyle = (font: string) => {
  let style = fontStyles.get(font);
  if (!style) {
    style = { bold: BOLD.test(font), italic: ITALIC.test(font) };
    if (fontStyles.size < 4096) fontStyles.set(font, style);
  }
  return style;
};

/** Index of trace glyphs by device position, to find each character's original colour. */
function glyphIndex(glyphs: TraceGlyph[] | undefined) {
  const grid = new Map<string, TraceGlyph[]>();
  // Invisible glyphs (an OCR layer) lend no colour to a visible glyph drawn at the same place.
  for (const g of (glyphs ?? []).filter((gl) => !gl.invisible)) {
    const k = `${Math.round(g.x)}|${Math.round(g.y)}`;
    (grid.get(k) ?? grid.set(k, []).get(k)!).push(g);
  }
  return (x: number, y: number, c: string): TraceGlyph | undefined => {
    let best: TraceGlyph | undefined;
    let bestD = 0.75;
    for (let dx = -1; dx <= 1; dx++) {
      for (let dy = -1; dy <= 1; dy++) {
        for (const g of grid.get(`${Math.round(x) + dx}|${Math.round(y) + dy}`) ?? []) {
          const d = Math.hypot(g.x - x, g.y - y) - (g.c === c ? 0.5 : 0);
          if (d < bestD) {
            best = g;
            bestD = d;
          }
        }
      }
    }
    return best;
  };
}

/** Printable ASCII other than the space: by far the most common glyphs, told without a regular expression. */
const plainAscii = (c: string) => {
  const code = c.charCodeAt(0);
  return c.length === 1 && code > 32 && code < 127;
};
const isSpace = (c: string) => !plainAscii(c) && (/^\s*$/u.test(c) || c === '\u00a0');

/** Ems between two glyphs that part them: more than rounding, less than any space a font sets. */
const SET_APART_EM = 0.05;
/** A list number or a bullet; not an asterisk or a dash, which start footnotes and words in prose. */
const NUMBER_OR_BULLET = /^(\(?\d{1,3}[.)]|[•◦▪▫‣⁃∙·●○■□➢➤►▶✓✔\uf0b7\uf0a7\uf0d8\uf076])$/u;

/** Builds the page model from MuPDF's structured text, page geometry and (optionally) the traced colours. */
export function buildPages(stext: StextPage[], geometry: PageGeometry[], traced?: Map<number, TraceGlyph[]>): PageModel[] {
  const geo = new Map(geometry.map((g) => [g.page, g]));
  return stext.map((sp) => buildPage(sp, geo.get(sp.page), traced?.get(sp.page), traced !== undefined));
}

/** One page of buildPages, from its own geometry and traced glyphs (`tracedAll`: colours were traced at all). */
export function buildPage(sp: StextPage, geometry: PageGeometry | undefined, glyphs: TraceGlyph[] | undefined, tracedAll = glyphs !== undefined): PageModel {
  const g = geometry ?? { page: sp.page, mediaBox: [0, 0, sp.width, sp.height], cropBox: [0, 0, sp.width, sp.height], rotate: 0 };
  const toUser = deviceToUser(g as PageGeometry);
  // MuPDF's page is 0 by 0 when /UserUnit is 0; every size and margin on the page is taken from these.
  const size = sp.width > 0 && sp.height > 0 && Number.isFinite(sp.width + sp.height) ? { width: sp.width, height: sp.height } : displayedSize(g);
  const colourAt = tracedAll ? glyphIndex(glyphs) : undefined;
  const raw = sp.lines
    .map((l) => lineOf(l, sp.page, toUser, colourAt))
    .filter((l): l is Line => l !== null)
    .flatMap(splitAtGaps);
  const rows = mergeRows(raw);
  const items = readingOrder(rows);
  const lines = items.flatMap((it) => (it.kind === 'line' ? [it.line] : it.lines));
  return { page: sp.page, ...size, lines, items };
}

function lineOf(l: StextLine, page: number, toUser: (p: Point) => Point, colourAt?: (x: number, y: number, c: string) => TraceGlyph | undefined): Line | null {
  const [dx, dy] = l.dir;
  const nx = -dy;
  const ny = dx;
  const words: Word[] = [];
  let cur: { chars: { c: string; quad: number[]; x: number; y: number; color: string }[]; font: string; size: number } | null = null;
  const flush = () => {
    if (!cur?.chars.length) return void (cur = null);
    let text = '';
    for (const c of cur.chars) text += c.c;
    // An oriented box along the line's direction: right for left-to-right, right-to-left and vertical lines alike.
    let minD = Infinity,
      maxD = -Infinity,
      minN = Infinity,
      maxN = -Infinity;
    let bx0 = Infinity,
      by0 = Infinity,
      bx1 = -Infinity,
      by1 = -Infinity;
    for (const ch of cur.chars) {
      for (let i = 0; i < 8; i += 2) {
        const x = ch.quad[i];
        const y = ch.quad[i + 1];
        const d = x * dx + y * dy;
        const n = x * nx + y * ny;
        minD = Math.min(minD, d);
        maxD = Math.max(maxD, d);
        minN = Math.min(minN, n);
        maxN = Math.max(maxN, n);
        bx0 = Math.min(bx0, x);
        by0 = Math.min(by0, y);
        bx1 = Math.max(bx1, x);
        by1 = Math.max(by1, y);
      }
    }
    const at = (d: number, n: number) => toUser({ x: d * dx + n * nx, y: d * dy + n * ny });
    const first = cur.chars.find((c) => !isSpace(c.c)) ?? cur.chars[0];
    const traced = colourAt?.(first.x, first.y, first.c);
    const style = fontStyle(cur.font);
    words.push({
      text,
      page,
      box: { x0: bx0, y0: by0, x1: bx1, y1: by1 },
      corners: { topLeft: at(minD, minN), topRight: at(maxD, minN), bottomLeft: at(minD, maxN), bottomRight: at(maxD, maxN) },
      font: { name: cur.font, size: fontSize(cur.size, maxN - minN) },
      bold: style.bold,
      italic: style.italic,
      color: traced ? { space: traced.space, values: traced.values } : hexColour(first.color),
    });
    cur = null;
  };
  const take = (ch: StextChar, span: StextSpan) => {
    // Glyphs without a Unicode mapping carry no text; nor do control characters (a font's broken ToUnicode), which
    // XML cannot even hold.
    if (!plainAscii(ch.c) && (ch.c === '\ufffd' || ch.c === '' || /^[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffe\uffff]$/.test(ch.c))) return;
    if (isSpace(ch.c)) return flush();
    if (!cur) cur = { chars: [], font: span.font, size: span.size };
    cur.chars.push(ch);
  };
  // A list number or bullet that starts a line set against its text, MuPDF putting no space between ("10.Link"),
  // where the page leaves a gap after it: glyphs of one word abut (kerning only pulls them closer).
  const markerEnds = (ch: StextChar, span: StextSpan) => {
    if (!cur || words.length || !/\p{L}/u.test(ch.c)) return false;
    let text = '';
    for (const c of cur.chars) text += c.c;
    if (!NUMBER_OR_BULLET.test(text)) return false;
    const last = cur.chars[cur.chars.length - 1].quad;
    return (ch.quad[0] - last[2]) * dx + (ch.quad[1] - last[3]) * dy > SET_APART_EM * (span.size || 1);
  };
  if (l.spans.some((span) => span.chars.some((ch) => mayBeRtl(ch.c)))) {
    // Right-to-left text in reading order (see logicalOrder), each character with its span's font.
    const along = (ch: StextChar) => ((ch.quad[0] + ch.quad[2]) / 2) * dx + ((ch.quad[1] + ch.quad[3]) / 2) * dy;
    const chars = l.spans.flatMap((span) => span.chars.map((ch) => ({ c: ch.c, ch, span })));
    const width = (ch: StextChar) => (ch.quad[2] - ch.quad[0]) * dx + (ch.quad[3] - ch.quad[1]) * dy;
    // Characters in reading order that stand apart on the page (table cells MuPDF put in one line with no space
    // between them) are separate words, as MuPDF's own spaces make them in left-to-right lines.
    const extent = (ch: StextChar) => {
      const [a, b] = [ch.quad[0] * dx + ch.quad[1] * dy, ch.quad[2] * dx + ch.quad[3] * dy];
      return a < b ? [a, b] : [b, a];
    };
    // Runs the page sets apart (more than 0.6 em, where splitAtGaps cuts a row: table cells, a print stamp beside
    // a title) are each put in order on their own, left to right on the page, as rows of their own would be.
    const runs: (typeof chars)[] = [];
    let reach = -Infinity;
    for (const e of [...chars].sort((a, b) => extent(a.ch)[0] - extent(b.ch)[0])) {
      const [a, b] = extent(e.ch);
      if (!runs.length || a - reach > 0.6 * (e.span.size || 1)) runs.push([]);
      runs[runs.length - 1].push(e);
      reach = Math.max(reach, b);
    }
    const stream = new Map(chars.map((e, i) => [e, i]));
    for (const run of runs) {
      let before: StextChar | undefined;
      for (const e of logicalOrder(
        run.sort((a, b) => stream.get(a)! - stream.get(b)!),
        (e) => along(e.ch),
        (e) => width(e.ch),
      )) {
        if (before && !isSpace(e.c) && !isSpace(before.c)) {
          const [a0, a1] = extent(before);
          const [b0, b1] = extent(e.ch);
          if (Math.max(b0 - a1, a0 - b1) > 0.5 * (e.span.size || 1)) flush();
        }
        take(e.c === e.ch.c ? e.ch : { ...e.ch, c: e.c }, e.span);
        before = e.ch;
      }
      flush();
    }
  } else
    for (const span of l.spans)
      for (const ch of span.chars) {
        if (markerEnds(ch, span)) flush();
        take(ch, span);
      }
  flush();
  if (!words.length) return null;
  const box = words.reduce<Box>(
    (b, w) => ({ x0: Math.min(b.x0, w.box.x0), y0: Math.min(b.y0, w.box.y0), x1: Math.max(b.x1, w.box.x1), y1: Math.max(b.y1, w.box.y1) }),
    { ...words[0].box },
  );
  const vertical = l.wmode === 1 || Math.abs(dx) < 0.5 || dx < 0;
  return { page, words, box, size: dominantSize(words), bold: words.every((w) => w.bold), vertical, dir: [dx, dy], text: words.map((w) => w.text).join(' ') };
}

/**
 * A word's size, never zero: the layout measures gaps, pitches and indents in it. MuPDF says 0 when the text
 * matrix has no extent in one direction (0 Tf, a zero scale, 0 Tz); the glyphs' height across the line is then
 * the size they show at, and a word drawn at no size at all (invisible on the page) is 1 pt, the smallest a
 * word processor sets. A positive size keeps its value, at least the 0.001 pt it is rounded to.
 */
function fontSize(reported: number, across: number): number {
  if (reported > 0 && Number.isFinite(reported)) return Math.max(0.001, round(reported));
  return across > 0 && Number.isFinite(across) ? Math.max(0.001, round(across)) : 1;
}

function lineFrom(words: Word[], like: Line): Line {
  const box = words.reduce<Box>(
    (b, w) => ({ x0: Math.min(b.x0, w.box.x0), y0: Math.min(b.y0, w.box.y0), x1: Math.max(b.x1, w.box.x1), y1: Math.max(b.y1, w.box.y1) }),
    { ...words[0].box },
  );
  return { ...like, words, box, size: dominantSize(words), bold: words.every((w) => w.bold), text: words.map((w) => w.text).join(' ') };
}

/**
 * MuPDF keeps table cells a few points apart in one line; a gap of more than ~0.6 em splits it into pieces
 * for the column and table analysis, and joinPieces puts the pieces that stay together back into one line.
 */
function splitAtGaps(line: Line): Line[] {
  if (line.vertical || line.words.length < 2) return [line];
  // A right-to-left line's words go leftwards in reading order.
  const rtl = mostlyRtl(line.text);
  const out: Word[][] = [[line.words[0]]];
  for (let i = 1; i < line.words.length; i++) {
    const a = line.words[i - 1];
    const b = line.words[i];
    const gap = rtl ? Math.max(b.box.x0 - a.box.x1, a.box.x0 - b.box.x1) : b.box.x0 - a.box.x1;
    if (gap > 0.6 * Math.max(a.font.size, b.font.size)) out.push([b]);
    else out[out.length - 1].push(b);
  }
  return out.length === 1 ? [line] : out.map((ws) => lineFrom(ws, line));
}

function dominantSize(words: Word[]): number {
  const by = new Map<number, number>();
  for (const w of words) by.set(w.font.size, (by.get(w.font.size) ?? 0) + w.text.length);
  return [...by.entries()].sort((a, b) => b[1] - a[1])[0][0];
}

const LIST_MARKER = /^([•◦▪▫‣⁃∙·●○■□➢➤►▶✓✔\-–—*\uf0b7\uf0a7\uf0d8\uf076]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]|\(?[ivxlcIVXLC]{1,5}[.)])$/u;
export const isListMarker = (s: string) => LIST_MARKER.test(s.trim());

/**
 * MuPDF starts a new line at every wide gap, so one justified row comes out as several pieces and a bullet
 * as a line of its own. A list marker joins its text at any distance (the text after it; in a right-to-left row,
 * the text before it on the page); other pieces are joined only
 * when nearly touching here, because a justified word gap and a LaTeX column gutter are both ~1 em: which is
 * which is only known after the column analysis (joinPieces).
 */
function mergeRows(lines: Line[]): Line[] {
  // Leftmost piece first: a row is built from its start (a bullet can sit a little lower than its text).
  const horiz = lines.filter((l) => !l.vertical).sort((a, b) => a.box.x0 - b.box.x0 || a.box.y0 - b.box.y0);
  const out: Line[] = [];
  const used = new Set<Line>();
  for (const l of horiz) {
    if (used.has(l)) continue;
    used.add(l);
    const pieces = [l];
    let box = l.box;
    for (;;) {
      const h = box.y1 - box.y0;
      // The nearest piece to the right that shares the row (the first of equals in `horiz` order).
      let next: Line | undefined;
      for (const o of horiz) {
        if (used.has(o) || o.box.x0 < box.x1 - 1 || (next && o.box.x0 >= next.box.x0)) continue;
        const overlap = Math.min(o.box.y1, box.y1) - Math.max(o.box.y0, box.y0);
        if (overlap > 0.6 * Math.min(h, o.box.y1 - o.box.y0)) next = o;
      }
      if (!next) break;
      const gap = next.box.x0 - box.x1;
      const em = Math.max(pieces.length === 1 ? l.size : dominantSize(pieces.flatMap((p) => p.words)), next.size);
      // A right-to-left row's marker stands at its right end, after its text on the page.
      const marker = (pieces.length === 1 && isListMarker(l.text)) || (isListMarker(next.text) && mostlyRtl(pieces.map((p) => p.text).join(' ')));
      if (!(gap < 0.5 * em || (marker && gap < 6 * em))) break;
      used.add(next);
      pieces.push(next);
      box = { x0: box.x0, y0: Math.min(box.y0, next.box.y0), x1: next.box.x1, y1: Math.max(box.y1, next.box.y1) };
    }
    if (pieces.length === 1) {
      out.push(l);
      continue;
    }
    const words = readingPieces(pieces).flatMap((p) => p.words);
    out.push({ ...l, words, box, size: dominantSize(words), bold: words.every((w) => w.bold), text: words.map((w) => w.text).join(' ') });
  }
  return [...out, ...lines.filter((l) => l.vertical)];
}

/**
 * The pieces of a row (left to right on the page) in reading order: a right-to-left row is read from its right
 * end, the left-to-right pieces inside it (a Latin word, a number) each run of them still left to right.
 */
function readingPieces(pieces: Line[]): Line[] {
  if (!mostlyRtl(pieces.map((p) => p.text).join(' '))) return pieces;
  const out: Line[] = [];
  for (let i = pieces.length - 1; i >= 0; ) {
    if (mostlyRtl(pieces[i].text)) {
      out.push(pieces[i--]);
      continue;
    }
    let j = i;
    while (j > 0 && !mostlyRtl(pieces[j - 1].text)) j--;
    out.push(...pieces.slice(j, i + 1));
    i = j - 1;
  }
  return out;
}

// ---------------------------------------------------------------- reading order

export const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

type Interval = [number, number];

/** Free x-intervals strictly inside [x0, x1] that no line of the band crosses, at least `min` wide. */
function gutters(lines: Line[], x0: number, x1: number, min: number): Interval[] {
  const spans = lines.map((l) => [l.box.x0, l.box.x1] as Interval).sort((a, b) => a[0] - b[0]);
  const free: Interval[] = [];
  let reach = x0;
  for (const [a, b] of spans) {
    if (a > reach) free.push([reach, a]);
    reach = Math.max(reach, b);
  }
  return free.filter(([a, b]) => a > x0 + 0.5 && b < x1 - 0.5 && b - a >= min);
}

function intersect(a: Interval[], b: Interval[], min: number): Interval[] {
  const out: Interval[] = [];
  for (const [p, q] of a)
    for (const [r, s] of b) {
      const lo = Math.max(p, r);
      const hi = Math.min(q, s);
      if (hi - lo >= min) out.push([lo, hi]);
    }
  return out;
}

/**
 * Reading order by a recursive XY cut over rows: rows are cut into horizontal bands; consecutive bands that
 * share an empty vertical gutter form a group, which is either a table (several short cells per row) or a set
 * of columns read one after the other (two-column articles read column by column). A full-width line (a
 * title, a footer) shares no gutter and ends a group. Vertical CJK lines are read right to left.
 */
export function readingOrder(lines: Line[]): Item[] {
  const horiz = lines.filter((l) => !l.vertical);
  const vert = lines.filter((l) => l.vertical).sort((a, b) => b.box.x1 - a.box.x1 || a.box.y0 - b.box.y0);
  const em = median(horiz.map((l) => l.size)) || 10;
  return [...joinPieces(cut(horiz, em)), ...vert.map((line) => ({ kind: 'line' as const, line }))];
}

/**
 * The page read again with each side of a dividing rule on its own (a vertical rule that parts one ruled row into
 * cells with rows of their own, found from the line art by the caller): the rows between its ends and on one side
 * of it get their reading order, columns and tables without the other side's rows; the rows above and below it
 * come first. A divider some word runs across, or with fewer than three rows of text on one side, divides
 * nothing. Rows running across it between words are cut there.
 */
export function dividedPage(page: PageModel, dividers: { x: number; y0: number; y1: number }[]): PageModel {
  if (!dividers.length) return page;
  const order = (lines: Line[], left: typeof dividers): Item[] => {
    for (const [k, d] of left.entries()) {
      const band = lines.filter((l) => !l.vertical && (l.box.y0 + l.box.y1) / 2 > d.y0 && (l.box.y0 + l.box.y1) / 2 < d.y1);
      if (band.some((l) => l.words.some((w) => w.box.x0 < d.x && w.box.x1 > d.x))) continue;
      const side = (keep: (w: Word) => boolean) =>
        band.flatMap((l) => {
          const words = l.words.filter(keep);
          return !words.length ? [] : words.length === l.words.length ? [l] : [lineFrom(words, l)];
        });
      const [before, after] = [side((w) => w.box.x1 <= d.x), side((w) => w.box.x0 >= d.x)];
      // Cells with rows of their own: a cell one or two rows high beside others is a table's merged cell.
      if (rowCount(before) < 3 || rowCount(after) < 3) continue;
      const others = left.slice(k + 1);
      const rest = lines.filter((l) => !band.includes(l));
      return [...(rest.length ? order(rest, others) : []), ...order(before, others), ...order(after, others)];
    }
    return readingOrder(lines);
  };
  const items = order(page.lines, dividers);
  return { ...page, items, lines: items.flatMap((it) => (it.kind === 'line' ? [it.line] : it.lines)) };
}

/** Rows the lines make, top to bottom (lines overlapping the row above by more than half their height join it). */
function rowCount(lines: Line[]): number {
  let rows = 0;
  let bottom = -Infinity;
  for (const l of [...lines].sort((a, b) => a.box.y0 - b.box.y0)) {
    if (l.box.y0 > bottom - 0.5 * (l.box.y1 - l.box.y0)) rows++;
    bottom = Math.max(bottom, l.box.y1);
  }
  return rows;
}

const sameRow = (a: Line, b: Line) => Math.min(a.box.y1, b.box.y1) - Math.max(a.box.y0, b.box.y0) > 0.5 * Math.min(a.box.y1 - a.box.y0, b.box.y1 - b.box.y0);

/** The pieces of one band of rows in reading order (a right-to-left row's from its right end). */
const inRow = (band: Line[]) => readingPieces(band.sort((a, b) => a.box.x0 - b.box.x0));

/** Pieces of one row that stayed next to each other in reading order are one line again. */
function joinPieces(items: Item[]): Item[] {
  const out: Item[] = [];
  for (const it of items) {
    const prev = out[out.length - 1];
    if (it.kind === 'line' && prev?.kind === 'line') {
      const a = prev.line;
      const b = it.line;
      // A right-to-left row goes on leftwards.
      const gap = mostlyRtl(`${a.text} ${b.text}`) ? a.box.x0 - b.box.x1 : b.box.x0 - a.box.x1;
      if (sameRow(a, b) && gap > -1 && gap < 2.5 * Math.max(a.size, b.size)) {
        const words = [...a.words, ...b.words];
        prev.line = {
          ...a,
          words,
          box: { x0: Math.min(a.box.x0, b.box.x0), y0: Math.min(a.box.y0, b.box.y0), x1: Math.max(a.box.x1, b.box.x1), y1: Math.max(a.box.y1, b.box.y1) },
          size: dominantSize(words),
          bold: words.every((w) => w.bold),
          text: `${a.text} ${b.text}`,
        };
        continue;
      }
    }
    out.push(it.kind === 'line' ? { kind: 'line', line: it.line } : it);
  }
  return out;
}

function cut(lines: Line[], em: number, depth = 0): Item[] {
  if (lines.length <= 1 || depth > 40) return lines.sort((a, b) => a.box.y0 - b.box.y0 || a.box.x0 - b.box.x0).map((line) => ({ kind: 'line', line }));
  const sorted = [...lines].sort((a, b) => a.box.y0 - b.box.y0);
  const bands: Line[][] = [];
  let bottom = -Infinity;
  for (const l of sorted) {
    const band = bands[bands.length - 1];
    const h = l.box.y1 - l.box.y0;
    if (band && Math.min(bottom, l.box.y1) - l.box.y0 > 0.4 * h) {
      band.push(l);
      bottom = Math.max(bottom, l.box.y1);
    } else {
      bands.push([l]);
      bottom = l.box.y1;
    }
  }
  const x0 = Math.min(...lines.map((l) => l.box.x0));
  const x1 = Math.max(...lines.map((l) => l.box.x1));
  const minGutter = Math.max(0.45 * em, 3);
  const items: Item[] = [];
  let i = 0;
  while (i < bands.length) {
    let free = gutters(bands[i], x0, x1, minGutter);
    // The gutters the group's first k + 1 bands share, at k; and the last band with gutters of its own.
    const frees = [free];
    let own = 0;
    let j = i + 1;
    if (free.length) {
      while (j < bands.length) {
        const inside = gutters(bands[j], x0, x1, minGutter);
        const next = intersect(free, inside.concat(bandFits(bands[j], x0, x1)), minGutter);
        // A row with no gutter of its own that runs across one of the group's (a heading after a table) ends it.
        if (!next.length || (!inside.length && next.length < free.length)) break;
        free = next;
        frees.push(next);
        if (inside.length) own = j - i;
        j++;
      }
    }
    const group = bands.slice(i, j);
    i = j;
    if (!free.length) {
      for (const band of group) items.push(...inRow(band).map((line) => ({ kind: 'line' as const, line })));
      continue;
    }
    const table = asTable(group, free, x1 - x0);
    if (table) {
      items.push(table);
      continue;
    }
    // Rows after a table that only fit beside its gutters (a heading, a short paragraph) are not the table's: the
    // bands up to the last one with gutters of its own are a table alone when each of its rows has several cells,
    // and the rest is cut again.
    const head = own >= 1 && own + 1 < group.length ? asTable(group.slice(0, own + 1), frees[own], x1 - x0) : null;
    if (head?.kind === 'table' && head.cells?.every((r) => r.filter((c) => c.length).length >= 2)) {
      items.push(head);
      i -= group.length - own - 1;
      continue;
    }
    // Widest gutter first; each side is cut again (more than two columns, or structure inside a column).
    const [a, b] = free.sort((p, q) => q[1] - q[0] - (p[1] - p[0]))[0];
    const mid = (a + b) / 2;
    const flat = group.flat();
    const left = flat.filter((l) => l.box.x1 <= mid);
    const right = flat.filter((l) => l.box.x1 > mid);
    const textual = (side: Line[]) => side.some((l) => l.box.x1 - l.box.x0 >= 4 * l.size);
    // Columns run for several rows; two or three rows whose word gaps happen to line up are not columns.
    const columns = (group.length >= 4 || free.some(([p, q]) => q - p >= 2.5 * em)) && !mostlyProse(group, [mid]);
    if (!left.length || !right.length || (!textual(left) && !textual(right)) || !columns) {
      for (const band of group) items.push(...inRow(band).map((line) => ({ kind: 'line' as const, line })));
      continue;
    }
    // Columns of right-to-left text are read from the right one.
    const sides = [cut(left, em, depth + 1), cut(right, em, depth + 1)];
    items.push(...(mostlyRtl(flat.map((l) => l.text).join(' ')) ? sides.reverse() : sides).flat());
  }
  return items;
}

/** A band whose lines all sit on one side of the region's extent also leaves the region's edge free. */
function bandFits(band: Line[], x0: number, x1: number): Interval[] {
  const lo = Math.min(...band.map((l) => l.box.x0));
  const hi = Math.max(...band.map((l) => l.box.x1));
  const out: Interval[] = [];
  if (lo > x0 + 0.5) out.push([x0 + 0.5, lo]);
  if (hi < x1 - 0.5) out.push([hi, x1 - 0.5]);
  return out;
}

/**
 * Justified prose spreads its word gaps evenly, so a few lines of it can share an empty vertical strip by
 * chance. A row is prose-like when the gap across the strip is no wider than its other word gaps; a table's
 * cell gap or a column gutter is clearly wider than the word gaps beside it.
 */
function mostlyProse(group: Line[][], cuts: number[]): boolean {
  let crossing = 0;
  let prose = 0;
  for (const band of group) {
    const ws = band.flatMap((l) => l.words).sort((a, b) => a.box.x0 - b.box.x0);
    const inner: number[] = [];
    const across: number[] = [];
    for (let i = 1; i < ws.length; i++) {
      const gap = ws[i].box.x0 - ws[i - 1].box.x1;
      (cuts.some((c) => c > ws[i - 1].box.x1 && c < ws[i].box.x0) ? across : inner).push(gap);
    }
    if (!across.length) continue;
    crossing++;
    if (inner.length >= 2 && Math.min(...across) < 1.6 * median(inner)) prose++;
  }
  return crossing > 0 && prose * 2 >= crossing;
}

/** Rows of several short cells under shared gutters are a table; long prose in two columns is not. */
function asTable(group: Line[][], free: Interval[], width: number): Item | null {
  if (group.length < 2) return null;
  const cuts = free.map(([a, b]) => (a + b) / 2).sort((a, b) => a - b);
  if (mostlyProse(group, cuts)) return null;
  // Cells: the pieces of a row between two gutters (a justified line cut at its wide gaps is one cell again).
  const rows = group.map((band) => {
    const row: Line[][] = Array.from({ length: cuts.length + 1 }, () => []);
    for (const l of [...band].sort((a, b) => a.box.x0 - b.box.x0)) row[cuts.filter((c) => c < (l.box.x0 + l.box.x1) / 2).length].push(l);
    return row;
  });
  const multi = rows.filter((r) => r.filter((c) => c.length).length >= 2);
  if (multi.length < Math.max(2, Math.ceil(group.length * 0.6))) return null;
  const cells = rows.flat().filter((c) => c.length);
  const wordsPerCell = median(cells.map((c) => c.reduce((n, l) => n + l.words.length, 0)));
  const cellWidth = median(cells.map((c) => Math.max(...c.map((l) => l.box.x1)) - Math.min(...c.map((l) => l.box.x0))));
  if (!(wordsPerCell <= 5 || (cuts.length >= 2 && wordsPerCell <= 10 && cellWidth < 0.3 * width))) return null;
  return {
    kind: 'table',
    rows: rows.map((r) => r.map((c) => c.map((l) => l.text).join(' '))),
    lines: group.flat().sort((a, b) => a.box.y0 - b.box.y0 || a.box.x0 - b.box.x0),
    cells: rows,
    cuts,
  };
}

// ---------------------------------------------------------------- plain text

/** One page's text in reading order: one line per row, or rows joined by spaces. */
export function pageText(page: PageModel, preserveLineBreaks: boolean): string {
  const rows = page.items.flatMap((it) => (it.kind === 'line' ? [it.line.text] : it.rows.map((r) => r.filter(Boolean).join(' '))));
  return preserveLineBreaks ? rows.join('\n') : rows.join(' ').replace(/\s+/g, ' ').trim();
}
