import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { type PageGeometry, pageGeometry } from '../../engines/mupdf-stext.js';
import { popplerPageCount } from '../../engines/poppler.js';
import { popplerGeometry } from '../../engines/poppler-boxes.js';
import { PasswordError, pageCount, ReadLimitError } from '../../engines/qpdf.js';
import { AppError, invalidInput, limitExceeded } from '../errors.js';
import { budgetSetting, type ReadBudgets, readBudgets } from './read-budgets.js';

/**
 * Read paths as chains of engines: each read (page count, page boxes, pixels, text) names the engines that can
 * do it, in order, and moves to the next when one fails, is cut at its page budget, or returns nothing. One
 * engine's bug on one file is then not a refusal. A password, a limit of ours, a cancelled job and a missing
 * engine are not failures of the file: they end the chain at once.
 */

/** A failure the next engine of a chain may not share: the engine could not read (or not in time). */
export const isReadFailure = (err: unknown): err is EngineError =>
  err instanceof EngineError &&
  !(err instanceof PasswordError) &&
  !(err instanceof ReadLimitError) &&
  !err.details.aborted &&
  !err.details.missing &&
  !err.details.limit;

/** Tries `attempts` in order; the first answer wins. When all fail, chainFailure says why. */
export async function firstThatReads<T>(what: string, attempts: (() => Promise<T>)[], budget?: keyof ReadBudgets): Promise<T> {
  const failures: EngineError[] = [];
  for (const attempt of attempts) {
    try {
      return await attempt();
    } catch (err) {
      if (!isReadFailure(err)) throw err;
      failures.push(err);
    }
  }
  throw chainFailure(what, failures, budget);
}

/**
 * The error when every engine failed: a 422 naming the page budget when each of them was cut by it, else the
 * file's fault (400), carrying the engines' errors as its cause (whyUnreadable reads them).
 */
export function chainFailure(what: string, failures: EngineError[], budget?: keyof ReadBudgets): AppError {
  if (budget && failures.length && failures.every((f) => f.details.timedOut)) {
    return limitExceeded(`${what} (tried by ${engineNames(failures).join(', ')})`, budgetSetting(budget), readBudgets()[budget] / 1000);
  }
  const err = invalidInput();
  err.cause = failures;
  return err;
}

/** The engines behind `failures`, by the names users know them by (gs is Ghostscript). */
export const engineNames = (failures: EngineError[]) => [...new Set(failures.map((f) => TOOL_NAMES[f.tool] ?? f.tool))];

const TOOL_NAMES: Record<string, string> = {
  mutool: 'MuPDF',
  pdftoppm: 'Poppler',
  pdftocairo: 'Poppler',
  pdftotext: 'Poppler',
  pdfinfo: 'Poppler',
  gs: 'Ghostscript',
  qpdf: 'qpdf',
};

/**
 * The pages of the real page tree: qpdf walks it (never the /Count a file claims); when qpdf cannot, Poppler's
 * count. A password needed is qpdf's PasswordError (401 upstream).
 */
export async function countPages(path: string, ctx: EngineContext): Promise<number> {
  return firstThatReads('Counting the pages', [
    async () => {
      const n = await pageCount(path, ctx);
      if (n < 1) throw new EngineError('qpdf', 'found no pages in the page tree');
      return n;
    },
    async () => {
      const n = await popplerPageCount(path, ctx);
      if (n < 1) throw new EngineError('pdfinfo', 'found no pages');
      return n;
    },
  ]);
}

/** The most pages the first engine of a page chain may fail on in one read; the pages left then go to the next. */
const FIRST_ENGINE_FAILURES = 3;

/**
 * Page by page with a fallback: `first` reads the items (pages, or positions of pages) in one process and says
 * which it finished and why it stopped; the item it stopped on goes to `next`, and `first` goes on with the items
 * after it. Once `first` has failed FIRST_ENGINE_FAILURES times, every item left goes to `next`.
 */
export async function pagesWithFallback(
  items: number[],
  first: (pending: number[]) => Promise<{ done: Set<number>; failure?: EngineError }>,
  next: (item: number, failure?: EngineError) => Promise<void>,
): Promise<void> {
  let pending = items;
  let failures = 0;
  while (pending.length) {
    const { done, failure } = failures < FIRST_ENGINE_FAILURES ? await first(pending) : { done: new Set<number>(), failure: undefined };
    if (failure) failures++;
    const rest = pending.filter((n) => !done.has(n));
    const stuck = failures >= FIRST_ENGINE_FAILURES ? rest : rest.slice(0, 1);
    for (const n of stuck) await next(n, failure);
    pending = rest.slice(stuck.length);
  }
}

/**
 * A whole-document run of an engine that marks where each page begins (Ghostscript's pdfwrite): each page gets
 * `budget`, and a page past it ends the job with a 422 naming the page and the setting, since no other engine
 * writes what this one does.
 */
export async function withinPageBudget<T>(what: string, budget: keyof ReadBudgets, ctx: EngineContext, fn: (ctx: EngineContext) => Promise<T>): Promise<T> {
  try {
    return await fn({ ...ctx, pageMs: readBudgets()[budget] });
  } catch (err) {
    if (!(err instanceof EngineError) || err.details.stalledPage === undefined) throw err;
    throw chainFailure(`${what} ${err.details.stalledPage ? `page ${err.details.stalledPage}` : 'the document'}`, [err], budget);
  }
}

/** Each page's boxes and rotation: MuPDF, then Poppler. */
export async function pageGeometries(path: string, pages: number[], count: number, ctx: EngineContext): Promise<PageGeometry[]> {
  return firstThatReads('Reading the page boxes', [
    async () => {
      const g = await pageGeometry(path, pages, ctx);
      if (g.length !== pages.length) throw new EngineError('mutool', `read ${g.length} of ${pages.length} pages`);
      return g;
    },
    async () => {
      const all = await popplerGeometry(path, count, ctx);
      const byPage = new Map(all.map((g) => [g.page, g]));
      if (pages.some((p) => !byPage.has(p))) throw new EngineError('pdfinfo', 'listed fewer pages than asked');
      return pages.map((p) => byPage.get(p)!);
    },
  ]);
}

/**
 * For reads that only enrich a result (line art, links, pictures): on a failure of the file (or its time), the
 * result goes without them rather than being refused; a cancelled job or a limit of ours still ends it.
 */
export const unlessUnreadable =
  <T>(fallback: T) =>
  (err: unknown): T => {
    if (isReadFailure(err) || readFailuresOf(err)) return fallback;
    throw err;
  };

/** The engines' failures behind an error that means "this input cannot be read" (inputError's 400), or null. */
export function readFailuresOf(err: unknown): EngineError[] | null {
  if (isReadFailure(err) && !err.details.timedOut) return [err];
  if (
    err instanceof AppError &&
    err.code === 'invalid_input' &&
    Array.isArray(err.cause) &&
    err.cause.length &&
    err.cause.every((c) => c instanceof EngineError)
  )
    return err.cause as EngineError[];
  return null;
}

/** The time a whole-document read of `pages` may take: the page budget for each, within what the job has left. */
export const pagesTime = (ctx: EngineContext, pages: number, budget: keyof ReadBudgets = 'textPageMs'): EngineContext => ({
  ...ctx,
  timeoutMs: Math.min(ctx.timeoutMs ?? Infinity, readBudgets()[budget] * Math.max(1, pages)),
});
