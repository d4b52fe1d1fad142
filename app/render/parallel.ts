/**
 * Runs one worker per item (a run of pages, a queue consumer), each with a signal that aborts when any of them
 * fails: the others would only burn CPU for a request that already failed. Rejects with the first failure, or
 * with the caller's abort reason.
 */
export async function inParallel<T>(items: T[], worker: (item: T, k: number, signal: AbortSignal) => Promise<void>, signal: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const both = AbortSignal.any([signal, stop.signal]);
  let first: unknown = null;
  await Promise.allSettled(
    items.map((item, k) =>
      worker(item, k, both).catch((err) => {
        first ??= err;
        stop.abort();
      }),
    ),
  );
  signal.throwIfAborted();
  if (first) throw first;
}
