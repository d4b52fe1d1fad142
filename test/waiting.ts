// Waiting in tests without importing app/ (the cluster suites observe processes only from outside).

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it holds and returns how long that took: a state reached in the background is awaited, not guessed with a fixed sleep. */
export async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
  return Date.now() - t0;
}
