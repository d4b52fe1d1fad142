import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectOk, pdfPages, startApp, type TestApp, tool } from './helpers.js';

/**
 * /compared-pdf on big documents (issue 38): the 15-page Federal Register repeated 134 times (2,010 pages) against
 * a copy with pages 700-702 replaced by another document's three and page 1,500 deleted, and 40 times (600 pages;
 * 2,010 pages read twice more would double the file's time) against itself. The job's heap is capped at 128 MB:
 * with each word an object (before), the 2,010 pages compared with themselves peaked at 1,095 MB of heap.
 */
let t: TestApp;
const FED = corpus('pdf/federal-register-15-pages.pdf');
const OTHER = corpus('pdf/multicolumn-3-pages.pdf');
const tmp = mkdtempSync(join(tmpdir(), 'quire-compare-big-'));
const first = join(tmp, 'register-2010.pdf');
const second = join(tmp, 'register-changed.pdf');
const shorter = join(tmp, 'register-600.pdf');

test.before(async () => {
  tool('qpdf', ['--empty', '--pages', ...Array(134).fill(FED), '--', first]);
  tool('qpdf', ['--empty', '--pages', first, '1-699', OTHER, '1-3', first, '703-1499,1501-2010', '--', second]);
  tool('qpdf', ['--empty', '--pages', first, '1-600', '--', shorter]);
  t = await startApp({ JOB_MAX_MEMORY_MB: '128' });
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The first words of a page as pdftotext reads them. */
const opening = (pdf: string, page: number, n = 6) =>
  tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-'])
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, n)
    .join(' ');
const wordCount = (pdf: string, page: number) =>
  tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-'])
    .split(/\s+/)
    .filter(Boolean).length;

/** Pixels of each mark colour on a page drawn by Poppler at 72 dpi (the register and the other document are black on white). */
async function markColours(pdf: string, page: number) {
  const prefix = join(tmp, `p${page}`);
  tool('pdftoppm', ['-r', '72', '-png', '-singlefile', '-f', String(page), '-l', String(page), pdf, prefix]);
  const { data } = await sharp(`${prefix}.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const n = { yellow: 0, green: 0, red: 0 };
  for (let i = 0; i < data.length; i += 3) {
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (r > 200 && g > 170 && b < 120) n.yellow++;
    else if (g > 200 && r < 200 && b < 200) n.green++;
    else if (r > 180 && g < 80 && b < 80) n.red++;
  }
  return n;
}

test('2,010 pages against a copy with 3 pages replaced and 1 deleted: those pages alone, marked, under a 128 MB heap', async () => {
  const body = await expectOk(await t.form('/compared-pdf', { file: { file: first }, compare_file: { file: second } }));
  assert.is(body.identical, false);
  const diffs = body.differences as Record<string, any>[];
  assert.equal(
    diffs.map((d) => `${d.kind} p${d.page} (other p${d.other_page})`),
    ['changed p700 (other p700)', 'inserted p701 (other p700)', 'inserted p702 (other p700)', 'deleted p1500 (other p1500)'],
  );
  // Page 700 of the first is the register's page 10, page 1,500 its page 15.
  assert.ok(diffs[0].text.startsWith(opening(OTHER, 1)), diffs[0].text.slice(0, 80));
  assert.ok(diffs[0].replaced_text.startsWith(opening(FED, 10)), diffs[0].replaced_text.slice(0, 80));
  assert.ok(diffs[1].text.startsWith(opening(OTHER, 2)), diffs[1].text.slice(0, 80));
  assert.ok(diffs[2].text.startsWith(opening(OTHER, 3)), diffs[2].text.slice(0, 80));
  assert.ok(diffs[3].text.startsWith(opening(FED, 15)), diffs[3].text.slice(0, 80));
  const [got, want] = [diffs[3].text.split(' ').length, wordCount(FED, 15)];
  assert.ok(Math.abs(got - want) <= want * 0.02, `deleted page: ${got} words, pdftotext reads ${want}`);

  // The output is the second document, its text as it was, with marks on the changed pages only.
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 2009);
  const page700 = (pdf: string) => tool('pdftotext', ['-f', '700', '-l', '700', pdf, '-']);
  assert.is(page700(out), page700(second));
  const marks = Object.fromEntries(await Promise.all([1, 699, 700, 701, 1499, 1500].map(async (p) => [p, await markColours(out, p)])));
  assert.ok(marks[700].yellow > 1000, `page 700 highlighted as changed: ${JSON.stringify(marks[700])}`);
  assert.ok(marks[701].green > 1000, `page 701 highlighted as inserted: ${JSON.stringify(marks[701])}`);
  assert.ok(marks[1500].red > 5, `a deletion's bar on page 1500: ${JSON.stringify(marks[1500])}`);
  for (const p of [1, 699, 1499]) assert.equal(marks[p], { yellow: 0, green: 0, red: 0 }, `page ${p} unmarked`);
});

test('600 pages against themselves: identical, the output the same pages', async () => {
  const id = (await expectOk(await t.form('/upload', { file: { file: shorter } }))).files[0].id;
  const body = await expectOk(await t.json('/compared-pdf', { id, compare_id: id }));
  assert.is(body.identical, true);
  assert.equal(body.differences, []);
  assert.is(pdfPages(await t.download(body.outputUrl)), 600);
});

test.run();
