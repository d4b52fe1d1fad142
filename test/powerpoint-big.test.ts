import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectOk, startApp, type TestApp, tool } from './helpers.js';

/**
 * /powerpoint writes its package a batch of pages at a time: a long document converts within a small job heap, and
 * the slides of every batch land in order, each with its own picture, in a package that Office readers open.
 */
const test = suite('powerpoint-big');
let t: TestApp;
let scratch: string;

// The register's pages are numbered 47698-47712 at their head: slide n shows the number of page ((n - 1) mod 15) + 1.
const REGISTER = corpus('pdf/federal-register-15-pages.pdf');
const pageNumber = (slide: number) => String(47698 + ((slide - 1) % 15));
const registerTimes = (n: number, name: string) => {
  const out = join(scratch, name);
  tool('qpdf', ['--empty', '--pages', ...Array(n).fill(REGISTER), '--', out]);
  return out;
};

/** The package as python3's zipfile reads it: entry order, slides' text, and what their relationships point at. */
const READ_PACKAGE = `
import json, re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
slides = sorted((int(m.group(1)), n) for n in names for m in [re.match(r'ppt/slides/slide(\\d+)\\.xml$', n)] if m)
missing = []
for num, name in slides:
    rels = z.read(f'ppt/slides/_rels/slide{num}.xml.rels').decode()
    for target in re.findall(r'Target="\\.\\./([^"]+)"', rels):
        if 'ppt/' + target not in names: missing.append(f'slide{num}: {target}')
pres = z.read('ppt/presentation.xml').decode()
types = z.read('[Content_Types].xml').decode()
print(json.dumps({
  'first': names[0],
  'folders': [n for n in names if n.endswith('/')],
  'slides': [num for num, _ in slides],
  # Per slide, the register's page numbers (476xx-477xx) its text boxes hold.
  'numbers': {num: sorted(set(re.findall(r'\\b47[67]\\d\\d\\b', ' '.join(re.findall(r'<a:t>([^<]*)</a:t>', z.read(name).decode()))))) for num, name in slides},
  'pictures': sum(1 for n in names if n.startswith('ppt/media/')),
  'missing': missing,
  'listed': len(re.findall(r'<p:sldId ', pres)),
  'typed': len(re.findall(r'PartName="/ppt/slides/slide\\d+\\.xml"', types)),
}))
`;
const readPackage = (pptx: string) =>
  JSON.parse(tool('python3', ['-c', READ_PACKAGE, pptx])) as {
    first: string;
    folders: string[];
    slides: number[];
    numbers: Record<string, string[]>;
    pictures: number;
    missing: string[];
    listed: number;
    typed: number;
  };

test.before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'quire-pptx-big-'));
  // Whole, 300 dense pages of slides needed well over 256 MB of heap (the page models, every slide and picture, the package).
  t = await startApp({ JOB_MAX_MEMORY_MB: '256' });
});
test.after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('300 dense pages within a 256 MB job heap: 300 slides in page order, each with its picture, listed once', async () => {
  const big = registerTimes(20, 'register-300.pdf');
  const pptx = await t.download((await expectOk(await t.form('/powerpoint', { file: { file: big } }))).outputUrl);
  const pkg = readPackage(pptx);
  assert.is(pkg.first, '[Content_Types].xml');
  assert.equal(pkg.folders, []);
  assert.equal(
    pkg.slides,
    Array.from({ length: 300 }, (_, i) => i + 1),
  );
  assert.is(pkg.listed, 300);
  assert.is(pkg.typed, 300);
  assert.is(pkg.pictures, 300);
  assert.equal(pkg.missing, []);
  // Each slide holds its own page's text: the page number of its head.
  assert.equal(
    pkg.slides.filter((n) => !pkg.numbers[n].includes(pageNumber(n))),
    [],
  );
});

test('a package of several batches opens in LibreOffice: one page per slide, each with its text', async () => {
  const pdf = registerTimes(4, 'register-60.pdf');
  const pptx = await t.download((await expectOk(await t.form('/powerpoint', { file: { file: pdf } }))).outputUrl);
  const dir = mkdtempSync(join(scratch, 'lo-'));
  const deck = join(dir, 'deck.pptx');
  copyFileSync(pptx, deck);
  tool('soffice', [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, deck]);
  const back = join(dir, 'deck.pdf');
  assert.match(tool('pdfinfo', [back]), /Pages:\s+60\n/);
  // The first slide, one past the first batch of pages read (50), the last.
  for (const slide of [1, 51, 60])
    assert.match(tool('pdftotext', ['-f', String(slide), '-l', String(slide), back, '-']), new RegExp(`\\b${pageNumber(slide)}\\b`));
});

test.run();
