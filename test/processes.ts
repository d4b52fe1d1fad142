// Real processes for the cluster suites and the scale benchmark: a redis-server and Quire replicas on free
// loopback ports, the process table from /proc, and stops that leave no engine process behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './waiting.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Debian's redis-server, or one on PATH; undefined where the package is not installed. */
export const REDIS_SERVER = ['/usr/bin/redis-server', ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'redis-server'))].find((p) => existsSync(p));

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  base: string;
  port: number;
  /** Last lines of its stdout/stderr, for failure messages. */
  log: string[];
  exited: boolean;
}

/** Everything started here, killed with its engines when this process exits however it exits. */
export const started: Proc[] = [];

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

function track(name: string, child: ChildProcess, port: number): Proc {
  const p: Proc = { name, child, pid: child.pid!, base: `http://127.0.0.1:${port}`, port, log: [], exited: false };
  const keep = (d: Buffer) => {
    for (const line of d.toString().split('\n').filter(Boolean)) p.log.push(line.slice(0, 400));
    if (p.log.length > 40) p.log.splice(0, p.log.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code, signal) => {
    p.exited = true;
    p.log.push(`[exited: code ${code}, signal ${signal}]`);
  });
  started.push(p);
  return p;
}

export const tail = (p: Proc) => `\n--- ${p.name} (pid ${p.pid}) log tail ---\n${p.log.join('\n')}`;

/** PING over RESP: true once redis answers PONG. */
export async function redisPing(port: number): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      out += d;
      if (out.includes('\r\n')) done(out.startsWith('+PONG'));
    });
  });
}

/** A redis-server without persistence on a free loopback port, its files in `dir`; resolves once it answers PING. */
export async function startRedis(dir: string, name = 'redis'): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const child = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = track(name, child, port);
  for (let i = 0; i < 100; i++) {
    if (proc.exited) throw new Error(`redis-server exited at start${tail(proc)}`);
    if (await redisPing(port)) return { proc, url: `redis://127.0.0.1:${port}` };
    await sleep(100);
  }
  throw new Error(`redis-server did not answer PING within 10 s${tail(proc)}`);
}

/**
 * One Quire process (optionally pinned to cores with taskset); resolves once it answers /up (every role serves /up).
 * `built`: the compiled server in dist/ (what `npm start` and the image run; benchmarks time it, since tsx's output
 * is slower: /markdown of 2,010 pages 43.6 s from the sources, 35.4 s built), else the sources under tsx.
 */
export async function startQuire(name: string, env: Record<string, string>, opts: { cpus?: string; built?: boolean } = {}): Promise<Proc> {
  const port = await freePort();
  const argv = opts.built ? [process.execPath, 'dist/app/main.js'] : [process.execPath, '--import', 'tsx', 'app/main.ts'];
  const [cmd, ...args] = opts.cpus ? ['taskset', '-c', opts.cpus, ...argv] : argv;
  const child = spawn(cmd, args, {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p = track(name, child, port);
  // A cold start (tsx compiling, engines probed) took 19 s here under load: minutes on a slow machine.
  const deadline = Date.now() + 1_200_000;
  while (Date.now() < deadline) {
    if (p.exited) throw new Error(`${name} exited before answering /up${tail(p)}`);
    if (
      await fetch(`${p.base}/up`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return p;
    await sleep(250);
  }
  throw new Error(`${name} did not answer /up within 20 min${tail(p)}`);
}

export interface ProcEntry {
  pid: number;
  ppid: number;
  comm: string;
  state: string;
  /** Start time in clock ticks since boot (field 22): with the pid, the identity of a process (pids are reused). */
  start: string;
}

/** Every process: /proc/<pid>/stat, comm between the first '(' and the last ')', then state and ppid (field 4). */
export function processTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = s.lastIndexOf(')');
      const rest = s.slice(close + 2).split(' ');
      table.set(Number(d), { pid: Number(d), comm: s.slice(s.indexOf('(') + 1, close), state: rest[0], ppid: Number(rest[1]), start: rest[19] });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Children of `pid`, recursively (engines run in their own process groups, still children of the server). */
export function descendants(pid: number, table = processTable()): ProcEntry[] {
  const out: ProcEntry[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const e of table.values()) {
      if (e.ppid === p) {
        out.push(e);
        queue.push(e.pid);
      }
    }
  }
  return out;
}

/** SIGKILL to a process seen earlier, only if that pid is still the same process. */
export function killSame(e: ProcEntry): void {
  try {
    const s = readFileSync(`/proc/${e.pid}/stat`, 'utf8');
    if (s.slice(s.lastIndexOf(')') + 2).split(' ')[19] === e.start) process.kill(e.pid, 'SIGKILL');
  } catch {
    // gone
  }
}

export const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};

/** SIGTERM (graceful drain), then SIGKILL after `graceMs`; engine processes left behind are killed by pid. */
export async function stop(p: Proc, graceMs = 10_000): Promise<void> {
  if (p.exited) return; // its pid may belong to someone else by now
  const below = descendants(p.pid);
  signal(p.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (!p.exited && Date.now() < deadline) await sleep(100);
  if (!p.exited) signal(p.pid, 'SIGKILL');
  while (!p.exited) await sleep(50);
  // Engine processes still running after their server is gone (a graceful stop leaves none).
  below.forEach(killSame);
}

/** A machine's crash as the cluster sees it: the process and its engines gone at once. */
export async function crash(p: Proc): Promise<void> {
  const below = descendants(p.pid);
  signal(p.pid, 'SIGKILL');
  below.forEach(killSame);
  while (!p.exited) await sleep(50);
}

/** Last resort (a failed assertion, Ctrl-C): nothing started here survives this process. */
export function killAllNow(): void {
  for (const p of started) {
    const below = p.exited ? [] : descendants(p.pid);
    if (!p.exited) signal(p.pid, 'SIGKILL');
    below.forEach(killSame);
  }
}
process.on('exit', killAllNow);
