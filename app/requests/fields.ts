import { z } from 'zod';
import { type PageGrammar, parsePages } from '../document/index.js';
import { AppError } from '../errors.js';
import { sanitizeName } from '../store/names.js';

/**
 * Field schemas shared by every endpoint. Each one coerces the loose values real clients send (strings for
 * numbers and booleans, on/off, repeated or JSON arrays, JSON inside strings) and validates with zod; the
 * same schemas generate the OpenAPI document. Absent, null and empty-string values all count as "not sent".
 */

const absent = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
const single = (v: unknown) => (Array.isArray(v) ? v[0] : v);
const scalar = (v: unknown) => {
  const s = single(v);
  return absent(s) ? undefined : s;
};

const toNumber = (v: unknown) => {
  const s = scalar(v);
  if (typeof s === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(s)) return Number(s);
  return s;
};

const TRUE = new Set(['on', 'true', '1', 'yes']);
const FALSE = new Set(['off', 'false', '0', 'no']);
const toBool = (v: unknown) => {
  const s = scalar(v);
  if (typeof s === 'boolean') return s;
  if (typeof s === 'number') return s === 1 ? true : s === 0 ? false : s;
  if (typeof s === 'string') {
    const l = s.trim().toLowerCase();
    if (TRUE.has(l)) return true;
    if (FALSE.has(l)) return false;
  }
  return s;
};

const toText = (v: unknown) => {
  const s = scalar(v);
  return typeof s === 'number' || typeof s === 'boolean' ? String(s) : s;
};

/** JSON options nest a few levels; deeper values are refused before anything walks them recursively. */
const MAX_JSON_DEPTH = 32;

/** Whether arrays and objects nest more than `max` deep (walked without recursion: that is what overflows). */
function nestedDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const x of Object.values(v)) stack.push([x, depth + 1]);
  }
  return false;
}

/** A JSON value (a field, or a whole JSON body) as it is, or a 400 when it nests too deeply. */
export const refuseDeep = (v: unknown) => {
  if (nestedDeeper(v, MAX_JSON_DEPTH))
    throw new AppError('bad_json', `JSON data provided is not properly formatted: arrays and objects nest more than ${MAX_JSON_DEPTH} levels deep`);
  return v;
};

/** Arrays as JSON arrays, repeated fields, a JSON array inside a string, or one plain value. */
const toList = (v: unknown) => {
  if (absent(v)) return undefined;
  refuseDeep(v);
  if (Array.isArray(v)) return v.filter((x) => !absent(x)).map((x) => (typeof x === 'number' ? String(x) : x));
  if (typeof v === 'string' && v.trim().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      /* not JSON: one value */
    }
    if (Array.isArray(refuseDeep(parsed))) return (parsed as unknown[]).map((x) => (typeof x === 'number' ? String(x) : x));
  }
  return [typeof v === 'number' ? String(v) : v];
};

export function int(min: number, max: number, def?: number) {
  const s = z.preprocess(toNumber, z.number().int().min(min).max(max));
  return def === undefined ? s : s.optional().default(def);
}

export function num(min: number, max: number, def?: number) {
  const s = z.preprocess(toNumber, z.number().min(min).max(max));
  return def === undefined ? s : s.optional().default(def);
}

/** A positive number without a fixed upper bound (page sizes, scales). */
export function positive(max = Number.MAX_SAFE_INTEGER) {
  return z.preprocess(toNumber, z.number().gt(0).max(max));
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T, def?: T[number], aliases: Record<string, T[number]> = {}) {
  const s = z.preprocess((v) => {
    const t = toText(v);
    return typeof t === 'string' && t in aliases ? aliases[t] : typeof t === 'string' ? t.trim() : t;
  }, z.enum(values));
  return def === undefined ? s : s.optional().default(def);
}

/** A two-state switch: on/off, true/false, 1/0, yes/no or a JSON boolean. Documented as on/off. */
export function onOff(def: boolean) {
  return z
    .preprocess(toBool, z.boolean())
    .optional()
    .default(def)
    .meta({ type: 'string', enum: ['on', 'off'], default: def ? 'on' : 'off' });
}

/** The same switch, documented as true/false (`behind_page`, `preserve_black`). */
export function trueFalse(def: boolean) {
  return z
    .preprocess(toBool, z.boolean())
    .optional()
    .default(def)
    .meta({ type: 'string', enum: ['true', 'false'], default: String(def) });
}

export function text(opts: { min?: number; max?: number; pattern?: RegExp } = {}) {
  let s = z.string();
  if (opts.min !== undefined) s = s.min(opts.min);
  if (opts.max !== undefined) s = s.max(opts.max);
  if (opts.pattern) s = s.regex(opts.pattern);
  return z.preprocess(toText, s);
}

/** A page selection, checked for syntax here and against the page count when the document is read. */
export function pages(grammar: PageGrammar = {}, def: string | undefined = '1-last') {
  const s = z
    .preprocess(
      toText,
      z.string().superRefine((v, ctx) => {
        try {
          parsePages(v, grammar);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'bad page selection' });
        }
      }),
    )
    .meta({ type: 'string', description: pageDoc(grammar), examples: ['1-last', '1,3,5-7', '2-last'] });
  return def === undefined ? s : s.optional().default(def);
}

/** One page selection per item (`pages[]` of merge and split). */
export function pageList(grammar: PageGrammar = {}) {
  return z
    .preprocess(
      toList,
      z.array(
        z.string().superRefine((v, ctx) => {
          try {
            parsePages(v, grammar);
          } catch {
            ctx.addIssue({ code: 'custom', message: 'bad page selection' });
          }
        }),
      ),
    )
    .meta({ description: pageDoc(grammar) });
}

/** A list of values: a JSON array, repeated fields (`name` or `name[]`) or a comma list. */
export function list<const T extends readonly [string, ...string[]]>(values: T) {
  return z.preprocess(
    (v) => {
      const l = toList(v);
      return l?.flatMap((x) =>
        typeof x === 'string'
          ? x
              .split(',')
              .map((y) => y.trim())
              .filter(Boolean)
          : [x],
      );
    },
    z.array(z.enum(values)),
  );
}

/** Structured JSON: an object or array as real JSON, or as a JSON string (in which numbers may be strings). */
export function json<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => {
    // A repeated multipart field arrives as a one-element array of the JSON text.
    const s = Array.isArray(v) && v.length === 1 && typeof v[0] === 'string' ? v[0] : v;
    if (typeof s !== 'string') return refuseDeep(s);
    let parsed: unknown;
    try {
      parsed = JSON.parse(s);
    } catch {
      throw new AppError('bad_json', 'JSON data provided is not properly formatted');
    }
    return refuseDeep(parsed);
  }, schema);
}

/** A JSON list of objects, where clients may also send a single object (the SDKs accept both). */
export const jsonObjects = <T extends z.ZodType>(item: T) =>
  json(z.preprocess((v) => (v && typeof v === 'object' && !Array.isArray(v) ? [v] : v), z.array(item).min(1)));

/** The output name (spec 4.1 rule 3): stripped of separators and control characters. */
export function output() {
  return z
    .preprocess(
      toText,
      z
        .string()
        .max(255)
        .transform((s) => sanitizeName(s, ''))
        .optional(),
    )
    .meta({ type: 'string', description: 'Name of the generated file without extension (a prefix for multi-file outputs).' });
}

/** A colour field: `"r,g,b"` / `"c,m,y,k"` or a JSON array, each value an integer from 0 to `max`. */
export const colorValues = (count: 3 | 4, max: number) =>
  z
    .preprocess(
      (v) => {
        const list = typeof v === 'string' && !v.trim().startsWith('[') ? v.split(',') : toList(v);
        return list?.map((x) => toNumber(typeof x === 'string' ? x.trim() : x));
      },
      z.array(z.number().int().min(0).max(max)).length(count),
    )
    .meta({ type: 'string', examples: [count === 3 ? '255,0,0' : '0,100,100,0'] });

export const looseNumber = toNumber;
export const looseBool = toBool;
export const looseList = toList;

function pageDoc(g: PageGrammar): string {
  return [
    'Comma-separated pages and ranges: `1,3,5-7`, `last`, `2-last`.',
    g.reverse ? 'Reversed ranges (`9-2`, `last-2`) are read from high to low.' : '',
    g.parity ? '`even` and `odd` select every second page.' : '',
  ]
    .filter(Boolean)
    .join(' ');
}
