import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bookletOrder, gridLayout, toPageSpace } from '../app/impose/index.js';
import { parseBoundingBoxes } from '../engines/ghostscript-bbox.js';
import { parseOrientation } from '../engines/tesseract.js';
import { corpus, expectError, expectOk, pdfPages, pdfWords, startApp, type TestApp, tool, uploadId } from './helpers.js';

let t: TestApp;
const FED = corpus('pdf/federal-register-15-pages.pdf'); // 15 Letter pages, page N shows the number 47697+N at its top
const OUTLINE = corpus('pdf/outline-bookmarks-links.pdf'); // 4 A4 pages, 9 outline entries to pages 2-4, 9 links on page 1
const FORM = corpus('forms/qpdf-form-filled-by-acrobat.pdf'); // 3 pages: 7 fields on page 1, r2 and Text Box 2 on page 3
const ROTATION = corpus('pdf/rotation-2-pages.pdf'); // 2 Letter pages, /Rotate 0 and 90
const SCAN = corpus('scans/linn-scan-ccitt.pdf'); // 1 upright Letter scan, no text layer
const EMPTY = corpus('encrypted/aes-256-owner-only-acrobat.pdf'); // 1 visually empty Letter page
const tmp = mkdtempSync(join(tmpdir(), 'quire-page-tools-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const post = async (path: string, fields: Record<string, any>) => {
  const body = await expectOk(await t.form(path, fields));
  return { body, out: await t.download(body.outputUrl) };
};
/** /Rotate of every page, as pdfinfo reads it. */
const rotations = (pdf: string) =>
  [...tool('pdfinfo', ['-f', '1', '-l', String(pdfPages(pdf)), pdf]).matchAll(/^Page\s+\d+ rot:\s+(\d+)/gm)].map((m) => Number(m[1]));
/** Page sizes (unrotated, as pdfinfo prints them). */
const sizes = (pdf: string) =>
  [...tool('pdfinfo', ['-f', '1', '-l', String(pdfPages(pdf)), pdf]).matchAll(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)/gm)].map((m) => [
    Number(m[1]),
    Number(m[2]),
  ]);
const pageText = (pdf: string, page: number) => tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-']);
const qpdfJson = (pdf: string, ...keys: string[]) => JSON.parse(tool('qpdf', ['--json', ...keys.map((k) => `--json-key=${k}`), pdf]));
const centre = (pdf: string, page: number, text: string) => {
  const w = pdfWords(pdf, page).find((x) => x.text === text);
  assert.ok(w, `"${text}" on page ${page}`);
  return { x: (w!.xMin + w!.xMax) / 2, y: (w!.yMin + w!.yMax) / 2 };
};

test('grid: the split and orientation that print pages largest; cells in the order asked', () => {
  const a4: [number, number] = [595.28, 841.89];
  const o = { margin: 0, spacing: 0, order: 'across' as const };
  assert.equal(gridLayout(2, a4, a4, true, o).size, [841.89, 595.28]);
  assert.is(gridLayout(4, a4, a4, true, o).size[0], 595.28);
  const six = gridLayout(6, a4, a4, true, o);
  assert.equal([six.size[0], six.cells[1].x > six.cells[0].x, six.cells[3].y < six.cells[0].y], [841.89, true, true]);
  const down = gridLayout(4, a4, a4, true, { ...o, order: 'down' });
  assert.ok(down.cells[1].y < down.cells[0].y && down.cells[1].x === down.cells[0].x);
  const rtl = gridLayout(4, a4, a4, true, { ...o, order: 'across_rtl' });
  assert.ok(rtl.cells[0].x > rtl.cells[1].x);
  assert.throws(() => gridLayout(16, a4, a4, true, { ...o, margin: 300 }), /margin/);
});

test('booklet order: padded to 4, saddle-stitch sides', () => {
  assert.equal(bookletOrder([1, 2, 3, 4, 5, 6, 7, 8]), [8, 1, 2, 7, 6, 3, 4, 5]);
  assert.equal(bookletOrder([1, 2, 3, 4, 5, 6]), [null, 1, 2, null, 6, 3, 4, 5]);
});

test('parsers: Tesseract OSD, Ghostscript bbox, displayed boxes back to page space', () => {
  assert.equal(parseOrientation('Page number: 0\nOrientation in degrees: 90\nRotate: 270\nOrientation confidence: 23.70\n'), { rotate: 270, confidence: 23.7 });
  assert.equal(parseBoundingBoxes('%%BoundingBox: 0 0 0 0\n%%HiResBoundingBox: 0.000000 0.000000 0.000000 0.000000\n%%HiResBoundingBox: 1.5 2 30 40\n'), [
    null,
    [1.5, 2, 30, 40],
  ]);
  // A 612x792 page turned 90: displayed x is page y, displayed y runs against page x.
  assert.equal(toPageSpace([72, 497, 343, 519], [0, 0, 612, 792], 90), [93, 72, 115, 343]);
  assert.equal(toPageSpace([10, 20, 30, 40], [100, 100, 712, 892], 180), [682, 852, 702, 872]);
});

test('rotated-pdf: quarter turns add to /Rotate on the selected pages only; JSON by id', async () => {
  const { body, out } = await post('/rotated-pdf', { file: { file: ROTATION }, rotation: '90', pages: '2' });
  assert.equal(rotations(out), [0, 180]);
  assert.is(typeof body.inputId, 'string');
  const id = await uploadId(t, ROTATION);
  const res = await expectOk(await t.json('/rotated-pdf', { id, rotation: 270, output: 'turned' }));
  const turned = await t.download(res.outputUrl);
  assert.equal(rotations(turned), [270, 0]);
  assert.match(pageText(turned, 1), /This is my first page/);
  const info = await expectOk(await t.request(`/resource/${res.outputId}?format=info`));
  assert.is(info.name, 'turned.pdf');
});

test('rotated-pdf: bad rotation or pages are 400s naming the field', async () => {
  await expectError(await t.form('/rotated-pdf', { file: { file: ROTATION }, rotation: '45' }), 400, /rotation/);
  await expectError(await t.form('/rotated-pdf', { file: { file: ROTATION } }), 400, /rotation/);
  await expectError(
    await t.form('/rotated-pdf', { file: { file: ROTATION }, rotation: '90', pages: '3' }),
    400,
    /3 is not within the acceptable range for pages/,
  );
  await expectError(await t.form('/rotated-pdf', { file: { file: ROTATION }, rotation: 'auto', min_confidence: '101' }), 400, /min_confidence/);
});

test('rotated-pdf auto: a scan turned 90/180/270 is turned back, the upright and the empty page are left', async () => {
  // Independent fixture: qpdf turns copies of the upright scan; an empty page goes last.
  const input = join(tmp, 'turned-scans.pdf');
  execFileSync('qpdf', [
    '--empty',
    '--pages',
    SCAN,
    '1',
    SCAN,
    '1',
    SCAN,
    '1',
    SCAN,
    '1',
    EMPTY,
    '1',
    '--',
    '--rotate=+90:2',
    '--rotate=+180:3',
    '--rotate=+270:4',
    input,
  ]);
  assert.equal(rotations(input), [0, 90, 180, 270, 0]);
  const { body, out } = await post('/rotated-pdf', { file: { file: input }, rotation: 'auto' });
  assert.equal(
    rotations(out).map((r) => r % 360),
    [0, 0, 0, 0, 0],
  );
  assert.match(body.warning, /turned clockwise.*2 \(270\).*3 \(180\).*4 \(90\)|4 \(90\).*3 \(180\).*2 \(270\)/);
  assert.match(body.warning, /could not be told with confidence: 5\./);
  assert.not.match(body.warning, /\b1 \(/);
  // Tesseract (plain --psm 3, no orientation detection) reads the page that was turned 90 as upright text now.
  const png = join(tmp, 'upright');
  execFileSync('pdftoppm', ['-f', '2', '-l', '2', '-r', '150', '-gray', '-singlefile', '-png', out, png]);
  const text = execFileSync('tesseract', [`${png}.png`, '-', '--psm', '3'], {
    encoding: 'utf8',
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.match(text, /LinnSequencer/);
  assert.match(text, /Track/);
});

test('reordered-pdf: new order with repeats; outline entries still lead to kept pages', async () => {
  const { out } = await post('/reordered-pdf', { file: { file: OUTLINE }, 'pages[]': ['4', '2-3', '2'] });
  assert.is(pdfPages(out), 4);
  assert.match(pageText(out, 1), /\b9\b/);
  const original = [2, 3, 4].map((p) => pageText(OUTLINE, p));
  assert.is(pageText(out, 2), original[0]);
  assert.is(pageText(out, 3), original[1]);
  assert.is(pageText(out, 4), original[0]);
  const json = qpdfJson(out, 'outlines', 'pages');
  const kept = new Set(json.pages.map((p: { object: string }) => p.object));
  const titles: string[] = [];
  const walk = (items: any[]) =>
    items.forEach((o) => (titles.push(o.title), assert.ok(kept.has(o.dest['/D']?.[0] ?? o.dest[0]), `${o.title} leads to a kept page`), walk(o.kids)));
  walk(json.outlines);
  assert.is(titles.length, 9);
});

test('reordered-pdf: every page kept (reversed): the outline and links lead to the same text as before', async () => {
  const { out } = await post('/reordered-pdf', { file: { file: OUTLINE }, pages: '4-1' });
  assert.is(pdfPages(out), 4);
  for (let p = 1; p <= 4; p++) assert.is(pageText(out, p), pageText(OUTLINE, 5 - p));
  /** Each outline entry and link of `file` as the text of the page it leads to (named destinations followed). */
  const targets = (file: string) => {
    const json = JSON.parse(tool('qpdf', ['--json', '--json-stream-data=none', file]));
    const objects = json.qpdf[1];
    const resolve = (v: any): any => (typeof v === 'string' && / R$/.test(v) ? resolve(objects[`obj:${v}`]?.value ?? null) : v);
    const names = new Map<string, any>();
    for (const o of Object.values<any>(objects)) {
      const pairs = o.value?.['/Names'];
      if (Array.isArray(pairs)) for (let i = 0; i < pairs.length; i += 2) names.set(pairs[i], pairs[i + 1]);
    }
    const pages: string[] = json.pages.map((p: { object: string }) => p.object);
    const page = (d: any): number => {
      const v = resolve(d);
      if (typeof v === 'string') return page(names.get(v));
      if (Array.isArray(v)) return pages.indexOf(v[0]) + 1;
      return v?.['/D'] !== undefined ? page(v['/D']) : v?.['/A'] !== undefined ? page(resolve(v['/A'])['/D']) : 0;
    };
    const text = (n: number) => (n > 0 ? pageText(file, n) : 'nowhere');
    const outline: string[] = [];
    const walk = (items: any[]) => items.forEach((o) => (outline.push(`${o.title}: ${text(page(o.dest))}`), walk(o.kids)));
    walk(json.outlines);
    const links = json.pages.flatMap((p: { object: string }) =>
      (resolve(resolve(p.object)['/Annots']) ?? []).map(resolve).map((a: any) => text(page(a['/Dest'] ?? a))),
    );
    return { outline, links: links.sort() };
  };
  const before = targets(OUTLINE);
  assert.is(before.outline.length, 9);
  assert.is(before.links.length, 9);
  assert.ok(![...before.outline, ...before.links].some((t) => t.endsWith('nowhere')));
  assert.equal(targets(out), before);
});

test('reordered-pdf: outline entries and links to dropped pages go, the rest stay; one comma list', async () => {
  const { out } = await post('/reordered-pdf', { file: { file: OUTLINE }, pages: '1,4' });
  assert.is(pdfPages(out), 2);
  const json = JSON.parse(tool('qpdf', ['--json', '--json-stream-data=none', out]));
  const objects = json.qpdf[1];
  const resolve = (v: any): any => (typeof v === 'string' && / R$/.test(v) ? resolve(objects[`obj:${v}`]?.value ?? null) : v);
  const kept = new Set(json.pages.map((p: { object: string }) => p.object));
  const outline = qpdfJson(out, 'outlines').outlines;
  assert.equal(
    outline.map((o: any) => o.title),
    ['Bar', 'Baz'],
  );
  outline.forEach((o: any) => assert.ok(kept.has(o.dest['/D'][0])));
  // Page 1's table of contents links to named destinations; only the two on page 4 (sections 8 and 9) are left.
  const annots = (resolve(resolve(json.pages[0].object)['/Annots']) ?? []).map(resolve);
  assert.is(annots.length, 2);
  const names = new Map<string, string>();
  for (const o of Object.values<any>(objects)) {
    const pairs = o.value?.['/Names'];
    if (Array.isArray(pairs)) for (let i = 0; i < pairs.length; i += 2) names.set(pairs[i], pairs[i + 1]);
  }
  for (const a of annots) {
    const dest = resolve(names.get(resolve(a['/A'])['/D']));
    assert.ok(kept.has((resolve(dest)['/D'] ?? dest)[0]), 'each remaining link leads to a kept page');
  }
});

test('reordered-pdf: form fields of kept pages stay (repeats renamed), those of dropped pages go', async () => {
  const { out } = await post('/reordered-pdf', { file: { file: FORM }, pages: '3,1,1' });
  const fields = qpdfJson(out, 'acroform').acroform.fields.map((f: any) => `${f.fullname}@${f.pageposfrom1}`);
  assert.ok(fields.includes('Text Box 2@1') && fields.includes('r2@1'), fields.join(' '));
  assert.ok(fields.includes('Text Box 1@2') && fields.includes('Text Box 1+1@3'), fields.join(' '));
  const { out: only2 } = await post('/reordered-pdf', { file: { file: FORM }, pages: '2' });
  assert.is(qpdfJson(only2, 'acroform').acroform.fields.length, 0);
  assert.match(tool('pdfinfo', [FORM]), /Form:\s+AcroForm/);
});

test('reordered-pdf: JSON by id with a pages array', async () => {
  const id = await uploadId(t, ROTATION);
  const body = await expectOk(await t.json('/reordered-pdf', { id, pages: ['2', '1', '2'] }));
  const out = await t.download(body.outputUrl);
  assert.equal(rotations(out), [90, 0, 90]);
  assert.match(pageText(out, 2), /This is my first page/);
  assert.is(body.inputId, id);
});

test('reordered-pdf: 400s for pages beyond the document or none', async () => {
  await expectError(await t.form('/reordered-pdf', { file: { file: OUTLINE }, pages: '2,9' }), 400, /not within the acceptable range for pages/);
  await expectError(await t.form('/reordered-pdf', { file: { file: OUTLINE } }), 400, /pages/);
});

test('n-up-pdf 4-up: Letter portrait 2x2, pages in their cells across then down, and down then across', async () => {
  const { out } = await post('/n-up-pdf', { file: { file: FED }, pages: '1-8', pages_per_sheet: '4', margin: '18', spacing: '9', border: 'on' });
  assert.is(pdfPages(out), 2);
  assert.equal(sizes(out)[0], [612, 792]);
  const cell = (c: { x: number; y: number }) => `${c.x < 306 ? 'left' : 'right'}-${c.y < 396 ? 'top' : 'bottom'}`;
  assert.equal(
    ['47698', '47699', '47700', '47701'].map((n) => cell(centre(out, 1, n))),
    ['left-top', 'right-top', 'left-bottom', 'right-bottom'],
  );
  assert.is(cell(centre(out, 2, '47702')), 'left-top');
  const { out: down } = await post('/n-up-pdf', { file: { file: FED }, pages: '1-4', pages_per_sheet: '4', order: 'down' });
  assert.equal(
    ['47698', '47699', '47700', '47701'].map((n) => cell(centre(down, 1, n))),
    ['left-top', 'left-bottom', 'right-top', 'right-bottom'],
  );
  // Scaled by half (the cell is 297 x 373.5 points less the spacing): page 1's number, at x 45 on its page, lands near 18 + 45 * 0.47.
  const n = pdfWords(out, 1).find((w) => w.text === '47698')!;
  assert.ok(Math.abs(n.xMin - (18 + 45 * ((612 - 36 - 9) / 2 / 612))) < 2, `${n.xMin}`);
});

test("n-up-pdf 2-up: the first page's A4 size turned landscape, page 1 left, page 2 right", async () => {
  const { out } = await post('/n-up-pdf', { file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') }, pages_per_sheet: '2' });
  assert.is(pdfPages(out), 2);
  assert.equal(sizes(out)[0].map(Math.round), [842, 595]);
  const words = pdfWords(out, 1);
  const one = words.find((w) => w.text === '1' && w.yMin > 500)!;
  const two = words.find((w) => w.text === '2' && w.yMin > 500)!;
  assert.ok(one.xMax < 421 && two.xMin > 421, `${one?.xMin} ${two?.xMin}`);
});

test('n-up-pdf booklet: 8 pages on 4 landscape sides in saddle-stitch order; 6 pages padded', async () => {
  const { out } = await post('/n-up-pdf', { file: { file: FED }, pages: '1-8', booklet: 'true' });
  assert.is(pdfPages(out), 4);
  assert.equal(sizes(out)[0], [792, 612]);
  const sides = [1, 2, 3, 4].map((s) => {
    const nums = pdfWords(out, s).filter((w) => /^477\d\d$|^4769\d$/.test(w.text));
    return [nums.find((w) => w.xMax < 396)?.text, nums.find((w) => w.xMin > 396)?.text];
  });
  assert.equal(sides, [
    ['47705', '47698'],
    ['47699', '47704'],
    ['47703', '47700'],
    ['47701', '47702'],
  ]);
  const { out: six } = await post('/n-up-pdf', { file: { file: FED }, pages: '1-6', booklet: 'on', page_size: 'A4' });
  assert.is(pdfPages(six), 4);
  assert.equal(sizes(six)[0].map(Math.round), [842, 595]);
  assert.not.ok(
    pdfWords(six, 1).some((w) => w.xMax < 421),
    'the padding page is blank',
  );
});

test('n-up-pdf: 400s', async () => {
  await expectError(await t.form('/n-up-pdf', { file: { file: FED }, pages_per_sheet: '3' }), 400, /pages_per_sheet/);
  await expectError(await t.form('/n-up-pdf', { file: { file: FED }, pages_per_sheet: '16', margin: '400' }), 400, /margin/);
  await expectError(await t.form('/n-up-pdf', { file: { file: FED }, pages_per_sheet: '4', booklet: 'on' }), 400, /pages_per_sheet/);
  await expectError(await t.form('/n-up-pdf', { file: { file: FED }, page_size: 'B5' }), 400, /page_size/);
  await expectError(await t.form('/n-up-pdf', { file: { file: FED }, page_width: '300' }), 400, /page_height/);
});

test('resized-pdf fit: each page on A5 in its own orientation, scaled and centred', async () => {
  const { out } = await post('/resized-pdf', { file: { file: ROTATION }, page_size: 'A5' });
  assert.equal(sizes(out), [
    [419.53, 595.28],
    [595.28, 419.53],
  ]);
  assert.equal(rotations(out), [0, 0]);
  const s = Math.min(419.53 / 612, 595.28 / 792);
  const w = pdfWords(out, 1).find((x) => x.text === 'This')!;
  // 'This' starts at (90, 102.4) on the Letter page.
  assert.ok(Math.abs(w.xMin - 90 * s) < 1 && Math.abs(w.yMin - ((595.28 - 792 * s) / 2 + 102.444 * s)) < 1, `${w.xMin} ${w.yMin}`);
  const turned = pdfWords(out, 2).find((x) => x.text === 'This')!;
  const s2 = Math.min(595.28 / 792, 419.53 / 612);
  assert.ok(Math.abs(turned.xMin - ((595.28 - 792 * s2) / 2 + 72 * s2)) < 1, `${turned.xMin}`);
  const { out: square } = await post('/resized-pdf', { file: { file: ROTATION }, width: '300', height: '300', margin: '10', pages: '1' });
  // Page 2 was not selected: it is left as it was.
  assert.equal(sizes(square), [
    [300, 300],
    [612, 792],
  ]);
  assert.equal(rotations(square), [0, 90]);
  // The input stays the primary file: the outline entries to pages left as they were still lead there.
  const { out: outlined } = await post('/resized-pdf', { file: { file: OUTLINE }, page_size: 'A5', pages: '1' });
  assert.equal(
    sizes(outlined).map((s) => s.map(Math.round)),
    [
      [420, 595],
      [595, 842],
      [595, 842],
      [595, 842],
    ],
  );
  assert.is(qpdfJson(outlined, 'outlines').outlines.length, 9);
});

test('resized-pdf crop: the box hugs the drawn content plus the margin (pixels), turned pages too', async () => {
  const { out } = await post('/resized-pdf', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, mode: 'crop', margin: '10' });
  const [w, h] = sizes(out)[0];
  assert.ok(w < 595 - 100 && h < 842 - 100, `${w} x ${h}`);
  const { width: _w, height: _h, ...margins } = await inkMargins(out, 1);
  for (const [edge, value] of Object.entries(margins)) assert.ok(Math.abs(value - 10) <= 2, `${edge} margin ${value} px`);
  // The page turned 90 without a margin: the box is the ink of its two lines, shown landscape.
  const { out: turned } = await post('/resized-pdf', { file: { file: ROTATION }, mode: 'crop', pages: '2' });
  assert.equal(rotations(turned), [0, 90]);
  assert.equal(sizes(turned)[0], [612, 792]);
  assert.match(pageText(turned, 2), /This is my second page[\s\S]*Second line here/);
  const { width, height, ...shown } = await inkMargins(turned, 2);
  assert.ok(
    Object.values(shown).every((v) => v <= 2),
    JSON.stringify(shown),
  );
  assert.ok(width > 5 * height, `${width} x ${height}`);
});

/** Pixels from each edge of a page rendered at 72 dpi (pdftoppm) to its first dark pixel, and the render's size. */
async function inkMargins(pdf: string, page: number) {
  const png = join(tmp, `ink-${page}`);
  execFileSync('pdftoppm', ['-f', String(page), '-l', String(page), '-r', '72', '-gray', '-singlefile', '-png', pdf, png]);
  const { data, info } = await sharp(`${png}.png`).raw().toBuffer({ resolveWithObject: true });
  let [x0, y0, x1, y1] = [Infinity, Infinity, -1, -1];
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      if (data[(y * info.width + x) * info.channels] < 160) [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
    }
  }
  return { left: x0, top: y0, right: info.width - 1 - x1, bottom: info.height - 1 - y1, width: info.width, height: info.height };
}

test('resized-pdf: 400s', async () => {
  await expectError(await t.form('/resized-pdf', { file: { file: ROTATION } }), 400, /page_size/);
  await expectError(await t.form('/resized-pdf', { file: { file: ROTATION }, width: '300' }), 400, /height/);
  await expectError(await t.form('/resized-pdf', { file: { file: ROTATION }, page_size: 'A5', margin: '300' }), 400, /margin/);
  await expectError(await t.form('/resized-pdf', { file: { file: ROTATION }, mode: 'shrink', page_size: 'A5' }), 400, /mode/);
});

test.run();
