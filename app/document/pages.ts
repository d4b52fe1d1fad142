import { AppError } from '../errors.js';

/**
 * The one page-selection grammar (spec 4.1 rule 5): a comma list of `N`, `N-M`, `last`, `N-last`;
 * with `reverse`, also `M-N` (M > N) and `last-N`, read from high to low; with `parity`, `even` and `odd`.
 */
export interface PageGrammar {
  reverse?: boolean;
  parity?: boolean;
}

type Bound = number | 'last';
type Part = { kind: 'range'; from: Bound; to: Bound } | { kind: 'parity'; even: boolean };

const shown = (spec: string) => (spec.length > 200 ? `${spec.slice(0, 200)}...` : spec);
const bad = (spec: string, parameter: string, why = '') =>
  new AppError('out_of_range', `${shown(spec)} is not within the acceptable range for ${parameter}${why}`);

/**
 * The most pages one selection may list, repeats included, when the document has fewer: a list is never built
 * beyond max(pages of the document, this), whatever the selection repeats ("1-last,1-last,...").
 */
export const MAX_LISTED_PAGES = 100_000;

function bound(s: string): Bound | null {
  if (s === 'last') return 'last';
  if (!/^\d{1,9}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 ? n : null;
}

/** Syntax check without the document: throws a 400 naming the parameter. */
export function parsePages(spec: string, grammar: PageGrammar = {}, parameter = 'pages'): Part[] {
  const text = spec.trim().toLowerCase();
  if (!text) throw bad(spec, parameter);
  const parts: Part[] = [];
  for (const raw of text.split(',')) {
    const token = raw.trim();
    if (token === 'even' || token === 'odd') {
      if (!grammar.parity) throw bad(spec, parameter);
      parts.push({ kind: 'parity', even: token === 'even' });
      continue;
    }
    const m = /^([^-\s]+)\s*(?:-\s*([^-\s]+))?$/.exec(token);
    if (!m) throw bad(spec, parameter);
    const from = bound(m[1]);
    const to = m[2] === undefined ? from : bound(m[2]);
    if (from === null || to === null) throw bad(spec, parameter);
    const reversed = (from === 'last' && to !== 'last') || (typeof from === 'number' && typeof to === 'number' && from > to);
    if (reversed && !grammar.reverse) throw bad(spec, parameter);
    parts.push({ kind: 'range', from, to });
  }
  return parts;
}

/** A part's first and last page against the document (1-based, either order); pages beyond it are a 400. */
function span(part: Extract<Part, { kind: 'range' }>, pageCount: number, spec: string, parameter: string): [number, number] {
  const from = part.from === 'last' ? pageCount : part.from;
  const to = part.to === 'last' ? pageCount : part.to;
  if (from > pageCount || to > pageCount) throw bad(spec, parameter);
  return [from, to];
}

/**
 * Resolves a selection against a page count (of the real page tree: see qpdf's pageCount): 1-based page numbers
 * in the order asked for, repeats kept. The length is counted before anything is listed.
 */
export function resolvePages(spec: string, pageCount: number, grammar: PageGrammar = {}, parameter = 'pages'): number[] {
  const parts = parsePages(spec, grammar, parameter);
  let total = 0;
  for (const part of parts) {
    if (part.kind === 'parity') total += part.even ? Math.floor(pageCount / 2) : Math.ceil(pageCount / 2);
    else {
      const [from, to] = span(part, pageCount, spec, parameter);
      total += Math.abs(to - from) + 1;
    }
  }
  const most = Math.max(pageCount, MAX_LISTED_PAGES);
  if (total > most) throw bad(spec, parameter, `: it lists ${total} pages, more than the ${most} one selection may list`);
  const pages: number[] = [];
  for (const part of parts) {
    if (part.kind === 'parity') {
      for (let p = part.even ? 2 : 1; p <= pageCount; p += 2) pages.push(p);
      continue;
    }
    const [from, to] = span(part, pageCount, spec, parameter);
    const step = from <= to ? 1 : -1;
    for (let p = from; p !== to + step; p += step) pages.push(p);
  }
  if (!pages.length) throw bad(spec, parameter);
  return pages;
}

/**
 * The pages a selection touches, each once and ascending: never longer than the document, however often the
 * selection repeats a range (ranges are merged before any page is listed).
 */
export function selectedPages(spec: string, pageCount: number, grammar: PageGrammar = {}, parameter = 'pages'): number[] {
  let even = false;
  let odd = false;
  const spans: [number, number][] = [];
  for (const part of parsePages(spec, grammar, parameter)) {
    if (part.kind === 'parity') {
      if (part.even) even = true;
      else odd = true;
      continue;
    }
    const [from, to] = span(part, pageCount, spec, parameter);
    spans.push([Math.min(from, to), Math.max(from, to)]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const pages: number[] = [];
  if (even || odd) {
    let k = 0;
    for (let p = 1; p <= pageCount; p++) {
      while (k < merged.length && merged[k][1] < p) k++;
      if ((p % 2 === 0 ? even : odd) || (k < merged.length && merged[k][0] <= p)) pages.push(p);
    }
  } else {
    for (const [a, b] of merged) for (let p = a; p <= b; p++) pages.push(p);
  }
  if (!pages.length) throw bad(spec, parameter);
  return pages;
}
