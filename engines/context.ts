/** What every engine call needs from its job: where to work, when to stop. */
export interface EngineContext {
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Time one page may take, for engines that report where each page starts (the rest of the document goes on). */
  pageMs?: number;
}

/** The smaller of a page's budget and the time the job has left: a one-page process is cut at its page budget. */
export const pageTimeout = (ctx: EngineContext) => Math.min(ctx.pageMs ?? Infinity, ctx.timeoutMs ?? Infinity) || undefined;
