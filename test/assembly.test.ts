import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runsBySize } from '../app/impose/index.js';
import { interleave } from '../app/operations/merged-pdf.js';
import { rangeText } from '../engines/qpdf-edit.js';
import { corpus, pdfPages, pdfText, startApp, type TestApp } from './helpers.js';

let t: TestApp;
const FED = corpus('pdf/federal-register-15-pages.pdf'); // 15 pages
const TEX4 = corpus('pdf/text-4-pages-pdflatex.pdf'); // 4 pages
const POTATO = corpus('encrypted/rc4-128-owner-master-no-user-password.pdf'); // 30 pages 'Potato N', opens without password
const tmp = mkdtempSync(join(tmpdir(), 'quire-assembly-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const ok = async (res: Response) => {
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  return body;
};
const upload = async (path: string) => {
  const body = await ok(await t.form('/upload', { file: { file: path } }));
  return body.files[0].id as string;
};
/** The 'Potato N' numbers on each page of a corpus-derived output, read with pdftotext. */
const potatoes = (path: string) =>
  Array.from(
    { length: pdfPages(path) },
    (_, i) => /Potato (\d+)/.exec(execFileSync('pdftotext', ['-f', `${i + 1}`, '-l', `${i + 1}`, path, '-'], { encoding: 'utf8' }))?.[1],
  ).map(Number);

test('rangeText folds runs both ways and keeps repeats', () => {
  assert.is(rangeText([1, 2, 3, 5, 9, 8, 7, 7]), '1-3,5,9-7,7');
  assert.is(rangeText(Array.from({ length: 1000 }, (_, i) => i + 1)), '1-1000');
});

test('interleave follows type[]', () => {
  assert.equal(interleave(['u1', 'u2'], ['i1'], ['id', 'file', 'file']), ['i1', 'u1', 'u2']);
  assert.equal(interleave(['u1'], ['i1', 'i2'], ['id', 'file', 'id']), ['i1', 'u1', 'i2']);
  assert.throws(() => interleave(['u1'], ['i1'], ['file', 'file']), /type/);
  assert.throws(() => interleave(['u1'], ['i1'], undefined), /type/);
});

test('runsBySize groups equal-sized splits', () => {
  assert.equal(runsBySize([[1], [2, 3], [4], [5, 6]]), [
    { size: 1, members: [0, 2] },
    { size: 2, members: [1, 3] },
  ]);
});

test('merge: uploads and ids interleaved by type[], pages per input, reversal, even/odd, same file twice', async () => {
  const id = await upload(POTATO);
  const res = await t.form('/merged-pdf', {
    file: [{ file: POTATO }, { file: TEX4 }],
    'id[]': [id],
    'type[]': ['id', 'file', 'file'],
    'pages[]': ['3-1', 'even', '4-last'],
  });
  const body = await ok(res);
  assert.is(typeof body.outputId, 'string');
  const out = await t.download(body.outputUrl);
  // id (potato 3,2,1 -> 'Potato 2,1,0'), upload 1 (potato even pages 2..30), upload 2 (tex4 page 4)
  assert.is(pdfPages(out), 3 + 15 + 1);
  const nums = potatoes(out);
  assert.equal(nums.slice(0, 3), [2, 1, 0]);
  assert.equal(
    nums.slice(3, 18),
    Array.from({ length: 15 }, (_, i) => 2 * i + 1),
  );
  assert.equal((body.inputId as string[]).length, 3);
  assert.ok((body.inputId as string[]).includes(id));
  const info = await ok(await t.request(`/resource/${body.outputId}?format=info`));
  assert.is(info.name, 'service_merged-pdf.pdf');
});

test('merge: JSON body with ids, odd, last-2, output name', async () => {
  const a = await upload(FED);
  const b = await upload(TEX4);
  const body = await ok(await t.json('/merged-pdf', { id: [a, b, a], pages: ['odd', 'last-2', '1'], type: ['id', 'id', 'id'], output: 'joined' }));
  assert.equal(body.inputId, [a, b, a]);
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 8 + 3 + 1);
  const info = await ok(await t.request(`/resource/${body.outputId}?format=info`));
  assert.is(info.name, 'joined.pdf');
});

test('merge errors: page outside, page 0, malformed, count mismatch, password, broken', async () => {
  for (const pages of [['1-5'], ['0'], ['1-x']]) {
    const res = await t.form('/merged-pdf', { file: { file: TEX4 }, 'pages[]': pages, 'type[]': ['file'] });
    assert.is(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, /pages/);
  }
  let res = await t.form('/merged-pdf', { file: [{ file: TEX4 }, { file: TEX4 }], 'pages[]': ['1'], 'type[]': ['file', 'file'] });
  assert.is(res.status, 400);
  assert.match(((await res.json()) as { error: string }).error, /pages/);
  res = await t.form('/merged-pdf', {
    file: [{ file: TEX4 }, { file: corpus('encrypted/rc4-128-user-view-owner-master.pdf') }],
    'pages[]': ['1', '1'],
    'type[]': ['file', 'file'],
  });
  assert.is(res.status, 401);
  assert.match(((await res.json()) as { error: string }).error, /password protected/);
  res = await t.form('/merged-pdf', {
    file: [{ file: TEX4 }, { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') }],
    'pages[]': ['1', '1'],
    'type[]': ['file', 'file'],
  });
  assert.is(res.status, 400);
});

test('split: each pages[] entry one PDF in order, names prefix_n', async () => {
  const body = await ok(await t.form('/split-pdf', { file: { file: POTATO }, 'pages[]': ['5-3', 'even', '30', '1,2'], output: 'part' }));
  assert.is(body.outputId.length, 4);
  const outs = await Promise.all((body.outputUrl as string[]).map((u) => t.download(u)));
  assert.equal(potatoes(outs[0]), [4, 3, 2]);
  assert.is(pdfPages(outs[1]), 15);
  assert.equal(potatoes(outs[2]), [29]);
  assert.equal(potatoes(outs[3]), [0, 1]);
  const names = await Promise.all((body.outputId as string[]).map(async (id) => (await ok(await t.request(`/resource/${id}?format=info`))).name));
  assert.equal(names, ['part_1.pdf', 'part_2.pdf', 'part_3.pdf', 'part_4.pdf']);
});

test('split: no pages -> one PDF per page; default prefix', async () => {
  const body = await ok(await t.form('/split-pdf', { file: { file: TEX4 } }));
  assert.is(body.outputId.length, 4);
  const outs = await Promise.all((body.outputUrl as string[]).map((u) => t.download(u)));
  for (const o of outs) assert.is(pdfPages(o), 1);
  assert.match(pdfText(outs[3]), /\S/);
  const info = await ok(await t.request(`/resource/${body.outputId[3]}?format=info`));
  assert.is(info.name, 'text-4-pages-pdflatex_service_split-pdf_4.pdf');
});

test('split: a 1000-page PDF into single pages', async () => {
  const big = join(tmp, 'big.pdf');
  execFileSync('qpdf', ['--empty', '--pages', ...Array(67).fill(FED), '--', big]);
  execFileSync('qpdf', ['--empty', '--pages', big, '1-1000', '--', join(tmp, 'big1000.pdf')]);
  const body = await ok(await t.form('/split-pdf', { file: { file: join(tmp, 'big1000.pdf') } }));
  assert.is(body.outputId.length, 1000);
  assert.is(pdfPages(await t.download(body.outputUrl[999])), 1);
});

test('split errors: page outside, 0, malformed, just last, password, broken', async () => {
  for (const pages of [['9'], ['0'], ['2-'], ['last']]) {
    const res = await t.form('/split-pdf', { file: { file: TEX4 }, 'pages[]': pages });
    assert.is(res.status, 400, pages[0]);
    assert.match(((await res.json()) as { error: string }).error, /pages/);
  }
  let res = await t.form('/split-pdf', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') } });
  assert.is(res.status, 401);
  res = await t.form('/split-pdf', { file: { file: corpus('malformed/invalid-header-then-eof.pdf') } });
  assert.is(res.status, 400);
});

test.run();
