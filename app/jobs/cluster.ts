import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { withPriority } from '../../engines/run.js';
import { AppError, type ErrorCode, queueUnavailable, REDIS_ANSWER_MS, toClientError } from '../errors.js';
import {
  type Cost,
  FLOW_CONCURRENCY,
  type FollowUp,
  type JobContext,
  type JobObserver,
  type JobQueue,
  type JobRecord,
  type Lane,
  type LaneCounts,
  overTime,
  type SubmitOptions,
  tellObservers,
} from './index.js';

const LANES: Lane[] = ['light', 'cpu', 'office', 'browser', 'flow'];
const HEAVY_NICENESS = 10;
/** A worker that stops renewing its lock (killed, frozen) loses the job after this; another worker reruns it. */
const LOCK_MS = 10_000;
const STALLED_CHECK_MS = 5_000;
/** Reruns after a worker died mid-job; then the request reads failed. */
const MAX_STALLED = 1;
const CANCEL_CHANNEL = 'quire:cancel';
/** Follow-ups of settled jobs (webhooks), retried by BullMQ: a retry waiting when its worker stops is taken by another. */
const FOLLOW_UPS = 'quire-follow-ups';
const FOLLOW_UP_CONCURRENCY = 16;
/** How long a finished or given-up follow-up stays in Redis (for inspection). */
const FOLLOW_UP_KEEP_S = 3600;

interface FollowUpData {
  record: JobRecord;
  notify: unknown;
}

export interface ClusterOptions {
  redisUrl: string;
  /** Run jobs here (ROLE worker or all); an api replica only queues and answers. */
  work: boolean;
  lightConcurrency: number;
  cpuBudget: number;
  officeInstances: number;
  browserPages: number;
  timeoutMs: number;
  keepMs: number;
  queueMax: number;
  /** This process's own temp dirs (local disk; outputs are copied into the shared store). */
  workDir: string;
  onError?: (err: unknown, jobId: string) => void;
}

interface JobData {
  spec: unknown;
  owner: string | null;
  client: string;
  weight: number;
  label?: string;
  notify?: unknown;
}

/** A failure as it crosses Redis: the client's status and text, never stderr. */
const encodeFailure = (err: unknown) => {
  const m = toClientError(err);
  return JSON.stringify({ status: m.status, error: m.body.error });
};

function decodeFailure(reason: string | undefined): { status: number; error: string } {
  try {
    const v = JSON.parse(reason ?? '') as { status: number; error: string };
    if (typeof v.status === 'number' && typeof v.error === 'string') return v;
  } catch {
    /* BullMQ's own reasons (a stalled job) are plain text */
  }
  return { status: 503, error: 'The worker running this request stopped; send it again.' };
}

const CODE_OF: Record<number, ErrorCode> = {
  400: 'invalid_input',
  401: 'password',
  403: 'forbidden',
  404: 'not_found',
  413: 'too_large',
  422: 'limit',
  429: 'queue_full',
  499: 'cancelled',
  503: 'shutting_down',
};
const toAppError = (f: { status: number; error: string }) => new AppError(CODE_OF[f.status] ?? 'internal', f.error);

/**
 * The jobs layer of a cluster: one BullMQ queue per cost class on Redis, so a light request is never behind
 * a heavy one on any replica. Workers take jobs with each lane's own limit (the cpu lane also spends a local
 * budget of cores by the job's weight); fairness between clients is BullMQ's priority, set to the number of
 * jobs the client already has waiting in the lane (a client's 50th job waits behind another client's 1st).
 * A worker killed mid-job stops renewing its lock, and BullMQ's stalled-job check hands the job to another
 * worker; request records are the BullMQ jobs themselves, kept for `keepMs`.
 */
export class ClusterJobs implements JobQueue {
  private readonly connection: Redis;
  private readonly queues: Record<Lane, Queue>;
  private events?: Record<Lane, QueueEvents>;
  private readonly workers: Worker[] = [];
  private subscriber?: Redis;
  private readonly running = new Map<string, AbortController>();
  private cpuUsed = 0;
  private readonly cpuWaiters: Array<() => void> = [];
  private closed = false;
  private readonly observers: JobObserver[] = [];
  private followUps?: Queue;
  /** Connections that wait for Redis, closed at the stop. */
  private readonly waiting: Redis[] = [];

  constructor(private readonly opts: ClusterOptions) {
    // The request path's connection (queues, records, the resource index): a command a client waits on is refused
    // rather than left waiting for Redis. Commands cut by a lost connection are not sent again, nor are commands kept
    // offline: they would run once Redis is back, for requests already answered 503 (an orphan job or record).
    this.connection = new Redis(opts.redisUrl, { maxRetriesPerRequest: null, autoResendUnfulfilledCommands: false });
    // Only from the first connection on: the start waits for Redis as before.
    this.connection.once('ready', () => Object.assign(this.connection.options, { enableOfflineQueue: false, commandTimeout: REDIS_ANSWER_MS }));
    this.queues = Object.fromEntries(LANES.map((l) => [l, new Queue(`quire-${l}`, { connection: this.connection })])) as Record<Lane, Queue>;
  }

  get redis(): Redis {
    return this.connection;
  }

  /** A connection that waits out a Redis restart: workers' blocking reads, completion events, follow-ups (no client waits on these). */
  private patient(): Redis {
    const c = new Redis(this.opts.redisUrl, { maxRetriesPerRequest: null });
    this.waiting.push(c);
    return c;
  }

  observe(observer: JobObserver): void {
    this.observers.push(observer);
  }

  /**
   * Workers only (they are where jobs settle): each settled job with `notify` becomes a job of the follow-up queue,
   * with `tries` attempts and `waitMs` between them, run by any worker.
   */
  followUp(f: FollowUp): void {
    if (!this.opts.work || this.followUps) return;
    const queue = new Queue(FOLLOW_UPS, { connection: this.patient() });
    this.followUps = queue;
    const worker = new Worker(
      FOLLOW_UPS,
      async (job: Job<FollowUpData>) => {
        const n = job.attemptsMade + 1;
        const r = await f.attempt(job.data.record, job.data.notify, n);
        if (r.ok) return f.outcome?.(true, job.data.record);
        if (!r.retry || n >= f.tries) {
          f.outcome?.(false, job.data.record, r.why);
          throw new UnrecoverableError(r.why);
        }
        throw Object.assign(new Error(r.why), { retryInMs: r.retryInMs });
      },
      {
        connection: this.patient(),
        concurrency: FOLLOW_UP_CONCURRENCY,
        name: `quire-${process.pid}`,
        settings: { backoffStrategy: (n: number, _type?: string, err?: Error) => f.waitMs(n, (err as { retryInMs?: number } | undefined)?.retryInMs) },
      },
    );
    worker.on('error', (err) => this.opts.onError?.(err, 'follow-ups'));
    this.workers.push(worker);
    const keep = { age: FOLLOW_UP_KEEP_S };
    this.observe({
      settled: (record, notify) => {
        // The request's id as the job id: a job told settled twice is followed up once.
        void queue
          .add('follow-up', { record, notify } satisfies FollowUpData, {
            jobId: record.id,
            attempts: f.tries,
            backoff: { type: 'follow-up' },
            removeOnComplete: keep,
            removeOnFail: keep,
          })
          .catch((err) => this.opts.onError?.(err, record.id));
      },
    });
  }

  private tell(fn: (o: JobObserver) => void): void {
    tellObservers(this.observers, fn, this.opts.onError);
  }

  async ping(): Promise<boolean> {
    return (await this.connection.ping().catch(() => '')) === 'PONG';
  }

  /** Starts the workers (ROLE worker/all) with the function that runs a spec. */
  async start(execute: (spec: unknown, ctx: JobContext) => Promise<Record<string, unknown>>): Promise<void> {
    if (!this.opts.work) return;
    await this.sweepStaleDirs();
    this.subscriber = this.patient();
    await this.subscriber.subscribe(CANCEL_CHANNEL);
    this.subscriber.on('message', (_channel, id: string) => this.running.get(id)?.abort(new AppError('cancelled', 'The client closed the connection.')));
    const limits: Record<Lane, number> = {
      light: this.opts.lightConcurrency,
      cpu: this.opts.cpuBudget,
      office: this.opts.officeInstances,
      browser: this.opts.browserPages,
      flow: FLOW_CONCURRENCY,
    };
    for (const lane of LANES) {
      const worker = new Worker(`quire-${lane}`, (job: Job<JobData>) => this.process(lane, job, execute), {
        connection: this.patient(),
        concurrency: limits[lane],
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_CHECK_MS,
        maxStalledCount: MAX_STALLED,
        name: `quire-${process.pid}`,
      });
      worker.on('error', (err) => this.opts.onError?.(err, 'worker'));
      // The worker that ran a job tells its end, once the job is final in Redis (a worker lost mid-job tells nothing;
      // the one that reruns it does, and after a second loss the one that takes it up and fails it).
      worker.on('completed', (job: Job<JobData>, result: Record<string, unknown>) => {
        if (job.data.notify === undefined) return;
        const rec: JobRecord = { id: job.id!, owner: job.data.owner, status: 'completed', result, finishedAt: job.finishedOn ?? Date.now() };
        this.tell((o) => o.settled?.(rec, job.data.notify));
      });
      worker.on('failed', (job: Job<JobData> | undefined) => {
        if (job?.data.notify === undefined) return;
        const rec: JobRecord = {
          id: job.id!,
          owner: job.data.owner,
          status: 'failed',
          error: decodeFailure(job.failedReason),
          finishedAt: job.finishedOn ?? Date.now(),
        };
        this.tell((o) => o.settled?.(rec, job.data.notify));
      });
      this.workers.push(worker);
    }
  }

  private async process(lane: Lane, job: Job<JobData>, execute: (spec: unknown, ctx: JobContext) => Promise<Record<string, unknown>>) {
    // Not awaited: the job need not wait for the bookkeeping. A job rerun after its worker died was counted once: never below zero.
    void this.connection
      .hincrby(`quire:waiting:${lane}`, job.data.client, -1)
      .then((n) => (n < 0 ? this.connection.hset(`quire:waiting:${lane}`, job.data.client, 0) : 0))
      .catch(() => undefined);
    const weight = lane === 'cpu' ? job.data.weight : 0;
    await this.takeCores(weight);
    const started = Date.now();
    let ok = false;
    const controller = new AbortController();
    this.running.set(job.id!, controller);
    const dir = join(this.opts.workDir, `${job.id}-${randomUUID().slice(0, 8)}`);
    const timer = setTimeout(() => controller.abort(overTime(this.opts.timeoutMs)), this.opts.timeoutMs);
    let lastProgress = 0;
    try {
      await mkdir(dir, { recursive: true });
      const progress = (f: number) => {
        // Progress goes through Redis: at most every 5 %.
        if (f - lastProgress < 0.05) return;
        lastProgress = f;
        void job.updateProgress(Math.round(f * 1000) / 1000).catch(() => undefined);
      };
      const run = () => execute(job.data.spec, { id: job.id!, dir, signal: controller.signal, progress });
      const value = await (lane === 'light' || lane === 'flow' ? run() : withPriority(HEAVY_NICENESS, run));
      if (controller.signal.aborted) throw controller.signal.reason;
      ok = true;
      return value;
    } catch (err) {
      const reason = controller.signal.aborted ? controller.signal.reason : err;
      if (!(reason instanceof AppError)) this.opts.onError?.(err, job.id!);
      throw new Error(encodeFailure(reason));
    } finally {
      clearTimeout(timer);
      this.running.delete(job.id!);
      // Retried: a write still landing (a killed engine's last file, a stream's late open) makes rmdir fail ENOTEMPTY once.
      await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      this.releaseCores(weight);
      // Waiting counts from the job's creation on Redis (clocks of replicas assumed in sync, as BullMQ does).
      const run = { lane, label: job.data.label ?? 'job', waitMs: Math.max(0, started - job.timestamp), runMs: Date.now() - started, ok };
      this.tell((o) => o.ran?.(run));
    }
  }

  /** The cpu lane's local budget: a job counting N processes waits for N free cores on this worker. */
  private async takeCores(n: number): Promise<void> {
    while (n && this.cpuUsed > 0 && this.cpuUsed + n > this.opts.cpuBudget) await new Promise<void>((r) => this.cpuWaiters.push(r));
    this.cpuUsed += n;
  }

  private releaseCores(n: number): void {
    if (!n) return;
    this.cpuUsed -= n;
    for (const wake of this.cpuWaiters.splice(0)) wake();
  }

  private queueEvents(lane: Lane): QueueEvents {
    this.events ??= Object.fromEntries(LANES.map((l) => [l, new QueueEvents(`quire-${l}`, { connection: this.patient() })])) as Record<Lane, QueueEvents>;
    return this.events[lane];
  }

  async submit<T extends Record<string, unknown>>(_work: unknown, opts: SubmitOptions): Promise<{ id: string; done: Promise<T> }> {
    if (this.closed) throw new AppError('shutting_down', 'The server is shutting down; try again shortly.');
    const cost: Cost = opts.cost ?? { lane: 'cpu', processes: 1 };
    const lane = cost.lane;
    const queue = this.queues[lane];
    const client = opts.client ?? opts.owner ?? 'anonymous';
    // The completion events a waiting client needs, first: their connection may be opening while Redis is down.
    const events = opts.track ? undefined : this.queueEvents(lane);
    if (events) await bounded(events.waitUntilReady(), REDIS_ANSWER_MS);
    // One round trip for both: the lane's backlog and this client's place in it (undone when refused).
    const [waiting, position] = await Promise.all([
      queue.getJobCountByTypes('waiting', 'prioritized'),
      this.connection.hincrby(`quire:waiting:${lane}`, client, 1),
    ]);
    if (waiting >= this.opts.queueMax && (position > 1 || waiting >= 2 * this.opts.queueMax)) {
      await this.connection.hincrby(`quire:waiting:${lane}`, client, -1);
      throw new AppError('queue_full', 'Too many requests are queued; retry later.', { 'Retry-After': '5' });
    }
    const weight = cost.lane === 'cpu' ? Math.max(1, Math.min(cost.processes, this.opts.cpuBudget)) : 1;
    const id = randomUUID();
    const keep = { age: Math.ceil(this.opts.keepMs / 1000) };
    const data: JobData = { spec: opts.spec, owner: opts.owner, client, weight, label: opts.label, notify: opts.notify };
    const job = await queue
      .add('job', data, { jobId: id, priority: Math.min(Math.max(1, position), 2_000_000), attempts: 1, removeOnComplete: keep, removeOnFail: keep })
      .catch((err) => {
        // Not queued: the client's place is given back (if Redis takes it; the count is never read below zero).
        void this.connection.hincrby(`quire:waiting:${lane}`, client, -1).catch(() => undefined);
        throw err;
      });
    if (!events) return { id, done: new Promise<T>(() => undefined) };
    // Redis may be down when the client goes: the job then runs, and its end is logged.
    opts.clientSignal?.addEventListener('abort', () => void this.cancel(job).catch((err) => this.opts.onError?.(err, id)), { once: true });
    const done = job.waitUntilFinished(events).then(
      (v) => v as T,
      (err: Error) => {
        throw toAppError(decodeFailure(err.message));
      },
    );
    return { id, done };
  }

  /** A client that went away: a waiting job is removed, a running one aborted wherever it runs. */
  private async cancel(job: Job): Promise<void> {
    const removed = await job.remove().then(
      () => true,
      () => false,
    );
    if (!removed) await this.connection.publish(CANCEL_CHANNEL, job.id!);
  }

  async get(id: string): Promise<JobRecord | undefined> {
    for (const lane of LANES) {
      const job = (await this.queues[lane].getJob(id)) as Job<JobData> | undefined;
      if (!job) continue;
      const state = await job.getState();
      const base = { id, owner: job.data.owner };
      if (state === 'completed') return { ...base, status: 'completed', result: job.returnvalue as Record<string, unknown>, finishedAt: job.finishedOn };
      if (state === 'failed') return { ...base, status: 'failed', error: decodeFailure(job.failedReason), finishedAt: job.finishedOn };
      return { ...base, status: 'pending', progress: typeof job.progress === 'number' ? job.progress : undefined };
    }
    return undefined;
  }

  async snapshot(): Promise<Record<string, unknown>> {
    const lanes = Object.fromEntries(
      await Promise.all(LANES.map(async (l) => [l, await this.queues[l].getJobCounts('waiting', 'prioritized', 'active', 'delayed')] as const)),
    );
    return { mode: 'redis', lanes, localRunning: this.running.size, cpuUsed: this.cpuUsed, cpuBudget: this.opts.cpuBudget };
  }

  /** Across the cluster: waiting includes prioritized and delayed jobs, running is every worker's active ones. */
  async laneCounts(): Promise<LaneCounts> {
    const counts = await Promise.all(LANES.map((l) => this.queues[l].getJobCounts('waiting', 'prioritized', 'active', 'delayed')));
    return Object.fromEntries(
      LANES.map((l, i) => [l, { waiting: (counts[i].waiting ?? 0) + (counts[i].prioritized ?? 0) + (counts[i].delayed ?? 0), running: counts[i].active ?? 0 }]),
    ) as LaneCounts;
  }

  async drain(graceMs: number): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + graceMs;
    // Workers stop taking jobs at once; running ones get the grace time, then are aborted (their jobs stall and rerun elsewhere).
    const closing = this.workers.map((w) => w.close());
    while (this.running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const c of this.running.values()) c.abort(new AppError('shutting_down', 'The server is shutting down.'));
    await Promise.allSettled(closing);
    await Promise.allSettled([
      ...Object.values(this.queues).map((q) => q.close()),
      ...Object.values(this.events ?? {}).map((e) => e.close()),
      this.followUps?.close(),
    ]);
    for (const c of this.waiting) c.disconnect();
    this.connection.disconnect();
  }

  /** Temp dirs of earlier processes on this host whose process is gone. */
  private async sweepStaleDirs(): Promise<void> {
    const parent = join(this.opts.workDir, '..');
    await mkdir(this.opts.workDir, { recursive: true });
    for (const name of await readdir(parent)) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
      await rm(join(parent, name), { recursive: true, force: true });
    }
  }
}

/** `p`, or the job queue's 503 after `ms`: for a wait on Redis no command timeout covers (a connection opening). */
async function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(queueUnavailable(`no connection within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
