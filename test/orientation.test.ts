import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decide, type OrientationReading } from '../app/impose/index.js';
import { readQuality } from '../engines/tesseract.js';
import { corpus, expectOk, pdfPages, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
const HUCK = corpus('scans/huckleberry-finn-p22-scan.pdf'); // a 150 ppi colour page of text with an illustration
const PICTURE = corpus('pdf/image-grayscale-flate.pdf'); // a grey drawing of a boy, no text
const tmp = mkdtempSync(join(tmpdir(), 'quire-orientation-'));

test.before(async () => {
  // Generous page budgets: what is tested is the decision, not the speed of a shared machine.
  t = await startApp({ RENDER_PAGE_SECONDS: '120' });
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const rotations = (pdf: string) =>
  [...tool('pdfinfo', ['-f', '1', '-l', String(pdfPages(pdf)), pdf]).matchAll(/^Page\s+\d+ rot:\s+(\d+)/gm)].map((m) => Number(m[1]) % 360);

/** Tesseract without orientation detection (--psm 3) on the page as a viewer shows it: it reads upright text only. */
function readAsShown(pdf: string, page: number): string {
  const png = join(tmp, `shown-${page}`);
  tool('pdftoppm', ['-f', String(page), '-l', String(page), '-r', '150', '-gray', '-singlefile', '-png', pdf, png]);
  return execFileSync('tesseract', [`${png}.png`, '-', '--psm', '3'], {
    encoding: 'utf8',
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

test('auto: the 150 ppi Huckleberry Finn page shown at 180, 90 and 270 comes back upright; a picture without text is left', async () => {
  const input = join(tmp, 'turned.pdf');
  tool('qpdf', [
    '--empty',
    '--pages',
    HUCK,
    '1',
    HUCK,
    '1',
    HUCK,
    '1',
    PICTURE,
    '1',
    '--',
    '--rotate=+180:1',
    '--rotate=+90:2',
    '--rotate=+270:3',
    '--rotate=+180:4',
    input,
  ]);
  assert.equal(rotations(input), [180, 90, 270, 180]);
  // Independent check of the fixture: shown as it is, the text does not read.
  assert.not.match(readAsShown(input, 1), /garden/);

  const body = await expectOk(await t.form('/rotated-pdf', { file: { file: input }, rotation: 'auto' }));
  const out = await t.download(body.outputUrl);
  assert.equal(rotations(out), [0, 0, 0, 180]);
  for (const page of [1, 2, 3]) {
    const text = readAsShown(out, page);
    assert.match(text, /widow/, `page ${page}`);
    assert.match(text, /kitchen/, `page ${page}`);
  }
  assert.match(body.warning, /turned clockwise/);
  assert.match(body.warning, /could not be told with confidence: 4\./);
  // Per page: what was decided and why, with each reading.
  const o = body.orientations as { page: number; turn: number | null; reason: string; readings: OrientationReading[] }[];
  assert.equal(
    o.map((p) => [p.page, p.turn]),
    [
      [1, 180],
      [2, 270],
      [3, 90],
      [4, null],
    ],
  );
  assert.match(o[3].reason, /too little text/);
  assert.ok(o.every((p) => p.readings.length >= 1 && p.reason));
  // The scan is looked at at its own resolution first.
  assert.is(o[0].readings[0].dpi, 150);
});

test('decide: one confident reading; weak ones only when they agree and add up; disagreement and no text leave the page', () => {
  const r = (rotate: OrientationReading['rotate'], confidence: number, dpi = 150): OrientationReading => ({ of: 'page', dpi, rotate, confidence });
  assert.is(decide([r(90, 20)], 14).turn, 90);
  assert.is(decide([r(180, 11), r(180, 1.2), r(180, 17.9, 300)], 14).turn, 180);
  assert.is(decide([r(180, 6), r(180, 3), r(180, 4, 300)], 14).turn, null);
  assert.match(decide([r(180, 6), r(180, 3), r(180, 4, 300)], 14).reason, /too weak/);
  assert.is(decide([r(180, 11), r(0, 9), r(180, 12, 300)], 14).turn, null);
  assert.match(decide([r(180, 11), r(0, 9), r(180, 12, 300)], 14).reason, /disagree/);
  assert.is(decide([r(null, 0), r(null, 0), r(null, 0, 300)], 14).turn, null);
  assert.is(decide([r(0, 5), r(0, 6), r(0, 7, 300)], 14).turn, 0);
});

test('readQuality: the share of characters in words Tesseract is sure of, from its TSV', () => {
  const row = (conf: number, text: string) => ['5', '1', '1', '1', '1', '1', '0', '0', '10', '10', String(conf), text].join('\t');
  const tsv = [
    'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext',
    row(-1, ''),
    row(95, 'upright'),
    row(30, 'ab'),
    row(60, 'x'),
  ].join('\n');
  assert.equal(readQuality(tsv), { chars: 10, sure: 0.8 });
  assert.equal(readQuality(''), { chars: 0, sure: 0 });
});

test.run();
