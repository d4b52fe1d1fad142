/**
 * Wraps an async write so that calls made while one runs are served by a single follow-up run.
 * Every caller's promise settles after a run that started after its call, so its change is on disk.
 */
export function coalesce(write: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const request = (): Promise<void> => {
    if (!running) {
      running = write().finally(() => {
        running = null;
      });
      return running;
    }
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return request();
      });
    return queued;
  };
  return request;
}
