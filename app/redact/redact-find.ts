import { isIPv4, isIPv6 } from 'node:net';
import { RE2JS } from 're2js';
import { z } from 'zod';
import type { Quad, StextLine, StextPage } from '../../engines/mupdf-stext.js';
import { AppError } from '../errors.js';
import { type Area, areaSchema } from './redact-area.js';

/**
 * What /pdf-with-redacted-text-preview looks for (spec 4.6): literal strings, regular expressions and
 * presets, matched against each page's text as MuPDF reads it, character by character, so a match may
 * start or end inside a word and run over several words and lines.
 */

export const PRESETS = [
  'email',
  'phone_number',
  'date',
  'us_ssn',
  'url',
  'credit_card',
  'credit_debit_pin',
  'bank_routing_number',
  'international_bank_account_number',
  'swift_bic_number',
  'ipv4',
  'ipv6',
] as const;
export type Preset = (typeof PRESETS)[number];

/** What is looked for in the text. */
export type TextRedaction = { type: 'literal'; value: string } | { type: 'regex'; value: string } | { type: 'preset'; value: Preset };
export type Redaction = TextRedaction | { type: 'area'; value: Area };

const str = z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().min(1));
const redaction = z.discriminatedUnion('type', [
  z.object({ type: z.literal('literal'), value: str }),
  z.object({ type: z.literal('regex'), value: str }),
  z.object({ type: z.literal('preset'), value: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(PRESETS)) }),
  z.object({ type: z.literal('area'), value: areaSchema }),
]);

/** `redactions`: an array of {type, value}, also accepted wrapped as {"redactions": [...]} or as one object. */
export const redactionsSchema = z
  .preprocess((v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) return 'redactions' in v ? (v as { redactions: unknown }).redactions : [v];
    return v;
  }, z.array(redaction).min(1))
  .superRefine((list) => {
    list.forEach((r, i) => {
      if (r.type !== 'regex') return;
      try {
        compileUserRegex(r.value);
      } catch (err) {
        // A clear sentence rather than the generic range message: the client needs the parser's reason.
        throw new AppError('out_of_range', `${r.value} is not a valid regular expression for redactions[${i}].value (RE2 syntax): ${(err as Error).message}`);
      }
    });
  });

/**
 * A client's pattern runs in RE2 (re2js): linear time whatever the pattern, so a catastrophic pattern
 * cannot stall the server. RE2 has no look-around or back-references; `(?i)` makes a pattern case-insensitive.
 */
function compileUserRegex(source: string): RE2JS {
  return RE2JS.compile(source);
}

// ---------------------------------------------------------------- presets

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const DAY = '(?:[12]\\d|3[01]|0?[1-9])(?:st|nd|rd|th)?';
const SEP = '[-.\\s\\u2010-\\u2013]';

/** Luhn check (card numbers). */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ABA routing number checksum. */
function aba(d: string): boolean {
  const n = [...d].map(Number);
  return (3 * (n[0] + n[3] + n[6]) + 7 * (n[1] + n[4] + n[7]) + (n[2] + n[5] + n[8])) % 10 === 0;
}

/** IBAN mod-97 check (ISO 13616). */
function iban(raw: string): boolean {
  const s = raw.replace(/\s/g, '');
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const v = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55);
    for (const d of v) rest = (rest * 10 + Number(d)) % 97;
  }
  return rest === 1;
}

// ISO 3166-1 alpha-2 codes (and XK, used by banks): a BIC's letters 5-6.
const COUNTRIES = new Set(
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW'.split(
    ' ',
  ),
);

interface PresetRule {
  re: RegExp;
  /** Further check of a candidate (checksums, ranges); the part to redact is the whole match. */
  valid?: (m: string) => boolean;
}

/**
 * Each preset is a pattern with word boundaries, plus a checksum or range check where the format has one,
 * so that ordinary numbers are not taken for card or account numbers. Line breaks are allowed where real
 * documents break these values: after `@` in an e-mail address and after `://` in a URL.
 */
const RULES: Record<Preset, PresetRule> = {
  email: {
    re: /(?<![\w.+-])[A-Za-z0-9][\w.%+-]*@\n?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])/g,
  },
  phone_number: {
    // North American numbers with separators or brackets, and international numbers starting with +.
    re: new RegExp(
      `(?<![\\w+])(?:(?:\\+?1${SEP}?)?(?:\\(\\d{3}\\)\\s?|\\d{3}${SEP})\\d{3}${SEP}\\d{4}|\\+\\d{1,3}(?:${SEP}?\\(?\\d{1,5}\\)?){2,5})(?![\\w])`,
      'g',
    ),
    valid: (m) => m.replace(/\D/g, '').length >= 7 && m.replace(/\D/g, '').length <= 15,
  },
  date: {
    re: new RegExp(
      [
        `\\b${MONTH}\\.?\\s+${DAY},?\\s+(?:19|20)\\d{2}\\b`,
        `\\b${DAY}\\s+${MONTH}\\.?,?\\s+(?:19|20)\\d{2}\\b`,
        '\\b(?:19|20)\\d{2}-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12]\\d|3[01])\\b',
        // d/m/y or m/d/y with / or - (2- or 4-digit year), with dots only before a 4-digit year (18.10.35 is a section number)
        '\\b(?:0?[1-9]|[12]\\d|3[01])([/-])(?:0?[1-9]|[12]\\d|3[01])\\1(?:(?:19|20)\\d{2}|\\d{2})\\b',
        '\\b(?:0?[1-9]|[12]\\d|3[01])\\.(?:0?[1-9]|[12]\\d|3[01])\\.(?:19|20)\\d{2}\\b',
      ].join('|'),
      'g',
    ),
  },
  us_ssn: { re: /(?<![\d-])(?!000|666|9\d\d)\d{3}([- ]?)(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])/g },
  url: {
    re: /\b(?:https?:\/\/\n?|ftp:\/\/\n?|www\.)[^\s<>"'{}|\\^`]+/gi,
  },
  credit_card: { re: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g, valid: (m) => luhn(m.replace(/\D/g, '')) },
  // A PIN is only told from any other short number by its label.
  credit_debit_pin: { re: /(?<=\bPIN(?:\s+(?:code|number|no\.?))?\s*[:#]?\s*)\d{4,6}(?!\d)/gi },
  bank_routing_number: { re: /(?<![\d-])\d{9}(?![\d-])/g, valid: aba },
  international_bank_account_number: { re: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g, valid: iban },
  swift_bic_number: { re: /\b[A-Z]{4}([A-Z]{2})[A-Z2-9][A-NP-Z0-9](?:[A-Z0-9]{3})?\b/g, valid: (m) => COUNTRIES.has(m.slice(4, 6)) },
  ipv4: { re: /(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]*\d)/g, valid: isIPv4 },
  ipv6: {
    re: /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])/g,
    valid: (m) => (m.includes('::') || m.split(':').length === 8 ? isIPv6(m) : false),
  },
};

/** Trailing punctuation that ends a sentence rather than a URL. */
const trimUrl = (s: string) => s.replace(/[.,;:!?)\]}'"]+$/, '');

// ---------------------------------------------------------------- matching

export interface Span {
  start: number;
  end: number;
}

/** Every [start, end) found in `text` by one redaction (empty matches skipped). */
export function findSpans(text: string, r: TextRedaction): Span[] {
  const out: Span[] = [];
  if (r.type === 'regex') {
    const m = compileUserRegex(r.value).matcher(text);
    while (m.find()) if (m.end() > m.start()) out.push({ start: m.start(), end: m.end() });
    return out;
  }
  if (r.type === 'literal') {
    // Any run of white space in the value matches any run in the text, line breaks included.
    const parts = r.value
      .trim()
      .split(/\s+/)
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const re = new RegExp(parts.join('\\s+'), 'g');
    for (const m of text.matchAll(re)) if (m[0]) out.push({ start: m.index, end: m.index + m[0].length });
    return out;
  }
  const rule = RULES[r.value];
  for (const m of text.matchAll(rule.re)) {
    let value = m[0];
    if (r.value === 'url') value = trimUrl(value);
    if (!value || (rule.valid && !rule.valid(value.replace(/\n/g, '')))) continue;
    out.push({ start: m.index, end: m.index + value.length });
  }
  return out;
}

/** A page's text for matching: each line's characters as MuPDF read them, lines joined by "\n". */
export interface PageText {
  text: string;
  /** For each UTF-16 unit of `text`: [line, char] in the stext page, or null for the joining "\n". */
  at: ([number, number] | null)[];
}

export function pageText(page: StextPage): PageText {
  let text = '';
  const at: PageText['at'] = [];
  page.lines.forEach((line, li) => {
    if (li) {
      text += '\n';
      at.push(null);
    }
    let ci = 0;
    for (const span of line.spans) {
      for (const ch of span.chars) {
        // A glyph without Unicode (U+FFFD) still takes a place, so nothing matches across it by accident.
        const c = ch.c || '\uFFFD';
        text += c;
        for (let k = 0; k < c.length; k++) at.push([li, ci]);
        ci++;
      }
    }
  });
  return { text, at };
}

const charsOf = (line: StextLine) => line.spans.flatMap((s) => s.chars);

/**
 * The quads (device space, one per line touched) that cover text[start, end): an oriented box along each
 * line's direction around the characters in the span, white space at either end left out. `quads` stop short of
 * other lines' characters: MuPDF removes every character whose font box (ascent to descent) meets a mark, and in
 * tightly set text those boxes reach into the next line, so a full-height quad took letters of the line above or
 * below. `full` holds the quads at the characters' whole height where any was narrowed (for pixels: see Mark).
 */
export function spanQuads(page: StextPage, pt: PageText, span: Span): { quads: Quad[]; full?: Quad[] } {
  const byLine = new Map<number, number[]>();
  for (let i = span.start; i < span.end; i++) {
    const a = pt.at[i];
    if (!a || /^\s$/u.test(pt.text[i])) continue;
    const list = byLine.get(a[0]) ?? byLine.set(a[0], []).get(a[0])!;
    if (list[list.length - 1] !== a[1]) list.push(a[1]);
  }
  const quads: Quad[] = [];
  const full: Quad[] = [];
  let narrowed = false;
  for (const [li, idx] of byLine) {
    const line = page.lines[li];
    const chars = charsOf(line);
    const [dx, dy] = line.dir;
    const nx = -dy;
    const ny = dx;
    let minD = Infinity,
      maxD = -Infinity,
      minN = Infinity,
      maxN = -Infinity;
    const own: [number, number][] = [];
    for (const i of idx) {
      const q = chars[i].quad;
      let c0 = Infinity;
      let c1 = -Infinity;
      for (let k = 0; k < 8; k += 2) {
        const d = q[k] * dx + q[k + 1] * dy;
        const n = q[k] * nx + q[k + 1] * ny;
        minD = Math.min(minD, d);
        maxD = Math.max(maxD, d);
        c0 = Math.min(c0, n);
        c1 = Math.max(c1, n);
      }
      minN = Math.min(minN, c0);
      maxN = Math.max(maxN, c1);
      own.push([c0, c1]);
    }
    const p = (d: number, n: number) => [round(d * dx + n * nx), round(d * dy + n * ny)];
    const quad = (lo: number, hi: number) => [...p(minD, lo), ...p(maxD, lo), ...p(minD, hi), ...p(maxD, hi)] as Quad;
    let [lo, hi] = clearOfOtherLines(page, li, [dx, dy], [minD, maxD], [minN, maxN]);
    // Every character of the match must still meet the band (a smaller letter set low or high in the line too).
    if (own.some(([c0, c1]) => c1 <= lo || c0 >= hi)) [lo, hi] = [minN, maxN];
    quads.push(quad(lo, hi));
    full.push(quad(minN, maxN));
    if (lo !== minN || hi !== maxN) narrowed = true;
  }
  return narrowed ? { quads, full } : { quads };
}

/** How far a quad may keep off another line's character box: boxes that only touch do not count as meeting. */
const CLEARANCE = 0.05;

/**
 * The band [lo, hi] across line `li` (along its normal) that meets no character box of another line within the
 * span [d0, d1] along it; the whole [n0, n1] when narrowing would keep less than half of it (letters set so close
 * that the marks could not cover the line's own characters surely: removing more is the safe side).
 */
function clearOfOtherLines(page: StextPage, li: number, [dx, dy]: [number, number], [d0, d1]: [number, number], [n0, n1]: [number, number]): [number, number] {
  const [nx, ny] = [-dy, dx];
  const mid = (n0 + n1) / 2;
  let lo = n0;
  let hi = n1;
  page.lines.forEach((other, oi) => {
    if (oi === li) return;
    for (const ch of charsOf(other)) {
      const q = ch.quad;
      let cd0 = Infinity;
      let cd1 = -Infinity;
      let cn0 = Infinity;
      let cn1 = -Infinity;
      for (let k = 0; k < 8; k += 2) {
        const d = q[k] * dx + q[k + 1] * dy;
        const n = q[k] * nx + q[k + 1] * ny;
        cd0 = Math.min(cd0, d);
        cd1 = Math.max(cd1, d);
        cn0 = Math.min(cn0, n);
        cn1 = Math.max(cn1, n);
      }
      if (cd1 <= d0 || cd0 >= d1 || cn1 <= lo || cn0 >= hi) continue;
      if ((cn0 + cn1) / 2 < mid) lo = Math.max(lo, cn1 + CLEARANCE);
      else hi = Math.min(hi, cn0 - CLEARANCE);
    }
  });
  return hi - lo >= (n1 - n0) / 2 ? [lo, hi] : [n0, n1];
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export interface Mark {
  /** Device space (MuPDF's page space), ul ur ll lr per line. */
  quads: Quad[];
  text: string;
  /**
   * The quads at the characters' whole height, where `quads` were narrowed to spare another line's letters. Where an
   * image lies under the mark (a scan under its OCR text), these are the ones to mark: applying blanks the pixels
   * under the mark, and a narrowed one would leave strips of the redacted words' picture.
   */
  full?: Quad[];
}

/** The mark at full height where any of its quads meets an image (device-space boxes, as the trace gives them). */
export function overImages(mark: Mark, images: { x0: number; y0: number; x1: number; y1: number }[]): Mark {
  if (!mark.full) return mark;
  const meets = mark.full.some((q) => {
    const xs = [q[0], q[2], q[4], q[6]];
    const ys = [q[1], q[3], q[5], q[7]];
    const [x0, y0, x1, y1] = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
    return images.some((im) => im.x0 < x1 && x0 < im.x1 && im.y0 < y1 && y0 < im.y1);
  });
  return { quads: meets ? mark.full : mark.quads, text: mark.text };
}

/** Every match of every redaction on one page; a span found by two redactions is marked once. */
export function findMarks(page: StextPage, redactions: TextRedaction[]): Mark[] {
  const pt = pageText(page);
  const seen = new Set<string>();
  const marks: Mark[] = [];
  for (const r of redactions) {
    for (const span of findSpans(pt.text, r)) {
      const key = `${span.start}:${span.end}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const { quads, full } = spanQuads(page, pt, span);
      if (quads.length) marks.push({ quads, full, text: pt.text.slice(span.start, span.end).replace(/\s+/g, ' ').trim() });
    }
  }
  return marks;
}
