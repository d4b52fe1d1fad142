import * as D from './decimal.js';
import { type Dec, dec } from './decimal.js';
import { type El, find, first, location, NS, norm, text } from './xml-tree.js';

/**
 * The frame the EN 16931 patterns (en16931.ts, en16931-cii.ts) are written in: a pattern is a list of rules, a rule
 * a context (which elements it applies to) and its checks, run as ISO Schematron runs a pattern: each element is
 * checked by the first rule whose context it matches. The helpers read values as XPath 2.0 does.
 */

export type Flag = 'fatal' | 'warning';

export interface RuleFinding {
  id: string;
  flag: Flag;
  /** XPath of the rule's context element. */
  location: string;
  message: string;
}

export interface Check {
  id: string;
  flag: Flag;
  text: string;
  test: (e: El, d: Doc) => boolean;
  /** What was found (and computed), appended to the message. */
  detail?: (e: El, d: Doc) => string;
}

export interface Rule {
  /** Local names the context element can have (a quick index); null for any. */
  names: string[] | null;
  match: (e: El, d: Doc) => boolean;
  checks: Check[];
}

export type Pattern = Rule[];

/** The document and what many rules look up. */
export class Doc {
  readonly byName = new Map<string, El[]>();
  constructor(
    readonly root: El,
    readonly all: El[],
  ) {
    for (const e of all) {
      const list = this.byName.get(e.local);
      if (list) list.push(e);
      else this.byName.set(e.local, [e]);
    }
  }
  /** `//prefix:Local` */
  any(qname: string): El[] {
    const [p, local] = qname.split(':');
    const ns = (NS as Record<string, string>)[p];
    return (this.byName.get(local) ?? []).filter((e) => e.ns === ns);
  }
  private memo = new Map<string, unknown>();
  once<T>(key: string, f: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, f());
    return this.memo.get(key) as T;
  }
  get tx() {
    return this.once('tx', () => first(this.root, 'rsm:SupplyChainTradeTransaction'));
  }
  get settlement() {
    return this.once('settlement', () => first(this.tx, 'ram:ApplicableHeaderTradeSettlement'));
  }
  get agreement() {
    return this.once('agreement', () => first(this.tx, 'ram:ApplicableHeaderTradeAgreement'));
  }
}

// ---- XPath 2.0 helpers ----------------------------------------------------------------------------------------

/** The string value of the first element at `path` ('' when none). */
export const str = (e: El | null | undefined, path: string): string => text(first(e, path));
/** normalize-space(path) != '' */
export const filled = (e: El | null | undefined, path: string): boolean => norm(str(e, path)) !== '';
/** xs:decimal(path): the first element's value, null when absent or not a decimal. */
export const num = (e: El | null | undefined, path: string): Dec | null => {
  const x = first(e, path);
  return x ? dec(text(x)) : null;
};
/** string-length(substring-after(path, '.')) <= 2 */
export const twoDecimals = (e: El | null | undefined, path: string): boolean => {
  const s = str(e, path);
  const i = s.indexOf('.');
  return i < 0 || s.length - i - 1 <= 2;
};
/** Some element at `path` compares with `n` as `op` does (a general comparison, numeric). */
export const some = (e: El | null | undefined, path: string, op: (c: number) => boolean, n: Dec): boolean =>
  find(e, path).some((x) => {
    const v = dec(text(x));
    return v !== null && op(D.cmp(v, n));
  });
/** upper-case(ram:TypeCode) = 'VAT' */
export const vatType = (e: El): boolean => find(e, 'ram:TypeCode').some((t) => text(t).toUpperCase() === 'VAT');
/** ChargeIndicator/udt:Indicator cast to xs:boolean: true, false, or null (not a boolean). */
export function indicator(ac: El): boolean | null {
  for (const i of find(ac, 'ram:ChargeIndicator/udt:Indicator')) {
    const v = text(i).trim();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
  }
  return null;
}
/** sum() of the values (a value that is not a number counts 0). */
export const sumOf = (els: El[]): Dec => D.sum(els.map((x) => dec(text(x)) ?? D.ZERO));
export const ZERO = D.ZERO;
export const ge = (c: number) => c >= 0;
export const gt = (c: number) => c > 0;
export const eq0 = (c: number) => c === 0;

// ---- Runner -----------------------------------------------------------------------------------------------------

function index(pattern: Pattern): { byName: Map<string, Rule[]>; any: Rule[] } {
  const byName = new Map<string, Rule[]>();
  const anyRules = pattern.filter((r) => r.names === null);
  for (const r of pattern) {
    if (r.names === null) continue;
    for (const n of r.names) {
      if (!byName.has(n)) byName.set(n, []);
    }
  }
  // Each name's list keeps the pattern's order, with the rules for any name merged in.
  for (const [n, list] of byName) for (const r of pattern) if (r.names === null || r.names.includes(n)) list.push(r);
  return { byName, any: anyRules };
}

const indexed = new WeakMap<Pattern, ReturnType<typeof index>>();

export function runPattern(pattern: Pattern, d: Doc, out: RuleFinding[]): void {
  let ix = indexed.get(pattern);
  if (!ix) {
    ix = index(pattern);
    indexed.set(pattern, ix);
  }
  for (const e of d.all) {
    const rules = ix.byName.get(e.local) ?? ix.any;
    for (const rule of rules) {
      if (!rule.match(e, d)) continue;
      for (const c of rule.checks)
        if (!c.test(e, d))
          out.push({ id: c.id, flag: c.flag, location: location(e), message: c.detail ? `${c.text.replace(/\.$/, '')}: ${c.detail(e, d)}.` : c.text });
      break;
    }
  }
}

/** A rule on elements named `local` that `match` accepts. */
export const rule = (names: string | string[] | null, match: (e: El, d: Doc) => boolean, checks: Check[]): Rule => ({
  names: typeof names === 'string' ? [names] : names,
  match,
  checks,
});
export const fatal = (id: string, test: Check['test'], text: string, detail?: Check['detail']): Check => ({
  id,
  flag: 'fatal',
  test,
  text: `[${id}] ${text}`,
  detail,
});
/** The value at `path` as the message shows it ('none' when absent). */
export const shown = (e: El | null | undefined, path: string): string => {
  const x = first(e, path);
  return x ? norm(text(x)) : 'none';
};
/** A BR-DEC rule: at most two decimals at `path`. */
export const decimals2 = (id: string, path: string, text: string): Check =>
  fatal(
    id,
    (e) => twoDecimals(e, path),
    text,
    (e) => shown(e, path),
  );
export const warning = (id: string, test: Check['test'], text: string): Check => ({ id, flag: 'warning', test, text: `[${id}] ${text}` });
