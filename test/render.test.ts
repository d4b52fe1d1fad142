import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderWithDevice } from '../engines/ghostscript-raster.js';
import { drawPages } from '../engines/mupdf.js';
import { corpus, pdfPages, pdfText, startApp, type TestApp, tool, until } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const ROTATION = corpus('pdf/rotation-2-pages.pdf'); // 2 Letter pages, the second /Rotate 90
const TEXT = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 A4 page of text

type Out = { outputUrl: string[]; outputId: string[]; inputId: string };

async function convert(path: string, fields: Record<string, string>, file = ROTATION): Promise<Out> {
  const res = await t.form(path, { file: { file }, ...fields });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  assert.ok(Array.isArray(body.outputUrl), 'multi-file shape');
  return body as Out;
}

async function expectError(path: string, fields: Record<string, string>, status: number, pattern: RegExp, file = ROTATION) {
  const res = await t.form(path, { file: { file }, ...fields });
  const body = (await res.json()) as { error: string };
  assert.is(res.status, status, JSON.stringify(body));
  assert.match(body.error, pattern);
}

async function names(out: Out): Promise<string[]> {
  return Promise.all(out.outputId.map(async (id) => ((await (await t.request(`/resource/${id}?format=info`)).json()) as { name: string }).name));
}

/** The TIFF tags we assert on, read straight from the file (not through the library that wrote it). */
function tiffTags(file: string): Map<number, number[]> {
  const b = readFileSync(file);
  const le = b.toString('latin1', 0, 2) === 'II';
  const u16 = (o: number) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  assert.is(u16(2), 42, 'TIFF magic');
  const ifd = u32(4);
  const tags = new Map<number, number[]>();
  for (let i = 0; i < u16(ifd); i++) {
    const e = ifd + 2 + i * 12;
    const type = u16(e + 2);
    const count = u32(e + 4);
    const width = type === 3 ? 2 : type === 5 ? 8 : 4;
    const at = count * width <= 4 ? e + 8 : u32(e + 8);
    const values = type === 5 ? count * 2 : count; // a RATIONAL is two LONGs
    tags.set(
      u16(e),
      Array.from({ length: Math.min(values, 8) }, (_, k) => (type === 3 ? u16(at + k * 2) : u32(at + k * 4))),
    );
  }
  return tags;
}

function bmpHeader(file: string) {
  const b = readFileSync(file);
  assert.is(b.toString('latin1', 0, 2), 'BM');
  return { width: b.readInt32LE(18), height: b.readInt32LE(22), bpp: b.readUInt16LE(28), xppm: b.readInt32LE(38), size: b.length, declared: b.readUInt32LE(2) };
}

// Letter at 50 dpi: 425 x 550; the /Rotate 90 page is landscape.
const DPI = 50;
const SIZES = [
  [425, 550],
  [550, 425],
];
const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1, `${what}: ${a} vs ${b}`);

const MATRIX: [string, string][] = [
  ['bmp', 'rgb'],
  ['bmp', 'gray'],
  ['jpg', 'rgb'],
  ['jpg', 'cmyk'],
  ['jpg', 'gray'],
  ['png', 'rgb'],
  ['png', 'rgba'],
  ['png', 'gray'],
  ['gif', 'rgb'],
  ['gif', 'gray'],
  ['tif', 'rgb'],
  ['tif', 'rgba'],
  ['tif', 'cmyk'],
  ['tif', 'lab'],
  ['tif', 'gray'],
];

for (const [format, model] of MATRIX) {
  test(`/${format} color_model=${model}: one image per page, sized by resolution and page, in the asked colour space`, async () => {
    const out = await convert(`/${format}`, { color_model: model, resolution: String(DPI), output: `shot-${model}` });
    assert.is(out.outputUrl.length, 2);
    assert.equal(await names(out), [`shot-${model}_1.${format}`, `shot-${model}_2.${format}`]);
    for (let i = 0; i < 2; i++) {
      const file = await t.download(out.outputUrl[i]);
      const [w, h] = SIZES[i];
      if (format === 'bmp') {
        const hd = bmpHeader(file);
        near(hd.width, w, 'width');
        near(hd.height, h, 'height');
        assert.is(hd.bpp, model === 'gray' ? 8 : 24);
        assert.is(Math.round(hd.xppm * 0.0254), DPI);
        assert.is(hd.size, hd.declared);
        continue;
      }
      if (format === 'tif' && model === 'lab') {
        // libvips reads 8-bit CIELAB only in its own LabQ packing: read the tags ourselves.
        const tags = tiffTags(file);
        near(tags.get(256)![0], w, 'width');
        near(tags.get(257)![0], h, 'height');
        assert.equal(
          tags
            .get(282)!
            .slice(0, 2)
            .reduce((a, b) => a / b),
          DPI,
        );
      }
      const m = format === 'tif' && model === 'lab' ? ({ width: w, height: h, format: 'tiff', density: DPI } as sharp.Metadata) : await sharp(file).metadata();
      near(m.width!, w, 'width');
      near(m.height!, h, 'height');
      assert.is(m.format, format === 'jpg' ? 'jpeg' : format === 'tif' ? 'tiff' : format);
      if (format !== 'gif') assert.is(Math.round(m.density!), DPI, 'density');
      if (format === 'gif') {
        // A GIF is a palette; gray means every colour in it is a grey.
        const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        let grey = true;
        for (let p = 0; p < data.length; p += info.channels) {
          const isGrey = data[p] === data[p + 1] && data[p + 1] === data[p + 2];
          grey &&= isGrey;
        }
        if (model === 'gray') assert.ok(grey, 'gray GIF has only greys');
        continue;
      }
      if (format === 'tif') {
        const tags = tiffTags(file);
        const photometric = { rgb: 2, rgba: 2, cmyk: 5, lab: 8, gray: 1 }[model];
        assert.is(tags.get(262)?.[0], photometric, 'PhotometricInterpretation');
        assert.is(tags.get(277)?.[0], { rgb: 3, rgba: 4, cmyk: 4, lab: 3, gray: 1 }[model], 'SamplesPerPixel');
        if (model === 'rgba') assert.ok([1, 2].includes(tags.get(338)?.[0] ?? 0), 'ExtraSamples marks alpha');
        if (model === 'lab') {
          // White paper is L* 100 (255), a* = b* = 0 in 8-bit CIELAB: read the first pixel of the first strip.
          assert.is(tags.get(259)?.[0], 8, 'Deflate');
          const b = readFileSync(file);
          const off = tags.get(273)![0];
          const count = tags.get(279)![0];
          const { inflateSync } = await import('node:zlib');
          const strip = inflateSync(b.subarray(off, off + count));
          assert.equal([strip[0], strip[1], strip[2]], [255, 0, 0]);
          // libtiff decodes it as CIELAB (to display RGB, white point not adapted): paper light, text dark.
          const rgba = `${file}.rgba.tif`;
          tool('tiff2rgba', [file, rgba]);
          const { data } = await sharp(rgba).raw().toBuffer({ resolveWithObject: true });
          assert.ok(data[0] > 240 && data[1] > 240 && data[2] > 200, `paper: ${[...data.subarray(0, 3)]}`);
          let dark = 0;
          for (let p = 0; p < data.length; p += 4) if (data[p] + data[p + 1] + data[p + 2] < 150) dark++;
          assert.ok(dark > 100, `text pixels: ${dark}`);
        }
        continue;
      }
      const space = { rgb: 'srgb', rgba: 'srgb', cmyk: 'cmyk', gray: 'b-w' }[model];
      assert.is(m.space, space);
      assert.is(m.channels, { rgb: 3, rgba: 4, cmyk: 4, gray: 1 }[model]);
      if (model === 'rgba') {
        assert.ok(m.hasAlpha);
        const stats = await sharp(file).stats();
        assert.is(stats.channels[3].min, 0, 'transparent background');
        assert.is(stats.channels[3].max, 255, 'opaque content');
      }
    }
  });
}

test('pages: only the selected pages, in the order asked; sizes follow resolution and page size', async () => {
  const out = await convert('/png', { pages: '2,1', resolution: '36' });
  assert.is(out.outputUrl.length, 2);
  const m1 = await sharp(await t.download(out.outputUrl[0])).metadata();
  const m2 = await sharp(await t.download(out.outputUrl[1])).metadata();
  near(m1.width!, 396, 'page 2 width');
  near(m1.height!, 306, 'page 2 height');
  near(m2.width!, 306, 'page 1 width');
  const a4 = await convert('/jpg', { resolution: '100' }, TEXT);
  assert.is(a4.outputUrl.length, 1);
  const m = await sharp(await t.download(a4.outputUrl[0])).metadata();
  near(m.width!, 827, 'A4 width at 100 dpi');
  near(m.height!, 1170, 'A4 height at 100 dpi');
  const many = await convert('/gif', { pages: '1-last', resolution: '20' }, corpus('pdf/standard-14-fonts-14-pages.pdf'));
  assert.is(many.outputUrl.length, pdfPages(corpus('pdf/standard-14-fonts-14-pages.pdf')));
});

// Ghostscript refuses an argument longer than 2,048 characters ("Command too long", exit 1): a page list of
// single numbers passes it at about 550 pages, so a long document's pages go as ranges.
test('Ghostscript draws a thousand pages of a long document in one run: its page list is ranges', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-pagelist-'));
  try {
    const one = corpus('pdf/text-minimal-pdflatex.pdf');
    const long = join(dir, 'long.pdf');
    tool('qpdf', ['--empty', '--pages', ...Array(1200).fill(one), '--', long]);
    const pages = [...Array(1000).keys()].map((i) => i + 101);
    const files = await renderWithDevice(
      long,
      join(dir, 'p-%d.jpg'),
      { device: 'jpeg', pages, resolution: 10, smoothText: false, smoothLines: false, smoothImages: false },
      { cwd: dir },
    );
    assert.is(files.length, 1000);
    const m = await sharp(files[999]).metadata();
    // A4 at 10 dpi.
    assert.is(m.format, 'jpeg');
    assert.ok(Math.abs(m.width! - 83) <= 1, String(m.width));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// mutool is quiet when it writes to stdout: without its page marks a page budget timed the whole run, cut it every
// budget, and sent a page to Poppler each time (which opens the whole file for one page).
test('MuPDF drawing a long run to stdout: the page budget times each page, not the run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-pagebudget-'));
  try {
    const long = join(dir, 'long.pdf');
    tool('qpdf', ['--empty', '--pages', ...Array(40).fill(TEXT), '--', long]);
    const draw = async (file: string, count: number, pageMs?: number) => {
      const started = performance.now();
      let drawn = 0;
      const pages = [...Array(count).keys()].map((i) => i + 1);
      for await (const _ of drawPages(file, { pages, resolution: 50, colorspace: 'gray', graphicsAa: 8, textAa: 8 }, { cwd: dir, pageMs }, true)) drawn++;
      return { drawn, ms: performance.now() - started };
    };
    // Sized from this machine's speed: a budget ten times a whole one-page run (start, open, one page), and a run
    // of pages lasting several budgets. The estimate from 40 pages can be far off on a busy machine (CI once drew
    // the run three times faster than it predicted), so a run that did not last two budgets is drawn again twice
    // as long: the verdict rests on a run that did.
    // (A floor far below any real page, only against a zero; the page list stays within an argument's 128 KB.)
    const one = (await draw(long, 1)).ms;
    const perPage = Math.max(0.01, ((await draw(long, 40)).ms - one) / 39);
    const pageMs = Math.max(100, Math.round(10 * one));
    let count = Math.min(12000, Math.ceil((4 * pageMs) / perPage));
    for (let attempt = 1; ; attempt++) {
      const longer = join(dir, `longer-${attempt}.pdf`);
      tool('qpdf', ['--empty', '--pages', ...Array(Math.ceil(count / 40)).fill(long), '--', longer]);
      const run = await draw(longer, count, pageMs);
      assert.is(run.drawn, count);
      rmSync(longer);
      if (run.ms > 2 * pageMs) break;
      assert.ok(attempt < 4 && count < 12000, `${count} pages took ${Math.round(run.ms)} ms, not two budgets of ${pageMs} ms`);
      count = Math.min(12000, 2 * count);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pages on the Ghostscript formats: any order, repeats, each output its own file', async () => {
  for (const format of ['jpg', 'bmp']) {
    const out = await convert(`/${format}`, { pages: '2,1,2', resolution: '36', color_model: 'gray' });
    assert.is(out.outputUrl.length, 3);
    const files = await Promise.all(out.outputUrl.map((u) => t.download(u)));
    const sizes = await Promise.all(
      files.map(async (f) => {
        if (format === 'bmp') return [bmpHeader(f).width, bmpHeader(f).height];
        const m = await sharp(f).metadata();
        return [m.width!, m.height!];
      }),
    );
    for (const [i, [w, h]] of [
      [396, 306],
      [306, 396],
      [396, 306],
    ].entries()) {
      near(sizes[i][0], w, `${format} output ${i + 1} width`);
      near(sizes[i][1], h, `${format} output ${i + 1} height`);
    }
    assert.equal(readFileSync(files[0]), readFileSync(files[2]), 'the repeated page is the same image');
    assert.ok(new Set(out.outputId).size === 3, 'three resources');
  }
});

test('default output name, resolution 300 and rgb', async () => {
  const out = await convert('/png', {}, TEXT);
  assert.equal(await names(out), ['text-minimal-pdflatex_service_png_1.png']);
  const m = await sharp(await t.download(out.outputUrl[0])).metadata();
  near(m.width!, 2481, 'A4 width at 300 dpi');
  assert.is(m.density, 300);
  assert.is(m.channels, 3);
});

async function greyLevels(url: string): Promise<number> {
  const { data } = await sharp(await t.download(url))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return new Set(data).size;
}

test('smoothing: none draws text without anti-aliasing, text/all smooth it', async () => {
  const none = await convert('/png', { color_model: 'gray', resolution: '72' }, TEXT);
  const text = await convert('/png', { color_model: 'gray', resolution: '72', smoothing: 'text' }, TEXT);
  const all = await convert('/png', { color_model: 'gray', resolution: '72', smoothing: 'line,image,text' }, TEXT);
  assert.ok((await greyLevels(none.outputUrl[0])) <= 2, 'two levels without smoothing');
  assert.ok((await greyLevels(text.outputUrl[0])) > 16, 'grey levels with text smoothing');
  assert.ok((await greyLevels(all.outputUrl[0])) > 16, 'grey levels with all smoothing');
  const explicitNone = await convert('/png', { color_model: 'gray', resolution: '72', smoothing: 'none' }, TEXT);
  assert.ok((await greyLevels(explicitNone.outputUrl[0])) <= 2);
});

/** The samples of an 8-bit grey BMP, read straight from the file (libvips has no BMP reader). */
async function bmpGrey(url: string): Promise<{ data: Buffer; width: number }> {
  const file = await t.download(url);
  const b = readFileSync(file);
  const { width, height, bpp } = bmpHeader(file);
  assert.is(bpp, 8);
  const stride = Math.ceil(width / 4) * 4;
  const data = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) b.copy(data, y * width, b.readUInt32LE(10) + y * stride, b.readUInt32LE(10) + y * stride + width);
  return { data, width };
}

test('smoothing on Ghostscript formats (bmp, jpg rgb/gray): text, line and image each on their own', async () => {
  const levels = async (smoothing?: string, file = TEXT) =>
    new Set((await bmpGrey((await convert('/bmp', { color_model: 'gray', resolution: '72', ...(smoothing ? { smoothing } : {}) }, file)).outputUrl[0])).data)
      .size;
  assert.ok((await levels('text')) > 16, 'text smoothing smooths glyphs');
  assert.ok((await levels('line')) <= 2, 'line smoothing leaves glyphs alone');
  assert.ok((await levels()) <= 2);
  // A 512 px image on a 384 pt page drawn at 300 dpi is enlarged 3.1x: nearest-neighbour repeats pixels, interpolation blends.
  const IMAGE = corpus('pdf/image-jpeg2000-jpx.pdf');
  const repeats = async (smoothing?: string) => {
    const { data, width } = await bmpGrey(
      (await convert('/bmp', { color_model: 'gray', resolution: '300', ...(smoothing ? { smoothing } : {}) }, IMAGE)).outputUrl[0],
    );
    let same = 0;
    for (let i = 1; i < data.length; i++) if (i % width && data[i] === data[i - 1]) same++;
    return same / data.length;
  };
  const nearest = await repeats();
  const smooth = await repeats('image');
  assert.ok(nearest > 0.5, `nearest neighbour repeats pixels (${nearest})`);
  assert.ok(smooth < nearest - 0.2, `interpolation blends (${smooth} vs ${nearest})`);
});

test('jpeg_quality changes the encoding', async () => {
  const low = await convert('/jpg', { jpeg_quality: '5', resolution: '72', smoothing: 'all' }, TEXT);
  const high = await convert('/jpg', { jpeg_quality: '100', resolution: '72', smoothing: 'all' }, TEXT);
  const size = async (u: string) => readFileSync(await t.download(u)).length;
  assert.ok((await size(low.outputUrl[0])) * 2 < (await size(high.outputUrl[0])));
});

test('invalid values: 400 naming the parameter', async () => {
  await expectError('/png', { resolution: '11' }, 400, /^11 is not within the acceptable range for resolution/);
  await expectError('/png', { resolution: '2401' }, 400, /resolution/);
  await expectError('/png', { resolution: 'high' }, 400, /resolution/);
  await expectError('/png', { color_model: 'cmyk' }, 400, /^cmyk is not within the acceptable range for color_model/);
  await expectError('/jpg', { color_model: 'rgba' }, 400, /color_model/);
  await expectError('/jpg', { color_model: 'lab' }, 400, /color_model/);
  await expectError('/bmp', { color_model: 'cmyk' }, 400, /color_model/);
  await expectError('/gif', { color_model: 'rgba' }, 400, /color_model/);
  await expectError('/tif', { color_model: 'hsv' }, 400, /color_model/);
  await expectError('/jpg', { jpeg_quality: '0' }, 400, /jpeg_quality/);
  await expectError('/jpg', { jpeg_quality: '101' }, 400, /jpeg_quality/);
  await expectError('/png', { smoothing: 'blur' }, 400, /smoothing/);
  await expectError('/png', { pages: '3' }, 400, /^3 is not within the acceptable range for pages/);
  await expectError('/png', { pages: 'even' }, 400, /pages/);
  await expectError('/png', { pages: '2-1' }, 400, /pages/);
});

test('resolution x page size is capped with a 400 naming resolution', async () => {
  await expectError('/png', { resolution: '2400' }, 400, /^2400 is not within the acceptable range for resolution.*megapixel.*at most \d+ dpi/);
  const doc = (await (await t.request('/openapi.json')).json().catch(() => null)) as { paths?: Record<string, { post?: { description?: string } }> } | null;
  if (doc?.paths) assert.match(doc.paths['/png']?.post?.description ?? '', /megapixels/);
});

test('encrypted input: 401 when a password is needed; owner-only encryption still renders', async () => {
  for (const f of ['encrypted/rc4-128-user-view-owner-master.pdf', 'encrypted/aes-256-user-view-owner-master.pdf']) {
    await expectError('/png', {}, 401, /password protected/, corpus(f));
  }
  await expectError('/rasterized-pdf', {}, 401, /password protected/, corpus('encrypted/rc4-40-user-view-owner-master.pdf'));
  const out = await convert('/jpg', { pages: '1-2', resolution: '30' }, corpus('encrypted/rc4-128-owner-master-no-user-password.pdf'));
  assert.is(out.outputUrl.length, 2);
});

test('broken input: 400', async () => {
  for (const f of ['malformed/truncated-no-xref-pdfjs-bug1020226.pdf', 'malformed/invalid-header-then-eof.pdf']) {
    await expectError('/png', {}, 400, /not valid input/, corpus(f));
    await expectError('/rasterized-pdf', {}, 400, /not valid input/, corpus(f));
  }
});

test('polling: progress reaches completion with every page', async () => {
  const res = await t.form('/png', { file: { file: corpus('pdf/standard-14-fonts-14-pages.pdf') }, resolution: '20' }, { 'Request-Type': 'requestId' });
  const { requestId } = (await res.json()) as { requestId: string };
  let status: { status: string; outputUrl?: string[]; progress?: number } = { status: 'pending' };
  const progress: number[] = [];
  await until(
    'the render settles',
    async () => {
      status = await (await t.request(`/request-status/${requestId}`)).json();
      if (status.progress !== undefined) progress.push(status.progress);
      return status.status !== 'pending';
    },
    120_000,
  );
  assert.is(status.status, 'completed', JSON.stringify(status));
  // How many pending answers are seen depends on the machine's speed; those seen never go back or past 1.
  assert.ok(
    progress.every((p, i) => p >= 0 && p <= 1 && (i === 0 || p >= progress[i - 1])),
    `progress ${progress}`,
  );
  assert.is(status.outputUrl?.length, 14);
});

test('/rasterized-pdf: same page count and sizes, one image per page, no text left', async () => {
  const res = await t.form('/rasterized-pdf', { file: { file: ROTATION } });
  const body = (await res.json()) as { outputUrl: string };
  assert.is(res.status, 200, JSON.stringify(body));
  assert.type(body.outputUrl, 'string');
  const file = await t.download(body.outputUrl);
  assert.is(pdfPages(file), 2);
  const info = tool('pdfinfo', ['-f', '1', '-l', '2', file]);
  assert.match(info, /Page\s+1 size:\s+612 x 792/);
  assert.match(info, /Page\s+2 size:\s+792 x 612/); // the /Rotate 90 page as displayed
  assert.match(pdfText(ROTATION), /first page/);
  assert.is(pdfText(file).trim(), '');
  const images = tool('pdfimages', ['-list', file])
    .split('\n')
    .slice(2)
    .filter((l) => l.trim());
  assert.is(images.length, 2);
  const fr = await t.form('/rasterized-pdf', { file: { file: corpus('pdf/federal-register-15-pages.pdf') } });
  assert.is(fr.status, 200);
  const frFile = await t.download(((await fr.json()) as { outputUrl: string }).outputUrl);
  assert.is(pdfPages(frFile), 15);
  assert.is(pdfText(frFile).trim(), '');
});

test.run();
