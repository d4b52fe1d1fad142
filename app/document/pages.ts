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

const bad = (spec: string, parameter: string) =>
  new AppError('out_of_range', `${spec} is not within the acceptable range for ${parameter}`);

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

/** Resolves a selection against a page count: 1-based page numbers in the order asked for. */
export function resolvePages(spec: string, pageCount: number, grammar: PageGrammar = {}, parameter = 'pages'): number[] {
  const pages: number[] = [];
  for (const part of parsePages(spec, grammar, parameter)) {
    if (part.kind === 'parity') {
      for (let p = part.even ? 2 : 1; p <= pageCount; p += 2) pages.push(p);
      continue;
    }
    const from = part.from === 'last' ? pageCount : part.from;
    const to = part.to === 'last' ? pageCount : part.to;
    if (from > pageCount || to > pageCount) throw bad(spec, parameter);
    const step = from <= to ? 1 : -1;
    for (let p = from; p !== to + step; p += step) pages.push(p);
  }
  if (!pages.length) throw bad(spec, parameter);
  return pages;
}
