import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withPriority } from '../../engines/run.js';
import { AppError, toClientError } from '../errors.js';

/** Niceness of the engine processes of heavy lanes: light requests' engines get the CPU first. */
const HEAVY_NICENESS = 10;

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

/** A job past its time budget: 422 naming the setting an operator can raise. */
export function overTime(timeoutMs: number): AppError {
  const seconds = Math.round(timeoutMs / 1000);
  return new AppError('timeout', `Processing took longer than the limit of ${seconds} s (MAX_PROCESS_SECONDS=${seconds}) and was stopped.`);
}

/** A record marked failed with `reason` as the client would see it. */
function failed(record: JobRecord, reason: unknown): JobRecord {
  const mapped = toClientError(reason);
  return Object.assign(record, { status: 'failed' as const, error: { status: mapped.status, error: mapped.body.error }, finishedAt: Date.now() });
}

/**
 * What a job costs, declared by its operation. `light`: a short qpdf or metadata call, in its own lane so it
 * never waits behind heavy work. `cpu`: CPU-bound engine processes (a render or OCR that starts one per core
 * counts that many against the core budget). `office` / `browser`: a job on the warm LibreOffice or Chromium
 * pool, which keeps its own limit. `flow`: a pipeline, which only waits for the jobs of its steps (each in its own
 * lane): it spends nothing, so it never holds a slot those jobs need.
 */
export type Cost = { lane: 'light' } | { lane: 'cpu'; processes: number } | { lane: 'office' } | { lane: 'browser' } | { lane: 'flow' };
export type Lane = Cost['lane'];
const LANES: Lane[] = ['light', 'cpu', 'office', 'browser', 'flow'];
/** Pipelines running at once in one process; beyond it they wait (they hold no engine, only memory). */
export const FLOW_CONCURRENCY = 64;

interface Waiting {
  client: string;
  weight: number;
  start: () => void;
  cancel: (reason: unknown) => void;
}

/**
 * One lane's waiting jobs: a FIFO per client, served round-robin (the client whose last start is oldest goes
 * first), so one client's backlog starves nobody.
 */
class FairQueue {
  private readonly byClient = new Map<string, Waiting[]>();
  /** When each client last had a job started in this lane (a counter, not a clock). */
  private readonly lastStart = new Map<string, number>();
  private starts = 0;
  size = 0;

  push(w: Waiting): void {
    const q = this.byClient.get(w.client);
    if (q) q.push(w);
    else this.byClient.set(w.client, [w]);
    this.size++;
  }

  /** The job whose turn it is: the head of the client served longest ago. */
  peek(): Waiting | undefined {
    let best: Waiting[] | undefined;
    let bestAt = Infinity;
    for (const [client, q] of this.byClient) {
      const at = this.lastStart.get(client) ?? -1;
      if (at < bestAt) [best, bestAt] = [q, at];
    }
    return best?.[0];
  }

  shift(): Waiting | undefined {
    const w = this.peek();
    if (w) this.remove(w);
    return w;
  }

  /** Records a start (also of jobs that never waited), which sends the client to the back of the rotation. */
  started(client: string): void {
    this.lastStart.set(client, ++this.starts);
    // Bounded memory: clients with nothing waiting are forgotten (they come back at the front of the rotation).
    if (this.lastStart.size > 10_000) for (const c of this.lastStart.keys()) if (!this.byClient.has(c)) this.lastStart.delete(c);
  }

  remove(w: Waiting): boolean {
    const q = this.byClient.get(w.client);
    const i = q?.indexOf(w) ?? -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    if (!q.length) this.byClient.delete(w.client);
    this.size--;
    return true;
  }

  countOf(client: string): number {
    return this.byClient.get(client)?.length ?? 0;
  }

  drain(): Waiting[] {
    const all = [...this.byClient.values()].flat();
    this.byClient.clear();
    this.size = 0;
    return all;
  }
}

export interface SubmitOptions {
  owner: string | null;
  /** Keep a pollable record and answer its id at once. */
  track?: boolean;
  /** A synchronous request's connection: the job is cancelled when the client goes away. */
  clientSignal?: AbortSignal;
  cost?: Cost;
  /** The unit of fairness: API key, else address. */
  client?: string;
  /** The request as data, for implementations that run it in another process (the embedded one runs `work`). */
  spec?: unknown;
  /** What the job is for observers (the operation's path): bounded, never a raw URL. */
  label?: string;
  /** Carried with a tracked job to whoever observes its end (a webhook); JSON data, opaque to the queue. */
  notify?: unknown;
}

/** One job that ran in this process: its lane, label, time waiting and running, and outcome (metrics). */
export interface JobRun {
  lane: Lane;
  label: string;
  waitMs: number;
  runMs: number;
  ok: boolean;
}

/**
 * Observers of the jobs of this process: `ran` for every job that ran here, `settled` for a tracked job with
 * `notify` once its record is final (completed or failed), in the process that ran it.
 */
export interface JobObserver {
  ran?: (run: JobRun) => void;
  settled?: (record: JobRecord, notify: unknown) => void;
}

/** Observers are told, never trusted: one that throws must not break the scheduler. */
export function tellObservers(observers: JobObserver[], fn: (o: JobObserver) => void, onError?: (err: unknown, id: string) => void): void {
  for (const o of observers) {
    try {
      fn(o);
    } catch (err) {
      onError?.(err, 'observer');
    }
  }
}

/** One attempt at a follow-up of a settled job (a webhook): done, or failed, retryable or not. */
export type FollowUpResult = { ok: true } | { ok: false; retry: boolean; why: string; retryInMs?: number };

/**
 * What to do, and how persistently, with every settled job that carries `notify`: `attempt` up to `tries` times,
 * waiting `waitMs(n, asked)` after the n-th failed attempt (`asked`: the wait the other side asked for).
 */
export interface FollowUp {
  attempt: (record: JobRecord, notify: unknown, n: number) => Promise<FollowUpResult>;
  tries: number;
  waitMs: (n: number, asked?: number) => number;
  /** Told once per follow-up: done, or given up. */
  outcome?: (ok: boolean, record: JobRecord, why?: string) => void;
}

/**
 * Runs a follow-up in this process: attempts and waits on timers (unref'd: a stopping process does not wait for
 * them, and forgets them).
 */
export async function followUpInProcess(f: FollowUp, record: JobRecord, notify: unknown): Promise<void> {
  for (let n = 1; ; n++) {
    const r = await f.attempt(record, notify, n);
    if (r.ok) return f.outcome?.(true, record);
    if (!r.retry || n >= f.tries) return f.outcome?.(false, record, r.why);
    await new Promise((resolve) => setTimeout(resolve, f.waitMs(n, r.retryInMs)).unref());
  }
}

/** Jobs waiting and running per lane (in cluster mode: across the cluster). */
export type LaneCounts = Record<Lane, { waiting: number; running: number }>;

/**
 * The jobs layer, chosen at start: `Jobs` runs everything in this process (the default); `ClusterJobs`
 * (REDIS_URL) queues the spec on Redis for any worker replica.
 */
export interface JobQueue {
  submit<T extends Record<string, unknown>>(
    work: (ctx: JobContext) => Promise<T>,
    opts: SubmitOptions,
  ): { id: string; done: Promise<T> } | Promise<{ id: string; done: Promise<T> }>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Queue state for /ready. */
  snapshot(): Promise<Record<string, unknown>>;
  laneCounts(): Promise<LaneCounts>;
  observe(observer: JobObserver): void;
  /** Follows up every settled job with `notify` (webhooks), as durably as the implementation can. */
  followUp(f: FollowUp): void;
  /** Stops taking work and waits (up to `graceMs`) for running jobs. */
  drain(graceMs: number): Promise<void>;
}

export interface JobsOptions {
  /** Upper bound of cpu, office and browser jobs running at once (CONCURRENCY). */
  concurrency: number;
  /** Cores cpu jobs may keep busy together. */
  cpuBudget: number;
  lightConcurrency: number;
  officeInstances: number;
  browserPages: number;
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
 * The scheduler every operation runs through. Each lane has its own limit (light jobs, a budget of cores for
 * cpu jobs, the pools' sizes) and a fair queue; `concurrency` bounds the heavy lanes together; at most
 * `queueMax` jobs wait (then 429, except for a client with nothing waiting, so one client's backlog does not
 * lock others out); a time limit aborts the job's signal (engines kill their process groups on it). Engine
 * processes of heavy lanes run at a lower CPU priority, so light requests stay fast on a busy machine.
 */
export class Jobs implements JobQueue {
  private readonly queues = Object.fromEntries(LANES.map((l) => [l, new FairQueue()])) as Record<Lane, FairQueue>;
  private readonly runningIn: Record<Lane, number> = { light: 0, cpu: 0, office: 0, browser: 0, flow: 0 };
  /** Cores spent by running cpu jobs. */
  private cpuUsed = 0;
  private readonly records = new Map<string, JobRecord>();
  private readonly controllers = new Set<AbortController>();
  private recentMs: number[] = [];
  private closed = false;
  private readonly writes = new Map<string, Promise<void>>();
  private lastSweep = Date.now();
  private readonly observers: JobObserver[] = [];

  constructor(private readonly opts: JobsOptions) {}

  observe(observer: JobObserver): void {
    this.observers.push(observer);
  }

  /** In this process: a restart forgets follow-ups waiting for a retry (as it forgets the jobs themselves). */
  followUp(f: FollowUp): void {
    this.observe({ settled: (record, notify) => void followUpInProcess(f, record, notify).catch((err) => this.opts.onError?.(err, record.id)) });
  }

  async laneCounts(): Promise<LaneCounts> {
    return Object.fromEntries(LANES.map((l) => [l, { running: this.runningIn[l], waiting: this.queues[l].size }])) as LaneCounts;
  }

  private tell(fn: (o: JobObserver) => void): void {
    tellObservers(this.observers, fn, this.opts.onError);
  }

  private get running(): number {
    return LANES.reduce((n, l) => n + this.runningIn[l], 0);
  }

  private get waitingCount(): number {
    return LANES.reduce((n, l) => n + this.queues[l].size, 0);
  }

  get stats() {
    const lanes = Object.fromEntries(LANES.map((l) => [l, { running: this.runningIn[l], waiting: this.queues[l].size }]));
    return {
      running: this.running,
      waiting: this.waitingCount,
      concurrency: this.opts.concurrency,
      cpuBudget: this.opts.cpuBudget,
      cpuUsed: this.cpuUsed,
      queueMax: this.opts.queueMax,
      lanes,
    };
  }

  async snapshot(): Promise<Record<string, unknown>> {
    return this.stats;
  }

  /** Removes temp dirs left by a previous process (crash, kill -9). */
  async sweepStaleDirs(): Promise<number> {
    await mkdir(this.opts.workDir, { recursive: true });
    const names = await readdir(this.opts.workDir);
    await Promise.all(names.map((n) => rm(join(this.opts.workDir, n), { recursive: true, force: true })));
    return names.length;
  }

  /**
   * Runs `work` in the queue. With `track`, a pollable record is kept and its id returned once the record is
   * written; `clientSignal` (a synchronous request's connection) cancels the job when the client goes away.
   * `client` (API key, else address) is the unit of fairness.
   */
  submit<T extends Record<string, unknown>>(work: (ctx: JobContext) => Promise<T>, opts: SubmitOptions & { track?: false }): { id: string; done: Promise<T> };
  submit<T extends Record<string, unknown>>(
    work: (ctx: JobContext) => Promise<T>,
    opts: SubmitOptions,
  ): { id: string; done: Promise<T> } | Promise<{ id: string; done: Promise<T> }>;
  submit<T extends Record<string, unknown>>(work: (ctx: JobContext) => Promise<T>, opts: SubmitOptions) {
    return opts.track && this.opts.recordsDir ? this.enqueueRecorded(work, opts) : this.enqueue(work, opts);
  }

  /**
   * A tracked job whose id is handed out only once its pending record is on disk, so a restart knows every id a
   * client holds. A disk that refuses the record (full, read-only) refuses the request (507) before its job runs.
   */
  private async enqueueRecorded<T extends Record<string, unknown>>(work: (ctx: JobContext) => Promise<T>, opts: SubmitOptions) {
    this.admit(opts);
    const record: JobRecord = { id: randomUUID(), owner: opts.owner, status: 'pending' };
    const file = this.recordPath(record.id);
    try {
      await this.write(record);
      return this.enqueue(work, opts, record);
    } catch (err) {
      // Not written, or refused after all (the stop began or the queue filled meanwhile): nobody has its id.
      await Promise.all([rm(file, { force: true }), rm(`${file}.tmp`, { force: true })]).catch(() => undefined);
      throw err;
    }
  }

  /** Refuses a job when stopping (503) or when too many wait (429); else the lane it queues in. */
  private admit(opts: SubmitOptions): { cost: Cost; client: string; queue: FairQueue } {
    if (this.closed) throw new AppError('shutting_down', 'The server is shutting down; try again shortly.');
    const cost = opts.cost ?? { lane: 'cpu', processes: 1 };
    const client = opts.client ?? opts.owner ?? 'anonymous';
    const queue = this.queues[cost.lane];
    const waiting = this.waitingCount;
    const mustWait = queue.size > 0 || !this.canStart(cost.lane, this.weightOf(cost));
    const clientWaiting = LANES.some((l) => this.queues[l].countOf(client) > 0);
    // A client with nothing waiting may still queue up to twice the limit: another's backlog cannot lock it out.
    if (mustWait && waiting >= this.opts.queueMax && (clientWaiting || waiting >= 2 * this.opts.queueMax)) {
      throw new AppError('queue_full', 'Too many requests are queued; retry later.', { 'Retry-After': String(this.retryAfterSeconds()) });
    }
    return { cost, client, queue };
  }

  /** Queues `work` (with `recorded`: the tracked job whose record is written). */
  private enqueue<T extends Record<string, unknown>>(
    work: (ctx: JobContext) => Promise<T>,
    opts: SubmitOptions,
    recorded?: JobRecord,
  ): { id: string; done: Promise<T> } {
    const { cost, client, queue } = this.admit(opts);
    const id = recorded?.id ?? randomUUID();
    const record: JobRecord | undefined = recorded ?? (opts.track ? { id, owner: opts.owner, status: 'pending' } : undefined);
    if (record) this.records.set(id, record);

    const queuedAt = Date.now();
    const settled = (rec: JobRecord) => {
      if (opts.notify !== undefined) this.tell((o) => o.settled?.(rec, opts.notify));
    };
    const done = new Promise<T>((resolve, reject) => {
      const controller = new AbortController();
      const onClientAbort = () => controller.abort(new AppError('cancelled', 'The client closed the connection.'));
      opts.clientSignal?.addEventListener('abort', onClientAbort, { once: true });

      const weight = this.weightOf(cost);
      const start = async () => {
        opts.clientSignal?.removeEventListener('abort', onQueuedAbort);
        queue.started(client);
        this.runningIn[cost.lane]++;
        this.cpuUsed += cost.lane === 'cpu' ? weight : 0;
        this.controllers.add(controller);
        const dir = join(this.opts.workDir, id);
        const started = Date.now();
        const timer = setTimeout(() => controller.abort(overTime(this.opts.timeoutMs)), this.opts.timeoutMs);
        let outcome: { ok: true; value: T } | { ok: false; reason: unknown };
        try {
          await mkdir(dir, { recursive: true });
          const progress = (f: number) => {
            if (record) record.progress = Math.max(0, Math.min(1, Math.round(f * 1000) / 1000));
          };
          const job = () => work({ id, dir, signal: controller.signal, progress });
          const value = await (cost.lane === 'light' || cost.lane === 'flow' ? job() : withPriority(HEAVY_NICENESS, job));
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
          // Retried: a write still landing (a killed engine's last file, a stream's late open) makes rmdir fail ENOTEMPTY once.
          await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
          this.remember(Date.now() - started);
          this.runningIn[cost.lane]--;
          this.cpuUsed -= cost.lane === 'cpu' ? weight : 0;
          this.next();
        }
        const ran = { lane: cost.lane, label: opts.label ?? 'job', waitMs: started - queuedAt, runMs: Date.now() - started, ok: outcome.ok };
        this.tell((o) => o.ran?.(ran));
        if (outcome.ok) {
          if (record) settled(this.persist(Object.assign(record, { status: 'completed', progress: 1, result: outcome.value, finishedAt: Date.now() })));
          resolve(outcome.value);
        } else {
          if (record) settled(this.persist(failed(record, outcome.reason)));
          reject(outcome.reason);
        }
      };

      const entry: Waiting = {
        client,
        weight,
        start: () => void start(),
        cancel: (reason) => {
          opts.clientSignal?.removeEventListener('abort', onQueuedAbort);
          opts.clientSignal?.removeEventListener('abort', onClientAbort);
          // As the reason says: a stop is 503 "The server is shutting down.", a client's own cancel 499.
          if (record) settled(this.persist(failed(record, reason)));
          reject(reason);
        },
      };
      // Cancels the job while it waits; removed when it starts (or is cancelled), like onClientAbort when it ends.
      const onQueuedAbort = () => {
        if (queue.remove(entry)) entry.cancel(new AppError('cancelled', 'The client closed the connection.'));
      };
      opts.clientSignal?.addEventListener('abort', onQueuedAbort, { once: true });
      // Behind others of its lane it waits its turn, even when it would fit.
      if (!queue.size && this.canStart(cost.lane, weight)) entry.start();
      else {
        queue.push(entry);
        this.next();
      }
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
      this.persist(
        Object.assign(rec, {
          status: 'failed',
          error: { status: 503, error: 'The server restarted before this request finished; send it again.' },
          finishedAt: Date.now(),
        }),
      );
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
  private write(record: JobRecord): Promise<void> {
    const { id } = record;
    const body = JSON.stringify(record);
    const file = this.recordPath(id);
    const write = (this.writes.get(id) ?? Promise.resolve()).then(async () => {
      await writeFile(`${file}.tmp`, body);
      await rename(`${file}.tmp`, file);
    });
    const settled = write.catch(() => undefined);
    this.writes.set(id, settled);
    void settled.then(() => {
      if (this.writes.get(id) === settled) this.writes.delete(id);
    });
    return write;
  }

  /** Writes a record's file in the background (a failure is logged); returns the record. */
  private persist(record: JobRecord): JobRecord {
    if (this.opts.recordsDir) this.write(record).catch((err) => this.opts.onError?.(err, record.id));
    return record;
  }

  /** Waits for record files being written (tests, shutdown). */
  async flushRecords(): Promise<void> {
    await Promise.all(this.writes.values());
  }

  /** Cores a cpu job spends: its processes, at most the whole budget (so a job larger than it still runs alone). */
  private weightOf(cost: Cost): number {
    return cost.lane === 'cpu' ? Math.max(1, Math.min(cost.processes, this.opts.cpuBudget)) : 1;
  }

  private canStart(lane: Lane, weight: number): boolean {
    if (lane === 'light') return this.runningIn.light < this.opts.lightConcurrency;
    if (lane === 'flow') return this.runningIn.flow < FLOW_CONCURRENCY;
    if (this.running - this.runningIn.light - this.runningIn.flow >= this.opts.concurrency) return false;
    if (lane === 'cpu') return this.cpuUsed + weight <= this.opts.cpuBudget;
    if (lane === 'office') return this.runningIn.office < this.opts.officeInstances;
    return this.runningIn.browser < this.opts.browserPages;
  }

  /**
   * Starts what may start, lane by lane. Within a lane the client whose turn it is goes first; if its job does
   * not fit yet (a 2-core OCR while 1 core is busy), nobody overtakes it, so large jobs are not starved.
   */
  private next(): void {
    for (const lane of LANES) {
      const queue = this.queues[lane];
      for (let head = queue.peek(); head && this.canStart(lane, head.weight); head = queue.peek()) queue.shift()!.start();
    }
  }

  private remember(ms: number): void {
    this.recentMs.push(ms);
    if (this.recentMs.length > 20) this.recentMs.shift();
  }

  private retryAfterSeconds(): number {
    const avg = this.recentMs.length ? this.recentMs.reduce((a, b) => a + b, 0) / this.recentMs.length : 1000;
    return Math.max(1, Math.ceil(((this.waitingCount + 1) * avg) / this.opts.concurrency / 1000));
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
    for (const w of LANES.flatMap((l) => this.queues[l].drain())) w.cancel(new AppError('shutting_down', 'The server is shutting down.'));
    const deadline = Date.now() + graceMs;
    while (this.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of this.controllers) c.abort(new AppError('shutting_down', 'The server is shutting down.'));
    while (this.running > 0) await new Promise((r) => setTimeout(r, 20));
    await this.flushRecords();
  }
}
