import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  // A 3 s settle against 300 ms pauses: a pause would have to stretch tenfold (a stalled event loop, shared with
  // the watcher here) before a piece looked complete.
  const t = await startApp({ PIPELINES_DIR: defs, WATCH_DIR: watch, WATCH_SETTLE_SECONDS: '3', METRICS: 'on' });
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
      await sleep(300);
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
    // A run is counted once it has also removed its resources, a moment after its file reached done/.
    let metrics = '';
    await until(
      'the third run counted',
      async () => {
        metrics = await (await t.request('/metrics')).text();
        return /quire_watched_files_total\{pipeline="halves",outcome="done"\} 3/.test(metrics);
      },
      60_000,
    );
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

/**
 * An OpenAI-compatible model on loopback that answers only once `open`: a run that reaches it is held there,
 * mid-pipeline, for as long as the test needs (a machine of any speed stops at the same point). Its translation
 * is the prompt itself after "[fr]".
 */
async function heldModel() {
  const model = { url: '', asked: 0, open: false, close: () => new Promise<void>((r) => server.close(() => r())) };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      model.asked++;
      if (!model.open) return; // never answered: the process asking is killed meanwhile
      const body = JSON.parse(raw);
      const content = `SOURCE: en\n\n[fr] ${body.messages.at(-1).content}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  return model;
}

test('kill -9 in the middle of a run: the file is taken again at the next start, outputs written once', async () => {
  // OCR, then a translation whose model holds the first run: the kill lands mid-run by construction, not by timing.
  const { root, defs, watch } = setup({
    ocr: [
      { operation: '/pdf-with-ocr-text', fields: { languages: 'English' } },
      { operation: '/translated-pdf-text', fields: { output_language: 'fr', output_type: 'file' } },
    ],
  });
  const model = await heldModel();
  const env = {
    PIPELINES_DIR: defs,
    WATCH_DIR: watch,
    WATCH_SETTLE_SECONDS: '1',
    DATA_DIR: join(root, 'data'),
    LLM_URL: model.url,
    LLM_MODEL: 'held',
    LLM_TIMEOUT_SECONDS: '600',
  };
  let q: Proc = await startQuire('watcher', env);
  try {
    copyFileSync(SCAN, join(watch, 'ocr/in/page.pdf'));
    await until('the run held at its second step', () => model.asked > 0, 180_000);
    assert.ok(existsSync(join(watch, 'ocr/.quire/page.pdf.json')), 'taken: its journal is written before the pipeline starts');
    await crash(q);
    assert.equal(states(watch, 'ocr'), { in: ['page.pdf'], out: [], done: [], failed: [] }, 'killed mid-run: the file is still in in/');
    model.open = true;
    q = await startQuire('watcher-again', env);
    await until('filed after restart', () => ls(join(watch, 'ocr/done')).length === 1, 180_000);
    assert.equal(states(watch, 'ocr'), { in: [], out: ['page.txt'], done: ['page.pdf'], failed: [] }, tail(q));
    assert.match(readFileSync(join(watch, 'ocr/out/page.txt'), 'utf8'), /\[fr\][\s\S]*(Huckleberry|Tom|the)/i);
    assert.not.ok(existsSync(join(watch, 'ocr/.quire/page.pdf.json')), 'journal removed once filed');
  } finally {
    await stop(q);
    await model.close();
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
    // Each run logs once it has cleaned up, a moment after its file reached done/.
    const taken = () => workers.flatMap((w) => w.log.filter((l) => l.includes('"msg":"watched file"')).map((l) => JSON.parse(l).file as string));
    await until('every run logged', () => taken().length >= names.length, 60_000);
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
    assert.equal(taken().sort(), names, workers.map(tail).join(''));
  } finally {
    for (const w of workers) await stop(w);
    await stop(redis.proc);
  }
});

test.run();
