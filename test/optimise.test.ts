import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NOT_SMALLER } from '../app/operations/compressed-pdf.js';
import { CMYK_BATCH_PAGES, conformanceU, iccTarget, parseProfile, profileSettings, rewriteAnyLength, spliceSources } from '../app/rewrite/index.js';
import { pdfwriteArgs, psString, qFactor } from '../engines/ghostscript-pdfwrite.js';
import { corpus, type FormValue, fontsEmbedded, pdfImages, pdfPages, pdfText, startApp, type TestApp, tool } from './helpers.js';

/** /compressed-pdf, /pdfa, /pdfx and /pdf-with-converted-colors: real Ghostscript and qpdf, outputs read with poppler, qpdf and sharp. */

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const FED = corpus('pdf/federal-register-15-pages.pdf'); // 15 pages, text + CCITT images
const SCAN = corpus('scans/french-diacritics-scan.pdf'); // one 900x900 grey JPEG at 300 dpi
const TEXT = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 page, 1 Type 1 font
const GDOCS = corpus('pdf/google-docs-export.pdf'); // RGB image with soft mask (transparency), Type 3 fonts without ToUnicode
const CMYK_JPEG = corpus('pdf/image-cmyk-jpeg-devicecmyk.pdf'); // one DeviceCMYK JPEG, no text
const JPEG_TEXT = corpus('pdf/image-jpeg-dct.pdf'); // RGB JPEG + text
const LOCKED = corpus('encrypted/aes-256-user-view-owner-master.pdf');
const BROKEN = corpus('malformed/invalid-header-then-eof.pdf');
const GS_CMYK = '/usr/share/color/icc/ghostscript/default_cmyk.icc';

type Body = Record<string, any>;
async function post(path: string, fields: Record<string, FormValue | FormValue[]>, status = 200): Promise<{ body: Body; out: string }> {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, out: status === 200 && body.outputUrl ? await t.download(body.outputUrl) : '' };
}
async function rejects(path: string, fields: Record<string, FormValue | FormValue[]>, status: number, pattern: RegExp) {
  const { body } = await post(path, fields, status);
  assert.match(body.error, pattern);
}
const size = (p: string) => statSync(p).size;
const images = pdfImages;
const meta = (p: string) => tool('pdfinfo', ['-meta', p]);
const info = (p: string) => tool('pdfinfo', [p]);
const qpdfJson = (p: string) => JSON.parse(spawnSync('qpdf', ['--json', '--json-stream-data=none', p], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout);
/** Every OutputIntent of the catalog: subtype and the number of components of its profile. */
function outputIntents(p: string): { s: string; n: number }[] {
  const objs = qpdfJson(p).qpdf[1] as Record<string, { value?: any; stream?: { dict: any } }>;
  const get = (v: any) => (typeof v === 'string' && / R$/.test(v) ? (objs[`obj:${v}`]?.value ?? objs[`obj:${v}`]?.stream?.dict) : v);
  const root = get(objs.trailer.value['/Root']);
  return ((get(root['/OutputIntents']) ?? []) as any[]).map(get).map((oi) => ({ s: oi['/S'], n: get(oi['/DestOutputProfile'])['/N'] }));
}
const notEncrypted = (p: string) => assert.match(tool('qpdf', ['--show-encryption', p]), /File is not encrypted/);
/** pdffonts rows as [name, encoding, uni]. */
const fontRows = (p: string) =>
  tool('pdffonts', [p])
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((l) => /^(.*?)\s{2,}.*?\s(\S+)\s+(?:yes|no)\s+(?:yes|no)\s+(yes|no)\s+\d+\s+\d+\s*$/.exec(l)!)
    .map((m) => ({ name: m[1], encoding: m[2], uni: m[3] === 'yes' }));
/** Mean RGB of the first image of a PDF, extracted by pdfimages as PNG (CMYK as poppler converts it). */
async function imageMean(p: string): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'quire-img-'));
  try {
    spawnSync('pdfimages', ['-png', '-f', '1', '-l', '1', p, join(dir, 'i')]);
    const first = readdirSync(dir).sort()[0];
    const { data, info: i } = await sharp(join(dir, first)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const s = [0, 0, 0];
    for (let k = 0; k < data.length; k += i.channels) for (let c = 0; c < 3; c++) s[c] += data[k + c];
    return s.map((v) => v / (data.length / i.channels));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
/** Mean RGB of page 1 rendered at 20 dpi by poppler. */
async function meanColour(p: string): Promise<number[]> {
  const png = spawnSync('pdftoppm', ['-r', '20', '-png', '-f', '1', '-l', '1', p], { maxBuffer: 1 << 26 }).stdout;
  const { data, info: i } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const s = [0, 0, 0];
  for (let k = 0; k < data.length; k += i.channels) for (let c = 0; c < 3; c++) s[c] += data[k + c];
  return s.map((v) => v / (data.length / i.channels));
}

// ---- pure parts ----

test('arg builders: safe flags, JPEG quality as QFactor, PostScript strings escaped', () => {
  const a = pdfwriteArgs('in.pdf', 'out.pdf', { images: { colorDpi: 150, encoding: 'jpeg', jpegQuality: 75 }, readable: ['/p.icc'] });
  assert.equal(a.slice(0, 3), ['-dSAFER', '-dBATCH', '-dNOPAUSE']);
  assert.ok(a.includes('-dColorImageResolution=150') && a.includes('-dDownsampleGrayImages=false') && a.includes('--permit-file-read=/p.icc'));
  assert.match(a[a.indexOf('-c') + 1], /\/QFactor 0\.72 /);
  assert.is(a[a.length - 1], 'in.pdf');
  assert.is(qFactor(100), 0.15);
  assert.is(qFactor(1), 2.4);
  assert.is(psString('a(b)\\é'), '(a\\(b\\)\\\\\\303\\251)');
});

test('compression profile: known keys validated, unknown and bad ones named', () => {
  assert.equal(parseProfile('{"color_image_dpi": "150", "grayscale": "true"}'), { color_image_dpi: 150, grayscale: true });
  assert.is(profileSettings(parseProfile('{"object_streams": false}')), null);
  assert.throws(() => parseProfile('{"colour_dpi": 100}'), /colour_dpi is not a known key/);
  assert.throws(() => parseProfile('{"jpeg_quality": 0}'), /0 is not within the acceptable range for profile key jpeg_quality/);
  assert.throws(() => parseProfile('not json'), /not properly formatted/);
});

test('pdfa helpers: conformance B becomes U; spliced pages keep their order', () => {
  assert.match(conformanceU(`<rdf:Description pdfaid:part='2' pdfaid:conformance='B'/>`), /pdfaid:conformance='U'/);
  assert.equal(spliceSources(4, [2, 3], 'c', 'r'), [
    { path: 'c', pages: [1] },
    { path: 'r', pages: [1, 2] },
    { path: 'c', pages: [4] },
  ]);
});

test('ICC targets: family from the header; input-only profiles refused', () => {
  assert.is(iccTarget(readFileSync(GS_CMYK)), 'CMYK');
  assert.is(iccTarget(readFileSync('/usr/share/color/icc/colord/AppleRGB.icc')), 'RGB');
  assert.throws(() => iccTarget(readFileSync(corpus('icc/CGATS001Compat-v2-micro-cmyk.icc'))), /B2A0/);
  assert.throws(() => iccTarget(Buffer.from('hello')), /ICC header/);
});

// ---- /compressed-pdf ----

test('compressed-pdf low: lossless, smaller, object streams, same images and text', async () => {
  const { body, out } = await post('/compressed-pdf', { file: { file: FED }, compression_level: 'low' });
  assert.is(body.warning, undefined);
  assert.ok(size(out) < size(FED), `${size(out)} < ${size(FED)}`);
  assert.is(pdfPages(out), 15);
  assert.ok(readFileSync(out).includes('/ObjStm'), 'object streams');
  assert.equal(
    images(out).map((i) => [i.width, i.height, i.enc]),
    images(FED).map((i) => [i.width, i.height, i.enc]),
  );
  assert.is(pdfText(out), pdfText(FED));
});

test('compressed-pdf medium and high: images resampled, high at most medium', async () => {
  const medium = (await post('/compressed-pdf', { file: { file: SCAN }, compression_level: 'medium' })).out;
  const high = (await post('/compressed-pdf', { file: { file: SCAN }, compression_level: 'high' })).out;
  const [m] = images(medium);
  const [h] = images(high);
  // 900 px over 3 in: 150 dpi -> 450 px, 96 dpi -> 288 px.
  assert.ok(Math.abs(m.width - 450) <= 2, `medium width ${m.width}`);
  assert.ok(Math.abs(h.width - 288) <= 2, `high width ${h.width}`);
  assert.ok(size(medium) < size(SCAN) / 4 && size(high) <= size(medium), `${size(SCAN)} -> ${size(medium)} -> ${size(high)}`);
});

test('compressed-pdf medium on a file Ghostscript cannot read keeps the lossless result', async () => {
  const input = corpus('pdf/image-cmyk.pdf');
  const { body, out } = await post('/compressed-pdf', { file: { file: input }, compression_level: 'medium' });
  if (body.warning) return assert.is(body.warning, NOT_SMALLER);
  assert.is(pdfPages(out), 1);
  assert.equal(
    images(out).map((i) => [i.width, i.height]),
    [[756, 1008]],
  );
});

test('compressed-pdf custom: profile upload applied (grey, 72 dpi), inputId lists the profile', async () => {
  const profile = JSON.stringify({ color_image_dpi: 72, gray_image_dpi: 72, downsample_threshold: 1, jpeg_quality: 40, grayscale: true });
  const { body, out } = await post('/compressed-pdf', {
    file: { file: GDOCS },
    compression_level: 'custom',
    profile: { bytes: Buffer.from(profile), name: 'profile.json' },
  });
  assert.ok(Array.isArray(body.inputId) && body.inputId.length === 2);
  const imgs = images(out).filter((i) => i.type === 'image');
  assert.ok(imgs.length > 0 && imgs.every((i) => i.color === 'gray'), JSON.stringify(imgs));
  assert.ok(imgs[0].width < 128, `downsampled: ${imgs[0].width}`);
  assert.match(pdfText(out), /Beautiful is better than ugly/);
});

test('compressed-pdf custom by profile_id in a JSON body; nothing smaller gives the warning and no output', async () => {
  const low = (await post('/compressed-pdf', { file: { file: TEXT }, compression_level: 'low' })).out;
  const up = await t.form('/upload', {
    file: [
      { file: low, name: 'lean.pdf' },
      { bytes: Buffer.from('{"object_streams": true}'), name: 'p.json' },
    ],
  });
  const files = ((await up.json()) as { files: { id: string }[] }).files;
  const res = await t.json('/compressed-pdf', { id: files[0].id, compression_level: 'custom', profile_id: files[1].id });
  const body = (await res.json()) as Body;
  assert.is(res.status, 200, JSON.stringify(body));
  assert.is(body.warning, NOT_SMALLER);
  assert.is(body.outputUrl, undefined);
  assert.equal(body.inputId, [files[0].id, files[1].id]);
});

test('compressed-pdf errors: level, profile, password, broken input', async () => {
  await rejects(
    '/compressed-pdf',
    { file: { file: TEXT }, compression_level: 'extreme' },
    400,
    /extreme is not within the acceptable range for compression_level/,
  );
  await rejects('/compressed-pdf', { file: { file: TEXT } }, 400, /compression_level is required/);
  await rejects('/compressed-pdf', { file: { file: TEXT }, compression_level: 'custom' }, 400, /profile/);
  await rejects(
    '/compressed-pdf',
    { file: { file: TEXT }, compression_level: 'custom', profile: { bytes: Buffer.from('{"mono_image_dpi": 5}'), name: 'p.json' } },
    400,
    /mono_image_dpi/,
  );
  await rejects(
    '/compressed-pdf',
    { file: { file: TEXT }, compression_level: 'custom', profile: { bytes: Buffer.from('{"sharpen": true}'), name: 'p.json' } },
    400,
    /sharpen/,
  );
  await rejects('/compressed-pdf', { file: { file: LOCKED }, compression_level: 'low' }, 401, /password protected/);
  await rejects('/compressed-pdf', { file: { file: BROKEN }, compression_level: 'medium' }, 400, /not valid input/);
});

// ---- /pdfa ----

for (const [type, part] of [
  ['PDF/A-1b', '1'],
  ['PDF/A-2b', '2'],
  ['PDF/A-3b', '3'],
] as const) {
  test(`pdfa ${type}: XMP claim, sRGB OutputIntent, fonts embedded, text kept, not encrypted`, async () => {
    const { out } = await post('/pdfa', { file: { file: TEXT }, output_type: type });
    const m = meta(out);
    assert.match(m, new RegExp(`pdfaid:part=['"]${part}['"]`));
    assert.match(m, /pdfaid:conformance=['"]B['"]/);
    assert.equal(outputIntents(out), [{ s: '/GTS_PDFA1', n: 3 }]);
    assert.ok(fontsEmbedded(out).every((e) => e === 'yes'));
    assert.match(pdfText(out), /Lorem ipsum dolor sit amet/);
    notEncrypted(out);
  });
}

test('pdfa PDF/A-2u: conformance U, every font maps to Unicode', async () => {
  const { out } = await post('/pdfa', { file: { file: JPEG_TEXT }, output_type: 'PDF/A-2u' });
  assert.match(meta(out), /pdfaid:part=['"]2['"]/);
  assert.match(meta(out), /pdfaid:conformance=['"]U['"]/);
  assert.ok(
    fontRows(out).every((f) => f.uni || f.encoding === 'WinAnsi'),
    JSON.stringify(fontRows(out)),
  );
  assert.match(pdfText(out), /Lorem ipsum/);
});

test('pdfa PDF/A-3u: unmapped fonts are a 400 naming the page, or rasterised on request', async () => {
  await rejects('/pdfa', { file: { file: GDOCS }, output_type: 'PDF/A-3u' }, 400, /PDF\/A-3u.*page\(s\) 1/);
  const { out } = await post('/pdfa', { file: { file: GDOCS }, output_type: 'PDF/A-3u', rasterize_if_errors_encountered: 'on' });
  assert.match(meta(out), /pdfaid:part=['"]3['"]/);
  assert.match(meta(out), /pdfaid:conformance=['"]U['"]/);
  assert.ok(
    fontRows(out).every((f) => f.uni || f.encoding === 'WinAnsi'),
    JSON.stringify(fontRows(out)),
  );
  // The page became one image at 150 dpi: A4 is 1241 px wide.
  assert.ok(
    images(out).some((i) => Math.abs(i.width - 1241) <= 2),
    JSON.stringify(images(out)),
  );
  assert.equal(outputIntents(out), [{ s: '/GTS_PDFA1', n: 3 }]);
});

test('pdfa errors: output_type names PDF/A, password 401', async () => {
  await rejects('/pdfa', { file: { file: TEXT }, output_type: 'PDF/A-4' }, 400, /PDF\/A-4 is not within the acceptable range for output_type/);
  await rejects('/pdfa', { file: { file: TEXT }, output_type: 'pdf/a-2b' }, 400, /pdf.?a/i);
  await rejects('/pdfa', { file: { file: TEXT }, output_type: 'x' }, 400, /pdf.?a/i);
  await rejects('/pdfa', { file: { file: LOCKED }, output_type: 'PDF/A-2b' }, 401, /password protected/);
});

// ---- /pdfx ----

const boxesOnEveryPage = (p: string) => {
  const n = pdfPages(p);
  const boxes = tool('pdfinfo', ['-box', '-f', '1', '-l', String(n), p]);
  assert.is((boxes.match(/TrimBox:/g) ?? []).length, n);
  assert.is((boxes.match(/BleedBox:/g) ?? []).length, n);
  // pdfinfo prints a box it did not find as the crop box too: read the page dictionaries as well.
  const objs = qpdfJson(p);
  for (const page of objs.pages) {
    const d = objs.qpdf[1][`obj:${page.object}`].value;
    assert.ok(d['/TrimBox'] && d['/BleedBox'], `page ${page.pageposfrom1} boxes`);
  }
};

test('pdfx PDF/X-1a: PDF 1.3, version keys, GTS_PDFX intent, boxes, CMYK only, text kept', async () => {
  const { out } = await post('/pdfx', { file: { file: JPEG_TEXT }, output_type: 'PDF/X-1a' });
  const i = info(out);
  assert.match(i, /PDF version:\s+1\.3/);
  assert.match(i, /PDF subtype:\s+PDF\/X-1a:2001/);
  assert.equal(outputIntents(out), [{ s: '/GTS_PDFX', n: 4 }]);
  boxesOnEveryPage(out);
  const imgs = images(out);
  assert.ok(imgs.length > 0 && imgs.every((x) => x.color === 'cmyk' || x.color === 'gray'), JSON.stringify(imgs));
  assert.ok(fontsEmbedded(out).every((e) => e === 'yes'));
  assert.match(pdfText(out), /Lorem ipsum/);
});

test('pdfx PDF/X-4: transparency kept at PDF 1.6, XMP pdfxid, CMYK images, boxes', async () => {
  const { out } = await post('/pdfx', { file: { file: GDOCS }, output_type: 'PDF/X-4' });
  assert.match(info(out), /PDF version:\s+1\.6/);
  assert.match(meta(out), /<pdfxid:GTS_PDFXVersion>PDF\/X-4<\/pdfxid:GTS_PDFXVersion>/);
  assert.match(info(out), /PDF subtype:\s+PDF\/X-4/);
  assert.equal(outputIntents(out), [{ s: '/GTS_PDFX', n: 4 }]);
  boxesOnEveryPage(out);
  const imgs = images(out);
  assert.ok(
    imgs.some((x) => x.type === 'smask'),
    'soft mask kept (not flattened)',
  );
  assert.ok(
    imgs.filter((x) => x.type === 'image').every((x) => x.color === 'cmyk'),
    JSON.stringify(imgs),
  );
  assert.match(pdfText(out), /Beautiful is better than ugly/);
});

test('pdfx PDF/X-6 (PDF 2.0) and X-3 on a two-page file: boxes on both pages', async () => {
  const six = (await post('/pdfx', { file: { file: corpus('pdf/rotation-2-pages.pdf') }, output_type: 'PDF/X-6' })).out;
  assert.match(info(six), /PDF version:\s+2\.0/);
  assert.match(meta(six), /PDF\/X-6/);
  boxesOnEveryPage(six);
  const three = (await post('/pdfx', { file: { file: corpus('pdf/rotation-2-pages.pdf') }, output_type: 'PDF/X-3' })).out;
  assert.match(info(three), /PDF subtype:\s+PDF\/X-3:2002/);
  boxesOnEveryPage(three);
  assert.match(pdfText(three), /landscape layout/);
});

/** Outline entries (depth, title, page, view) and internal links (page, rect, page led to) as qpdf reads them. */
function outlineAndLinks(p: string): { outline: string[]; links: string[] } {
  const j = qpdfJson(p);
  const objs = j.qpdf[1] as Record<string, { value?: any; stream?: { dict: any } }>;
  const get = (v: any) => (typeof v === 'string' && / R$/.test(v) ? (objs[`obj:${v}`]?.value ?? objs[`obj:${v}`]?.stream?.dict) : v);
  const pages: string[] = j.pages.map((x: any) => x.object);
  const outline: string[] = [];
  const walk = (items: any[], depth: number) => {
    for (const o of items) {
      outline.push(`${depth} ${o.title} p${o.destpageposfrom1} ${JSON.stringify(Array.isArray(o.dest) ? o.dest.slice(1) : null)}`);
      walk(o.kids, depth + 1);
    }
  };
  walk(j.outlines, 0);
  const links: string[] = [];
  j.pages.forEach((page: any, i: number) => {
    for (const a of get(get(page.object)['/Annots']) ?? []) {
      const d = get(a);
      const dest = get(d['/Dest'] ?? get(d['/A'])?.['/D']);
      if (d['/Subtype'] !== '/Link' || !Array.isArray(dest)) continue;
      links.push(`${i + 1} ${d['/Rect'].map((v: number) => v.toFixed(1)).join(',')} -> ${pages.indexOf(dest[0]) + 1}`);
    }
  });
  return { outline, links: links.sort() };
}

test('CMYK in runs of pages: the outline and every link lead where one Ghostscript run leads them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-cmyk-'));
  try {
    // 4 pages, 9 outline entries and 9 named links from page 1 to pages 2-4; a 28-page paper with 317 links.
    for (const [file, pages, runs, entries] of [
      ['pdf/outline-bookmarks-links.pdf', 4, [1, 2], 9],
      ['word-fidelity/demo-whisper_2_3.pdf', 28, [5], 0],
    ] as const) {
      const whole = join(dir, 'whole.pdf');
      await rewriteAnyLength(corpus(file), whole, { colorConversion: 'CMYK' }, { cwd: dir, pages });
      const expected = outlineAndLinks(whole);
      assert.ok(expected.links.length >= 9 && expected.links.every((l) => !l.endsWith('-> 0')), file);
      assert.is(expected.outline.length, entries, file);
      for (const run of runs) {
        const out = join(dir, `runs-${run}.pdf`);
        await rewriteAnyLength(corpus(file), out, { colorConversion: 'CMYK' }, { cwd: dir, pages }, run);
        assert.is(pdfPages(out), pages);
        assert.equal(outlineAndLinks(out), expected, `${file} in runs of ${run}`);
        assert.is(tool('pdftotext', [out, '-']), tool('pdftotext', [whole, '-']));
        assert.ok(
          images(out).every((x) => x.color === 'cmyk'),
          file,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`pdfx PDF/X-4 of ${CMYK_BATCH_PAGES + 10} pages (two Ghostscript runs joined): one PDF/X, every page, text, boxes, CMYK`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-pdfx-'));
  try {
    const input = join(dir, 'long.pdf');
    const copies = Math.ceil((CMYK_BATCH_PAGES + 10) / 15);
    tool('qpdf', ['--empty', '--pages', ...Array(copies).fill(FED), '--', input]);
    const n = copies * 15;
    const { out } = await post('/pdfx', { file: { file: input }, output_type: 'PDF/X-4' });
    assert.is(pdfPages(out), n);
    assert.match(info(out), /PDF subtype:\s+PDF\/X-4/);
    assert.match(meta(out), /<pdfxid:GTS_PDFXVersion>PDF\/X-4<\/pdfxid:GTS_PDFXVersion>/);
    assert.equal(outputIntents(out), [{ s: '/GTS_PDFX', n: 4 }]);
    boxesOnEveryPage(out);
    for (const page of [1, CMYK_BATCH_PAGES, CMYK_BATCH_PAGES + 1, n]) {
      const text = (p: string) => tool('pdftotext', ['-f', String(page), '-l', String(page), p, '-']).replace(/\s+/g, ' ');
      assert.is(text(out), text(input), `page ${page}`);
    }
    assert.ok(images(out).every((x) => x.color === 'cmyk' || x.color === 'gray'));
    assert.ok(fontsEmbedded(out).every((e) => e === 'yes'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pdfx errors: lower-case and unknown types name PDF/X, password 401', async () => {
  await rejects('/pdfx', { file: { file: TEXT }, output_type: 'pdf/x-4' }, 400, /pdf.?x/i);
  await rejects('/pdfx', { file: { file: TEXT }, output_type: 'PDF/X-5' }, 400, /PDF\/X-5 is not within the acceptable range for output_type/);
  await rejects('/pdfx', { file: { file: LOCKED }, output_type: 'PDF/X-4' }, 401, /password protected/);
});

// ---- /pdf-with-converted-colors ----

test('converted colors: CMYK JPEG to sRGB and Apple RGB, a real conversion per profile', async () => {
  const srgb = (await post('/pdf-with-converted-colors', { file: { file: CMYK_JPEG }, color_profile: 'srgb' })).out;
  const apple = (await post('/pdf-with-converted-colors', { file: { file: CMYK_JPEG }, color_profile: 'apple-rgb' })).out;
  for (const p of [srgb, apple])
    assert.equal(
      images(p).map((i) => i.color),
      ['rgb'],
    );
  assert.equal(outputIntents(srgb), [{ s: '/GTS_PDFA1', n: 3 }]);
  const [a, b] = await Promise.all([meanColour(CMYK_JPEG), meanColour(srgb)]);
  assert.ok(
    a.every((v, k) => Math.abs(v - b[k]) < 12),
    `rendered like the original: ${a} vs ${b}`,
  );
  // The same CMYK colours as Apple RGB numbers differ from their sRGB numbers (Apple RGB has gamma 1.8: lighter values).
  const [s, ap] = await Promise.all([imageMean(srgb), imageMean(apple)]);
  assert.ok(
    ap.some((v, k) => Math.abs(v - s[k]) > 3),
    `${s} vs ${ap}`,
  );
});

test('converted colors: custom CMYK profile upload; text kept, images CMYK, colours close', async () => {
  const { body, out } = await post('/pdf-with-converted-colors', {
    file: { file: JPEG_TEXT },
    color_profile: 'custom',
    profile: { file: GS_CMYK, name: 'swop.icc' },
    preserve_black: 'true',
  });
  assert.is(body.inputId.length, 2);
  assert.equal(
    images(out).map((i) => i.color),
    ['cmyk'],
  );
  assert.equal(outputIntents(out), [{ s: '/GTS_PDFA1', n: 4 }]);
  assert.match(pdfText(out), /Lorem ipsum/);
  const [a, b] = await Promise.all([meanColour(JPEG_TEXT), meanColour(out)]);
  assert.ok(
    a.every((v, k) => Math.abs(v - b[k]) < 15),
    `${a} vs ${b}`,
  );
});

test('converted colors: gamma-18 makes every pixel grey', async () => {
  const { out } = await post('/pdf-with-converted-colors', { file: { file: GDOCS }, color_profile: 'gamma-18' });
  assert.ok(
    images(out)
      .filter((i) => i.type === 'image')
      .every((i) => i.color === 'gray'),
  );
  const png = spawnSync('pdftoppm', ['-r', '20', '-png', out]).stdout;
  const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let worst = 0;
  for (let k = 0; k < data.length; k += 3) worst = Math.max(worst, Math.abs(data[k] - data[k + 1]), Math.abs(data[k + 1] - data[k + 2]));
  assert.ok(worst <= 2, `max channel spread ${worst}`);
  assert.match(pdfText(out), /Example document/);
});

test('converted colors: JSON body with aliases and a JSON boolean', async () => {
  const up = await t.form('/upload', { file: { file: CMYK_JPEG } });
  const id = ((await up.json()) as { files: { id: string }[] }).files[0].id;
  const res = await t.json('/pdf-with-converted-colors', { id, color_profile: 'color-match-rgb', preserve_black: true, output: 'cm' });
  const body = (await res.json()) as Body;
  assert.is(res.status, 200, JSON.stringify(body));
  const rec = (await (await t.request(`/resource/${body.outputId}?format=info`)).json()) as { name: string };
  assert.is(rec.name, 'cm.pdf');
});

test('converted colors errors: unknown profile, custom without or with a bad profile, password', async () => {
  await rejects(
    '/pdf-with-converted-colors',
    { file: { file: TEXT }, color_profile: 'bogus' },
    400,
    /bogus is not within the acceptable range for color_profile/,
  );
  await rejects('/pdf-with-converted-colors', { file: { file: TEXT }, color_profile: 'custom' }, 400, /profile or profile_id is required/);
  await rejects(
    '/pdf-with-converted-colors',
    { file: { file: TEXT }, color_profile: 'custom', profile: { file: corpus('icc/CGATS001Compat-v2-micro-cmyk.icc') } },
    400,
    /B2A0/,
  );
  await rejects('/pdf-with-converted-colors', { file: { file: LOCKED }, color_profile: 'srgb' }, 401, /password protected/);
  await rejects('/pdf-with-converted-colors', { file: { file: BROKEN }, color_profile: 'srgb' }, 400, /not valid input/);
});

test.run();
