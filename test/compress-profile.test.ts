import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NOT_SMALLER } from '../app/operations/compressed-pdf.js';
import { discardUpdates, parsePdfRestProfile, pdfRestPlan, readProfile } from '../app/rewrite/index.js';
import { pdfwriteArgs } from '../engines/ghostscript-pdfwrite.js';
import { corpus, type FormValue, pdfImages, pdfPages, pdfText, startApp, type TestApp, tool } from './helpers.js';

/** /compressed-pdf with pdfRest's custom profile schema (Adobe PDF Optimizer settings): outputs read back with pdfimages, pdfinfo and qpdf --json. */

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const SCAN = corpus('scans/french-diacritics-scan.pdf'); // one 900x900 grey JPEG at 300 dpi, Info title and XMP
const JPEG_TEXT = corpus('pdf/image-jpeg-dct.pdf'); // RGB JPEG 300x200 at 72 dpi + text
const OUTLINE = corpus('pdf/outline-bookmarks-links.pdf'); // 9 bookmarks, internal links
const TAGGED = corpus('pdf/tagged-libreoffice.pdf'); // Info title 'Tagged PDF Demo', XMP, StructTreeRoot
const FORM = corpus('forms/acroform-basic-fields-all-types.pdf'); // pdfinfo: JavaScript yes

type Body = Record<string, any>;
const CLEANUP = { compression: 'compress-entire-file' };
async function compress(file: string, profile: unknown, status = 200): Promise<{ body: Body; out: string }> {
  const fields: Record<string, FormValue> = {
    file: { file },
    compression_level: 'custom',
    profile: { bytes: Buffer.from(JSON.stringify(profile)), name: 'profile.json' },
  };
  const res = await t.form('/compressed-pdf', fields);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, out: status === 200 && body.outputUrl ? await t.download(body.outputUrl) : '' };
}
const size = (p: string) => statSync(p).size;
const images = pdfImages;
const info = (p: string) => tool('pdfinfo', [p]);
/** The catalog (trailer /Root) and the Info dictionary, from qpdf --json. */
function catalog(p: string): { root: Record<string, unknown>; info: Record<string, unknown> | undefined } {
  const objs = JSON.parse(spawnSync('qpdf', ['--json', '--json-key=qpdf', '--json-stream-data=none', p], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout)
    .qpdf[1];
  const get = (v: any) => (typeof v === 'string' && / R$/.test(v) ? (objs[`obj:${v}`]?.value ?? objs[`obj:${v}`]?.stream?.dict) : v);
  return { root: get(objs.trailer.value['/Root']), info: get(objs.trailer.value['/Info']) };
}

// ---- the schema, without the server ----

test('pdfRest profile: detected by shape, on/off booleans, paths named in errors', () => {
  const p = readProfile(
    JSON.stringify({
      images: { color: { downsample: { 'trigger-dpi': 225, 'target-dpi': '150' }, recompress: { type: 'jpeg', quality: 'medium' } } },
      cleanup: CLEANUP,
      general: { 'preserve-version': 'on' },
    }),
  );
  assert.is(p.kind, 'pdfrest');
  if (p.kind !== 'pdfrest') return;
  assert.is(p.plan.gs?.images?.colorDpi, 150);
  assert.is(p.plan.gs?.images?.thresholds?.Color, 1.5);
  assert.is(p.plan.gs?.images?.filters?.Color, 'DCTEncode');
  assert.is(p.plan.preserveVersion, true);
  assert.equal(p.plan.notApplied, []);
  const args = pdfwriteArgs('in.pdf', 'out.pdf', p.plan.gs!);
  assert.ok(
    args.includes('-dColorImageResolution=150') && args.includes('-dColorImageDownsampleThreshold=1.5') && args.includes('-dColorImageFilter=/DCTEncode'),
    args.join(' '),
  );
  assert.match(args[args.indexOf('-c') + 1], /\/ColorImageDict << \/QFactor 0\.76 /);
  assert.not.ok(args.includes('-dDownsampleGrayImages=true'));
  // The flat schema still works.
  assert.equal(readProfile('{"color_image_dpi": 100}'), { kind: 'flat', profile: { color_image_dpi: 100 } });
  assert.throws(
    () => readProfile(JSON.stringify({ images: {}, fonts: { 'embed-everything': 'on' }, cleanup: CLEANUP })),
    /fonts\.embed-everything is not a known key/,
  );
  assert.throws(
    () => readProfile(JSON.stringify({ images: { color: { downsample: { 'trigger-dpi': 100, 'target-dpi': 150 } } }, cleanup: CLEANUP })),
    /trigger-dpi/,
  );
  assert.throws(() => readProfile(JSON.stringify({ fonts: { 'subset-embedded-fonts': 'maybe' }, cleanup: CLEANUP })), /fonts\.subset-embedded-fonts/);
  assert.throws(() => readProfile(JSON.stringify({ fonts: {} })), /cleanup\.compression is required/);
  assert.throws(() => readProfile(JSON.stringify({ cleanup: { compression: 'squeeze' } })), /cleanup\.compression/);
  // pdfRest's documented example profile: everything it asks for either done or listed.
  const example = pdfRestPlan(
    parsePdfRestProfile({
      images: {
        color: { downsample: { 'trigger-dpi': 225, 'target-dpi': 150 }, recompress: { type: 'zip-jpeg', quality: 'medium' } },
        monochrome: { downsample: { 'trigger-dpi': 450, 'target-dpi': 300 }, recompress: { type: 'jbig2', quality: 'lossy' } },
        'consolidate-duplicate-objects': 'on',
      },
      fonts: { 'unembed-standard-14-fonts': 'on', 'remove-unused-fonts': 'on' },
      cleanup: { compression: 'compress-entire-file', 'optimize-for-fast-web-view': 'on' },
      'color-conversion': { enabled: 'off', 'convert-profile': 'srgb' },
      'pdfa-conversion': { enabled: 'on', type: '1b' },
    }),
  );
  assert.equal(example.notApplied, ['images.monochrome.recompress.type=jbig2', 'fonts.unembed-standard-14-fonts', 'pdfa-conversion (type 1b)']);
  assert.is(example.qpdf.linearize, '');
  assert.is(example.qpdf.removeUnreferencedResources, 'yes');
  assert.is(example.gs?.detectDuplicateImages, true);
});

test('discard updates: JavaScript, outlines, Info and Metadata removed from the objects that hold them', () => {
  const objects = {
    trailer: { value: { '/Root': '1 0 R', '/Info': '9 0 R' } },
    'obj:1 0 R': {
      value: {
        '/Type': '/Catalog',
        '/Outlines': '5 0 R',
        '/PageMode': '/UseOutlines',
        '/Names': { '/JavaScript': '6 0 R', '/Dests': '7 0 R' },
        '/OpenAction': '8 0 R',
        '/Metadata': '10 0 R',
      },
    },
    'obj:3 0 R': { value: { '/Type': '/Annot', '/Subtype': '/Widget', '/AA': { '/K': '8 0 R' }, '/A': { '/S': '/URI', '/URI': 'u:x' } } },
    'obj:8 0 R': { value: { '/S': '/JavaScript', '/JS': 'u:app.alert(1)' } },
    'obj:9 0 R': { value: { '/Title': 'u:T' } },
  };
  const u = discardUpdates(objects, { javascript: true, bookmarks: true, metadata: true }) as Record<string, { value: Record<string, unknown> }>;
  assert.equal(u['obj:1 0 R'].value, { '/Type': '/Catalog', '/Names': { '/Dests': '7 0 R' } });
  assert.equal(u['obj:3 0 R'].value, { '/Type': '/Annot', '/Subtype': '/Widget', '/A': { '/S': '/URI', '/URI': 'u:x' } });
  assert.equal(u['obj:9 0 R'].value, {});
  assert.is(u['obj:8 0 R'], undefined);
});

// ---- through the endpoint, outputs read back ----

test('pdfRest profile: grey and colour images downsampled to the target dpi (pdfimages)', async () => {
  const grey = await compress(SCAN, {
    images: { grayscale: { downsample: { 'trigger-dpi': 150, 'target-dpi': 100 }, recompress: { type: 'jpeg', quality: 'medium' } } },
    cleanup: CLEANUP,
  });
  assert.is(grey.body.warning, undefined);
  const [g] = images(grey.out);
  assert.ok(Math.abs(g.xppi - 100) <= 2 && Math.abs(g.yppi - 100) <= 2, JSON.stringify(g));
  assert.ok(size(grey.out) < size(SCAN) / 3, `${size(SCAN)} -> ${size(grey.out)}`);
  assert.is(pdfPages(grey.out), 1);

  const colour = await compress(JPEG_TEXT, {
    images: { color: { downsample: { 'trigger-dpi': 50, 'target-dpi': 36 }, recompress: { type: 'jpeg', quality: 'low' } } },
    cleanup: CLEANUP,
  });
  const [c] = images(colour.out);
  assert.ok(Math.abs(c.xppi - 36) <= 2 && Math.abs(c.yppi - 36) <= 2 && c.width < 300, JSON.stringify(c));
  assert.is(c.color, 'rgb');
  assert.ok(size(colour.out) < size(JPEG_TEXT), `${size(JPEG_TEXT)} -> ${size(colour.out)}`);
  assert.match(pdfText(colour.out), /Lorem ipsum/);

  // Below the trigger nothing is resampled.
  const kept = await compress(SCAN, {
    images: { grayscale: { downsample: { 'trigger-dpi': 400, 'target-dpi': 100 } } },
    cleanup: CLEANUP,
    general: { 'write-output-even-if-increase-in-size': 'on' },
  });
  assert.is(images(kept.out)[0].width, 900);
});

test('pdfRest profile: discard-bookmarks removes /Outlines (qpdf --json), text and pages kept', async () => {
  assert.ok(catalog(OUTLINE).root['/Outlines'], 'the input has outlines');
  const { out } = await compress(OUTLINE, {
    objects: { 'discard-bookmarks': 'on' },
    cleanup: CLEANUP,
    general: { 'write-output-even-if-increase-in-size': 'on' },
  });
  assert.is(catalog(out).root['/Outlines'], undefined);
  assert.is(pdfPages(out), 4);
  assert.match(pdfText(out), /Foo/);
});

test('pdfRest profile: discard-document-information-and-metadata removes the Info title and /Metadata', async () => {
  assert.match(info(TAGGED), /Title:\s+Tagged PDF Demo/);
  const { out } = await compress(TAGGED, {
    userdata: { 'discard-document-information-and-metadata': true },
    cleanup: CLEANUP,
    general: { 'write-output-even-if-increase-in-size': true },
  });
  assert.not.match(info(out), /Tagged PDF Demo/);
  assert.not.match(info(out), /Producer:\s+LibreOffice/);
  assert.is(catalog(out).root['/Metadata'], undefined);
  assert.is(tool('pdfinfo', ['-meta', out]).trim(), '');
  assert.ok(catalog(out).root['/StructTreeRoot'], 'tags kept unless asked');
});

test('pdfRest profile: discard-javascript-actions -> pdfinfo JavaScript no; form fields kept', async () => {
  assert.match(info(FORM), /JavaScript:\s+yes/);
  const { out } = await compress(FORM, {
    objects: { 'discard-javascript-actions': 'on' },
    cleanup: CLEANUP,
    general: { 'write-output-even-if-increase-in-size': 'on' },
  });
  assert.match(info(out), /JavaScript:\s+no/);
  assert.ok(catalog(out).root['/AcroForm'], 'form kept');
});

test('pdfRest profile: document tags discarded; remove-compression writes streams uncompressed', async () => {
  const { out } = await compress(TAGGED, {
    objects: { 'discard-document-tags': 'on' },
    cleanup: { compression: 'remove-compression' },
    general: { 'write-output-even-if-increase-in-size': 'on' },
  });
  assert.is(catalog(out).root['/StructTreeRoot'], undefined);
  assert.match(info(out), /Tagged:\s+no/);
  assert.not.ok(readFileSync(out).includes('/ObjStm'), 'no object streams');
  const contents = spawnSync('qpdf', ['--json', '--json-key=pages', '--json-key=qpdf', '--json-stream-data=none', out], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const j = JSON.parse(contents.stdout);
  const first = j.pages[0].contents[0];
  assert.is(j.qpdf[1][`obj:${first}`].stream.dict['/Filter'], undefined);
});

test('pdfRest profile: keys Quire cannot honour are listed in warning, with the output', async () => {
  const { body, out } = await compress(SCAN, {
    images: { grayscale: { downsample: { 'trigger-dpi': 150, 'target-dpi': 100 }, recompress: { type: 'jpeg2000', quality: 'lossless' } } },
    fonts: { 'unembed-standard-14-fonts': 'on' },
    'color-conversion': { enabled: 'on', 'color-convert-action': 'convert', 'convert-intent': 'profile-intent', 'convert-profile': 'srgb' },
    cleanup: CLEANUP,
  });
  assert.is(body.warning, 'Not applied: images.grayscale.recompress.type=jpeg2000, fonts.unembed-standard-14-fonts, color-conversion (convert to srgb)');
  assert.ok(out, 'output written');
  assert.ok(Math.abs(images(out)[0].xppi - 100) <= 2, 'the rest applied');
});

test('pdfRest profile: larger output only with write-output-even-if-increase-in-size', async () => {
  const lean = await compress(JPEG_TEXT, { cleanup: { compression: 'remove-compression' } });
  assert.is(lean.body.warning, NOT_SMALLER);
  assert.is(lean.body.outputUrl, undefined);
  const larger = await compress(JPEG_TEXT, { cleanup: { compression: 'remove-compression' }, general: { 'write-output-even-if-increase-in-size': 'on' } });
  assert.ok(size(larger.out) > size(JPEG_TEXT), `${size(larger.out)} > ${size(JPEG_TEXT)}`);
});

test('pdfRest profile errors: unknown key and missing cleanup.compression are 400 naming them', async () => {
  const unknown = await compress(
    JPEG_TEXT,
    { images: { color: { downsample: { 'trigger-dpi': 225, 'target-dpi': 150, sharpen: 'on' } } }, cleanup: CLEANUP },
    400,
  );
  assert.match(unknown.body.error, /images\.color\.downsample\.sharpen is not a known key/);
  const top = await compress(JPEG_TEXT, { fonts: {}, cleanup: CLEANUP, extras: {} }, 400);
  assert.match(top.body.error, /extras/);
  const missing = await compress(JPEG_TEXT, { objects: { 'discard-bookmarks': 'on' } }, 400);
  assert.match(missing.body.error, /cleanup\.compression/);
  const bad = await compress(JPEG_TEXT, { images: { color: { recompress: { type: 'webp', quality: 'low' } } }, cleanup: CLEANUP }, 400);
  assert.match(bad.body.error, /images\.color\.recompress\.type/);
});

test.run();
