import { randomUUID } from 'node:crypto';
import { extname, join } from 'node:path';
import { AppError, toClientError } from '../errors.js';
import type { Deps, NamedPipeline } from '../requests/context.js';
import { metricsOf } from '../requests/metrics.js';
import { stripExtension } from '../store/names.js';
import { directoryFolder, type Entry, type Folder } from './folders.js';
import { submitPipeline } from './run.js';

/** A lock older than this is another process's that died: the file is taken again. Renewed at a third of it. */
const LOCK_MS = 60_000;
const JOURNAL = (name: string) => `${name}.json`;

interface Journal {
  stem: string;
  size: number;
  mtimeMs: number;
}

/** Who may take a file: in one process a set; in a cluster a Redis key per file, so exactly one worker takes it. */
interface Locks {
  take(key: string): Promise<(() => Promise<void>) | null>;
}

function localLocks(): Locks {
  const held = new Set<string>();
  return {
    async take(key) {
      if (held.has(key)) return null;
      held.add(key);
      return async () => void held.delete(key);
    },
  };
}

interface RedisLike {
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<string | null>;
  eval(script: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
}

function redisLocks(redis: RedisLike): Locks {
  const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
  const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
  return {
    async take(key) {
      const token = randomUUID();
      const k = `quire:watch:${key}`;
      if ((await redis.set(k, token, 'PX', LOCK_MS, 'NX')) !== 'OK') return null;
      const timer = setInterval(() => void redis.eval(RENEW, 1, k, token, LOCK_MS).catch(() => undefined), LOCK_MS / 3);
      timer.unref();
      return async () => {
        clearInterval(timer);
        await redis.eval(RELEASE, 1, k, token).catch(() => undefined);
      };
    },
  };
}

export interface Watcher {
  /** Stops taking files and waits for those being processed (a file cut by the stop stays in `in/`). */
  stop(): Promise<void>;
}

/**
 * Watched folders: every named pipeline gets `<WATCH_DIR>/<name>/{in,out,done,failed}`. A file in `in/` is taken
 * once its size and time have not changed for WATCH_SETTLE_SECONDS; outputs land in `out/` named after it, the
 * original moves to `done/`, or to `failed/` beside `<file>.error.json`. Nothing is deleted. The name a file's
 * outputs get is written to a journal before it runs, so a file taken again after a crash writes the same names
 * (no duplicates), and a name already used in out/done/failed gets a `-2`, `-3`... suffix instead of replacing it.
 */
export async function watchFolders(deps: Deps, opts: { pollMs?: number } = {}): Promise<Watcher> {
  const root = deps.config.watchDir;
  if (!root) return { stop: async () => undefined };
  const settleMs = deps.config.watchSettleMs;
  const pollMs = opts.pollMs ?? Math.max(200, Math.min(2000, settleMs / 4));
  const redis = (deps.jobs as { redis?: RedisLike }).redis;
  const locks = redis ? redisLocks(redis) : localLocks();
  const metrics = deps.config.metrics ? metricsOf(deps) : undefined;
  // Files taken at once by this process: a folder of 1,000 scans must not fill the queue (429s).
  const maxTaking = Math.max(2, deps.config.cpuBudget);
  // The SDK is loaded only for an S3 prefix (~100 ms and its memory otherwise).
  const s3 = /^s3:\/\//.test(root) ? (await import('./s3-folder.js')).s3Folder : undefined;
  const folders = deps.pipelines.valid.map((p) => ({ p, folder: s3 ? s3(`${root}/${p.name}`, deps.config.s3Endpoint) : directoryFolder(join(root, p.name)) }));
  for (const { folder } of folders) await folder.prepare();
  for (const { folder } of folders) await dropStaleJournals(folder);

  const seen = new Map<string, { size: number; mtimeMs: number; since: number }>();
  const taking = new Map<string, Promise<void>>();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const take = async (p: NamedPipeline, folder: Folder, entry: Entry, key: string) => {
    // A lock store that cannot answer (Redis down) leaves the file for the next look, not an unhandled rejection.
    const release = await locks.take(key).catch((err: unknown) => {
      deps.log.warn({ err, pipeline: p.name, file: entry.name }, 'watched file not taken: its lock could not be taken (taken again at the next look)');
      return null;
    });
    if (!release) return;
    try {
      // Another worker may have finished it meanwhile; a file still changing waits for the next settle.
      const now = await folder.stat('in', entry.name);
      if (!now || now.size !== entry.size || now.mtimeMs !== entry.mtimeMs) return;
      const outcome = await processFile(deps, p, folder, entry, () => stopping);
      if (outcome) metrics?.watched.inc({ pipeline: p.name, outcome });
      if (outcome) deps.log.info({ pipeline: p.name, file: entry.name, outcome }, 'watched file');
    } catch (err) {
      deps.log.error({ err, pipeline: p.name, file: entry.name }, 'watched file left in in/ (taken again at the next look)');
    } finally {
      await release();
    }
  };

  const poll = async () => {
    for (const { p, folder } of folders) {
      const entries = await folder.list('in').catch((err) => {
        deps.log.error({ err, folder: folder.where }, 'watched folder cannot be listed');
        return [] as Entry[];
      });
      const present = new Set<string>();
      for (const e of entries) {
        const key = `${p.name}/${e.name}`;
        present.add(key);
        const prev = seen.get(key);
        if (!prev || prev.size !== e.size || prev.mtimeMs !== e.mtimeMs) {
          seen.set(key, { size: e.size, mtimeMs: e.mtimeMs, since: Date.now() });
          continue;
        }
        if (Date.now() - prev.since < settleMs || taking.has(key) || taking.size >= maxTaking || stopping) continue;
        const run = take(p, folder, e, key).finally(() => {
          taking.delete(key);
          seen.delete(key);
        });
        taking.set(key, run);
      }
      for (const key of seen.keys()) if (key.startsWith(`${p.name}/`) && !present.has(key)) seen.delete(key);
    }
  };
  const loop = async () => {
    await poll().catch((err) => deps.log.error({ err }, 'watched folders poll failed'));
    if (!stopping) timer = setTimeout(() => void loop(), pollMs);
  };
  void loop();
  deps.log.info({ root, pipelines: folders.map((f) => f.p.name), settleMs }, 'watching folders');
  return {
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await Promise.allSettled(taking.values());
    },
  };
}

/** Journals of files no longer in `in/` (moved out just before a stop): their work is done. */
async function dropStaleJournals(folder: Folder): Promise<void> {
  const inFiles = new Set((await folder.list('in')).map((e) => e.name));
  for (const j of await folder.list('.quire').catch(() => [] as Entry[])) {
    if (!inFiles.has(j.name.replace(/\.json$/, ''))) await folder.remove('.quire', j.name);
  }
}

/** A stem whose names are free in out/, done/ and failed/: `scan`, else `scan-2`, `scan-3`... */
async function freeStem(folder: Folder, name: string): Promise<string> {
  const ext = extname(name);
  const base = stripExtension(name) || 'file';
  const [outs, dones, fails] = await Promise.all([folder.list('out'), folder.list('done'), folder.list('failed')]);
  const used = (stem: string) =>
    outs.some((e) => stripExtension(e.name) === stem || e.name.startsWith(`${stem}_`)) ||
    [...dones, ...fails].some((e) => e.name === `${stem}${ext}` || e.name === `${stem}${ext}.error.json`);
  for (let n = 1; ; n++) {
    const stem = n === 1 ? base : `${base}-${n}`;
    if (!used(stem)) return stem;
  }
}

/**
 * Runs one settled file through its pipeline and files the outcome. Returns the outcome, or undefined when the
 * server is stopping (the file stays in `in/` for the next start).
 */
async function processFile(deps: Deps, p: NamedPipeline, folder: Folder, entry: Entry, stopping: () => boolean): Promise<'done' | 'failed' | undefined> {
  const journal = JSON.parse((await folder.readText('.quire', JOURNAL(entry.name))) ?? 'null') as Journal | null;
  const stem = journal && journal.size === entry.size && journal.mtimeMs === entry.mtimeMs ? journal.stem : await freeStem(folder, entry.name);
  await folder.write('.quire', JOURNAL(entry.name), JSON.stringify({ stem, size: entry.size, mtimeMs: entry.mtimeMs } satisfies Journal));
  const ext = extname(entry.name);
  const made: string[] = [];
  try {
    const rec = await deps.store.addStream(await folder.read('in', entry.name), { name: entry.name, owner: null });
    made.push(rec.id);
    const spec = {
      kind: 'pipeline' as const,
      name: p.name,
      steps: p.steps,
      inputs: [{ id: rec.id, name: rec.name, type: rec.type, size: rec.size }],
      owner: null,
      client: `watch:${p.name}`,
      baseUrl: 'http://watched.invalid',
    };
    let result: Record<string, unknown>;
    try {
      result = await (await submitPipeline(spec, deps, {})).done;
    } catch (err) {
      if (stopping() || (err instanceof AppError && err.code === 'shutting_down')) return undefined;
      const { status, body } = toClientError(err);
      const at = /^steps\[(\d+)\] \((\/[\w-]+)\)/.exec(body.error);
      const report = {
        file: entry.name,
        pipeline: p.name,
        status,
        error: body.error,
        step: at ? Number(at[1]) : undefined,
        operation: at?.[2],
        at: new Date().toISOString(),
      };
      await folder.write('failed', `${stem}${ext}.error.json`, `${JSON.stringify(report, null, 2)}\n`);
      await folder.move('in', entry.name, 'failed', `${stem}${ext}`);
      await folder.remove('.quire', JOURNAL(entry.name));
      return 'failed';
    }
    for (const s of (result.steps as { outputId?: string | string[] }[]) ?? []) made.push(...[s.outputId ?? []].flat());
    const outputs = [result.outputId ?? []].flat() as string[];
    if (!outputs.length) {
      // A JSON operation last (/pdf-info, /validated-zugferd): its answer is the output.
      const { steps: _steps, inputId: _inputId, ...answer } = result;
      await folder.write('out', `${stem}.json`, `${JSON.stringify(answer, null, 2)}\n`);
    }
    for (const [k, id] of outputs.entries()) {
      const rec = await deps.store.get(id);
      const bytes = rec && (await deps.store.read(id));
      if (!rec || !bytes) throw new Error(`output ${id} is gone`);
      await folder.write('out', `${stem}${outputs.length > 1 ? `_${k + 1}` : ''}${extname(rec.name)}`, bytes);
    }
    await folder.move('in', entry.name, 'done', `${stem}${ext}`);
    await folder.remove('.quire', JOURNAL(entry.name));
    return 'done';
  } finally {
    // The journal stays until the original has moved: a file taken again writes the same names. Everything of this run is in the folder now: the resources are not needed by anyone.
    for (const id of made) await deps.store.remove(id).catch(() => undefined);
  }
}
