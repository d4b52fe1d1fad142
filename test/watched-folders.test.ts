import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { watchFolders } from '../app/pipelines/index.js';
import { corpus, pdfPages, sleep, startApp, tool, until } from './helpers.js';
import { crash, type Proc, REDIS_SERVER, startQuire, startRedis, stop, tail } from './processes.js';

// Watched folders end to end: good, junk, slowly written and same-named files; a kill -9 in the middle of a run;
// two workers on one folder. Outputs read back with qpdf and pdftotext.
const FOUR = corpus('pdf/text-4-pages-pdflatex.pdf');
const SCAN = corpus('scans/huckleberry-finn-p22-scan.pdf');
const ls = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => !n.startsWith('.'))
        .sort()
    : [];

function setup(pipelines: Record<string, unknown[]>) {
  const root = mkdtempSync(join(tmpdir(), 'quire-watch-'));
  const defs = join(root, 'pipelines');
  mkdirSync(defs);
  for (const [name, steps] of Object.entries(pipelines)) writeFileSync(join(defs, `${name}.json`), JSON.stringify({ steps }));
  return { root, defs, watch: join(root, 'watch') };
}

test('a folder fed with good, junk, slowly written and same-named files: each filed once, nothing deleted', async () => {
  const { defs, watch } = setup({ halves: [{ operation: '/split-pdf', fields: { pages: ['1-2', '3-4'] } }] });
  const t = await startApp({ PIPELINES_DIR: defs, WATCH_DIR: watch, WATCH_SETTLE_SECONDS: '1', METRICS: 'on' });
  const w = await watchFolders(t.deps, { pollMs: 100 });
  const dir = (p: string) => join(watch, 'halves', p);
  try {
    assert.ok(['in', 'out', 'done', 'failed'].every((p) => existsSync(dir(p))));
    copyFileSync(FOUR, dir('in/report.pdf'));
    writeFileSync(dir('in/notes.pdf'), 'these are notes, not a PDF\n');
    writeFileSync(dir('in/.partial.pdf'), readFileSync(FOUR));
    // Written in pieces with pauses shorter than the settle time: taken only once complete.
    const whole = readFileSync(FOUR);
    const third = Math.ceil(whole.length / 3);
    writeFileSync(dir('in/slow.pdf'), whole.subarray(0, third));
    for (const k of [1, 2]) {
      await sleep(600);
      assert.not.ok(ls(dir('done')).includes('slow.pdf'), 'taken before it was complete');
      appendFileSync(dir('in/slow.pdf'), whole.subarray(k * third, (k + 1) * third));
    }
    await until('three files filed', () => ls(dir('done')).length + ls(dir('failed')).filter((n) => !n.endsWith('.json')).length === 3, 60_000);
    assert.equal(ls(dir('done')), ['report.pdf', 'slow.pdf']);
    assert.equal(ls(dir('out')), ['report_1.pdf', 'report_2.pdf', 'slow_1.pdf', 'slow_2.pdf']);
    for (const n of ['report_1.pdf', 'slow_2.pdf']) assert.is(pdfPages(dir(`out/${n}`)), 2, n);
    assert.match(tool('pdftotext', [dir('out/slow_2.pdf'), '-']), /\w{4,}/);
    // Junk is kept, with the reason beside it.
    assert.equal(ls(dir('failed')), ['notes.pdf', 'notes.pdf.error.json']);
    const report = JSON.parse(readFileSync(dir('failed/notes.pdf.error.json'), 'utf8'));
    assert.is(report.status, 400);
    assert.is(report.step, 0);
    assert.is(report.operation, '/split-pdf');
    assert.match(report.error, /notes\.pdf is not a PDF: it is text/);
    assert.equal(readFileSync(dir('failed/notes.pdf'), 'utf8'), 'these are notes, not a PDF\n');
    // Hidden files are being written by convention: left alone.
    assert.equal(readdirSync(dir('in')), ['.partial.pdf']);

    // The same name again later: new names beside the first ones, never over them.
    copyFileSync(FOUR, dir('in/report.pdf'));
    await until('second report filed', () => ls(dir('done')).includes('report-2.pdf'), 60_000);
    assert.equal(ls(dir('out')), ['report-2_1.pdf', 'report-2_2.pdf', 'report_1.pdf', 'report_2.pdf', 'slow_1.pdf', 'slow_2.pdf']);
    const metrics = await (await t.request('/metrics')).text();
    assert.match(metrics, /quire_watched_files_total\{pipeline="halves",outcome="done"\} 3/);
    assert.match(metrics, /quire_watched_files_total\{pipeline="halves",outcome="failed"\} 1/);
    // The runs' resources were removed once their files were in the folder.
    assert.is((await t.deps.store.totals()).count, 0);
  } finally {
    await w.stop();
    await t.close();
  }
});

/** Files of a folder, counted by state: a file is never in two places and never lost. */
const states = (watch: string, name: string) => Object.fromEntries(['in', 'out', 'done', 'failed'].map((p) => [p, ls(join(watch, name, p))]));

test('kill -9 in the middle of a run: the file is taken again at the next start, outputs written once', async () => {
  const { root, defs, watch } = setup({ ocr: [{ operation: '/pdf-with-ocr-text', fields: { languages: 'English' } }] });
  const env = { PIPELINES_DIR: defs, WATCH_DIR: watch, WATCH_SETTLE_SECONDS: '1', DATA_DIR: join(root, 'data') };
  let q: Proc = await startQuire('watcher', env);
  try {
    copyFileSync(SCAN, join(watch, 'ocr/in/page.pdf'));
    // Taken: its journal is written before the pipeline starts; OCR of the page takes seconds.
    await until('file taken', () => existsSync(join(watch, 'ocr/.quire/page.pdf.json')), 60_000);
    await sleep(500);
    await crash(q);
    assert.equal(states(watch, 'ocr'), { in: ['page.pdf'], out: [], done: [], failed: [] }, 'killed mid-run: the file is still in in/');
    q = await startQuire('watcher-again', env);
    await until('filed after restart', () => ls(join(watch, 'ocr/done')).length === 1, 180_000);
    assert.equal(states(watch, 'ocr'), { in: [], out: ['page.pdf'], done: ['page.pdf'], failed: [] }, tail(q));
    assert.match(tool('pdftotext', [join(watch, 'ocr/out/page.pdf'), '-']), /Huckleberry|Tom|the/i);
    assert.not.ok(existsSync(join(watch, 'ocr/.quire/page.pdf.json')), 'journal removed once filed');
  } finally {
    await stop(q);
  }
});

test('two workers on one folder (cluster mode): every file taken by exactly one of them', async () => {
  if (!REDIS_SERVER) {
    console.log('  skipped: redis-server is not installed (Debian package redis-server)');
    return;
  }
  const { root, defs, watch } = setup({ split: [{ operation: '/split-pdf', fields: { pages: ['1', '2-4'] } }] });
  const redis = await startRedis(root);
  const env = { PIPELINES_DIR: defs, WATCH_DIR: watch, WATCH_SETTLE_SECONDS: '1', DATA_DIR: join(root, 'data'), REDIS_URL: redis.url, LOG_LEVEL: 'info' };
  const workers = [await startQuire('worker-a', env), await startQuire('worker-b', env)];
  try {
    const names = Array.from({ length: 8 }, (_, i) => `doc${i}.pdf`);
    for (const n of names) copyFileSync(FOUR, join(watch, 'split/in', n));
    await until('all filed', () => ls(join(watch, 'split/done')).length === names.length, 180_000);
    const s = states(watch, 'split');
    assert.equal(s.done, names);
    assert.equal(
      s.out,
      names.flatMap((n) => [n.replace('.pdf', '_1.pdf'), n.replace('.pdf', '_2.pdf')]).sort(),
      'no file processed twice (a second run would write doc0-2_1.pdf...)',
    );
    assert.equal(s.failed, []);
    for (const n of s.out) assert.is(pdfPages(join(watch, 'split/out', n)), n.endsWith('_1.pdf') ? 1 : 3);
    // Exactly one "watched file" line per file, across both workers.
    const taken = workers.flatMap((w) => w.log.filter((l) => l.includes('"msg":"watched file"')).map((l) => JSON.parse(l).file as string));
    assert.equal(taken.sort(), names, workers.map(tail).join(''));
  } finally {
    for (const w of workers) await stop(w);
    await stop(redis.proc);
  }
});

test.run();
