import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { degrees, PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_OCR_PIXELS, ocrImage } from '../app/render/index.js';
import { corpus, pdfPages, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
let tmp: string;
const built: Record<string, string> = {};

/** Known text of the corpus (MANIFEST.md). */
const PHOTOTEST = readFileSync(corpus('scans/tesseract-phototest.expected.txt'), 'utf8');
const LINN = readFileSync(corpus('scans/linn-brochure-two-columns.expected.txt'), 'utf8');
const FRENCH =
  "Portez ce vieux whisky au juge blond qui fume sur son île intérieure, à côté de l'alcôve ovoïde, où les bûches se consument dans l'âtre, ce qui lui permet de penser à la cænogénèse de l'être dont il est question dans la cause ambiguë entendue à Moÿ, dans un capharnaüm qui, pense-t-il, diminue çà et là la qualité de son œuvre.";

/**
 * An image-only PDF built with sharp and pdf-lib (not our code). With `turned`, the page has a media box
 * offset from the origin, a smaller crop box and /Rotate 90, and the image is drawn turned in the page's
 * space so that it displays upright at (8, 15) pt from the displayed top-left corner.
 */
async function imagePdf(image: string, dpi: number, out: string, turned = false): Promise<string> {
  const { data, info } = await sharp(image).png().toBuffer({ resolveWithObject: true });
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(data);
  const [w, h] = [(info.width * 72) / dpi, (info.height * 72) / dpi];
  if (!turned) {
    doc.addPage([w, h]).drawImage(png, { x: 0, y: 0, width: w, height: h });
  } else {
    const page = doc.addPage();
    page.setMediaBox(-20, 10, h + 50, w + 70);
    page.setCropBox(-10, 20, h + 20, w + 30);
    page.setRotation(degrees(90));
    page.drawImage(png, { x: h + 5, y: 28, width: w, height: h, rotate: degrees(90) });
  }
  writeFileSync(join(tmp, out), await doc.save());
  return join(tmp, out);
}

test.before(async () => {
  t = await startApp();
  tmp = mkdtempSync(join(tmpdir(), 'quire-ocr-'));
  built.phototest = await imagePdf(corpus('scans/tesseract-phototest.tif'), 200, 'phototest.pdf');
  built.turned = await imagePdf(corpus('scans/tesseract-phototest.tif'), 200, 'turned.pdf', true);
  built.upsideDown = await imagePdf(corpus('scans/tesseract-phototest-rotated-180.png'), 200, 'upside-down.pdf');
  built.eurotext = await imagePdf(corpus('scans/tesseract-eurotext-multilingual.tif'), 300, 'eurotext.pdf');
  built.mixed = join(tmp, 'mixed.pdf');
  tool('qpdf', ['--empty', '--pages', corpus('pdf/text-minimal-pdflatex.pdf'), '1', built.phototest, corpus('pdf/vector-art-no-fonts.pdf'), '--', built.mixed]);
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function ocr(file: string, fields: Record<string, string> = {}): Promise<string> {
  const res = await t.form('/pdf-with-ocr-text', { file: { file }, ...fields });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  assert.type(body.outputId, 'string', 'single-output shape');
  assert.not.ok(body.warning);
  return t.download(body.outputUrl);
}

async function expectError(fields: Record<string, string>, status: number, pattern: RegExp, file = built.phototest) {
  const res = await t.form('/pdf-with-ocr-text', { file: { file }, ...fields });
  const body = (await res.json()) as { error: string };
  assert.is(res.status, status, JSON.stringify(body));
  assert.match(body.error, pattern);
}

const words = (s: string) =>
  s
    .normalize('NFKC')
    .replace(/[‘’]/g, "'")
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase())
    .filter(Boolean);

/** The share of the known words found in the text (each found word used once): a tolerant match. */
function recall(known: string, text: string): number {
  const bag = new Map<string, number>();
  for (const w of words(text)) bag.set(w, (bag.get(w) ?? 0) + 1);
  const expected = words(known);
  let hit = 0;
  for (const w of expected) {
    const n = bag.get(w) ?? 0;
    if (n) {
      hit++;
      bag.set(w, n - 1);
    }
  }
  return hit / expected.length;
}

const pageText = (file: string, page: number) => tool('pdftotext', ['-f', String(page), '-l', String(page), file, '-']);

interface Box {
  text: string;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
/** pdftotext's words with their boxes on the displayed page (points, origin at the crop box's top-left). */
const wordBoxes = (file: string, page: number): Box[] =>
  [
    ...tool('pdftotext', ['-bbox', '-cropbox', '-f', String(page), '-l', String(page), file, '-']).matchAll(
      /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</g,
    ),
  ].map((m) => ({
    text: m[5],
    x0: Number(m[1]),
    y0: Number(m[2]),
    x1: Number(m[3]),
    y1: Number(m[4]),
  }));

/** A page as poppler renders it, grey pixels. */
async function render(file: string, page: number, dpi: number) {
  const prefix = join(tmp, `render-${Math.random().toString(36).slice(2)}`);
  tool('pdftoppm', ['-r', String(dpi), '-cropbox', '-gray', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, prefix]);
  return sharp(`${prefix}.png`).greyscale().raw().toBuffer({ resolveWithObject: true });
}

/** Share of dark pixels under each word's box, on the page rendered at 72 dpi (1 px = 1 pt). */
async function inkUnderWords(file: string, page: number): Promise<number[]> {
  const { data, info } = await render(file, page, 72);
  return wordBoxes(file, page).map((b) => {
    let dark = 0;
    let all = 0;
    for (let y = Math.floor(b.y0); y < Math.ceil(b.y1) && y < info.height; y++) {
      for (let x = Math.floor(b.x0); x < Math.ceil(b.x1) && x < info.width; x++) {
        all++;
        if (data[y * info.width + x] < 128) dark++;
      }
    }
    return all ? dark / all : 0;
  });
}

/** The page's content streams as stored (qpdf, raw bytes), in order. */
function contentStreams(file: string, page: number): Buffer[] {
  const json = JSON.parse(tool('qpdf', ['--json=2', '--json-key=pages', file]));
  return (json.pages[page - 1].contents as string[]).map((ref) =>
    Buffer.from(tool('qpdf', [`--show-object=${ref.replace(' R', '').trim().replace(' ', ',')}`, '--raw-stream-data', file]), 'latin1'),
  );
}

test('a CCITT scan: the known text comes back from pdftotext, invisibly, over the kept original', async () => {
  const input = corpus('scans/linn-scan-ccitt.pdf');
  const out = await ocr(input);
  assert.ok(recall(LINN, tool('pdftotext', [out, '-'])) > 0.9, 'Linn brochure text');
  assert.match(tool('pdffonts', [out]), /GlyphLessFont/);
  // Render mode 3: the page looks exactly as before.
  assert.ok((await render(out, 1, 30)).data.equals((await render(input, 1, 30)).data), 'same pixels');
  // The original content stream is still the page's content, unchanged.
  const before = contentStreams(input, 1);
  const after = contentStreams(out, 1);
  assert.ok(
    before.every((s) => after.some((a) => a.equals(s))),
    'original content stream kept',
  );
  // Words sit on the ink of the scan.
  const ink = await inkUnderWords(out, 1);
  assert.ok(ink.filter((r) => r > 0.1).length / ink.length > 0.9, `words over ink: ${ink.length}`);
});

test('English image scans (tif, png turned upside down in the image)', async () => {
  const out = await ocr(built.phototest, { languages: 'English' });
  assert.ok(recall(PHOTOTEST, pageText(out, 1)) > 0.95);
  const upside = await ocr(built.upsideDown);
  assert.ok(recall(PHOTOTEST, pageText(upside, 1)) > 0.9, pageText(upside, 1));
});

test('crop box offset and /Rotate 90: words land where they do on the plain page', async () => {
  const plain = await ocr(built.phototest);
  const turned = await ocr(built.turned);
  assert.ok(recall(PHOTOTEST, pageText(turned, 1)) > 0.95);
  const once = (boxes: Box[]) => new Map(boxes.filter((b) => boxes.filter((o) => o.text === b.text).length === 1).map((b) => [b.text, b]));
  const a = once(wordBoxes(plain, 1));
  const b = once(wordBoxes(turned, 1));
  let compared = 0;
  for (const [text, p] of a) {
    const q = b.get(text);
    if (!q) continue;
    compared++;
    for (const [u, v] of [
      [p.x0 + 8, q.x0],
      [p.x1 + 8, q.x1],
      [p.y0 + 15, q.y0],
      [p.y1 + 15, q.y1],
    ])
      assert.ok(Math.abs(u - v) < 2, `${text}: ${u} vs ${v}`);
  }
  assert.ok(compared >= 5, `compared ${compared} words`);
  const ink = await inkUnderWords(turned, 1);
  assert.ok(ink.filter((r) => r > 0.1).length / ink.length > 0.9);
});

test('scans turned 90, 180 and 270 degrees inside the image are read upright', async () => {
  const out = await ocr(corpus('scans/linn-scan-4-orientations.pdf'), { pages: '3-4' });
  for (const page of [3, 4]) assert.ok(recall(LINN, pageText(out, page)) > 0.85, `page ${page}`);
  assert.is(pageText(out, 1).trim(), '', 'page 1 not asked: no text');
  const ink = await inkUnderWords(out, 4);
  assert.ok(ink.filter((r) => r > 0.1).length / ink.length > 0.9);
});

test('German and French: umlauts and accents with those languages (JSON body, array)', async () => {
  const up = await t.form('/upload', { file: { file: built.eurotext } });
  const id = ((await up.json()) as { files: { id: string }[] }).files[0].id;
  const res = await t.json('/pdf-with-ocr-text', { id, languages: ['German', 'French'] });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  const text = pageText(await t.download(body.outputUrl), 1);
  for (const w of ['über', 'faulen', 'Hund', 'renard', '«rapide»', 'paresseux']) assert.ok(text.includes(w), `${w} in ${text}`);
  const french = pageText(await ocr(corpus('scans/french-diacritics-scan.pdf'), { languages: 'French' }), 1);
  assert.ok(recall(FRENCH, french) > 0.85, french);
  for (const w of ['île', 'côté', 'bûches', 'œuvre']) assert.ok(french.includes(w), w);
});

test('a page that already has text keeps its content byte for byte; mixed documents work', async () => {
  const out = await ocr(built.mixed);
  assert.is(pdfPages(out), 3);
  const before = contentStreams(built.mixed, 1);
  const after = contentStreams(out, 1);
  assert.is(after.length, before.length);
  after.forEach((s, i) => assert.ok(s.equals(before[i]), `stream ${i}`));
  assert.is(pageText(out, 1), pageText(built.mixed, 1));
  assert.ok(recall(PHOTOTEST, pageText(out, 2)) > 0.95, "scan page OCR'd");
  assert.ok(recall('This is text that should be used for OCR processing', pageText(out, 3)) > 0.8, "text drawn as curves OCR'd");
  // Its invisible text counts as text: a second run changes nothing.
  assert.ok(readFileSync(await ocr(out)).equals(readFileSync(out)), "OCR'd pages are not OCR'd again");
  // A document whose pages all have text comes back as it was.
  const text = await ocr(corpus('pdf/text-minimal-pdflatex.pdf'));
  assert.ok(readFileSync(text).equals(readFileSync(corpus('pdf/text-minimal-pdflatex.pdf'))));
  // Output name: the default rule, or `output`.
  const res = await t.form('/pdf-with-ocr-text', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, output: 'searchable' });
  const { outputId } = await res.json();
  assert.is(((await (await t.request(`/resource/${outputId}?format=info`)).json()) as { name: string }).name, 'searchable.pdf');
});

test('pages outside `pages` are copied unchanged', async () => {
  const two = join(tmp, 'two-scans.pdf');
  tool('qpdf', ['--empty', '--pages', built.phototest, built.phototest, '--', two]);
  const out = await ocr(two, { pages: '2' });
  assert.is(pageText(out, 1).trim(), '');
  assert.ok(recall(PHOTOTEST, pageText(out, 2)) > 0.95);
  const before = contentStreams(two, 1);
  const after = contentStreams(out, 1);
  assert.is(after.length, before.length);
  after.forEach((s, i) => assert.ok(s.equals(before[i])));
});

test('invalid languages and pages: 400 naming the parameter; encrypted: 401; not a PDF: 400', async () => {
  await expectError({ languages: 'Klingon' }, 400, /languages/);
  await expectError({ languages: 'English,Elvish' }, 400, /languages/);
  await expectError({ languages: 'eng' }, 400, /languages/);
  await expectError({ pages: '0' }, 400, /pages/);
  await expectError({ pages: '2' }, 400, /pages/);
  await expectError({ pages: 'last-1' }, 400, /pages/);
  await expectError({ pages: 'even' }, 400, /pages/);
  await expectError({}, 401, /password/, corpus('encrypted/rc4-128-user-view-owner-master.pdf'));
  await expectError({}, 400, /not valid input/, corpus('scans/tesseract-phototest.expected.txt'));
});

test("how pages are drawn: the scan's resolution and colours; a huge page at a lower resolution", async () => {
  const letter = { page: 1, width: 612, height: 792, rotate: 0 };
  assert.equal(ocrImage(letter), { dpi: 300, colors: 'rgb' });
  assert.equal(ocrImage(letter, { ppi: 150, cover: 1, colors: 'gray' }), { dpi: 150, colors: 'gray' });
  assert.equal(ocrImage(letter, { ppi: 300, cover: 1, colors: 'mono' }), { dpi: 300, colors: 'mono' });
  assert.equal(ocrImage(letter, { ppi: 600, cover: 1, colors: 'mono' }), { dpi: 300, colors: 'gray' }, 'resampled: no dithering');
  assert.equal(ocrImage(letter, { ppi: 72, cover: 1, colors: 'rgb' }), { dpi: 150, colors: 'rgb' });
  assert.equal(ocrImage(letter, { ppi: 150, cover: 0.1, colors: 'gray' }), { dpi: 300, colors: 'rgb' }, 'small picture on a vector page');
  const a0 = { page: 1, width: 2384, height: 3370, rotate: 0 };
  const { dpi } = ocrImage(a0, { ppi: 300, cover: 1, colors: 'mono' });
  assert.ok(dpi < 300 && ((a0.width * dpi) / 72) * ((a0.height * dpi) / 72) <= MAX_OCR_PIXELS, String(dpi));
  // A 100 x 100 inch page would be 900 megapixels at 300 dpi.
  const big = join(tmp, 'big.pdf');
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(await sharp(corpus('scans/tesseract-phototest.tif')).png().toBuffer());
  doc.addPage([7200, 7200]).drawImage(png, { x: 0, y: 7200 - 5400, width: 7200, height: 5400 });
  writeFileSync(big, await doc.save());
  const out = await ocr(big);
  assert.ok(recall(PHOTOTEST, pageText(out, 1)) > 0.9);
});

test.run();
