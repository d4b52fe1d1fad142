import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, toClientError } from '../errors.js';

export interface JobContext {
  id: string;
  /** The job's own temp dir, removed when the job ends whatever happens. */
  dir: string;
  /** Aborted on timeout, on client disconnect (synchronous requests) and on shutdown. */
  signal: AbortSignal;
  /** Reports progress for /request-status: a fraction 0..1. */
  progress: (fraction: number) => void;
}

export type JobStatus = 'pending' | 'completed' | 'failed';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface JobRecord {
  id: string;
  owner: string | null;
  status: JobStatus;
  progress?: number;
  result?: Record<string, unknown>;
  error?: { status: number; error: string };
  finishedAt?: number;
}

interface Waiting {
  start: () => void;
  cancel: (reason: unknown) => void;
}

export interface JobsOptions {
  concurrency: number;
  queueMax: number;
  timeoutMs: number;
  workDir: string;
  /** How long finished job records stay pollable. */
  keepMs: number;
  /** Where pollable records are also written, so a restart forgets no request (a pending one reads as failed). */
  recordsDir?: string;
  onError?: (err: unknown, jobId: string) => void;
}

/**
 * The queue every operation runs through: at most `concurrency` running, at most `queueMax` waiting
 * (then 429), a time limit that aborts the job's signal (engines kill their process groups on it).
 */
export class Jobs {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  private readonly records = new Map<string, JobRecord>();
  private readonly controllers = new Set<AbortController>();
  private recentMs: number[] = [];
  private closed = false;
  private readonly writes = new Map<string, Promise<void>>();
  private lastSweep = Date.now();

  constructor(private readonly opts: JobsOptions) {}

  get stats() {
    return { running: this.running, waiting: this.waiting.length, concurrency: this.opts.concurrency, queueMax: this.opts.queueMax };
  }

  /** Removes temp dirs left by a previous process (crash, kill -9). */
  async sweepStaleDirs(): Promise<number> {
    await mkdir(this.opts.workDir, { recursive: true });
    const names = await readdir(this.opts.workDir);
    await Promise.all(names.map((n) => rm(join(this.opts.workDir, n), { recursive: true, force: true })));
    return names.length;
  }

  /**
   * Runs `work` in the queue. With `track`, a pollable record is kept and its id returned at once;
   * `clientSignal` (a synchronous request's connection) cancels the job when the client goes away.
   */
  submit<T extends Record<string, unknown>>(
    work: (ctx: JobContext) => Promise<T>,
    opts: { owner: string | null; track?: boolean; clientSignal?: AbortSignal },
  ): { id: string; done: Promise<T> } {
    if (this.closed) throw new AppError('shutting_down', 'The server is shutting down; try again shortly.');
    if (this.running >= this.opts.concurrency && this.waiting.length >= this.opts.queueMax) {
      throw new AppError('queue_full', 'Too many requests are queued; retry later.', { 'Retry-After': String(this.retryAfterSeconds()) });
    }
    const id = randomUUID();
    const record: JobRecord | undefined = opts.track ? { id, owner: opts.owner, status: 'pending' } : undefined;
    if (record) {
      this.records.set(id, record);
      this.persist(record);
    }

    const done = new Promise<T>((resolve, reject) => {
      const controller = new AbortController();
      const onClientAbort = () => controller.abort(new AppError('cancelled', 'The client closed the connection.'));
      opts.clientSignal?.addEventListener('abort', onClientAbort, { once: true });

      const start = async () => {
        this.running++;
        this.controllers.add(controller);
        const dir = join(this.opts.workDir, id);
        const started = Date.now();
        const timer = setTimeout(
          () => controller.abort(new AppError('timeout', `Processing took longer than the limit of ${Math.round(this.opts.timeoutMs / 1000)} s and was stopped.`)),
          this.opts.timeoutMs,
        );
        let outcome: { ok: true; value: T } | { ok: false; reason: unknown };
        try {
          await mkdir(dir, { recursive: true });
          const progress = (f: number) => {
            if (record) record.progress = Math.max(0, Math.min(1, Math.round(f * 1000) / 1000));
          };
          const value = await work({ id, dir, signal: controller.signal, progress });
          // An engine may swallow the abort; the limit still wins.
          if (controller.signal.aborted) throw controller.signal.reason;
          outcome = { ok: true, value };
        } catch (err) {
          const reason = controller.signal.aborted ? controller.signal.reason : err;
          if (!(reason instanceof AppError)) this.opts.onError?.(err, id);
          outcome = { ok: false, reason };
        } finally {
          clearTimeout(timer);
          opts.clientSignal?.removeEventListener('abort', onClientAbort);
          this.controllers.delete(controller);
          // Removed before anyone hears of the outcome: a finished job leaves nothing behind.
          await rm(dir, { recursive: true, force: true }).catch(() => undefined);
          this.remember(Date.now() - started);
          this.running--;
          this.next();
        }
        if (outcome.ok) {
          if (record) this.persist(Object.assign(record, { status: 'completed', progress: 1, result: outcome.value, finishedAt: Date.now() }));
          resolve(outcome.value);
        } else {
          if (record) {
            const mapped = toClientError(outcome.reason);
            this.persist(Object.assign(record, { status: 'failed', error: { status: mapped.status, error: mapped.body.error }, finishedAt: Date.now() }));
          }
          reject(outcome.reason);
        }
      };

      const entry: Waiting = {
        start: () => void start(),
        cancel: (reason) => {
          if (record) this.persist(Object.assign(record, { status: 'failed', error: { status: 499, error: 'Cancelled before it started.' }, finishedAt: Date.now() }));
          reject(reason);
        },
      };
      if (opts.clientSignal) {
        opts.clientSignal.addEventListener(
          'abort',
          () => {
            const i = this.waiting.indexOf(entry);
            if (i >= 0) {
              this.waiting.splice(i, 1);
              entry.cancel(new AppError('cancelled', 'The client closed the connection.'));
            }
          },
          { once: true },
        );
      }
      if (this.running < this.opts.concurrency) entry.start();
      else this.waiting.push(entry);
    });
    // Tracked jobs are awaited by nobody; keep their failure from becoming an unhandled rejection.
    if (record) done.catch(() => undefined);
    return { id, done };
  }

  /** A request's record: from memory, else (after a restart) from its file. */
  async get(id: string): Promise<JobRecord | undefined> {
    this.evict();
    const live = this.records.get(id);
    if (live || !this.opts.recordsDir || !UUID.test(id)) return live;
    const text = await readFile(this.recordPath(id), 'utf8').catch(() => null);
    if (!text) return undefined;
    let rec: JobRecord;
    try {
      rec = JSON.parse(text) as JobRecord;
    } catch {
      return undefined;
    }
    if (rec.status === 'pending') {
      // Not in memory, so an earlier process took it and stopped before it finished.
      this.persist(Object.assign(rec, { status: 'failed', error: { status: 503, error: 'The server restarted before this request finished; send it again.' }, finishedAt: Date.now() }));
    }
    if ((rec.finishedAt ?? 0) < Date.now() - this.opts.keepMs) {
      await rm(this.recordPath(id), { force: true });
      return undefined;
    }
    return rec;
  }

  /** Deletes record files older than the keep time (records of earlier processes nobody polled). */
  async sweepRecords(): Promise<number> {
    const dir = this.opts.recordsDir;
    if (!dir) return 0;
    await mkdir(dir, { recursive: true });
    const limit = Date.now() - this.opts.keepMs;
    let removed = 0;
    for (const name of await readdir(dir)) {
      const file = join(dir, name);
      const s = await stat(file).catch(() => null);
      if (s && s.mtimeMs < limit && !this.records.has(name.replace(/\.json$/, ''))) {
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  private recordPath(id: string): string {
    return join(this.opts.recordsDir!, `${id}.json`);
  }

  /** Writes a record's file (whole, atomically), in order per record. */
  private persist(record: JobRecord): void {
    if (!this.opts.recordsDir) return;
    const { id } = record;
    const body = JSON.stringify(record);
    const file = this.recordPath(id);
    const write = (this.writes.get(id) ?? Promise.resolve())
      .then(() => writeFile(`${file}.tmp`, body))
      .then(() => rename(`${file}.tmp`, file))
      .catch((err) => this.opts.onError?.(err, id));
    this.writes.set(id, write);
    void write.then(() => {
      if (this.writes.get(id) === write) this.writes.delete(id);
    });
  }

  /** Waits for record files being written (tests, shutdown). */
  async flushRecords(): Promise<void> {
    await Promise.all(this.writes.values());
  }

  private next(): void {
    while (this.running < this.opts.concurrency && this.waiting.length) this.waiting.shift()!.start();
  }

  private remember(ms: number): void {
    this.recentMs.push(ms);
    if (this.recentMs.length > 20) this.recentMs.shift();
  }

  private retryAfterSeconds(): number {
    const avg = this.recentMs.length ? this.recentMs.reduce((a, b) => a + b, 0) / this.recentMs.length : 1000;
    return Math.max(1, Math.ceil(((this.waiting.length + 1) * avg) / this.opts.concurrency / 1000));
  }

  private evict(): void {
    const limit = Date.now() - this.opts.keepMs;
    for (const [id, r] of this.records) {
      if (!r.finishedAt || r.finishedAt >= limit) continue;
      this.records.delete(id);
      if (this.opts.recordsDir) void rm(this.recordPath(id), { force: true }).catch(() => undefined);
    }
    if (Date.now() - this.lastSweep > 3600_000) {
      this.lastSweep = Date.now();
      void this.sweepRecords().catch(() => undefined);
    }
  }

  /** Stops taking work, cancels what waits, and waits (up to `graceMs`) for running jobs before aborting them. */
  async drain(graceMs: number): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.cancel(new AppError('shutting_down', 'The server is shutting down.'));
    const deadline = Date.now() + graceMs;
    while (this.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of this.controllers) c.abort(new AppError('shutting_down', 'The server is shutting down.'));
    while (this.running > 0) await new Promise((r) => setTimeout(r, 20));
    await this.flushRecords();
  }
}
