import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, settledStatus, startApp, type TestApp, until } from './helpers.js';
import { freePort, type Proc, started, stop } from './processes.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * DATA_DIR on real file systems that refuse writes, each made for real (CI runs as root): a 40 MB tmpfs that fills
 * up (ENOSPC) and is remounted read-only (EROFS), directories of mode 0555 for a server without CAP_DAC_OVERRIDE
 * (EACCES), a btrfs quota group on a loop device (EDQUOT). The request that cannot be written answers 507 at once
 * naming the cause, keeps nothing of itself, and blames no input; once the storage takes writes, requests succeed.
 */
const test = suite('storage-faults');
let mount: string;
let t: TestApp;
const MB = 1024 * 1024;

/** Records in the index's shards (`<xx>.json`; a shard write the full disk cut leaves a temp file beside them). */
const records = (dataDir: string) =>
  readdirSync(join(dataDir, 'index'))
    .filter((f) => /^[0-9a-f]{2}\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(join(dataDir, 'index', f), 'utf8')) as Record<string, unknown>)
    .reduce((n, shard) => n + Object.keys(shard).length, 0);
const stored = (dataDir: string) => readdirSync(join(dataDir, 'resources'));
const free = (dir: string) => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

test.before(async () => {
  mount = mkdtempSync(join(tmpdir(), 'quire-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', mount]);
  } catch (err) {
    throw new Error(`storage-faults needs to mount a small tmpfs (run as root, as CI does): ${(err as Error).message}`);
  }
  t = await startApp({ STORAGE_MIN_FREE_MB: '8' }, { dataDir: join(mount, 'data') });
});
test.after(async () => {
  await t?.close();
  execFileSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
});

test('an upload that does not fit answers 507 at once and keeps none of its files', async () => {
  const dataDir = join(mount, 'data');
  const file = { bytes: Buffer.alloc(30 * MB, 7), name: 'a.bin' };
  // Two 30 MB files on 40 MB: the first fits, the second cannot. The client gets an answer, not a hang.
  const res = await t.form('/upload', { file: [file, { ...file, name: 'b.bin' }] });
  await expectError(res, 507, /could not be stored or processed: the server's storage is full \(ENOSPC\)/);
  assert.equal(stored(dataDir), []);
  assert.is(records(dataDir), 0);
  // The space is free again, and a restart over the same DATA_DIR lists exactly what is stored: nothing.
  assert.ok(free(dataDir) > 35 * MB, `free ${free(dataDir)}`);
  const again = await startApp({}, { dataDir });
  try {
    assert.is(records(dataDir), 0);
    const small = await expectOk(await again.form('/upload', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }));
    assert.is(small.files.length, 1);
  } finally {
    await again.close();
  }
});

test('an engine whose output does not fit answers 507, not 400: the input is not to blame', async () => {
  const dataDir = join(mount, 'data');
  const input = await expectOk(await t.form('/upload', { file: { file: corpus('pdf/federal-register-15-pages.pdf') } }));
  const id = input.files[0].id as string;
  const before = stored(dataDir);
  // Leave ~1 MB: 15 pages rasterized at 300 dpi need tens of megabytes.
  mkdirSync(join(mount, 'filler'), { recursive: true });
  writeFileSync(join(mount, 'filler', 'fill'), Buffer.alloc(Math.max(0, free(mount) - MB)));
  try {
    // A balancer is told before a request fails half way.
    await expectError(await t.request('/health'), 503, /storage has [01] MB free, below STORAGE_MIN_FREE_MB=8/);
    await expectError(await t.json('/rasterized-pdf', { id, resolution: 300 }), 507, /storage is full/);
    await expectError(await t.json('/png', { id, resolution: 300 }), 507, /storage is full/);
    // Only the input is stored; the job dirs are gone.
    assert.equal(stored(dataDir).sort(), before.sort());
    assert.equal(readdirSync(join(dataDir, 'work')), []);
  } finally {
    rmSync(join(mount, 'filler'), { recursive: true, force: true });
  }
  // With room again, /health says so and the same input converts.
  const health = await expectOk(await t.request('/health'));
  assert.ok(health.storage.freeMb > 8, JSON.stringify(health.storage));
  const ok = await expectOk(await t.json('/png', { id, resolution: 36, pages: '1' }));
  assert.ok([ok.outputUrl].flat().length === 1);
});

test('DATA_DIR remounted read-only under the running server: uploads, jobs and polled requests answer 507 (EROFS) at once, /health 503 naming it; remounted read-write, all work', async () => {
  const dataDir = join(mount, 'data');
  const id = (await expectOk(await t.form('/upload', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }))).files[0].id as string;
  const before = stored(dataDir);
  const requestsBefore = readdirSync(join(dataDir, 'requests'));
  const polled = () => t.json('/pdf-info', { id, queries: 'page_count' }, { 'Request-Type': 'requestId' });
  execFileSync('mount', ['-o', 'remount,ro', mount]);
  try {
    await expectError(await t.form('/upload', { file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') } }), 507, /storage is read-only \(EROFS\)/);
    await expectError(
      await t.request('/upload', { method: 'POST', headers: { 'content-filename': 'raw.pdf' }, body: readFileSync(corpus('pdf/text-4-pages-pdflatex.pdf')) }),
      507,
      /storage is read-only \(EROFS\)/,
    );
    // A job on a stored input cannot make its temp dir: the storage's fault, not the input's (no 400, no repair).
    await expectError(await t.json('/png', { id, resolution: 36 }), 507, /storage is read-only \(EROFS\)/);
    // A polled request whose record cannot be written gets no id (a restart would not know it): 507 instead.
    const t0 = Date.now();
    const res = await polled();
    const ms = Date.now() - t0;
    const body = await res.json();
    assert.is(res.status, 507, JSON.stringify(body));
    assert.is(body.requestId, undefined);
    assert.match(body.error, /^The request could not be stored or processed: the server's storage is read-only \(EROFS\)\./);
    console.log(`  polled request on a read-only DATA_DIR: ${res.status} in ${ms} ms`);
    // A balancer is told: nothing can be written here (0 MB writable), and why.
    const health = await t.request('/health');
    const state = await health.json();
    assert.is(health.status, 503, JSON.stringify(state));
    assert.is(state.storage.freeMb, 0, JSON.stringify(state));
    assert.is(state.storage.refused, 'read-only (EROFS)', JSON.stringify(state));
    assert.is(state.error, 'This server cannot take work: its storage is read-only (EROFS).');
  } finally {
    execFileSync('mount', ['-o', 'remount,rw', mount]);
  }
  assert.equal(stored(dataDir).sort(), before.sort(), 'nothing was stored, nothing lost');
  assert.equal(readdirSync(join(dataDir, 'requests')).sort(), requestsBefore.sort(), 'no record of a refused request');
  const health = await expectOk(await t.request('/health'));
  assert.is(health.storage.refused, undefined);
  await expectOk(await t.json('/png', { id, resolution: 36, pages: '1' }));
  // Writable again: the polled request gets its id, and its record answers.
  const { requestId } = await expectOk(await polled());
  assert.equal(readdirSync(join(dataDir, 'requests')).sort(), [...requestsBefore, `${requestId}.json`].sort());
  const done = await settledStatus(t, requestId);
  assert.is(done.status, 'completed', JSON.stringify(done));
});

/** A Quire process without the root's right to write anywhere (CAP_DAC_OVERRIDE dropped): directory modes bind it as they bind any user. */
async function startWithoutDacOverride(env: Record<string, string>): Promise<Proc> {
  const port = await freePort();
  const child = spawn('setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, '--import', 'tsx', 'app/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p: Proc = { name: 'no-dac', child, pid: child.pid!, base: `http://127.0.0.1:${port}`, port, log: [], exited: false };
  child.stderr!.on('data', (d) => p.log.push(String(d)));
  child.on('exit', () => (p.exited = true));
  started.push(p);
  await until(
    'the server answers /up',
    async () =>
      !p.exited &&
      (await fetch(`${p.base}/up`).then(
        (r) => r.ok,
        () => false,
      )),
    1_200_000,
  );
  return p;
}

test('DATA_DIR the server may not write to (EACCES): uploads and jobs 507 naming it, /health 503; writable again, both work', async () => {
  if (!existsSync('/usr/bin/setpriv')) {
    console.log('  skipped: setpriv (util-linux) is missing, so the server cannot be run without CAP_DAC_OVERRIDE');
    return;
  }
  // As root the server may write anywhere; without CAP_DAC_OVERRIDE a mode of 0555 stops it as it stops a user.
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-eacces-'));
  const q = await startWithoutDacOverride({ DATA_DIR: dataDir, STORAGE_MIN_FREE_MB: '8' });
  const pdf = readFileSync(corpus('pdf/text-minimal-pdflatex.pdf'));
  const post = (path: string, init: RequestInit) => fetch(`${q.base}${path}`, { method: 'POST', ...init });
  const uploadRaw = () => post('/upload', { headers: { 'content-filename': 'a.pdf' }, body: pdf });
  try {
    const id = ((await expectOk(await uploadRaw())).files[0] as { id: string }).id;
    for (const d of ['resources', 'work']) chmodSync(join(dataDir, d), 0o555);
    try {
      await expectError(await uploadRaw(), 507, /may not write to its storage \(EACCES\)/);
      const json = { 'content-type': 'application/json' };
      await expectError(await post('/png', { headers: json, body: JSON.stringify({ id, resolution: 36 }) }), 507, /may not write to its storage \(EACCES\)/);
      const health = await fetch(`${q.base}/health`);
      const state = await health.json();
      assert.is(health.status, 503, JSON.stringify(state));
      assert.is(state.storage.freeMb, 0, JSON.stringify(state));
      assert.is(state.storage.refused, 'not writable by this server (EACCES)', JSON.stringify(state));
      assert.is(state.error, 'This server cannot take work: its storage is not writable by this server (EACCES).');
    } finally {
      for (const d of ['resources', 'work']) chmodSync(join(dataDir, d), 0o755);
    }
    assert.equal(readdirSync(join(dataDir, 'resources')), [id], 'only the first upload is stored');
    await expectOk(await uploadRaw());
    await expectOk(await fetch(`${q.base}/health`));
  } finally {
    await stop(q);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a quota used up (EDQUOT, a btrfs quota group on a loop device): 507 naming the quota at once, nothing kept; within the quota, stored', async () => {
  // Neither this kernel's tmpfs nor ext4 has quotas built in (CONFIG_TMPFS_QUOTA, CONFIG_QFMT_V2); btrfs quota groups
  // need no quota support of the kernel and bind root as well.
  if (!existsSync('/usr/sbin/mkfs.btrfs') && !existsSync('/sbin/mkfs.btrfs')) {
    console.log('  skipped: mkfs.btrfs (Debian package btrfs-progs) is not installed, so no file system with a quota can be made here');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'quire-quota-'));
  const image = `${dir}.img`;
  const qmount = join(dir, 'mnt');
  mkdirSync(qmount);
  execFileSync('truncate', ['-s', '160M', image]);
  execFileSync('mkfs.btrfs', ['-q', '-f', image], { stdio: 'ignore' });
  execFileSync('mount', ['-o', 'loop', image, qmount]);
  let q: TestApp | undefined;
  try {
    execFileSync('btrfs', ['quota', 'enable', qmount]);
    execFileSync('btrfs', ['qgroup', 'limit', '20M', qmount]);
    const dataDir = join(qmount, 'data');
    q = await startApp({ STORAGE_MIN_FREE_MB: '8' }, { dataDir });
    await expectError(
      await q.request('/upload', { method: 'POST', headers: { 'content-filename': 'big.bin' }, body: Buffer.alloc(30 * MB, 5) }),
      507,
      /storage quota is used up \(EDQUOT\)/,
    );
    assert.equal(stored(dataDir), []);
    assert.is(records(dataDir), 0);
    const small = await expectOk(await q.form('/upload', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }));
    assert.equal(stored(dataDir), [small.files[0].id]);
  } finally {
    await q?.close();
    execFileSync('umount', [qmount]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(image, { force: true });
  }
});

test.run();
