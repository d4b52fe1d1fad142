import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
let tmp: string;
test.before(async () => {
  t = await startApp();
  tmp = mkdtempSync(join(tmpdir(), 'quire-extract-'));
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const post = async (path: string, file: string, fields: Record<string, string> = {}, status = 200) => {
  const res = await t.form(path, { file: { file }, ...fields });
  const body = await res.json();
  assert.is(res.status, status, `${path} ${file}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};
const info = async (id: string) => (await t.request(`/resource/${id}?format=info`)).json();
const words = (s: string) =>
  s
    .normalize('NFKC')
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
/** pdftotext's words for one page, with boxes in the displayed page (origin top-left). */
const popplerWords = (file: string, page: number) =>
  [
    ...tool('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), file, '-']).matchAll(
      /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</g,
    ),
  ].map((m) => ({
    xMin: Number(m[1]),
    yMin: Number(m[2]),
    xMax: Number(m[3]),
    yMax: Number(m[4]),
    text: m[5],
  }));
const near = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

// ---------------------------------------------------------------- /extracted-text

test('extracted-text: google-docs-export text and words agree with pdftotext', async () => {
  const file = corpus('pdf/google-docs-export.pdf');
  const r = await post('/extracted-text', file);
  assert.type(r.fullText, 'string');
  assert.ok(r.fullText.startsWith('Example document'), r.fullText.slice(0, 60));
  assert.ok(r.fullText.includes('Beautiful is better than ugly. Explicit is better than implicit.'));
  assert.is(r.words, undefined);
  assert.type(r.inputId, 'string');
  const ours = new Set(words(r.fullText));
  const theirs = words(tool('pdftotext', [file, '-']));
  const found = theirs.filter((w) => ours.has(w)).length;
  assert.ok(found / theirs.length > 0.98, `${found}/${theirs.length}`);
});

test('extracted-text: by_page, off, preserve_line_breaks', async () => {
  const file = corpus('pdf/rotation-2-pages.pdf');
  const byPage = await post('/extracted-text', file, { full_text: 'by_page' });
  assert.equal(
    byPage.fullText.pages.map((p: { page: number }) => p.page),
    [1, 2],
  );
  assert.ok(byPage.fullText.pages[0].text.includes('This is my first page with normal layout.'));
  assert.ok(byPage.fullText.pages[1].text.includes('This is my second page. It will have a landscape layout.'));
  const off = await post('/extracted-text', file, { full_text: 'off', word_coordinates: 'on' });
  assert.not.ok('fullText' in off);
  assert.ok(off.words.length > 10);
  const lb = await post('/extracted-text', corpus('pdf/google-docs-export.pdf'), { preserve_line_breaks: 'on' });
  const flat = await post('/extracted-text', corpus('pdf/google-docs-export.pdf'));
  assert.ok(lb.fullText.split('\n').length > 10);
  assert.not.ok(flat.fullText.includes('\n'));
  const lines = tool('pdftotext', [corpus('pdf/google-docs-export.pdf'), '-'])
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  for (const l of lines.slice(0, 5)) assert.ok(lb.fullText.split('\n').includes(l), l);
});

test('extracted-text: word coordinates in PDF units on a normal and a /Rotate 90 page (checked against pdftotext -bbox)', async () => {
  const file = corpus('pdf/rotation-2-pages.pdf');
  const r = await post('/extracted-text', file, { word_coordinates: 'on', full_text: 'off' });
  type W = {
    text: string;
    page: number;
    coordinates: Record<'topLeft' | 'topRight' | 'bottomLeft' | 'bottomRight', { x: number; y: number }>;
    style?: unknown;
  };
  const w = r.words as W[];
  assert.is(w[0].style, undefined);
  // Page 1, Letter, no rotation: x as displayed, y flipped (origin bottom-left).
  const p1 = popplerWords(file, 1).find((x) => x.text === 'first')!;
  const first = w.find((x) => x.page === 1 && x.text === 'first')!;
  near(first.coordinates.topLeft.x, p1.xMin, 0.5, 'first x0');
  near(first.coordinates.topRight.x, p1.xMax, 0.5, 'first x1');
  // Across the line the box is the font's ascent to descent: engines differ there by a few points.
  near(first.coordinates.bottomLeft.y, 792 - p1.yMax, 6, 'first bottom');
  near(first.coordinates.topLeft.y, 792 - p1.yMin, 6, 'first top');
  assert.ok(first.coordinates.topLeft.y > first.coordinates.bottomLeft.y);
  // Page 2 is displayed rotated 90 degrees clockwise: displayed x runs along user y, displayed y along user x.
  const p2 = popplerWords(file, 2).find((x) => x.text === 'landscape')!;
  const land = w.find((x) => x.page === 2 && x.text === 'landscape')!;
  near(land.coordinates.topLeft.y, p2.xMin, 0.5, 'landscape start');
  near(land.coordinates.topRight.y, p2.xMax, 0.5, 'landscape end');
  near(land.coordinates.topLeft.x, p2.yMin, 5, 'landscape top');
  near(land.coordinates.bottomLeft.x, p2.yMax, 5, 'landscape bottom');
  // Inside the unrotated 612x792 page.
  for (const c of Object.values(land.coordinates)) assert.ok(c.x >= 0 && c.x <= 612 && c.y >= 0 && c.y <= 792, JSON.stringify(c));
});

test('extracted-text: word style (font from pdffonts, size, original colour space), merged with coordinates', async () => {
  const file = corpus('pdf/rotation-2-pages.pdf');
  const r = await post('/extracted-text', file, { word_style: 'on', word_coordinates: 'on', pages: '1' });
  const fonts = tool('pdffonts', [file]);
  for (const w of r.words) {
    assert.is(w.page, 1);
    assert.ok(fonts.includes(w.style.font.name), w.style.font.name);
    assert.is(w.style.font.size, 12);
    assert.equal(w.style.color, { space: 'DeviceGray', values: [0] });
    assert.ok(w.coordinates.topLeft);
  }
  const gd = await post('/extracted-text', corpus('pdf/google-docs-export.pdf'), { word_style: 'on' });
  const title = gd.words.find((w: { text: string }) => w.text === 'Example');
  assert.ok(title.style.font.size > gd.words.find((w: { text: string }) => w.text === 'Beautiful').style.font.size);
  assert.is(title.coordinates, undefined);
});

test('extracted-text: CJK vertical writing comes out as text', async () => {
  const r = await post('/extracted-text', corpus('pdf/cjk-japanese-vertical-3-pages.pdf'), { full_text: 'by_page' });
  assert.is(r.fullText.pages.length, 3);
  assert.ok(r.fullText.pages[0].text.includes('あいうえお'), r.fullText.pages[0].text);
  assert.ok(r.fullText.pages[0].text.includes('日本語'));
  const words = (await post('/extracted-text', corpus('pdf/cjk-japanese-vertical-3-pages.pdf'), { pages: '1', word_coordinates: 'on', full_text: 'off' }))
    .words;
  // Vertical lines: each word box is taller than wide.
  const jp = words.find((w: { text: string }) => w.text.includes('あいうえお'));
  assert.ok(
    Math.abs(jp.coordinates.topLeft.y - jp.coordinates.bottomLeft.y) > Math.abs(jp.coordinates.topLeft.x - jp.coordinates.bottomLeft.x) ||
      Math.abs(jp.coordinates.topLeft.y - jp.coordinates.topRight.y) > 20,
    JSON.stringify(jp.coordinates),
  );
});

test('extracted-text and markdown: a non-embedded Shift-JIS CJK font is decoded (MANIFEST: 日本語テスト)', async () => {
  const file = corpus('pdf/cjk-japanese-sjis-cmap.pdf');
  const r = await post('/extracted-text', file, { word_coordinates: 'on' });
  assert.match(r.fullText, /Hello ASCII/);
  assert.match(r.fullText, /日本語テスト/);
  assert.not.match(r.fullText, /\uFFFD/);
  const w = r.words.find((x: { text: string }) => x.text === '日本語テスト');
  assert.ok(w, JSON.stringify(r.words));
  // Below "Hello ASCII" (PDF y grows upwards), starting at the left margin.
  near(w.coordinates.topLeft.x, 72, 2, 'left');
  assert.ok(w.coordinates.topLeft.y < r.words[0].coordinates.bottomLeft.y, 'second line');
  const md = await post('/markdown', file);
  const text = md.markdown ?? readFileSync(await t.download(md.outputUrl), 'utf8');
  assert.match(text, /日本語テスト/);
});

test('extracted-text: two-column page is read column by column', async () => {
  const r = await post('/extracted-text', corpus('pdf/multicolumn-3-pages.pdf'), { pages: '1' });
  const at = (s: string) => {
    const i = r.fullText.indexOf(s);
    assert.ok(i >= 0, s);
    return i;
  };
  // Left column top, left column bottom, right column top, right column further down.
  const order = [
    'Two-Column Document',
    'Lorem ipsum dolor sit amet',
    'Nulla malesuada porttitor diam',
    'pellentesque ante. Phasellus',
    'Quisque ullamcorper placerat',
  ].map(at);
  assert.equal(
    order,
    [...order].sort((a, b) => a - b),
  );
});

test('extracted-text: output_type=file is .txt without word data and .json with it', async () => {
  const file = corpus('pdf/google-docs-export.pdf');
  const txt = await post('/extracted-text', file, { output_type: 'file', output: 'zen' });
  assert.type(txt.outputUrl, 'string');
  assert.is((await info(txt.outputId)).name, 'zen.txt');
  assert.ok(readFileSync(await t.download(txt.outputUrl), 'utf8').includes('Beautiful is better than ugly.'));
  const js = await post('/extracted-text', file, { output_type: 'file', word_coordinates: 'on' });
  assert.ok((await info(js.outputId)).name.endsWith('.json'));
  const parsed = JSON.parse(readFileSync(await t.download(js.outputUrl), 'utf8'));
  assert.ok(parsed.words.length > 50 && parsed.words[0].coordinates);
});

// ---------------------------------------------------------------- errors (all three endpoints)

test('errors: encrypted input 401, broken input 400, reversed or out-of-range pages 400 naming pages', async () => {
  for (const path of ['/extracted-text', '/extracted-images', '/markdown']) {
    const enc = await post(path, corpus('encrypted/aes-256-user-view-owner-master.pdf'), {}, 401);
    assert.match(enc.error, /password protected/);
    const broken = await post(path, corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf'), {}, 400);
    assert.type(broken.error, 'string');
    const rev = await post(path, corpus('pdf/rotation-2-pages.pdf'), { pages: 'last-1' }, 400);
    assert.is(rev.error, 'last-1 is not within the acceptable range for pages');
    const out = await post(path, corpus('pdf/rotation-2-pages.pdf'), { pages: '3' }, 400);
    assert.match(out.error, /pages/);
  }
  const bad = await post('/extracted-text', corpus('pdf/rotation-2-pages.pdf'), { full_text: 'all' }, 400);
  assert.match(bad.error, /full_text/);
  // Encrypted but openable without a password (owner password only): read normally.
  const open = await post('/extracted-text', corpus('encrypted/rc4-128-owner-master-no-user-password.pdf'), { pages: '1-2' });
  assert.ok(open.fullText.includes('Potato 0') && open.fullText.includes('Potato 1'), open.fullText);
});

// ---------------------------------------------------------------- /extracted-images

test('extracted-images: a JPEG comes out byte-identical to pdfimages -j, named prefix-img001-page001.jpg', async () => {
  const file = corpus('pdf/image-jpeg-dct.pdf');
  const r = await post('/extracted-images', file, { output: 'pics' });
  assert.is(r.outputId.length, 1);
  assert.is((await info(r.outputId[0])).name, 'pics-img001-page001.jpg');
  const dir = mkdtempSync(join(tmp, 'j-'));
  tool('pdfimages', ['-j', file, join(dir, 'x')]);
  const ref = readFileSync(join(dir, readdirSync(dir).find((n) => n.endsWith('.jpg'))!));
  assert.ok(readFileSync(await t.download(r.outputUrl[0])).equals(ref));
  // A CMYK JPEG keeps its bytes too.
  const cmykFile = corpus('pdf/image-cmyk-jpeg-devicecmyk.pdf');
  const cmyk = await post('/extracted-images', cmykFile);
  const d2 = mkdtempSync(join(tmp, 'c-'));
  tool('pdfimages', ['-j', cmykFile, join(d2, 'x')]);
  assert.ok(readFileSync(await t.download(cmyk.outputUrl[0])).equals(readFileSync(join(d2, readdirSync(d2)[0]))));
  assert.is((await sharp(readFileSync(join(d2, readdirSync(d2)[0]))).metadata()).channels, 4);
});

test('extracted-images: google-docs-export image is a 128x128 PNG with its soft mask as alpha', async () => {
  const r = await post('/extracted-images', corpus('pdf/google-docs-export.pdf'));
  assert.is(r.outputId.length, 1);
  assert.match((await info(r.outputId[0])).name, /^google-docs-export_service_extracted-images-img001-page001\.png$/);
  const meta = await sharp(await t.download(r.outputUrl[0])).metadata();
  assert.equal([meta.format, meta.width, meta.height, meta.channels], ['png', 128, 128, 4]);
});

test('extracted-images: CCITT becomes a G4 TIFF and JBIG2 a PNG, with the same pixels as pdfimages -png', async () => {
  for (const [name, fmt] of [
    ['pdf/image-ccitt-fax.pdf', 'tiff'],
    ['pdf/image-jbig2-scan.pdf', 'png'],
  ] as const) {
    const file = corpus(name);
    const r = await post('/extracted-images', file);
    assert.is(r.outputId.length, 1, name);
    const out = await t.download(r.outputUrl[0]);
    const meta = await sharp(out).metadata();
    assert.is(meta.format, fmt, name);
    const dir = mkdtempSync(join(tmp, 'p-'));
    tool('pdfimages', ['-png', file, join(dir, 'x')]);
    const ref = join(dir, readdirSync(dir)[0]);
    const a = await sharp(out).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
    const b = await sharp(ref).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
    assert.equal([a.info.width, a.info.height], [b.info.width, b.info.height], name);
    assert.ok(a.data.equals(b.data), `${name}: pixels differ`);
    if (fmt === 'tiff') assert.is(tiffCompression(readFileSync(out)), 4, 'CCITT Group 4');
  }
});

test('extracted-images: no image gives 200 with empty arrays and a warning; pages restricts', async () => {
  const r = await post('/extracted-images', corpus('pdf/text-minimal-pdflatex.pdf'));
  assert.equal(r.outputUrl, []);
  assert.equal(r.outputId, []);
  assert.type(r.inputId, 'string');
  assert.match(r.warning, /no files of the specified type were found/i);
  const fed = corpus('pdf/federal-register-15-pages.pdf');
  const listed = tool('pdfimages', ['-list', '-f', '2', '-l', '3', fed])
    .split('\n')
    .slice(2)
    .filter((l) => /^\s*\d/.test(l))
    .map((l) => l.trim().split(/\s+/));
  const r2 = await post('/extracted-images', fed, { pages: '2-3' });
  const uniq = new Set(listed.filter((c) => c[2] === 'image').map((c) => c[10])).size;
  assert.is(r2.outputId.length, uniq);
  for (const id of r2.outputId) assert.match((await info(id)).name, /-img\d{3}-page00[23]\.(tif|png|jpg)$/);
});

test('extracted-images: images drawn again on later pages come out once, as from the first copy', async () => {
  // The register three times over, its images shared (qpdf names the same file again): only the first copy's
  // pages are written, and the rest of the pages, with only images seen before, are not decoded again.
  const fed = corpus('pdf/federal-register-15-pages.pdf');
  const dir = mkdtempSync(join(tmp, 'r-'));
  const thrice = join(dir, 'thrice.pdf');
  tool('qpdf', ['--empty', '--pages', fed, '1-z', fed, '1-z', fed, '1-z', '--', thrice]);
  const once = await post('/extracted-images', fed);
  const again = await post('/extracted-images', thrice);
  const names = async (r: any) => Promise.all(r.outputId.map(async (id: string) => (await info(id)).name.replace(/^.*-img/, 'img')));
  assert.ok(once.outputId.length >= 10);
  assert.equal(await names(again), await names(once));
  for (const [k, url] of again.outputUrl.entries()) {
    assert.ok(readFileSync(await t.download(url)).equals(readFileSync(await t.download(once.outputUrl[k]))), `image ${k + 1}`);
  }
  // From the second copy on (pages 16-45) the same images, named at the first page each is drawn on there.
  const later = await post('/extracted-images', thrice, { pages: '20-45' });
  assert.equal(
    (await names(later)).map((n: string) => Number(/page(\d+)/.exec(n)![1]) - 15),
    (await names(once)).map((n: string) => Number(/page(\d+)/.exec(n)![1])).filter((p: number) => p >= 5),
  );
});

// ---------------------------------------------------------------- /markdown

test('markdown: two-column article with headings, paragraphs joined, column order, page comments', async () => {
  const r = await post('/markdown', corpus('pdf/multicolumn-3-pages.pdf'), { page_break_comments: 'on', pages: '1-2' });
  const md: string = r.markdown;
  assert.ok(md.startsWith('<!--Page 1-->'), md.slice(0, 40));
  assert.ok(md.includes('<!--Page 2-->'));
  assert.not.ok(md.includes('<!--Page 3-->'));
  assert.match(md, /^# Two-Column Document with Lorem Ipsum$/m);
  assert.match(md, /^#+ Abstract$/m);
  // Lines of a paragraph are joined and hyphenation undone ("adip- iscing" in the PDF).
  assert.ok(md.includes('Lorem ipsum dolor sit amet, consectetuer adipiscing elit. Ut purus elit'), md.slice(0, 800));
  assert.ok(md.indexOf('Nulla malesuada porttitor diam') < md.indexOf('pellentesque ante. Phasellus'));
  const p2 = await post('/markdown', corpus('pdf/multicolumn-3-pages.pdf'), { pages: '2' });
  assert.not.ok(p2.markdown.includes('Two-Column Document'));
  assert.not.ok(p2.markdown.includes('<!--Page'));
});

test('markdown: running heads, feet and page numbers are left out of the flow (comments with page_break_comments)', async () => {
  const fed = corpus('pdf/federal-register-15-pages.pdf');
  // In the PDF, as Poppler reads it: every page opens with its number or the running head, and ends with the feed line.
  const page5 = tool('pdftotext', ['-f', '5', '-l', '5', fed, '-']);
  assert.match(page5, /Federal Register \/ Vol\. 85, No\. 152/);
  assert.match(page5, /47702/);
  assert.match(page5, /VerDate Sep<11>2014/);
  const md: string = (await post('/markdown', fed)).markdown;
  assert.not.match(md, /Federal Register \/ Vol\. 85, No\. 152/);
  assert.not.match(md, /VerDate Sep/);
  assert.not.match(md, /^\s*47702\s*$/m);
  assert.match(md, /Airworthiness Directives/, 'the body stays');
  const commented: string = (await post('/markdown', fed, { page_break_comments: 'on' })).markdown;
  assert.match(commented, /<!--Page 5-->\n\n(<!--Furniture: [^\n]*-->\n\n)*<!--Furniture: 47702-->/);
  // Two pages are too few to tell a running head from a heading: nothing is taken out.
  assert.match((await post('/markdown', fed, { pages: '4-5' })).markdown, /VerDate Sep/);
});

test('markdown: output_type=file is a .md; a scan without text warns instead of an empty success', async () => {
  const f = await post('/markdown', corpus('pdf/google-docs-export.pdf'), { output_type: 'file' });
  assert.match((await info(f.outputId)).name, /\.md$/);
  const md = readFileSync(await t.download(f.outputUrl), 'utf8');
  assert.match(md, /^#+ Example document$/m);
  const scan = await post('/markdown', corpus('scans/linn-scan-ccitt.pdf'));
  assert.match(scan.warning, /No text was found/);
  assert.match(scan.warning, /ocr/i);
});

/** Compression tag (259) of a TIFF's first IFD, read directly from the bytes. */
function tiffCompression(b: Buffer): number {
  const le = b.toString('latin1', 0, 2) === 'II';
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const ifd = u32(4);
  for (let i = 0; i < u16(ifd); i++) {
    const e = ifd + 2 + i * 12;
    if (u16(e) === 259) return u16(e + 8);
  }
  return -1;
}

test.run();
