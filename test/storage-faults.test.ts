import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, startApp, type TestApp } from './helpers.js';

/**
 * DATA_DIR on a real file system that fills up (a 40 MB tmpfs, mounted for the suite: CI runs as root): the
 * request that does not fit answers 507 at once, keeps nothing of itself, and blames no input.
 */
const test = suite('storage-faults');
let mount: string;
let t: TestApp;
const MB = 1024 * 1024;

const records = (dataDir: string) =>
  readdirSync(join(dataDir, 'index'))
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

test.run();
