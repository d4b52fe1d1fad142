// Service core: resource registration cost at 100 vs 100k records (against one unsharded lowdb file, the
// naive design, measured in the same run), and the server's memory while a 500 MB upload streams in.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { type ResourceRecord, Store } from '../../app/store/index.js';
import { LowdbIndex } from '../../app/store/lowdb-index.js';

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function fakeRecords(n: number): ResourceRecord[] {
  return Array.from({ length: n }, () => ({
    id: randomUUID(),
    name: 'document-name.pdf',
    type: 'application/pdf',
    size: 123456,
    modified: Date.now(),
    owner: null,
    expires: 0,
  }));
}

async function sharded(n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'quire-bench-'));
  mkdirSync(join(dir, 'index'), { recursive: true });
  const shards: Record<string, Record<string, ResourceRecord>> = {};
  for (const r of fakeRecords(n)) (shards[r.id.slice(0, 2)] ??= {})[r.id] = r;
  for (const [k, v] of Object.entries(shards)) writeFileSync(join(dir, 'index', `${k}.json`), JSON.stringify(v));
  const store = new Store(dir, 0, new LowdbIndex(join(dir, 'index')));
  await store.init();
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const { id, path } = store.reserve();
    writeFileSync(path, 'x');
    const t0 = performance.now();
    await store.add(path, { id, name: 'a.pdf', owner: null });
    times.push(performance.now() - t0);
  }
  rmSync(dir, { recursive: true, force: true });
  return median(times);
}

async function singleFile(n: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'quire-bench-'));
  const db = new Low<Record<string, ResourceRecord>>(new JSONFile(join(dir, 'index.json')), {});
  for (const r of fakeRecords(n)) db.data[r.id] = r;
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const r = fakeRecords(1)[0];
    const t0 = performance.now();
    db.data[r.id] = r;
    await db.write();
    times.push(performance.now() - t0);
  }
  rmSync(dir, { recursive: true, force: true });
  return median(times);
}

async function uploadMemory(mb: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-bench-up-'));
  const port = 3900 + Math.floor(Math.random() * 90);
  const server = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', MAX_UPLOAD_MB: '2000' },
    stdio: 'ignore',
  });
  const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/health`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const before = hwm();
  const boundary = 'quirebench';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(1024 * 1024, 97);
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/upload',
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + mb * chunk.length + tail.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.write(head);
    let sent = 0;
    const pump = () => {
      while (sent < mb) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  const after = hwm();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
  return { before, after, seconds };
}

const s100 = await sharded(100);
const s100k = await sharded(100_000);
const f100k = await singleFile(100_000);
console.log('| resource registration (median) | ms |');
console.log('|---|---:|');
console.log(`| sharded + coalesced, 100 records | ${s100.toFixed(2)} |`);
console.log(`| sharded + coalesced, 100k records | ${s100k.toFixed(2)} |`);
console.log(`| one lowdb file, 100k records (naive) | ${f100k.toFixed(1)} |`);
console.log(`ratio 100k/100 (ours): ${(s100k / s100).toFixed(2)}x; naive/ours at 100k: ${(f100k / s100k).toFixed(0)}x`);
const up = await uploadMemory(500);
console.log(
  `\n500 MB multipart upload: server peak RSS ${up.before.toFixed(0)} MB before, ${up.after.toFixed(0)} MB after (growth ${(up.after - up.before).toFixed(0)} MB), ${(500 / up.seconds).toFixed(0)} MB/s`,
);
