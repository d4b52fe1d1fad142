/**
 * A small namespace-aware element tree of an invoice, for the EN 16931 rules (en16931.ts): elements in document
 * order with their namespace URI, local name, attributes and text. Comments and processing instructions are dropped;
 * a DOCTYPE is refused before this is called (refuseDoctype), so no entity but the five predefined ones is expanded.
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

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** Text with the predefined and character references replaced (the only ones a document without a DTD has). */
function unescapeXml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (m, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref] ?? m;
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

const ATTR = /([^\s=/>]+)\s*=\s*("([^"]*)"|'([^']*)')/g;
const XML_NS = new Map<string, string>([['xml', 'http://www.w3.org/XML/1998/namespace']]);

/**
 * Parses `xml` into its root element and every element in document order: a scanner for well-formed XML without a
 * DTD (xmllint checks well-formedness beside it; what this cannot read throws). Several times faster than a general
 * parser building objects, which matters at 20 MB.
 */
export function parseTree(xml: string): { root: El; all: El[] } {
  const all: El[] = [];
  const stack: { el: El; ns: Map<string, string> }[] = [];
  let root: El | null = null;
  let i = 0;
  const n = xml.length;
  const addText = (t: string) => {
    if (stack.length) stack[stack.length - 1].el.own += unescapeXml(t);
  };
  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      addText(xml.slice(i));
      break;
    }
    if (lt > i) addText(xml.slice(i, lt));
    const c = xml.charCodeAt(lt + 1);
    if (c === 33 /* ! */) {
      if (xml.startsWith('<!--', lt)) {
        const e = xml.indexOf('-->', lt + 4);
        if (e < 0) throw new Error('unterminated comment');
        i = e + 3;
      } else if (xml.startsWith('<![CDATA[', lt)) {
        const e = xml.indexOf(']]>', lt + 9);
        if (e < 0) throw new Error('unterminated CDATA section');
        if (stack.length) stack[stack.length - 1].el.own += xml.slice(lt + 9, e);
        i = e + 3;
      } else throw new Error('a DOCTYPE or markup declaration is not read here');
      continue;
    }
    if (c === 63 /* ? */) {
      const e = xml.indexOf('?>', lt + 2);
      if (e < 0) throw new Error('unterminated processing instruction');
      i = e + 2;
      continue;
    }
    // A tag: its end is the first '>' outside quoted attribute values.
    let j = lt + 1;
    let quote = 0;
    for (; j < n; j++) {
      const ch = xml.charCodeAt(j);
      if (quote) {
        if (ch === quote) quote = 0;
      } else if (ch === 34 || ch === 39) quote = ch;
      else if (ch === 62) break;
    }
    if (j >= n) throw new Error('unterminated tag');
    const tag = xml.slice(lt + 1, j);
    i = j + 1;
    if (c === 47 /* / */) {
      const top = stack.pop();
      if (!top || tag.slice(1).trim() !== top.el.qname) throw new Error(`mismatched end tag </${tag.slice(1).trim()}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const m = /^[^\s/>]+/.exec(body);
    if (!m) throw new Error('an element without a name');
    const qname = m[0];
    const parentNs = stack.length ? stack[stack.length - 1].ns : XML_NS;
    let ns = parentNs;
    const attrs = new Map<string, string>();
    if (body.length > qname.length) {
      ATTR.lastIndex = qname.length;
      for (let a = ATTR.exec(body); a; a = ATTR.exec(body)) {
        const name = a[1];
        const value = unescapeXml(a[3] ?? a[4] ?? '');
        if (name === 'xmlns' || name.startsWith('xmlns:')) {
          if (ns === parentNs) ns = new Map(parentNs);
          ns.set(name === 'xmlns' ? '' : name.slice(6), value);
        } else attrs.set(name, value);
      }
    }
    const colon = qname.indexOf(':');
    const parent = stack.length ? stack[stack.length - 1].el : null;
    if (!parent && root) throw new Error('a second root element');
    const el: El = {
      ns: ns.get(colon < 0 ? '' : qname.slice(0, colon)) ?? '',
      local: colon < 0 ? qname : qname.slice(colon + 1),
      qname,
      attrs,
      kids: [],
      own: '',
      parent,
      order: all.length,
    };
    all.push(el);
    if (parent) parent.kids.push(el);
    else root = el;
    if (!selfClosing) stack.push({ el, ns });
  }
  if (!root || stack.length) throw new Error(root ? 'unclosed elements' : 'no root element');
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
