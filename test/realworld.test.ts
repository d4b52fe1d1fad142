import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onRun } from '../engines/run.js';
import { nestedForms, tinyTiles } from './fixtures.js';
import { corpus, expectError, expectOk, pdfText, settledStatus, startApp, type TestApp, tool } from './helpers.js';

/**
 * Files nobody here chose (qpdf's damaged test files, ../shared/corpus/realworld-qpdf) and pages that make an
 * engine spin: each read falls back to the next engine, a page is cut at its budget, a damaged file is repaired
 * before it is refused, and a refusal says why.
 */
const test = suite('realworld');
let t: TestApp;
/** RENDER_PAGE_SECONDS=3, TEXT_PAGE_SECONDS=3, WRITE_PAGE_SECONDS=3: each far past what an ordinary page takes even on a slow machine (10-100 ms here), each far short of the pages built to spin. */
let tight: TestApp;

test.before(async () => {
  t = await startApp();
  // With a page budget switched off, the pages built to spin are cut by the job's limit instead, and the tests
  // that expect the page budget's message fail rather than wait for hours.
  tight = await startApp({ RENDER_PAGE_SECONDS: '3', TEXT_PAGE_SECONDS: '3', WRITE_PAGE_SECONDS: '3', MAX_PROCESS_SECONDS: '300' });
});
test.after(async () => {
  await Promise.all([t.close(), tight.close()]);
});

const rw = (name: string) => corpus(`realworld-qpdf/${name}.pdf`);
const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** The first page image of a /png answer: its size and how much of it is not white. */
async function firstImage(app: TestApp, body: Record<string, any>): Promise<{ width: number; height: number; ink: number }> {
  const url = Array.isArray(body.outputUrl) ? body.outputUrl[0] : body.outputUrl;
  const { data, info } = await sharp(readFileSync(await app.download(url)))
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, ink: data.filter((v) => v < 200).length / data.length };
}

test('a page MuPDF cannot read is drawn and read by Poppler (bad11: an object missing from the xref)', async () => {
  // The references: MuPDF refuses the file, Poppler reads "Salad".
  assert.throws(() => tool('mutool', ['draw', '-q', '-F', 'txt', '-o', '-', rw('bad11')]));
  assert.match(pdfText(rw('bad11')), /Salad/);
  const png = await expectOk(await t.form('/png', { file: { file: rw('bad11') }, resolution: '36' }));
  const image = await firstImage(t, png);
  assert.ok(image.width > 0 && image.ink > 0, JSON.stringify(image));
  const text = await expectOk(await t.form('/extracted-text', { file: { file: rw('bad11') } }));
  assert.equal(words(text.fullText), words(pdfText(rw('bad11'))));
});

test('a file whose xref sections loop is read page by page (append-xref-loop: 30 pages)', async () => {
  const pages = Number(/^Pages:\s+(\d+)/m.exec(tool('pdfinfo', [rw('append-xref-loop')]))![1]);
  assert.is(pages, 30);
  const text = await expectOk(await t.form('/extracted-text', { file: { file: rw('append-xref-loop') }, full_text: 'by_page' }));
  assert.equal(
    text.fullText.pages.map((p: { page: number }) => p.page),
    Array.from({ length: pages }, (_, i) => i + 1),
  );
  assert.match(text.fullText.pages[1].text, /Potato 1/);
  const word = await expectOk(await t.form('/word', { file: { file: rw('append-xref-loop') } }));
  // One section per PDF page; "Potato N", repeated at the same place on every page, is the running header.
  const xml = tool('unzip', ['-p', await t.download(word.outputUrl), 'word/document.xml']);
  assert.is(xml.match(/<w:sectPr\b/g)?.length, pages);
  assert.match(xml, /Potato 0 new/);
});

test('a page that keeps MuPDF and Poppler busy past RENDER_PAGE_SECONDS is drawn by Ghostscript', async () => {
  // Ten to the ninth full-page fills in an annotation without the Print flag: MuPDF and Poppler draw it as viewers
  // do and are cut, on any machine; Ghostscript draws the page as printed, without that annotation, at once.
  const app = await startApp({ RENDER_PAGE_SECONDS: '3', MAX_PROCESS_SECONDS: '300' });
  // The engines that drew at 72 dpi, in order, and whether each finished (a cut one has no exit code 0).
  const drew: [string, boolean][] = [];
  let recording = true;
  onRun((e) => recording && (e.args.includes('72') || e.args.includes('-r72')) && drew.push([e.tool, e.exitCode === 0]));
  try {
    const heavy = { bytes: nestedForms(9, { inner: 'fill', annotation: true }), name: 'heavy.pdf' };
    const png = await expectOk(await app.form('/png', { file: heavy, resolution: '72' }));
    recording = false;
    assert.equal(drew, [
      ['mutool', false],
      ['pdftoppm', false],
      ['gs', true],
    ]);
    // Ghostscript's page: the title's ink at the top, the annotation's area left white.
    const { data, info } = await sharp(readFileSync(await app.download(png.outputUrl[0])))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.is(info.width, 612);
    const ink = (y0: number, y1: number) => data.subarray(y0 * info.width, y1 * info.width).filter((v) => v < 128).length;
    assert.ok(ink(70, 100) > 100, `title ink ${ink(70, 100)}`);
    assert.is(ink(300, 700), 0);
  } finally {
    recording = false;
    await app.close();
  }
});

test('a page every engine spins on is cut at RENDER_PAGE_SECONDS (422 naming it) and frees its lane for others', async () => {
  // Two polled renders of the page, then an ordinary render: the ordinary one is not held for the job limit.
  const polled = await Promise.all(
    [1, 2].map(
      async () =>
        (await expectOk(await tight.form('/png', { file: { bytes: tinyTiles(0.001), name: 'spin.pdf' }, resolution: '72' }, { 'Request-Type': 'requestId' })))
          .requestId as string,
    ),
  );
  const started = Date.now();
  const ordinary = await expectOk(await tight.form('/png', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, resolution: '36' }));
  const seconds = (Date.now() - started) / 1000;
  assert.ok((await firstImage(tight, ordinary)).ink > 0);
  // Each engine gets 3 s on the page: the ordinary request waited for two cut pages, not for MAX_PROCESS_SECONDS.
  assert.ok(seconds < 60, `the ordinary render waited ${seconds} s`);
  for (const id of polled) {
    const body = await settledStatus(tight, id);
    assert.match(JSON.stringify(body), /Drawing page 1 \(tried by MuPDF, Poppler, Ghostscript\) exceeded the limit RENDER_PAGE_SECONDS=3/);
  }
  // The same page as JPEG (Ghostscript first) is cut the same way; its text is read in no time.
  await expectError(await tight.form('/jpg', { file: { bytes: tinyTiles(0.001), name: 'spin.pdf' }, resolution: '72' }), 422, /RENDER_PAGE_SECONDS=3/);
  const text = await expectOk(await tight.form('/extracted-text', { file: { bytes: tinyTiles(0.001), name: 'spin.pdf' } }));
  assert.is(text.fullText, 'Tiny tiles');
  // A slide keeps its text when no engine can draw its picture in time.
  const slides = await expectOk(await tight.form('/powerpoint', { file: { bytes: tinyTiles(0.001), name: 'spin.pdf' } }));
  assert.match(tool('unzip', ['-p', await tight.download(slides.outputUrl), 'ppt/slides/slide1.xml']), /Tiny tiles/);
});

test('a page whose content keeps MuPDF and Poppler reading past TEXT_PAGE_SECONDS is cut (422 naming it)', async () => {
  // Ten to the ninth forms to interpret: hours in each engine here, minutes on a machine ten times faster.
  await expectError(
    await tight.form('/extracted-text', { file: { bytes: nestedForms(9), name: 'forms.pdf' } }),
    422,
    /Reading the text of page 1 \(tried by MuPDF, Poppler\) exceeded the limit TEXT_PAGE_SECONDS=3/,
  );
  // The same page with three levels (a thousand forms) is read at once.
  const text = await expectOk(await tight.form('/extracted-text', { file: { bytes: nestedForms(3), name: 'forms.pdf' } }));
  assert.is(text.fullText, 'Nested forms');
});

test('a page Ghostscript rewrites past WRITE_PAGE_SECONDS is cut (422 naming it); an ordinary rewrite passes', async () => {
  // Ten to the ninth fills through pdfwrite: days here, hours on a machine ten times faster.
  const heavy = { file: { bytes: nestedForms(9, { inner: 'fill' }), name: 'forms.pdf' } };
  await expectError(
    await tight.form('/pdfa', { ...heavy, output_type: 'PDF/A-2b' }),
    422,
    /Writing page 1 \(tried by Ghostscript\) exceeded the limit WRITE_PAGE_SECONDS=3/,
  );
  await expectError(await tight.form('/compressed-pdf', { ...heavy, compression_level: 'high' }), 422, /Writing page 1 .*WRITE_PAGE_SECONDS=3/);
  // Each page has its own budget: 15 pages pass a budget of 3 s per page.
  const many = await expectOk(await tight.form('/pdfa', { file: { file: corpus('pdf/federal-register-15-pages.pdf') }, output_type: 'PDF/A-2b' }));
  assert.match(tool('pdfinfo', [await tight.download(many.outputUrl)]), /Pages:\s+15/);
});

test('images Poppler cannot find in a damaged file are extracted by MuPDF (issue-117: a broken stream length)', async () => {
  assert.is(
    tool('pdfimages', ['-list', rw('issue-117')])
      .split('\n')
      .filter((l) => /^\s*\d/.test(l)).length,
    0,
  );
  const body = await expectOk(await t.form('/extracted-images', { file: { file: rw('issue-117') } }));
  const urls = [body.outputUrl].flat();
  assert.is(urls.length, 1);
  const meta = await sharp(readFileSync(await t.download(urls[0]))).metadata();
  assert.equal([meta.format, meta.width, meta.height], ['png', 151, 1]);
});

test('a damaged file the engines refuse is repaired once and processed, with a warning', async () => {
  // bad7: neither qpdf nor Poppler can find its pages (a broken xref), nor can qpdf rewrite it; MuPDF does.
  assert.throws(() => tool('qpdf', ['--show-npages', rw('bad7')]));
  assert.throws(() => tool('pdfinfo', [rw('bad7')]));
  const png = await expectOk(await t.form('/png', { file: { file: rw('bad7') }, resolution: '36' }));
  assert.match(png.warning, /damaged .* repaired \(rewritten by MuPDF\)/);
  assert.ok((await firstImage(t, png)).width > 0);
  // Ghostscript's PDF/A of it too, from MuPDF's copy: its text read back.
  const pdfa = await expectOk(await t.form('/pdfa', { file: { file: rw('bad7') }, output_type: 'PDF/A-2b' }));
  assert.match(pdfa.warning, /rewritten by MuPDF/);
  assert.is(pdfText(await t.download(pdfa.outputUrl)).trim(), 'Potato');
});

// bad-encryption-length: Ghostscript 10.00 asks it for a password (a wrong key /Length in its Encrypt dictionary)
// that qpdf and MuPDF do without. Ghostscript's operations write from qpdf's decrypted copy: their result is not
// encrypted either way. Converting colours also ran again on a repaired copy in the job dir of the first attempt,
// where its profiles dir already stood (a 500).
test('a file Ghostscript wants a password for that opens without one: /pdfa, /pdfx and colour conversion write it; colours of a repaired copy too', async () => {
  const file = { file: rw('bad-encryption-length') };
  // Ghostscript exits 0 on it, drawing nothing.
  const gs = spawnSync('gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=nullpage', rw('bad-encryption-length')], { encoding: 'utf8' });
  assert.match(gs.stdout + gs.stderr, /requires a password for access/);
  for (const [path, fields] of [
    ['/pdfa', { output_type: 'PDF/A-2b' }],
    ['/pdfx', { output_type: 'PDF/X-4' }],
    ['/pdf-with-converted-colors', { color_profile: 'srgb' }],
  ] as const) {
    const body = await expectOk(await t.form(path, { file, ...fields }));
    const out = await t.download(body.outputUrl);
    assert.is(pdfText(out).trim(), 'Potato', path);
    assert.match(tool('qpdf', ['--show-encryption', out]), /File is not encrypted/, path);
  }
  // bad35: Ghostscript cannot convert it as it is, qpdf's repaired copy it can, in the same job dir.
  const repaired = await expectOk(await t.form('/pdf-with-converted-colors', { file: { file: rw('bad35') }, color_profile: 'srgb' }));
  assert.match(repaired.warning, /repaired \(rewritten by qpdf\)/);
  assert.is(pdfText(await t.download(repaired.outputUrl)).trim(), 'Potato');
});

// pages-loop: pdf-lib cannot place the pages of qpdf's copy (a page tree that loops), nor of MuPDF's; Ghostscript's
// re-written copy it can. Placing pages failed without trying the repaired copies (a 400).
test('/n-up-pdf and /resized-pdf place the pages of a repaired copy when pdf-lib cannot read the file', async () => {
  for (const [path, fields] of [
    ['/n-up-pdf', { pages_per_sheet: '4' }],
    ['/resized-pdf', { page_size: 'A4' }],
  ] as const) {
    const body = await expectOk(await t.form(path, { file: { file: rw('pages-loop') }, ...fields }));
    assert.match(body.warning, /repaired \(rewritten by Ghostscript\)/, path);
    const out = await t.download(body.outputUrl);
    assert.is(pdfText(out).trim(), 'Potato', path);
  }
});

// fuzz-16214: every reader reads its page, but qpdf stops linearizing it with an internal error, on each repaired
// copy too. The refusal cannot say the file is unreadable; it says which engines failed, not what they printed.
test("a file whose pages read but the operation's engine fails on, repaired or not: 400 naming the engines", async () => {
  const res = await t.form('/linearized-pdf', { file: { file: rw('fuzz-16214') } });
  const body = (await res.json()) as { error: string };
  assert.is(res.status, 400);
  assert.match(body.error, /^Uploaded file is not valid input for this route: its pages can be read, but qpdf\b.* failed on it, and on its repaired copies$/);
  assert.not.match(body.error, /INTERNAL|\/tmp|work\//);
});

test('a file no engine can read, even repaired, is refused with the reason', async () => {
  // Not a PDF at all: what it is instead.
  await expectError(await t.form('/png', { file: { file: corpus('images/hopper.png'), name: 'scan.pdf' } }), 400, /scan\.pdf is not a PDF: it is a PNG image/);
  await expectError(
    await t.form('/extracted-text', { file: { bytes: Buffer.from('Dear customer, please find attached'), name: 'letter.pdf' } }),
    400,
    /letter\.pdf is not a PDF: it is text starting with "Dear customer, pleas/,
  );
  await expectError(
    await t.form('/png', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') } }),
    400,
    /not valid input for this route: the PDF is cut short/,
  );
  await expectError(
    await t.form('/extracted-text', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') } }),
    400,
    /the PDF is cut short/,
  );
});

test.run();
