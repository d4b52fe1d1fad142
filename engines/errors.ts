/** A native tool failed. Carries what the log needs; app/errors decides what the client sees. */
export class EngineError extends Error {
  constructor(
    readonly tool: string,
    message: string,
    readonly details: {
      exitCode?: number;
      stderr?: string;
      timedOut?: boolean;
      aborted?: boolean;
      missing?: boolean;
      /** The engine's instance died or lost its pipe during the job: the input is to blame only if it happens again on a fresh one. */
      crashed?: boolean;
      /** Installed, but it could not be started: the engine is down (503 naming it), not the input. */
      unavailable?: boolean;
      /** The input hit a limit the caller set (time, pages, bytes, memory): the caller names its setting (422). */
      limit?: 'time' | 'pages' | 'bytes' | 'memory';
      /** Cut by its per-page budget (RunOptions.pageBudget) while on this page (0: before its first page). */
      stalledPage?: number;
    } = {},
  ) {
    super(`${tool}: ${message}`);
    this.name = 'EngineError';
  }
}

/**
 * Runs a job on a pooled engine (LibreOffice, Chromium) once more when its instance died under it or could not
 * start: that says nothing about the input yet. A failure that repeats on the fresh instance, or any other, stands.
 */
export async function onceMoreOnFreshInstance<T>(attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await attempt();
  } catch (err) {
    if (!(err instanceof EngineError) || !(err.details.crashed || err.details.unavailable) || signal?.aborted) throw err;
    return await attempt();
  }
}
