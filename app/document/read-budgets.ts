import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Time one engine may spend on one page (RENDER_PAGE_SECONDS, TEXT_PAGE_SECONDS, OCR_PAGE_SECONDS, WRITE_PAGE_SECONDS), set once per
 * job (app/http runs each job inside withReadBudgets), so that every read path of every operation cuts a looping
 * page after seconds and hands it to the next engine, without each operation passing the settings down.
 */
export interface ReadBudgets {
  renderPageMs: number;
  textPageMs: number;
  ocrPageMs: number;
  /** A page Ghostscript rewrites (pdfwrite: PDF/A, PDF/X, compression, colour conversion, repair). */
  writePageMs: number;
}

/** The settings' defaults, for code run outside a job (tests calling a domain function directly). */
export const DEFAULT_READ_BUDGETS: ReadBudgets = { renderPageMs: 5_000, textPageMs: 5_000, ocrPageMs: 180_000, writePageMs: 30_000 };

const current = new AsyncLocalStorage<ReadBudgets>();

export const withReadBudgets = <T>(budgets: ReadBudgets, fn: () => Promise<T>): Promise<T> => current.run(budgets, fn);

export const readBudgets = (): ReadBudgets => current.getStore() ?? DEFAULT_READ_BUDGETS;

/** Settings name budgets in seconds. */
export const budgetSetting = (kind: keyof ReadBudgets): string =>
  ({ renderPageMs: 'RENDER_PAGE_SECONDS', textPageMs: 'TEXT_PAGE_SECONDS', ocrPageMs: 'OCR_PAGE_SECONDS', writePageMs: 'WRITE_PAGE_SECONDS' })[kind];
