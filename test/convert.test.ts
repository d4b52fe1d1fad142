import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { inspectZip, parseMargin } from '../app/convert/index.js';
import { browserStats, shutdownBrowser } from '../engines/chromium/browser.js';
import { orientationMatrix, pageSizeFor } from '../engines/image-pdf.js';
import { configurePool, poolSize, poolStats, shutdownPool } from '../engines/libreoffice/pool.js';
import { convertToPdf, corpus, type FormValue, fontsEmbedded, pdfPages, pdfText, startApp, type TestApp, tool } from './helpers.js';

const test = suite('convert');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-convert-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  await Promise.all([shutdownPool(), shutdownBrowser()]);
  rmSync(work, { recursive: true, force: true });
});

const convert = (fields: Record<string, FormValue | FormValue[]>, status = 200) => convertToPdf(t, fields, status);
const info = (p: string) => tool('pdfinfo', [p]);
const pageSizeOf = (p: string) => /Page size:\s+([\d.]+) x ([\d.]+)/.exec(info(p))!.slice(1).map(Number);

/** A zip with `n` entries that each inflate to `size` zero bytes (deflate of zeros is ~1000:1). */
function zipBomb(n: number, size: number): Buffer {
  const data = deflateRawSync(Buffer.alloc(size));
  const crc = crc32(Buffer.alloc(size));
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const name = Buffer.from(`word/part${i}.xml`);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(8, 8);
    lh.writeUInt32LE(crc, 14);
    lh.writeUInt32LE(data.length, 18);
    lh.writeUInt32LE(size, 22);
    lh.writeUInt16LE(name.length, 26);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(8, 10);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(data.length, 20);
    ch.writeUInt32LE(size, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(offset, 42);
    locals.push(lh, name, data);
    centrals.push(ch, name);
    offset += 30 + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(n, 8);
  end.writeUInt16LE(n, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// ---- office, through the warm pool ----

test('docx: 3 pages with their text, fonts embedded, untagged by default', async () => {
  const { path } = await convert({ file: { file: corpus('office/gotenberg-pages_3.docx') } });
  assert.is(pdfPages(path), 3);
  const text = pdfText(path);
  for (const p of ['Page 1', 'Page 2', 'Page 3']) assert.ok(text.includes(p), p);
  assert.ok(fontsEmbedded(path).length > 0 && fontsEmbedded(path).every((e) => e === 'yes'));
  assert.match(info(path), /Tagged:\s+no/);
});

test('tagged_pdf=on writes a structure tree', async () => {
  const { path } = await convert({ file: { file: corpus('office/poi-SampleDoc.docx') }, tagged_pdf: 'on' });
  assert.is(pdfPages(path), 2);
  assert.match(info(path), /Tagged:\s+yes/);
  assert.ok(tool('qpdf', ['--show-object=trailer', path]).length > 0);
  assert.match(tool('qpdf', ['--qdf', '--object-streams=disable', path, '-']), /\/StructTreeRoot/);
});

test('doc, ppt, pptx, xls: page counts and text', async () => {
  const cases: [string, number, string][] = [
    ['office/poi-SampleDoc.doc', 2, 'This is page two'],
    ['office/poi-basic_test_ppt_file.ppt', 2, 'This is the title on page 2'],
    ['office/poi-SampleShow.pptx', 2, 'This is the second slide'],
  ];
  for (const [file, pages, text] of cases) {
    const { path } = await convert({ file: { file: corpus(file) } });
    assert.is(pdfPages(path), pages, file);
    assert.ok(pdfText(path).replace(/\s+/g, ' ').includes(text), file);
  }
  const { path } = await convert({ file: { file: corpus('office/poi-SampleSS.xls') } });
  assert.ok(pdfText(path).includes('Start of 2nd sheet'));
});

test('locale changes number and date formats of spreadsheets', async () => {
  const csv = join(work, 'numbers.csv');
  writeFileSync(csv, 'Item,Amount,Date\nA,1234.5,1/31/2024\nB,0.25,12/5/2023\n');
  const us = pdfText((await convert({ file: { file: csv } })).path);
  const de = pdfText((await convert({ file: { file: csv }, locale: 'Germany' })).path);
  assert.ok(us.includes('1234.5') && us.includes('01/31/24'), us);
  assert.ok(de.includes('1234,5') && de.includes('31.01.24'), de);
  const { body } = await convert({ file: { file: csv }, locale: 'France' }, 400);
  assert.is(body.error, 'France is not within the acceptable range for locale');
});

test('password-protected docx is 401; corrupt docx and a zip bomb are 400', async () => {
  const pw = await convert({ file: { file: corpus('office/gotenberg-protected_page_1-password-foo.docx') } }, 401);
  assert.match(String(pw.body.error), /password protected/);
  await convert({ file: { bytes: Buffer.from('PK\x03\x04 this is not really a zip file at all'), name: 'broken.docx' } }, 400);
  const bomb = zipBomb(12, 100 * 1024 * 1024); // 1.2 GB declared, ~1.2 MB on disk
  assert.ok(bomb.length < 2_000_000);
  assert.is(inspectZip(bomb).ok, false);
  const res = await convert({ file: { bytes: bomb, name: 'bomb.docx' } }, 400);
  assert.match(String(res.body.error), /expand|compressed more than/, JSON.stringify(res.body));
  assert.is(inspectZip(readFileSync(corpus('office/poi-SampleDoc.docx'))).ok, true);
});

// ---- PostScript ----

test('PostScript: one Letter page with its text; EPS cropped to its bounding box', async () => {
  const { path } = await convert({ file: { file: corpus('postscript/cups-onepage-letter.ps') } });
  assert.is(pdfPages(path), 1);
  assert.match(pdfText(path), /Single Page US Letter/);
  assert.equal(pageSizeOf(path), [612, 792]);
  const eps = await convert({ file: { file: corpus('postscript/pillow-zero_bb.eps') } });
  assert.equal(pageSizeOf(eps.path), [460, 352]);
  assert.match(pdfText(eps.path), /Interlocking Tori/);
});

test('hostile PostScript cannot read or delete files', async () => {
  const canary = join(work, 'canary.txt');
  writeFileSync(canary, 'still here');
  const reader = `%!PS\n/Helvetica findfont 10 scalefont setfont 72 720 moveto\n(/etc/passwd) (r) file 200 string readstring pop show showpage\n`;
  const deleter = `%!PS\n(${canary}) deletefile\n/Helvetica findfont 10 scalefont setfont 72 720 moveto (deleted) show showpage\n`;
  await convert({ file: { bytes: Buffer.from(reader), name: 'reader.ps' } }, 400);
  await convert({ file: { bytes: Buffer.from(deleter), name: 'deleter.ps' } }, 400);
  assert.ok(existsSync(canary));
});

// ---- images ----

test('JPEG passes through untouched; page size from its DPI', async () => {
  const src = corpus('images/hopper.jpg');
  const { path } = await convert({ file: { file: src } });
  assert.is(pdfPages(path), 1);
  const list = tool('pdfimages', ['-list', path]);
  assert.match(list, /\bjpeg\b/);
  const dir = mkdtempSync(join(work, 'img-'));
  tool('pdfimages', ['-all', path, join(dir, 'x')]);
  assert.ok(readFileSync(join(dir, 'x-000.jpg')).equals(readFileSync(src)), 'embedded bytes equal the original JPEG');
  assert.equal(pageSizeOf(path), [96, 96]); // 128 px at 96 DPI
});

test('EXIF orientation is honoured', async () => {
  const src = corpus('images/hopper-exif-orientation-6.jpg');
  const { path } = await convert({ file: { file: src } });
  const png = join(work, 'orient');
  tool('pdftoppm', ['-r', '72', '-png', '-singlefile', path, png]);
  const want = await sharp(src).rotate().resize(32, 32).greyscale().raw().toBuffer();
  const wrong = await sharp(src).resize(32, 32).greyscale().raw().toBuffer();
  const got = await sharp(`${png}.png`).resize(32, 32).greyscale().raw().toBuffer();
  const diff = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0) / a.length;
  assert.ok(diff(got, want) < 12, `upright diff ${diff(got, want)}`);
  assert.ok(diff(got, wrong) > diff(got, want) * 2, 'differs from the unrotated image');
  assert.equal(orientationMatrix(6, 10, 20), [0, -20, 10, 0, 0, 20]);
  assert.equal(pageSizeFor(100, 50, 72, 6), [50, 100]);
});

test('multi-page TIFFs, CMYK JPEG, alpha PNG, GIF, BMP, WebP', async () => {
  const g4 = (await convert({ file: { file: corpus('images/g4-multipage-bilevel.tiff') } })).path;
  assert.is(pdfPages(g4), 3);
  const [w, h] = pageSizeOf(g4);
  assert.ok(Math.abs(w - 595.3) < 1 && Math.abs(h - 841.9) < 1, 'A4 at 400 dpi'); // bilevel: kept at full resolution
  assert.match(tool('pdfimages', ['-list', g4]), /3307\s+4677\s+gray\s+1\s+1/);
  assert.is(pdfPages((await convert({ file: { file: corpus('images/multipage-3-frames.tiff') } })).path), 3);
  const cmyk = (await convert({ file: { file: corpus('images/baiona-cmyk.jpg') } })).path;
  assert.match(tool('pdfimages', ['-list', cmyk]), /\bcmyk\s+4\s+8\s+jpeg/);
  // The corpus RGBA PNG is fully opaque (alpha 255 everywhere): no mask is needed, and none is written.
  const opaque = (await convert({ file: { file: corpus('images/baiona-rgba-alpha.png') } })).path;
  assert.not.match(tool('pdfimages', ['-list', opaque]), /\bsmask\b/);
  const seeThrough = await sharp({ create: { width: 40, height: 30, channels: 4, background: { r: 200, g: 0, b: 0, alpha: 0.5 } } })
    .png()
    .toBuffer();
  const alpha = (await convert({ file: { bytes: seeThrough, name: 'half.png' } })).path;
  assert.match(tool('pdfimages', ['-list', alpha]), /smask\s+40\s+30\s+gray\s+1\s+8/, tool('pdfimages', ['-list', alpha]));
  assert.is(pdfPages((await convert({ file: { file: corpus('images/animated-dispose-bgnd.gif') } })).path), 5);
  for (const f of ['hopper.bmp', 'hopper.webp', 'hopper.png']) {
    const p = (await convert({ file: { file: corpus(`images/${f}`) }, compression: 'lossless' })).path;
    assert.is(pdfPages(p), 1, f);
    assert.match(tool('pdfimages', ['-list', p]), /128\s+128\s+rgb\s+3\s+8\s+image/, f);
  }
});

// ---- HTML and URLs ----

test('HTML: page breaks, page_size, orientation, no local files', async () => {
  const { path } = await convert({ file: { file: corpus('web/gotenberg-pages-3.html') }, page_size: 'A4' });
  assert.is(pdfPages(path), 3);
  assert.match(pdfText(path), /Page 2/);
  const [w, h] = pageSizeOf(path);
  assert.ok(Math.abs(w - 595.3) < 1.5 && Math.abs(h - 841.9) < 1.5, `${w}x${h}`);
  const land = (await convert({ file: { file: corpus('web/habibi-arabic.html') }, page_size: 'ledger', page_orientation: 'landscape', page_margin: '10mm' }))
    .path;
  assert.equal(pageSizeOf(land).map(Math.round), [1224, 792]);
  assert.match(pdfText(land), /habibi/);
  const rich = (await convert({ file: { file: corpus('web/gotenberg-feature-rich-js-media.html') } })).path;
  const text = pdfText(rich);
  assert.not.match(text, /root:x:0:0/);
  assert.match(text, /JavaScript is enabled/);
  const { body } = await convert({ file: { file: corpus('web/habibi-arabic.html') }, page_margin: '2cm' }, 400);
  assert.is(body.error, '2cm is not within the acceptable range for page_margin');
  assert.is(parseMargin('25.4mm'), 72);
});

test('HTML: what a script loads after the load event is printed (200 ms of network quiet); a page without scripts prints as loaded', async () => {
  // The late text is fetched after the load event and answered 1 s later: printed only because the print waits
  // for the network to go quiet, whatever the machine's speed (a print at the load event, or a fixed pause after
  // it, misses it by about a second; the quiet spell starts once the text has arrived).
  const site = http.createServer((q, r) => {
    // Cross-origin: the page itself is printed from the converter's own origin (with a <base> to this site).
    if (q.url === '/late')
      return void setTimeout(() => r.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('Late text'), 1000);
    r.writeHead(200, { 'content-type': 'text/html' });
    r.end(
      '<html><body><p>Loaded text</p><script>addEventListener("load", () => fetch("/late").then((r) => r.text()).then((text) => { const p = document.createElement("p"); p.textContent = text; document.body.append(p); }))</script></body></html>',
    );
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const allowed = await startApp({ URL_ALLOW: '127.0.0.1' });
  try {
    const { path } = await convertToPdf(allowed, { url: `http://127.0.0.1:${(site.address() as { port: number }).port}/page` });
    assert.match(pdfText(path), /Loaded text[\s\S]*Late text/);
  } finally {
    await allowed.close();
    site.close();
  }
  const still = Buffer.from('<html><body><h1>Static page</h1><p>No script here.</p></body></html>');
  assert.match(pdfText((await convert({ file: { bytes: still, name: 'static.html' } })).path), /Static page[\s\S]*No script here/);
});

test('HTML jobs share nothing: storage written by one page is not seen by the next (a fresh context each)', async () => {
  const writer = Buffer.from(
    '<html><body><p>Writer</p><script>localStorage.setItem("k", "secret-of-job-one"); document.cookie = "c=cookie-of-job-one"</script></body></html>',
  );
  await convert({ file: { bytes: writer, name: 'writer.html' } });
  const reader = Buffer.from(
    '<html><body><p id="o">none</p><script>document.getElementById("o").textContent = "seen:" + (localStorage.getItem("k") ?? "nothing") + "/" + (document.cookie || "no-cookie")</script></body></html>',
  );
  const text = pdfText((await convert({ file: { bytes: reader, name: 'reader.html' } })).path);
  assert.match(text, /seen:nothing\/no-cookie/);
});

test('web_layout: a mobile layout prints larger than a desktop one', async () => {
  const html = join(work, 'layout.html');
  writeFileSync(html, '<html><body><p style="font-size:16px">Layout probe</p></body></html>');
  const size = (p: string) => {
    const m = /yMin="([\d.]+)"[^>]*yMax="([\d.]+)">Layout/.exec(tool('pdftotext', ['-bbox', p, '-']))!;
    return Number(m[2]) - Number(m[1]);
  };
  const desktop = size((await convert({ file: { file: html }, web_layout: 'desktop' })).path);
  const mobile = size((await convert({ file: { file: html }, web_layout: 'mobile' })).path);
  assert.ok(mobile > desktop * 2, `${mobile} vs ${desktop}`);
});

test('web_layout: width media queries see the layout viewport', async () => {
  const html = join(work, 'media.html');
  writeFileSync(
    html,
    '<style>@media (max-width: 900px) { .wide { display: none } } @media (min-width: 901px) { .narrow { display: none } }</style><p class="wide">Wide layout</p><p class="narrow">Narrow layout</p>',
  );
  const seen = async (layout: string) => pdfText((await convert({ file: { file: html }, web_layout: layout })).path).trim();
  assert.is(await seen('desktop'), 'Wide layout');
  assert.is(await seen('tablet'), 'Narrow layout');
  assert.is(await seen('mobile'), 'Narrow layout');
});

test('HTML: downsample and compression apply to the page images', async () => {
  // A 2400x1600 photo-like JPEG drawn 6.5 in wide (~370 ppi), as a data: URI (an upload is one file).
  const noise = Buffer.alloc(300 * 200 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const jpeg = await sharp(noise, { raw: { width: 300, height: 200, channels: 3 } })
    .resize(2400, 1600)
    .jpeg({ quality: 90 })
    .toBuffer();
  const html = join(work, 'photo.html');
  writeFileSync(html, `<p>Photo page</p><img style="width:100%" src="data:image/jpeg;base64,${jpeg.toString('base64')}">`);
  const drawn = (p: string) =>
    tool('pdfimages', ['-list', p])
      .split('\n')
      .slice(2)
      .filter((l) => / image /.test(l))
      .map((l) => l.trim().split(/\s+/));
  const off = drawn((await convert({ file: { file: html }, downsample: 'off' })).path);
  assert.equal(
    off.map((c) => [c[3], c[4], c[8]]),
    [['2400', '1600', 'jpeg']],
  );
  const small = await convert({ file: { file: html }, downsample: '75' });
  const [w, h] = drawn(small.path)[0].slice(3, 5).map(Number);
  assert.ok(w <= 500 && w >= 440 && Math.abs(w / h - 1.5) < 0.02, `${w}x${h}`);
  assert.match(pdfText(small.path), /Photo page/);
  assert.ok(fontsEmbedded(small.path).every((e) => e === 'yes'));
  const lossless = drawn((await convert({ file: { file: html }, downsample: 'off', compression: 'lossless' })).path);
  assert.equal(
    lossless.map((c) => [c[3], c[4], c[8]]),
    [['2400', '1600', 'image']],
  );
});

test('url: private, link-local and file URLs refused; one of file/id/url', async () => {
  for (const url of ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/meta-data/', 'file:///etc/passwd', 'http://[::1]/']) {
    const { body } = await convert({ url }, 400);
    assert.match(String(body.error), /cannot be fetched/, url);
  }
  await convert({}, 400);
  const both = await convert({ url: 'http://example.com/', file: { file: corpus('images/hopper.png') } }, 400);
  assert.match(String(both.body.error), /only accept one of file, id or url/);
});

test('url: an allowed host is printed, its private sub-resources are not fetched', async () => {
  let secretHits = 0;
  const secret = http.createServer((_q, r) => (secretHits++, r.end('secret')));
  await new Promise<void>((r) => secret.listen(0, '127.0.0.2', r));
  const sport = (secret.address() as { port: number }).port;
  const site = http.createServer((q, r) => {
    if (q.url === '/to-private') return r.writeHead(302, { location: `http://127.0.0.2:${sport}/` }).end();
    if (q.url === '/to-metadata') return r.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    r.writeHead(200, { 'content-type': 'text/html' });
    r.end(
      `<html><head><title>t</title></head><body><h1>Served page</h1><img src="http://127.0.0.2:${sport}/x.png"><img src="/to-private"><iframe src="file:///etc/passwd"></iframe></body></html>`,
    );
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const port = (site.address() as { port: number }).port;
  // URL_ALLOW reaches the converter through the run context, as in production.
  const allowed = await startApp({ URL_ALLOW: '127.0.0.1' });
  try {
    const res = await allowed.form('/pdf', { url: `http://127.0.0.1:${port}/page` });
    const body = (await res.json()) as Record<string, unknown>;
    assert.is(res.status, 200, JSON.stringify(body));
    const path = await allowed.download(String(body.outputUrl));
    assert.is(pdfPages(path), 1);
    assert.match(pdfText(path), /Served page/);
    assert.not.match(pdfText(path), /root:x/);
    for (const hop of ['to-private', 'to-metadata']) {
      const refused = await allowed.form('/pdf', { url: `http://127.0.0.1:${port}/${hop}` });
      assert.is(refused.status, 400, hop);
      assert.match(String(((await refused.json()) as { error: string }).error), /cannot be fetched/);
    }
    assert.is(secretHits, 0);
  } finally {
    await allowed.close();
    site.close();
    secret.close();
  }
});

test('an instance above the memory limit is replaced between jobs', async () => {
  configurePool({ maxRssMb: 1 }); // every soffice is larger than 1 MB
  try {
    const before = poolStats();
    for (let i = 0; i < 2; i++) {
      const { path } = await convert({ file: { file: corpus('office/gotenberg-pages_3.docx') } });
      assert.is(pdfPages(path), 3);
    }
    const after = poolStats();
    assert.ok(after.recycledForMemory >= before.recycledForMemory + 1, JSON.stringify([before, after]));
    assert.ok(after.started > before.started);
  } finally {
    configurePool({ maxRssMb: 1024 });
  }
});

test('the browser shuts down completely', async () => {
  await convert({ file: { file: corpus('web/gotenberg-pages-3.html') } });
  const { running, pids } = browserStats();
  assert.ok(running >= 1 && pids.length >= 1);
  await shutdownBrowser();
  assert.is(browserStats().running, 0);
  // Zombies (dead, waiting for init to reap them) do not count.
  const groups = tool('ps', ['-eo', 'pgid=,stat='])
    .split('\n')
    .filter((l) => !/Z/.test(l))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
  for (const pid of pids) assert.not.ok(groups.includes(pid!), `process group ${pid} still has processes`);
  // The next job starts a fresh browser.
  assert.is(pdfPages((await convert({ file: { file: corpus('web/gotenberg-pages-3.html') } })).path), 3);
});

test('the pool shuts down completely', async () => {
  // Another app's close() may have stopped the pool already: warm it again with one conversion.
  await convert({ file: { file: corpus('office/gotenberg-pages_3.docx') } });
  assert.ok(poolSize() >= 1);
  await shutdownPool();
  assert.is(poolSize(), 0);
  const left = tool('ps', ['-eo', 'pid,ppid,args'])
    .split('\n')
    .filter((l) => l.includes(`quire_${process.pid}_`));
  assert.equal(left, []);
});

test.run();
