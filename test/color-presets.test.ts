import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COLOR_PRESETS as PRESETS } from '../app/rewrite/index.js';
import { corpus, pdfImages, pdfText, startApp, type TestApp, tool } from './helpers.js';

/**
 * /pdf-with-converted-colors: every preset the pdfRest SDK sends (PDFREST-NEXT-DETAILS.md section 13) answers 200
 * with a real conversion. Outputs are read with poppler (pdfimages, pdftoppm), qpdf (objects and ICC stream bytes)
 * and sharp; the embedded profile's own description tag must name the profile that stands for the preset.
 */

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const CMYK_JPEG = corpus('pdf/image-cmyk-jpeg-devicecmyk.pdf'); // one DeviceCMYK JPEG, no text
const RGB_TEXT = corpus('pdf/image-jpeg-dct.pdf'); // RGB JPEG + text

type Family = 'rgb' | 'gray' | 'cmyk' | 'lab';
const CASES: [preset: string, family: Family, desc: RegExp][] = [
  ['srgb', 'rgb', /sRGB/],
  ['apple-rgb', 'rgb', /Apple ?RGB/i],
  ['vendor-rgb', 'rgb', /Apple ?RGB/i],
  ['color-match-rgb', 'rgb', /ColorMatch/i],
  ['monitor-rgb', 'rgb', /sRGB/],
  ['gamma-18', 'gray', /Gray Gamma 1\.8/],
  ['gamma-22', 'gray', /Gray Gamma 2\.2/],
  ['dot-gain-10', 'gray', /Dot Gain 10%/],
  ['dot-gain-15', 'gray', /Dot Gain 15%/],
  ['dot-gain-20', 'gray', /Dot Gain 20%/],
  ['dot-gain-25', 'gray', /Dot Gain 25%/],
  ['dot-gain-30', 'gray', /Dot Gain 30%/],
  ['lab-d50', 'lab', /Lab D50/],
  ['acrobat5-cmyk', 'cmyk', /SWOP/],
  ['viewer5-cmyk', 'cmyk', /SWOP/],
  ['acrobat9-cmyk', 'cmyk', /FOGRA39/],
  ['viewer9-cmyk', 'cmyk', /FOGRA39/],
];

const images = pdfImages;

type Objects = Record<string, { value?: any; stream?: { dict: any } }>;
const objects = (p: string) =>
  JSON.parse(spawnSync('qpdf', ['--json', '--json-stream-data=none', p], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout).qpdf[1] as Objects;
const resolve = (objs: Objects, v: any) => (typeof v === 'string' && / R$/.test(v) ? (objs[`obj:${v}`]?.value ?? objs[`obj:${v}`]?.stream?.dict) : v);

/** The ICC profile's bytes, read back by qpdf, and its description (v2 'desc' or v4 'mluc'). */
function icc(p: string, ref: string): { bytes: Buffer; desc: string } {
  const bytes = spawnSync('qpdf', [`--show-object=${ref.replace(/ R$/, '').replace(' ', ',')}`, '--filtered-stream-data', p], { maxBuffer: 1 << 26 })
    .stdout as Buffer;
  assert.is(bytes.toString('latin1', 36, 40), 'acsp', `ICC header of ${ref}`);
  const n = bytes.readUInt32BE(128);
  for (let i = 0; i < n; i++) {
    const at = 132 + i * 12;
    if (bytes.toString('latin1', at, at + 4) !== 'desc') continue;
    const off = bytes.readUInt32BE(at + 4);
    const type = bytes.toString('latin1', off, off + 4);
    if (type === 'desc') return { bytes, desc: bytes.toString('latin1', off + 12, off + 12 + bytes.readUInt32BE(off + 8) - 1) };
    if (type === 'mluc') {
      const len = bytes.readUInt32BE(off + 20);
      const start = off + bytes.readUInt32BE(off + 24);
      return {
        bytes,
        desc: bytes
          .subarray(start, start + len)
          .swap16()
          .toString('utf16le'),
      };
    }
  }
  throw new Error(`no desc tag in ${ref}`);
}

/** The profile of the OutputIntent, and the ICCBased profile of every image. */
function profiles(p: string): { intent?: string; images: string[] } {
  const objs = objects(p);
  const root = resolve(objs, objs.trailer.value['/Root']);
  const intents = (resolve(objs, root['/OutputIntents']) ?? []) as any[];
  const intent = intents.length ? resolve(objs, intents[0])['/DestOutputProfile'] : undefined;
  const imgs: string[] = [];
  for (const im of images(p)) {
    const cs = resolve(objs, resolve(objs, `${im.object} 0 R`)['/ColorSpace']);
    if (Array.isArray(cs) && cs[0] === '/ICCBased') imgs.push(cs[1]);
  }
  return { intent, images: imgs };
}

async function render(p: string): Promise<{ mean: number[]; spread: number; greyness: number }> {
  const png = spawnSync('pdftoppm', ['-r', '20', '-png', '-f', '1', '-l', '1', p], { maxBuffer: 1 << 26 }).stdout;
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const s = [0, 0, 0];
  let lo = 255;
  let hi = 0;
  let greyness = 0;
  for (let k = 0; k < data.length; k += info.channels) {
    for (let c = 0; c < 3; c++) s[c] += data[k + c];
    lo = Math.min(lo, data[k]);
    hi = Math.max(hi, data[k]);
    greyness = Math.max(greyness, Math.abs(data[k] - data[k + 1]), Math.abs(data[k + 1] - data[k + 2]));
  }
  return { mean: s.map((v) => v / (data.length / info.channels)), spread: hi - lo, greyness };
}

test('every SDK preset is known: none answers 400 any more', () => {
  for (const name of [
    'srgb',
    'vendor-rgb',
    'color-match-rgb',
    'monitor-rgb',
    'gamma-18',
    'gamma-22',
    'lab-d50',
    'viewer5-cmyk',
    'viewer9-cmyk',
    ...[10, 15, 20, 25, 30].map((n) => `dot-gain-${n}`),
  ]) {
    assert.ok(PRESETS[name] && 'file' in PRESETS[name], name);
  }
});

const originals = new Map<string, Promise<{ mean: number[] }>>();
for (const [preset, family, desc] of CASES) {
  test(`converted colors preset ${preset}: ${family} output, profile named ${desc}, rendered like the input`, async () => {
    // CMYK targets get RGB input (DeviceCMYK into CMYK keeps its numbers); the others the CMYK JPEG.
    const input = family === 'cmyk' ? RGB_TEXT : CMYK_JPEG;
    const res = await t.form('/pdf-with-converted-colors', { file: { file: input }, color_profile: preset });
    const body = (await res.json()) as { outputUrl: string };
    assert.is(res.status, 200, JSON.stringify(body));
    const out = await t.download(body.outputUrl);

    const ims = images(out);
    assert.is(ims.length, 1);
    assert.is(ims[0].color, family === 'lab' ? 'icc' : family, JSON.stringify(ims));
    assert.is(ims[0].comp, { rgb: 3, gray: 1, cmyk: 4, lab: 3 }[family]);

    const { intent, images: imageProfiles } = profiles(out);
    if (family === 'lab') {
      // The numbers are L*, a*, b*: the image's ICCBased profile says so (data space of the profile, Lab PCS).
      assert.is(intent, undefined);
      assert.is(imageProfiles.length, 1);
      const p = icc(out, imageProfiles[0]);
      assert.match(p.desc, desc);
      assert.is(p.bytes.toString('latin1', 20, 24), 'Lab ');
      // The JPEG's own numbers (pdfimages -j: the stream as stored) are L*, a*, b* of a near-neutral image: a* and
      // b* near 128 (zero), L* like the lightness of the input image.
      const dir = mkdtempSync(join(tmpdir(), 'lab-'));
      try {
        tool('pdfimages', ['-j', out, join(dir, 'im')]);
        const { data } = await sharp(join(dir, 'im-000.jpg')).raw().toBuffer({ resolveWithObject: true });
        const m = [0, 1, 2].map((c) => data.filter((_, k) => k % 3 === c).reduce((x, y) => x + y, 0) / (data.length / 3));
        // The input image as RGB (poppler's plain CMYK to RGB): its lightness, roughly.
        tool('pdfimages', ['-png', input, join(dir, 'in')]);
        const rgb = await sharp(join(dir, 'in-000.png')).removeAlpha().raw().toBuffer();
        const mean = [0, 1, 2].map((c) => rgb.filter((_, k) => k % 3 === c).reduce((x, y) => x + y, 0) / (rgb.length / 3));
        const lin = mean.map((v) => ((v / 255 + 0.055) / 1.055) ** 2.4);
        const y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
        const lstar = y > 0.008856 ? 116 * Math.cbrt(y) - 16 : 903.3 * y;
        assert.ok(Math.abs((m[0] / 255) * 100 - lstar) < 10, `L* ${(m[0] / 255) * 100} vs ${lstar}`);
        assert.ok(Math.abs(m[1] - 128) < 15 && Math.abs(m[2] - 128) < 15, `a*, b*: ${m}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } else {
      assert.ok(intent, 'OutputIntent with a DestOutputProfile');
      const p = icc(out, intent!);
      assert.match(p.desc, desc);
      assert.is(p.bytes.toString('latin1', 16, 20).trim(), { rgb: 'RGB', gray: 'GRAY', cmyk: 'CMYK' }[family]);
    }

    if (!originals.has(input)) originals.set(input, render(input));
    const [a, b] = await Promise.all([originals.get(input)!, render(out)]);
    assert.ok(b.spread > 40, `not blank: ${b.spread}`);
    if (family === 'gray') assert.ok(b.greyness <= 2, `grey: channel spread ${b.greyness}`);
    else
      assert.ok(
        a.mean.every((v, k) => Math.abs(v - b.mean[k]) < 20),
        `rendered like the original: ${a.mean} vs ${b.mean}`,
      );
    if (input === RGB_TEXT) assert.match(pdfText(out), /Lorem ipsum/);
  });
}

test.run();
