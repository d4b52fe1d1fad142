import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileBarcodePattern, inkFraction, pagesBetween, separatorPages } from '../app/scan/index.js';
import { parseZbarXml } from '../engines/zbar.js';
import { corpus, pdfPages, startApp, type TestApp, tool } from './helpers.js';

/**
 * The scan clean-up endpoints on corpus scans and pages made here with independent tools (Ghostscript's ps2pdf,
 * MuPDF's `mutool convert` for images, qrencode, GNU barcode, Tesseract's own PDF output, qpdf to put them
 * together, sharp for pixels); outputs read back with pdfinfo, pdftotext, pdftoppm, zbarimg and Tesseract.
 */

let t: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'quire-scan-'));
const LINN = corpus('scans/linn-scan-ccitt.pdf'); // Letter, 1-bit 300 dpi, no text layer
const HUCK = corpus('scans/huckleberry-finn-p22-scan.pdf'); // 384 x 470.88 pt, colour JPEG 150 dpi
const FRENCH = corpus('scans/french-diacritics-scan.pdf'); // 216 x 216 pt, grey JPEG 300 dpi
const LINE = 'Only this single line of text is on this page.';
const f: Record<string, string> = {};

const at = (name: string) => join(tmp, name);
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
const ps2pdf = (name: string, ps: string) => {
  writeFileSync(at(`${name}.ps`), ps);
  sh('ps2pdf', [`${name}.ps`, `${name}.pdf`]);
  return at(`${name}.pdf`);
};
/** An image file as a one-page PDF, sized by the image's resolution (MuPDF, not our code). */
const imagePdf = (image: string, name: string) => {
  sh('mutool', ['convert', '-O', 'compress', '-o', at(`${name}.pdf`), image]);
  return at(`${name}.pdf`);
};
const join_ = (name: string, files: string[]) => {
  sh('qpdf', ['--empty', '--pages', ...files, '--', at(name)]);
  return at(name);
};
/** Page size "w x h" of one page, by pdfinfo. */
const pageSize = (pdf: string, page = 1) => /Page\s+\d+ size:\s+([\d.]+ x [\d.]+)/.exec(tool('pdfinfo', ['-f', String(page), '-l', String(page), pdf]))![1];
const pageText = (pdf: string, page: number) => tool('pdftotext', ['-layout', '-f', String(page), '-l', String(page), pdf, '-']);
/** One page drawn by Poppler as a grey PNG. */
const drawPage = (pdf: string, page: number, dpi: number, name: string) => {
  sh('pdftoppm', ['-r', String(dpi), '-gray', '-png', '-singlefile', '-f', String(page), '-l', String(page), pdf, at(name)]);
  return at(`${name}.png`);
};

/**
 * Residual skew by Tesseract (independent of the projection profiles of app/scan): the median angle of the
 * baselines of its text lines at least 300 px long in hOCR, in degrees.
 */
function tesseractSkew(png: string): number {
  const hocr = execFileSync('tesseract', [png, '-', '--psm', '3', 'hocr'], {
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  }).toString();
  const angles = [...hocr.matchAll(/class='ocr_(?:line|caption|textfloat|header)'[^>]*title="bbox (\d+) \d+ (\d+) \d+; baseline ([-\d.]+) /g)]
    .filter((m) => Number(m[2]) - Number(m[1]) >= 300)
    .map((m) => (Math.atan(Number(m[3])) * 180) / Math.PI)
    .sort((a, b) => a - b);
  assert.ok(angles.length >= 5, `Tesseract found ${angles.length} long lines in ${png}`);
  return angles[Math.floor(angles.length / 2)];
}

/** Runs an endpoint as a multipart form; returns the body and the downloaded outputs. */
async function post(path: string, fields: Record<string, string | { file: string }>, status = 200) {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, status, JSON.stringify(body));
  const urls: string[] = status !== 200 ? [] : Array.isArray(body.outputUrl) ? body.outputUrl : [body.outputUrl];
  return { body, files: await Promise.all(urls.map((u) => t.download(u))) };
}

test.before(async () => {
  t = await startApp();
  f.empty = ps2pdf('empty', '%!PS\n<< /PageSize [612 792] >> setpagedevice showpage\n');
  f.line = ps2pdf('line', `%!PS\n<< /PageSize [612 792] >> setpagedevice\n/Helvetica findfont 11 scalefont setfont 90 420 moveto (${LINE}) show showpage\n`);
  // A 'scanned blank': pale grey paper at 150 dpi, a black strip down the left edge, a dark shadow along the top,
  // 600 dark specks of 1 or 2 pixels.
  const [W, H] = [1275, 1650];
  const px = Buffer.alloc(W * H, 235);
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let y = 0; y < H; y++) for (let x = 0; x < 40; x++) px[y * W + x] = 20;
  for (let y = 0; y < 25; y++) for (let x = 40; x < W; x++) px[y * W + x] = 60;
  for (let k = 0; k < 600; k++) {
    const [x, y, s] = [Math.floor(rnd() * (W - 2)), Math.floor(rnd() * (H - 2)), 1 + Math.floor(rnd() * 2)];
    for (let i = 0; i < s; i++) for (let j = 0; j < s; j++) px[(y + i) * W + x + j] = 10;
  }
  await sharp(px, { raw: { width: W, height: H, channels: 1 } })
    .withMetadata({ density: 150 })
    .png()
    .toFile(at('noisy.png'));
  f.noisy = imagePdf(at('noisy.png'), 'noisy');
  // Separator sheets from independent encoders.
  sh('qrencode', ['-s', '10', '-d', '150', '-o', at('qr.png'), 'SEP-A']);
  f.qr = imagePdf(at('qr.png'), 'qr');
  sh('barcode', ['-e', 'code128', '-b', 'SEP-B', '-o', at('code128.ps')]);
  sh('ps2pdf', ['code128.ps', 'code128.pdf']);
  f.code128 = at('code128.pdf');
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('ink: specks and edges of a scanned blank do not count, a line of text does', async () => {
  const grey = async (draw: (d: Buffer, w: number) => void) => {
    const [w, h] = [850, 1100]; // Letter at 100 dpi
    const data = Buffer.alloc(w * h, 255);
    draw(data, w);
    return inkFraction({ width: w, height: h, data });
  };
  assert.is(await grey(() => {}), 0);
  // 30-pixel black strip down the left edge, 2x2 specks every 50 pixels.
  assert.is(
    await grey((d, w) => {
      for (let y = 0; y < 1100; y++) for (let x = 0; x < 30; x++) d[y * w + x] = 0;
      for (let y = 100; y < 1000; y += 50)
        for (let x = 100; x < 750; x += 50) d[y * w + x] = d[y * w + x + 1] = d[(y + 1) * w + x] = d[(y + 1) * w + x + 1] = 0;
    }),
    0,
  );
  // A bar 300 x 8 pixels in the middle: 2400 of the inner 766 x 990 pixels (42 and 55 left out on each side).
  const bar = await grey((d, w) => {
    for (let y = 500; y < 508; y++) for (let x = 200; x < 500; x++) d[y * w + x] = 0;
  });
  assert.ok(Math.abs(bar - 2400 / (766 * 990)) < 1e-9, String(bar));
});

test('separator grouping and zbar XML', () => {
  assert.equal(pagesBetween(6, [2, 4]), [[1], [3], [5, 6]]);
  assert.equal(pagesBetween(5, [1, 2, 5]), [[3, 4]]);
  assert.equal(pagesBetween(2, [1, 2]), []);
  const codes = [
    { page: 2, type: 'QR-Code', text: 'SEP-A' },
    { page: 4, type: 'CODE-128', text: 'SEP-B' },
    { page: 4, type: 'EAN-13', text: '4006381333931' },
  ];
  assert.equal(separatorPages(codes), [2, 4]);
  assert.equal(separatorPages(codes, compileBarcodePattern('^SEP-B$')), [4]);
  assert.equal(separatorPages(codes, compileBarcodePattern('(?i)sep-a')), [2]);
  assert.throws(() => compileBarcodePattern('a(b'), /a\(b is not within the acceptable range for barcode_text/);
  const xml =
    "<barcodes xmlns='http://zbar.sourceforge.net/2008/barcode'>\n<source href='/x/page-1.tif'>\n</source>\n<source href='/x/page-2.tif'>\n<index num='0'>\n<symbol type='QR-Code' quality='1' orientation='UP'><data><![CDATA[a]]]]><![CDATA[>b]]></data></symbol>\n</index>\n</source>\n</barcodes>";
  assert.equal(parseZbarXml(xml, ['/x/page-1.tif', '/x/page-2.tif']), [{ image: '/x/page-2.tif', type: 'QR-Code', text: 'a]]>b' }]);
});

test('/pdf-without-blank-pages: an empty page and a scanned blank go, a page with one line stays', async () => {
  const doc = join_('blank-doc.pdf', [LINN, f.empty, f.noisy, f.line, HUCK]);
  const { body, files } = await post('/pdf-without-blank-pages', { file: { file: doc } });
  assert.equal(body.removedPages, [2, 3]);
  assert.is(typeof body.inputId, 'string');
  const out = files[0];
  assert.is(pdfPages(out), 3);
  assert.is(pageSize(out, 1), '612 x 792');
  assert.ok(pageText(out, 2).includes(LINE), pageText(out, 2));
  assert.is(pageSize(out, 3), '384 x 470.88');

  // Only pages in `pages` may go; JSON by id with loose values.
  const up = await t.form('/upload', { file: { file: doc } });
  const id = ((await up.json()) as any).files[0].id;
  const res = await t.json('/pdf-without-blank-pages', { id, pages: '1-2', threshold: '0.0002', output: 'kept' });
  const byId = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(byId));
  assert.equal(byId.removedPages, [2]);
  assert.is(pdfPages(await t.download(byId.outputUrl)), 4);
  assert.is(byId.inputId, id);

  // A threshold above one line's ink takes the line's page too.
  const higher = await post('/pdf-without-blank-pages', { file: { file: doc }, threshold: '0.005' });
  assert.equal(higher.body.removedPages, [2, 3, 4]);
});

test('/pdf-without-blank-pages: 400s for bad values and for a document that would be empty', async () => {
  for (const threshold of ['-0.1', '2', 'lots']) {
    const { body } = await post('/pdf-without-blank-pages', { file: { file: f.empty }, threshold }, 400);
    assert.match(body.error, `${threshold} is not within the acceptable range for threshold`);
  }
  const { body } = await post('/pdf-without-blank-pages', { file: { file: join_('blanks.pdf', [f.empty, f.noisy]) } }, 400);
  assert.match(body.error, /every page is blank/);
  const pages = await post('/pdf-without-blank-pages', { file: { file: f.empty }, pages: '3' }, 400);
  assert.match(pages.body.error, '3 is not within the acceptable range for pages');
});

test('/separated-pdf: QR and Code 128 sheets split the document and are dropped; barcode_text picks some', async () => {
  const doc = join_('sep-doc.pdf', [LINN, f.qr, HUCK, f.code128, FRENCH, f.line]);
  const { body, files } = await post('/separated-pdf', { file: { file: doc }, separator: 'barcode' });
  assert.equal(body.separatorPages, [2, 4]);
  assert.equal(body.barcodes, [
    { page: 2, type: 'QR-Code', text: 'SEP-A' },
    { page: 4, type: 'CODE-128', text: 'SEP-B' },
  ]);
  assert.equal(files.map(pdfPages), [1, 1, 2]);
  assert.equal([pageSize(files[0]), pageSize(files[1]), pageSize(files[2]), pageSize(files[2], 2)], ['612 x 792', '384 x 470.88', '216 x 216', '612 x 792']);
  assert.ok(pageText(files[2], 2).includes(LINE));
  // zbar finds no code left in any output.
  for (const [i, out] of files.entries()) {
    for (let p = 1; p <= pdfPages(out); p++) {
      const png = drawPage(out, p, 200, `part-${i}-${p}`);
      assert.is(spawnSync('zbarimg', ['--quiet', '--nodbus', png]).status, 4, `a barcode in output ${i + 1}, page ${p}`);
    }
  }

  const picked = await post('/separated-pdf', { file: { file: doc }, barcode_text: '^SEP-B$', output: 'parts' });
  assert.equal(picked.body.separatorPages, [4]);
  assert.equal(picked.files.map(pdfPages), [3, 2]);
  const info = (await (await t.request(`/resource/${picked.body.outputId[1]}?format=info`)).json()) as Record<string, any>;
  assert.is(info.name, 'parts_2.pdf');

  const none = await post('/separated-pdf', { file: { file: doc }, barcode_text: 'NOPE' });
  assert.equal(none.body.separatorPages, []);
  assert.equal(none.files.map(pdfPages), [6]);
  assert.match(none.body.warning, /No separator sheet was found/);
});

test('/separated-pdf: blank separator sheets, and 400s', async () => {
  const doc = join_('sep-blank.pdf', [LINN, f.empty, f.noisy, f.line, HUCK]);
  const { body, files } = await post('/separated-pdf', { file: { file: doc }, separator: 'blank' });
  assert.equal(body.separatorPages, [2, 3]);
  assert.equal(files.map(pdfPages), [1, 2]);
  assert.ok(pageText(files[1], 1).includes(LINE));
  assert.is(pageSize(files[1], 2), '384 x 470.88');

  const bad = await post('/separated-pdf', { file: { file: doc }, barcode_text: '(' }, 400);
  assert.match(bad.body.error, '( is not within the acceptable range for barcode_text');
  const kind = await post('/separated-pdf', { file: { file: doc }, separator: 'zebra' }, 400);
  assert.match(kind.body.error, 'zebra is not within the acceptable range for separator');
  const only = await post('/separated-pdf', { file: { file: join_('only-seps.pdf', [f.qr, f.code128]) } }, 400);
  assert.match(only.body.error, /every page is a separator sheet/);
});

test('/deskewed-pdf: pages turned 3 and -2 degrees come out within 0.5 degrees; text re-made where there was text', async () => {
  // Tesseract's own PDF of the Linn scan turned 3 degrees: the image with an invisible text layer, lines aslant.
  const linn = drawPage(LINN, 1, 300, 'linn');
  await sharp(linn).rotate(3, { background: '#ffffff' }).withMetadata({ density: 300 }).png().toFile(at('linn+3.png'));
  execFileSync('tesseract', [at('linn+3.png'), at('linn+3'), 'pdf'], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdio: 'ignore' });
  // Huckleberry Finn (colour) turned -2 degrees, and the 1-bit Linn scan turned -2 degrees, both without text.
  const huck = drawPage(HUCK, 1, 150, 'huck');
  await sharp(huck).rotate(-2, { background: '#ffffff' }).withMetadata({ density: 150 }).jpeg().toFile(at('huck-2.jpg'));
  const turned = await sharp(linn).rotate(-2, { background: '#ffffff' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  await sharp(turned.data, { raw: { width: turned.info.width, height: turned.info.height, channels: 1 } })
    .threshold(128)
    .toColourspace('b-w')
    .withDensity(300)
    .tiff({ bitdepth: 1, compression: 'ccittfax4' })
    .toFile(at('linn-2.tif'));
  const doc = join_('skewed.pdf', [at('linn+3.pdf'), f.line, imagePdf(at('huck-2.jpg'), 'huck-2'), imagePdf(at('linn-2.tif'), 'linn-2')]);
  assert.is(tool('pdfimages', ['-list', '-f', '4', '-l', '4', doc]).split('\n')[2].trim().split(/\s+/)[7], '1', 'page 4 is a 1-bit scan');

  const before = [1, 3, 4].map((p) => tesseractSkew(drawPage(doc, p, 150, `before-${p}`)));
  assert.ok(
    before.every((a) => Math.abs(a) > 1.5),
    `input skew by Tesseract: ${before}`,
  );

  const { body, files } = await post('/deskewed-pdf', { file: { file: doc } });
  const out = files[0];
  assert.equal(
    body.skew.map((s: any) => s.page),
    [1, 3, 4],
  );
  const [a1, a3, a4] = body.skew.map((s: any) => s.angle);
  assert.ok(Math.abs(a1 - 3) < 0.3 && Math.abs(a3 + 2.7) < 0.3 && Math.abs(a4 + 2) < 0.3, JSON.stringify(body.skew)); // Huck's scan leans -0.7 of its own
  assert.match(body.warning, 'Page 2 is not scanned');
  assert.is(pdfPages(out), 4);
  for (const p of [1, 3, 4]) assert.is(pageSize(out, p), pageSize(doc, p));
  const after = [1, 3, 4].map((p) => tesseractSkew(drawPage(out, p, 150, `after-${p}`)));
  assert.ok(
    after.every((a) => Math.abs(a) < 0.5),
    `output skew by Tesseract: ${after}`,
  );

  // Page 1 had a text layer: a new one lies on the straight lines (its words on one row of the layout text);
  // page 2 (vector) is untouched; pages 3 and 4 had none and get none; page 4 stays 1-bit.
  const text = pageText(out, 1);
  assert.match(text, /The LinnSequencer/);
  assert.match(text, /32 Track MIDI Sequence Recorder/);
  assert.not.match(pageText(doc, 1), /32 Track MIDI Sequence Recorder/);
  assert.ok(pageText(out, 2).includes(LINE));
  assert.is(pageText(out, 3).trim(), '');
  const images = tool('pdfimages', ['-list', out])
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/));
  assert.equal(images.find((c) => c[0] === '4')?.[7], '1', 'page 4 image bits per component');
});

test('/deskewed-pdf: despeckle and remove_borders clean a scanned page; 400 for a bad switch', async () => {
  const { body, files } = await post('/deskewed-pdf', { file: { file: f.noisy }, despeckle: 'on', remove_borders: 'true' });
  assert.equal(body.skew, [{ page: 1, angle: 0, corrected: true }]);
  const count = async (png: string) => {
    const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
    let [edge, top, specks] = [0, 0, 0];
    for (let y = 0; y < info.height; y++) {
      for (let x = 0; x < info.width; x++) {
        if (data[y * info.width + x] >= 128) continue;
        if (x < 40) edge++;
        else if (y < 25) top++;
        else specks++;
      }
    }
    return { edge, top, specks };
  };
  const before = await count(drawPage(f.noisy, 1, 150, 'noisy-before'));
  const after = await count(drawPage(files[0], 1, 150, 'noisy-after'));
  assert.ok(before.edge > 60000 && before.top > 30000 && before.specks > 1000, JSON.stringify(before));
  assert.ok(after.edge === 0 && after.top === 0 && after.specks < 50, JSON.stringify(after));

  const bad = await post('/deskewed-pdf', { file: { file: f.noisy }, despeckle: 'maybe' }, 400);
  assert.match(bad.body.error, 'maybe is not within the acceptable range for despeckle');
});

test('long documents are drawn a batch at a time: a separator, a blank page and a skewed scan past the first batches are found where they are', async () => {
  // 135 pages: a QR sheet at 70 and an empty page at 130 among pages with one line (pages are drawn 64 at a time).
  const pick = (p: number) => (p === 70 ? f.qr : p === 130 ? f.empty : f.line);
  const doc = join_('long.pdf', Array.from({ length: 135 }, (_, i) => [pick(i + 1), '1']).flat());
  const sep = await post('/separated-pdf', { file: { file: doc } });
  assert.equal(sep.body.barcodes, [{ page: 70, type: 'QR-Code', text: 'SEP-A' }]);
  assert.equal(sep.files.map(pdfPages), [69, 65]);
  const blank = await post('/pdf-without-blank-pages', { file: { file: doc } });
  assert.equal(blank.body.removedPages, [130]);
  assert.is(pdfPages(blank.files[0]), 134);
  assert.ok(pageText(blank.files[0], 130).includes(LINE));

  // Huckleberry Finn turned -2 degrees as pages 1 and 71, scanned blanks between (no rows to measure: left alone):
  // a part PDF from the first batch and one from the second, put back in place around the untouched pages.
  await sharp(drawPage(HUCK, 1, 150, 'huck-long'))
    .rotate(-2, { background: '#ffffff' })
    .withMetadata({ density: 150 })
    .jpeg()
    .toFile(at('huck-long.jpg'));
  const huck = imagePdf(at('huck-long.jpg'), 'huck-long');
  const scans = join_('long-scans.pdf', [huck, '1', ...Array.from({ length: 69 }, () => [f.noisy, '1']).flat(), huck, '1']);
  const { body, files } = await post('/deskewed-pdf', { file: { file: scans } });
  assert.is(body.skew.length, 71);
  const turned = body.skew.filter((s: any) => s.corrected);
  assert.equal(
    turned.map((s: any) => s.page),
    [1, 71],
  );
  assert.ok(
    turned.every((s: any) => Math.abs(s.angle + 2.7) < 0.3),
    JSON.stringify(turned),
  ); // Huck's scan leans -0.7 of its own
  assert.ok(
    body.skew.slice(1, 70).every((s: any, i: number) => s.page === i + 2 && s.angle === 0),
    JSON.stringify(body.skew.slice(1, 70)),
  );
  const out = files[0];
  assert.is(pdfPages(out), 71);
  for (const p of [1, 71]) assert.ok(Math.abs(tesseractSkew(drawPage(out, p, 150, `huck-long-${p}`))) < 0.5, `page ${p}`);
  // The blanks between are the input's pages, not drawn again: the same image bytes.
  const images = (pdf: string) =>
    tool('pdfimages', ['-list', '-f', '2', '-l', '70', pdf])
      .split('\n')
      .slice(2)
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/))
      .map((c) => [c[0], ...c.slice(3, 10), ...c.slice(12)].join(' ')); // not the object numbers: qpdf renumbers
  assert.is(images(out).length, 69);
  assert.equal(images(out), images(scans));
});

test.run();
