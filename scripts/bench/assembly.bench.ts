// Assembly: /merged-pdf of 20 corpus PDFs and /split-pdf of a 1000-page PDF into single pages, through the
// whole service (upload, queue, qpdf, store), against the bare qpdf command lines in the same run, as ratios.
// Also the naive split (one qpdf process per page) to show what --split-pages saves.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../app/config.js';
import { createDeps } from '../../app/deps.js';
import { createApp } from '../../app/server.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const corpusDir = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-assembly-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn: () => unknown, runs = 3) => {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
};

const pdfs = readdirSync(join(corpusDir, 'pdf'))
  .filter((n) => n.endsWith('.pdf'))
  .sort()
  .slice(0, 20)
  .map((n) => join(corpusDir, 'pdf', n));
const big = join(work, 'big-1000.pdf');
const fed = join(corpusDir, 'pdf/federal-register-15-pages.pdf');
execFileSync('qpdf', ['--empty', '--pages', ...Array(67).fill(fed), '--', join(work, 'big-1005.pdf')]);
execFileSync('qpdf', ['--empty', '--pages', join(work, 'big-1005.pdf'), '1-1000', '--', big]);

const config = loadConfig({ DATA_DIR: join(work, 'data'), LOG_LEVEL: 'silent' });
const deps = await createDeps(config);
const app = createApp(deps);
const post = async (path: string, fields: [string, string | { file: string }][]) => {
  const fd = new FormData();
  for (const [k, v] of fields) typeof v === 'string' ? fd.append(k, v) : fd.append(k, new Blob([readFileSync(v.file)]), basename(v.file));
  const res = await app.request(`http://bench${path}`, { method: 'POST', body: fd });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

const rows: [string, number, number][] = [];
const mergeOurs = await time(() =>
  post('/merged-pdf', [
    ...pdfs.map((f) => ['file', { file: f }] as [string, { file: string }]),
    ...pdfs.map(() => ['pages[]', '1-last'] as [string, string]),
    ...pdfs.map(() => ['type[]', 'file'] as [string, string]),
  ]),
);
const mergeRaw = await time(() => execFileSync('qpdf', ['--empty', '--pages', ...pdfs.flatMap((f) => [f, '1-z']), '--', join(work, 'merged.pdf')]));
rows.push(['merge 20 corpus PDFs', mergeOurs, mergeRaw]);

const splitOurs = await time(() => post('/split-pdf', [['file', { file: big }]]));
const splitRaw = await time(() => {
  rmSync(join(work, 'split'), { recursive: true, force: true });
  mkdirSync(join(work, 'split'));
  execFileSync('qpdf', ['--split-pages', big, join(work, 'split', 'p-%d.pdf')]);
});
rows.push(['split 1000 pages into 1000 PDFs', splitOurs, splitRaw]);
// The naive way, timed on 50 pages and scaled to 1000 (the whole run would take minutes).
const naive50 = await time(() => {
  for (let p = 1; p <= 50; p++) execFileSync('qpdf', ['--empty', '--pages', big, String(p), '--', join(work, 'naive.pdf')]);
}, 1);
rows.push(['  (naive: one qpdf per page, 50 x 20)', naive50 * 20, splitRaw]);

console.log('| case | ours ms | bare qpdf ms | ratio |');
console.log('|---|---:|---:|---:|');
for (const [name, ours, raw] of rows) console.log(`| ${name} | ${ours.toFixed(0)} | ${raw.toFixed(0)} | ${(ours / raw).toFixed(2)} |`);
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);

await deps.jobs.drain(1000);
await deps.store.flushAll();
rmSync(work, { recursive: true, force: true });
