import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { columnCuts, type Piece } from '../app/export/index.js';
import { pdfFromObjects } from './fixtures.js';
import { expectOk, pdfWord, startApp, type TestApp, tool } from './helpers.js';

/**
 * No 500 from odd geometry (issue 24): pages and text whose numbers are zero, negative, huge or degenerate reach
 * every exporter and text reader as a 200 (or a clear 4xx), never as NaN or Infinity in what is written; /word's
 * documents open in LibreOffice.
 */

let t: TestApp;
let dir: string;

const HELVETICA = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
const NO_WIDTHS = `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 32 /LastChar 126 /Widths [${Array(95).fill(0).join(' ')}] >>`;
/** One page: `content` drawn with /F1 (Helvetica) and /F2 (Helvetica whose glyphs are all 0 wide). */
const onePage = (content: string, box = '[0 0 612 792]', extra = '') =>
  pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox ${box} ${extra} /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> /Contents 4 0 R >>`,
    ['<< >>', Buffer.from(content, 'latin1')],
    HELVETICA,
    NO_WIDTHS,
  ]);
const BODY = 'BT /F1 12 Tf 72 700 Td (Body text before the odd part.) Tj ET BT /F1 12 Tf 72 680 Td (Another ordinary line here.) Tj ET ';
const HUGE = `1${'0'.repeat(30)}`;
const text = (x: number, y: number, s: string, size = 10) => `BT /F1 ${size} Tf ${x} ${y} Td (${s}) Tj ET`;

/** A two-column page whose left column ends in a list item that goes on at the top of the right column. */
function listAcrossColumns(): Buffer {
  const left = [
    'The first column starts with some prose that runs',
    'over several rows so that the page model sees a',
    'column of ordinary text set in ten point type and',
    'read from top to bottom before the other column.',
  ];
  const right = [
    'after the break and the right column goes on with',
    'more prose of the same kind so that it is a real',
    'column too with several rows of ordinary text',
    'until the end of the page where it stops here.',
  ];
  const ops = [
    ...left.map((s, i) => text(72, 700 - i * 12, s)),
    text(72, 652, '\\225'),
    text(84, 652, 'A list item whose text goes on'),
    ...right.map((s, i) => text(320, 700 - i * 12, s)),
  ];
  return onePage(ops.join('\n'));
}

const CASES: Record<string, Buffer> = {
  'mediabox-zero': onePage(BODY, '[0 0 0 0]'),
  'mediabox-zero-width': onePage(BODY, '[0 0 0 792]'),
  'mediabox-negative': onePage(BODY, '[0 0 -612 -792]'),
  'mediabox-huge': onePage(BODY, `[0 0 ${HUGE} ${HUGE}]`),
  'cropbox-outside': onePage(BODY, '[0 0 612 792]', '/CropBox [1000 1000 2000 2000]'),
  'userunit-zero': onePage(BODY, '[0 0 612 792]', '/UserUnit 0'),
  'text-matrix-zero': onePage(`${BODY}BT /F1 12 Tf 0 0 0 0 72 600 Tm (Zero matrix) Tj ET`),
  'font-size-zero': onePage(`${BODY}BT /F1 0 Tf 72 600 Td (Zero size) Tj ET`),
  'font-size-tiny': onePage(`${BODY}BT /F1 0.00001 Tf 72 600 Td (Tiny size) Tj ET`),
  'font-size-huge': onePage(`${BODY}BT /F1 1000000000 Tf 72 600 Td (Huge size) Tj ET`),
  'only-zero-size': onePage('BT /F1 0 Tf 72 700 Td (Only zero) Tj ET BT /F1 0 Tf 72 690 Td (Second zero) Tj ET'),
  'table-of-zero-size': onePage(BODY + ['a b', 'c d'].map((r, i) => `${text(72, 500 - i * 14, r[0], 0)} ${text(300, 500 - i * 14, r[2], 0)}`).join(' ')),
  'coordinates-huge': onePage(`${BODY}BT /F1 12 Tf 1 0 0 1 ${HUGE} 600 Tm (Far away) Tj ET BT /F1 12 Tf ${HUGE} 0 0 ${HUGE} 72 580 Tm (Huge matrix) Tj ET`),
  'ctm-zero-height': onePage(`${BODY}q 1 0 0 0 0 0 cm BT /F1 12 Tf 72 600 Td (Flat CTM) Tj ET Q`),
  'ctm-rotated-zero-height': onePage(`${BODY}q 0 1 0 0 300 300 cm BT /F1 12 Tf 0 0 Td (Rotated flat) Tj ET Q`),
  'ctm-rotated': onePage(
    `${BODY}q 0 1 -1 0 400 300 cm BT /F1 12 Tf 0 0 Td (Rotated text) Tj ET Q q 0.7071 0.7071 -0.7071 0.7071 300 200 cm BT /F1 12 Tf 0 0 Td (Diagonal) Tj ET Q`,
  ),
  'zero-width-words': onePage(`${BODY}BT /F1 12 Tf 0 Tz 72 600 Td (No width) Tj ET BT /F2 12 Tf 72 560 Td (Zero widths font) Tj ET`),
  'list-across-columns': listAcrossColumns(),
  'wide-page-table': onePage(
    ['a', 'b', 'c', 'd'].map((r, i) => `${text(72, 700 - i * 14, `${r}1`, 12)} ${text(190000000, 700 - i * 14, `${r}2`, 12)}`).join(' '),
    '[0 0 200000000 800]',
  ),
  'userunit-two': onePage('BT /F1 12 Tf 72 700 Td (Hello) Tj ET', '[0 0 612 792]', '/UserUnit 2'),
};
const file = (name: string) => join(dir, `${name}.pdf`);

test.before(async () => {
  t = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'quire-geometry-'));
  for (const [name, bytes] of Object.entries(CASES)) writeFileSync(file(name), bytes);
  mkdirSync(join(dir, 'docx'));
});
test.after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const unzipXml = (path: string) => execFileSync('sh', ['-c', 'unzip -p "$0" "*.xml"', path], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
/** Attribute values of an OOXML package that hold NaN or Infinity (what docx, exceljs and pptxgenjs write for them). */
const badAttributes = (path: string) => unzipXml(path).match(/\w+(:\w+)?="[^"]*(NaN|Infinity)[^"]*"/g) ?? [];

const allNumbers = (v: unknown): unknown[] =>
  Array.isArray(v) ? v.flatMap(allNumbers) : v && typeof v === 'object' ? Object.values(v).flatMap(allNumbers) : [v];

test('hostile geometry: /word, /excel, /powerpoint, /extracted-text, /markdown and /pdf-info answer 200 with finite numbers', async () => {
  const office: [string, string][] = [
    ['/word', 'docx'],
    ['/excel', 'xlsx'],
    ['/powerpoint', 'pptx'],
  ];
  for (const name of Object.keys(CASES)) {
    for (const [path, ext] of office) {
      const body = await expectOk(await t.form(path, { file: { file: file(name) } }));
      const out = await t.download(body.outputUrl as string);
      assert.equal(badAttributes(out), [], `${name} ${path}`);
      if (ext === 'docx') writeFileSync(join(dir, 'docx', `${name}.docx`), readFileSync(out));
    }
    const words = await expectOk(await t.form('/extracted-text', { file: { file: file(name) }, word_coordinates: 'on', word_style: 'on' }));
    // NaN and Infinity become null in JSON: every coordinate and size must still be a number.
    for (const w of words.words as { text: string; coordinates: unknown; style: { font: { size: number } } }[]) {
      assert.ok(
        allNumbers(w.coordinates).every((n) => typeof n === 'number' && Number.isFinite(n)),
        `${name}: ${JSON.stringify(w)}`,
      );
      assert.ok(w.style.font.size > 0, `${name}: ${JSON.stringify(w)}`);
    }
    await expectOk(await t.form('/markdown', { file: { file: file(name) } }));
    const info = await expectOk(await t.form('/pdf-info', { file: { file: file(name) }, queries: 'page_count,page_boxes' }));
    assert.is(info.page_count, 1, name);
  }
});

test('LibreOffice opens every /word answer, with the text in it', () => {
  const docs = Object.keys(CASES).map((name) => join(dir, 'docx', `${name}.docx`));
  tool('soffice', [`-env:UserInstallation=file://${join(dir, 'lo')}`, '--headless', '--convert-to', 'pdf', '--outdir', join(dir, 'lo-out'), ...docs]);
  for (const name of Object.keys(CASES)) {
    const pdf = join(dir, 'lo-out', `${name}.pdf`);
    assert.ok(existsSync(pdf), `${name}: LibreOffice could not open the docx`);
    // Text MuPDF reads on the page (not outside its box) is in the document too.
    if (tool('mutool', ['draw', '-F', 'txt', '-o', '-', file(name)]).includes('Body text before'))
      assert.match(tool('pdftotext', [pdf, '-']), /Body text before the odd part\./, name);
  }
  assert.match(tool('pdftotext', [join(dir, 'lo-out', 'list-across-columns.pdf'), '-']), /A list item whose text goes on[\s\S]*after the break/);
});

test('a list item that goes on in the next column: its piece there is indented where its rows start (was an Infinity indent, a 500)', async () => {
  const xml = unzipXml(join(dir, 'docx', 'list-across-columns.docx'));
  const indents = [...xml.matchAll(/<w:ind ([^>]*)\/>/g)].map((m) => m[1]);
  assert.ok(indents.length >= 3);
  for (const ind of indents)
    assert.ok(
      [...ind.matchAll(/="([^"]*)"/g)].every((m) => /^-?\d+$/.test(m[1])),
      ind,
    );
});

type WordOut = {
  text: string;
  coordinates: Record<'topLeft' | 'topRight' | 'bottomLeft' | 'bottomRight', { x: number; y: number }>;
  style: { font: { size: number } };
};
const wordsOf = async (name: string) =>
  (await expectOk(await t.form('/extracted-text', { file: { file: file(name) }, word_coordinates: 'on', word_style: 'on' }))).words as WordOut[];

test('text at a degenerate text matrix is read at its place, left to right, at a size above zero', async () => {
  for (const name of ['text-matrix-zero', 'font-size-zero']) {
    // MuPDF draws such glyphs at one point (72 600 in user space) and gives them no direction and no size.
    const odd = (await wordsOf(name)).filter((w) => !/Body|text|before|the|odd|part|Another|ordinary|line|here/.test(w.text));
    assert.ok(odd.length > 0, name);
    for (const w of odd) {
      assert.ok(Math.abs(w.coordinates.topLeft.x - 72) < 1 && Math.abs(w.coordinates.topLeft.y - 600) < 1, `${name}: ${JSON.stringify(w)}`);
      assert.is(w.style.font.size, 1, `${name}: drawn at no size, written at 1 pt`);
    }
  }
  // 0 Tz: no width, but the glyphs are as tall as at 12 pt, and that is their size.
  const flat = (await wordsOf('zero-width-words')).filter((w) => Math.abs(w.coordinates.bottomLeft.y - 600) < 6);
  assert.ok(flat.length > 0);
  for (const w of flat) assert.ok(w.style.font.size > 10, JSON.stringify(w));
});

test('page boxes: an empty MediaBox is US Letter, and /UserUnit scales the page, as MuPDF and Poppler read them', async () => {
  const ordinary = onePage(BODY);
  writeFileSync(file('ordinary'), ordinary);
  const body = (await wordsOf('ordinary')).find((w) => w.text === 'Body')!;
  for (const name of ['mediabox-zero', 'mediabox-zero-width'])
    assert.equal((await wordsOf(name)).find((w) => w.text === 'Body')!.coordinates, body.coordinates, name);
  // /UserUnit 2: the same user-space place as Poppler's (which ignores the unit), on a page twice as large.
  const hello = (await wordsOf('userunit-two')).find((w) => w.text === 'Hello')!;
  const poppler = pdfWord(file('userunit-two'), 1, 'Hello');
  assert.ok(Math.abs(hello.coordinates.bottomLeft.x - poppler.xMin) < 1, JSON.stringify(hello));
  assert.ok(Math.abs(hello.coordinates.bottomLeft.y - (792 - poppler.yMax)) < 6, JSON.stringify(hello));
  const pageSize = (name: string) =>
    /<w:pgSz w:w="(\d+)" w:h="(\d+)"/
      .exec(unzipXml(join(dir, 'docx', `${name}.docx`)))!
      .slice(1)
      .map(Number);
  assert.equal(pageSize('userunit-two'), [1224 * 20, 1584 * 20]);
  // /UserUnit 0 makes MuPDF's page 0 by 0: the document keeps the page's box.
  assert.equal(pageSize('userunit-zero'), [612 * 20, 792 * 20]);
});

test('columns of a page a trillion points wide are found from the pieces, not from a raster of the page', async () => {
  const piece = (x0: number, x1: number, y: number): Piece => ({ text: 'x', x0, x1, y0: y, y1: y + 10, words: [] });
  const rows = [0, 20, 40].map((y) => [piece(0, 10, y), piece(1e12, 1e12 + 10, y)]);
  const cuts = columnCuts(rows);
  assert.is(cuts.length, 1);
  assert.ok(cuts[0] > 10 && cuts[0] < 1e12);
  // The same through /excel: each row's two words in two columns.
  const body = await expectOk(await t.form('/excel', { file: { file: file('wide-page-table') } }));
  const sheet = unzipXml(await t.download(body.outputUrl as string));
  for (const r of [1, 2, 3, 4]) assert.match(sheet, new RegExp(`<c r="B${r}"`));
});

test.run();
