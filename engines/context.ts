/** What every engine call needs from its job: where to work, when to stop. */
export interface EngineContext {
  cwd: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}
