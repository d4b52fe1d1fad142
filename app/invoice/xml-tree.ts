import { SaxesParser } from 'saxes';

/**
 * A small namespace-aware element tree of an invoice, for the EN 16931 rules (en16931.ts): elements in document
 * order with their namespace URI, local name, attributes and text. Comments and processing instructions are dropped;
 * a DOCTYPE is refused (also before this is called: refuseDoctype), so no entity but the five predefined ones is expanded.
 */

export interface El {
  ns: string;
  local: string;
  /** The prefixed name as written (`ram:ID`), for locations. */
  qname: string;
  attrs: Map<string, string>;
  kids: El[];
  /** The element's own text nodes, joined. */
  own: string;
  parent: El | null;
  /** Position in document order. */
  order: number;
}

export const NS = {
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  udt: 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
  qdt: 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
} as const;
const PREFIX_OF = new Map<string, string>(Object.entries(NS).map(([p, u]) => [u, p]));

/**
 * Parses `xml` into its root element and every element in document order, with saxes (strict, namespace-aware; as
 * fast here as a hand-written scanner: ~0.9 s for a 20 MB invoice). What is not well-formed throws.
 */
export function parseTree(xml: string): { root: El; all: El[] } {
  const all: El[] = [];
  const stack: El[] = [];
  let root: El | null = null;
  const parser = new SaxesParser({ xmlns: true });
  parser.on('doctype', () => {
    throw new Error('a DOCTYPE is not read here');
  });
  parser.on('opentag', (tag) => {
    const parent = stack.length ? stack[stack.length - 1] : null;
    const attrs = new Map<string, string>();
    for (const [name, a] of Object.entries(tag.attributes)) if (a.prefix !== 'xmlns' && name !== 'xmlns') attrs.set(name, a.value);
    const el: El = { ns: tag.uri, local: tag.local, qname: tag.name, attrs, kids: [], own: '', parent, order: all.length };
    all.push(el);
    if (parent) parent.kids.push(el);
    else root = el;
    if (!tag.isSelfClosing) stack.push(el);
  });
  parser.on('closetag', (tag) => {
    if (!tag.isSelfClosing) stack.pop();
  });
  const addText = (t: string) => {
    if (stack.length) stack[stack.length - 1].own += t;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.write(xml).close();
  if (!root) throw new Error('no root element');
  return { root, all };
}

/** The string value: the text of the element and all its descendants. */
export function text(e: El | undefined | null): string {
  if (!e) return '';
  if (e.kids.length === 0) return e.own;
  return e.own + e.kids.map(text).join('');
}

/** XPath normalize-space(). */
export const norm = (s: string): string => s.replace(/[ \t\r\n]+/g, ' ').trim();

/** A step `prefix:Local` of the four CII namespaces. */
export interface Step {
  ns: string;
  local: string;
}
const stepCache = new Map<string, Step[]>();
/** `ram:A/ram:B` as steps. */
export function steps(path: string): Step[] {
  let s = stepCache.get(path);
  if (!s) {
    s = path.split('/').map((p) => {
      const [prefix, local] = p.split(':');
      const ns = (NS as Record<string, string>)[prefix];
      if (!ns || !local) throw new Error(`bad step ${p}`);
      return { ns, local };
    });
    stepCache.set(path, s);
  }
  return s;
}

export const is = (e: El | null | undefined, step: Step): boolean => !!e && e.local === step.local && e.ns === step.ns;

/** The elements at the relative path `ram:A/ram:B` from `e` (child steps), in document order. */
export function find(e: El | null | undefined, path: string): El[] {
  const out: El[] = [];
  if (e) collect(e, steps(path), 0, out);
  return out;
}
/** find() with the steps compiled. */
export function findSteps(e: El, st: Step[]): El[] {
  const out: El[] = [];
  collect(e, st, 0, out);
  return out;
}
/** How many elements the compiled steps find (no array built when nothing is there). */
export function countSteps(e: El, st: Step[], i = 0): number {
  const s = st[i];
  let n = 0;
  for (const k of e.kids) {
    if (k.local !== s.local || k.ns !== s.ns) continue;
    n += i === st.length - 1 ? 1 : countSteps(k, st, i + 1);
  }
  return n;
}
function collect(e: El, st: Step[], i: number, out: El[]): void {
  const s = st[i];
  const last = i === st.length - 1;
  for (const k of e.kids) {
    if (k.local !== s.local || k.ns !== s.ns) continue;
    if (last) out.push(k);
    else collect(k, st, i + 1, out);
  }
}
/** The first element at `path` from `e`. */
export const first = (e: El | null | undefined, path: string): El | undefined => (e ? firstAt(e, steps(path), 0) : undefined);
function firstAt(e: El, st: Step[], i: number): El | undefined {
  const s = st[i];
  for (const k of e.kids) {
    if (k.local !== s.local || k.ns !== s.ns) continue;
    if (i === st.length - 1) return k;
    const found = firstAt(k, st, i + 1);
    if (found) return found;
  }
  return undefined;
}
export const has = (e: El | null | undefined, path: string): boolean => first(e, path) !== undefined;

/** Whether `e` is at `ram:A/ram:B` measured from its end (`//ram:A/ram:B`), or from the root when `absolute`. */
export const at = (e: El, path: string, absolute = false): boolean => atSteps(e, steps(path), absolute);
export function atSteps(e: El, st: Step[], absolute = false): boolean {
  let cur: El | null = e;
  for (let i = st.length - 1; i >= 0; i--) {
    if (!cur || cur.local !== st[i].local || cur.ns !== st[i].ns) return false;
    cur = cur.parent;
  }
  return !absolute || cur === null;
}

export function ancestor(e: El, path: string): boolean {
  const st = steps(path)[0];
  for (let p = e.parent; p; p = p.parent) if (p.local === st.local && p.ns === st.ns) return true;
  return false;
}

/** The XPath of `e` with the CII prefixes and a position where a sibling has the same name. */
export function location(e: El): string {
  const parts: string[] = [];
  for (let c: El | null = e; c; c = c.parent) {
    const prefix = PREFIX_OF.get(c.ns);
    const name = prefix ? `${prefix}:${c.local}` : `*[local-name()='${c.local}' and namespace-uri()='${c.ns}']`;
    const pos = c.parent ? position(c) : '';
    parts.push(`/${name}${pos}`);
  }
  return parts.reverse().join('');
}

/** Per parent: each child's position among its same-name siblings and their count, computed once. */
const positions = new WeakMap<El, Map<El, string>>();
function position(e: El): string {
  const parent = e.parent as El;
  let m = positions.get(parent);
  if (!m) {
    m = new Map();
    const counts = new Map<string, El[]>();
    for (const k of parent.kids) {
      const key = `${k.ns} ${k.local}`;
      const list = counts.get(key);
      if (list) list.push(k);
      else counts.set(key, [k]);
    }
    for (const list of counts.values()) list.forEach((k, i) => m?.set(k, list.length > 1 ? `[${i + 1}]` : ''));
    positions.set(parent, m);
  }
  return m.get(e) ?? '';
}
