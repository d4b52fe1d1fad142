import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { placeCentre, resolveFont } from '../app/compose/index.js';
import { corpus, type FormValue, fontsEmbedded, startApp, type TestApp, tool, pdfWord as word, pdfWords as words } from './helpers.js';

let t: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'quire-insert-'));
const FED = corpus('pdf/federal-register-15-pages.pdf'); // 15 pages Letter
const ROT = corpus('pdf/rotation-2-pages.pdf'); // page 1 /Rotate 0, page 2 /Rotate 90 (visible 792 x 612)
const LOREM = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 page A4, 'Lorem ipsum dolor sit amet'
const LOCKED = corpus('encrypted/aes-256-user-view-owner-master.pdf'); // needs the open password 'view'
const FULL_IMAGE = corpus('pdf/image-cmyk.pdf'); // 1 page Letter covered by an opaque image, no text

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const post = async (path: string, fields: Record<string, FormValue | FormValue[]>) => {
  const res = await t.form(path, fields);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const produce = async (path: string, fields: Record<string, FormValue | FormValue[]>) => {
  const { status, body } = await post(path, fields);
  assert.is(status, 200, JSON.stringify(body));
  return { body, pdf: await t.download(body.outputUrl) };
};
const pageText = (pdf: string, page: number) => tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-']);
const check = (pdf: string) => assert.match(tool('qpdf', ['--check', pdf]), /No syntax or stream encoding errors found/);

let renders = 0;
/** One page rendered at 50 dpi by Poppler, as RGB pixels. */
async function render(pdf: string, page: number) {
  const prefix = join(tmp, `r${renders++}`);
  execFileSync('pdftoppm', ['-r', '50', '-png', '-f', String(page), '-l', String(page), pdf, prefix]);
  const file = readdirSync(tmp).find((n) => n.startsWith(`${prefix.slice(tmp.length + 1)}-`))!;
  const { data, info } = await sharp(join(tmp, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
  return { width: info.width, height: info.height, px };
}
/** Pixels matching `test` inside a box given in points from the top-left. */
async function count(pdf: string, page: number, test: (p: number[]) => boolean, box?: [number, number, number, number]) {
  const r = await render(pdf, page);
  const k = 50 / 72;
  const [x0, y0, x1, y1] = box ? box.map((v) => Math.round(v * k)) : [0, 0, r.width, r.height];
  const hits: number[][] = [];
  for (let y = Math.max(0, y0); y < Math.min(r.height, y1); y++)
    for (let x = Math.max(0, x0); x < Math.min(r.width, x1); x++) if (test(r.px(x, y))) hits.push(r.px(x, y));
  return hits;
}
const pinkish = (p: number[]) => p[0] > 200 && p[1] > 80 && p[1] < 180 && p[2] > 80 && p[2] < 180 && Math.abs(p[1] - p[2]) < 25;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// ---- unit ----

test('font names as clients write them resolve to a family and style; unknown ones give the spec sentence', () => {
  assert.equal([resolveFont('Arial').family.name, resolveFont('Arial').style], ['Arial', 'regular']);
  assert.is(resolveFont('Helvetica-BoldOblique').style, 'bolditalic');
  assert.is(resolveFont('times new roman italic').family.name, 'Times New Roman');
  assert.is(resolveFont('Times-Roman').family.name, 'Times');
  assert.is(resolveFont('DejaVu Sans Bold').style, 'bold');
  assert.throws(() => resolveFont('Comic Sans'), /The requested font was not found/);
});

test('alignment places the turned outline against the edges, offsets move it', () => {
  const frame = { width: 600, height: 800 };
  const base = { rotation: 0, horizontal_alignment: 'left', vertical_alignment: 'top', x: 0, y: 0 };
  assert.equal(placeCentre(frame, 100, 50, base), { x: 50, y: 775 });
  assert.equal(placeCentre(frame, 100, 50, { ...base, horizontal_alignment: 'right', vertical_alignment: 'bottom', x: -10, y: 5 }), { x: 540, y: 30 });
  const turned = placeCentre(frame, 100, 50, { ...base, rotation: 90 });
  assert.ok(Math.abs(turned.x - 25) < 1e-9 && Math.abs(turned.y - 750) < 1e-9);
});

// ---- /watermarked-pdf ----

test('text watermark: red at half opacity, centred on the selected pages only, original text kept', async () => {
  const { pdf } = await produce('/watermarked-pdf', {
    file: { file: FED },
    watermark_text: 'DRAFT',
    text_color_rgb: '255,0,0',
    text_size: '100',
    pages: '2-3',
  });
  check(pdf);
  for (const p of [2, 3]) {
    const w = word(pdf, p, 'DRAFT');
    assert.ok(Math.abs((w.xMin + w.xMax) / 2 - 306) < 3, `centred across: ${JSON.stringify(w)}`);
    assert.ok(Math.abs((w.yMin + w.yMax) / 2 - 396) < 20, `centred down: ${JSON.stringify(w)}`);
  }
  for (const p of [1, 4, 15]) assert.not.match(pageText(pdf, p), /DRAFT/);
  assert.ok(pageText(pdf, 2).includes(pageText(FED, 2).trim().split('\n')[0]), 'the page keeps its own text');
  // Blended over white paper: 255, ~128, ~128.
  const pink = await count(pdf, 2, pinkish, [150, 330, 462, 460]);
  assert.ok(pink.length > 300, `pink pixels: ${pink.length}`);
  assert.ok(Math.abs(median(pink.map((p) => p[1])) - 128) < 25);
  assert.is((await count(pdf, 1, pinkish)).length, 0);
});

test('watermark on a /Rotate 90 page: upright, aligned bottom-left of the page as seen, offsets in points', async () => {
  const { pdf } = await produce('/watermarked-pdf', {
    file: { file: ROT },
    watermark_text: 'Stamp',
    text_size: '30',
    horizontal_alignment: 'left',
    vertical_alignment: 'bottom',
    x: '20',
    y: '10',
    pages: '2',
    opacity: '1',
  });
  const w = word(pdf, 2, 'Stamp');
  assert.ok(w.xMax - w.xMin > 2 * (w.yMax - w.yMin), 'reads left to right');
  assert.ok(Math.abs(w.xMin - 20) < 3, JSON.stringify(w));
  // Visible page is 612 high; the box bottom (a quarter of the size under the baseline) sits 10 above it.
  assert.ok(Math.abs(w.yMax - (612 - 10)) < 6, JSON.stringify(w));
  assert.not.match(pageText(pdf, 1), /Stamp/);
});

test('behind_page puts the watermark under the content, on top by default', async () => {
  const fields = { file: { file: FULL_IMAGE }, watermark_text: 'BEHIND', text_color_rgb: [255, 0, 0].join(','), text_size: '100', opacity: '1' };
  const red = (p: number[]) => p[0] > 200 && p[1] < 60 && p[2] < 60;
  const over = await produce('/watermarked-pdf', fields);
  const under = await produce('/watermarked-pdf', { ...fields, behind_page: 'true' });
  assert.ok((await count(over.pdf, 1, red)).length > 300);
  assert.is((await count(under.pdf, 1, red)).length, 0);
  assert.match(tool('pdftotext', [under.pdf, '-']), /BEHIND/);
});

test('PDF watermark by upload and by id: its text on the target pages, inputId [pdf, watermark]', async () => {
  const { body, pdf } = await produce('/watermarked-pdf', { file: { file: ROT }, watermark_file: { file: LOREM }, pages: '2', watermark_file_scale: '0.4' });
  assert.is(body.inputId.length, 2);
  assert.match(pageText(pdf, 2), /Lorem ipsum/);
  assert.not.match(pageText(pdf, 1), /Lorem/);
  check(pdf);
  const byId = await t.json('/watermarked-pdf', { id: body.inputId[0], watermark_file_id: body.inputId[1], opacity: 0.3, rotation: 90 });
  const b = (await byId.json()) as Record<string, any>;
  assert.is(byId.status, 200, JSON.stringify(b));
  assert.equal(b.inputId, body.inputId);
  const out = await t.download(b.outputUrl);
  assert.match(pageText(out, 1), /Lorem/);
  assert.match(pageText(out, 2), /Lorem/);
});

test('stamps are appended to the file: its bytes kept as they were, a signature still valid; an encrypted file keeps its encryption', async () => {
  const plain = corpus('pdf/text-4-pages-pdflatex.pdf');
  const { pdf } = await produce('/watermarked-pdf', { file: { file: plain }, watermark_text: 'QUIRESTAMP' });
  const before = readFileSync(plain);
  assert.ok(readFileSync(pdf).subarray(0, before.length).equals(before), 'the original revision is the output’s first bytes');
  for (const p of [1, 4]) assert.match(pageText(pdf, p), /QUIRESTAMP/);
  check(pdf);

  const { pdf: signed } = await produce('/pdf-with-page-numbers', { file: { file: corpus('signing/qpdf-digitally-signed.pdf') } });
  const sig = execFileSync('pdfsig', [signed], { encoding: 'utf8' });
  assert.match(sig, /Signature Validation: Signature is Valid/);
  assert.match(sig, /Not total document signed/);

  // Opens without a password, permissions withheld: qpdf lays the stamp and keeps the encryption as it was.
  const { pdf: locked } = await produce('/watermarked-pdf', {
    file: { file: corpus('encrypted/rc4-128-owner-master-no-user-password.pdf') },
    watermark_text: 'QUIRESTAMP',
  });
  assert.match(tool('qpdf', ['--show-encryption', locked]), /P = -3104/);
  assert.match(pageText(locked, 30), /Potato 29[\s\S]*QUIRESTAMP|QUIRESTAMP[\s\S]*Potato 29/);
});

test('watermark errors: password 401, broken 400, bad values name the parameter', async () => {
  const bad = async (fields: Record<string, FormValue | FormValue[]>, status: number, re: RegExp) => {
    const r = await post('/watermarked-pdf', fields);
    assert.is(r.status, status, JSON.stringify(r.body));
    assert.match(r.body.error, re);
  };
  await bad({ file: { file: LOCKED }, watermark_text: 'x' }, 401, /password protected/);
  await bad({ file: { bytes: Buffer.from('%PDF-1.4\nnot really a pdf\n'), name: 'broken.pdf' }, watermark_text: 'x' }, 400, /not valid input/);
  await bad({ file: { file: ROT }, watermark_text: 'x', text_size: '101' }, 400, /101 is not within the acceptable range for text_size/);
  await bad({ file: { file: ROT }, watermark_text: 'x', horizontal_alignment: 'middle' }, 400, /alignment/);
  await bad({ file: { file: ROT }, watermark_text: 'x', opacity: '1.5' }, 400, /opacity/);
  await bad({ file: { file: ROT }, watermark_text: 'x', font: 'Wingdings' }, 400, /The requested font was not found/);
  await bad({ file: { file: ROT }, watermark_text: 'x', pages: '3' }, 400, /pages/);
  await bad({ file: { file: ROT }, watermark_text: 'x', text_color_rgb: '300,0,0' }, 400, /text_color_rgb/);
  await bad({ file: { file: ROT }, watermark_text: 'x', watermark_file: { file: LOREM } }, 400, /not both/);
  await bad({ file: { file: ROT } }, 400, /watermark_text/);
  await bad({ file: { file: ROT }, watermark_file: { file: corpus('images/hopper.png') } }, 400, /not valid input/);
});

// ---- /pdf-with-added-text ----

test('added text: JSON body with loose types, baseline at (x, y), wrapping at max_width, other pages untouched', async () => {
  const res = await t.json('/pdf-with-added-text', {
    id: await upload(FED),
    text_objects: JSON.stringify([
      {
        font: 'Arial',
        max_width: '1000',
        opacity: '1',
        page: '1',
        rotation: '0',
        text: 'Quirestamp',
        text_color_rgb: '0,0,255',
        text_size: '20',
        x: '72',
        y: '700',
      },
      {
        font: 'Courier',
        max_width: 120,
        opacity: 1,
        page: 1,
        rotation: 0,
        text: 'one two three four five six seven eight',
        text_color_cmyk: [0, 100, 100, 0],
        text_size: 12,
        x: 300,
        y: 300,
      },
    ]),
  });
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  const pdf = await t.download(body.outputUrl);
  check(pdf);
  const w = word(pdf, 1, 'Quirestamp');
  assert.ok(Math.abs(w.xMin - 72) < 2, JSON.stringify(w));
  assert.ok(w.yMax > 792 - 700 && w.yMax < 792 - 700 + 8, `baseline at y=700: ${JSON.stringify(w)}`);
  const wrapped = words(pdf, 1).filter((x) => x.xMin > 290 && x.yMin > 792 - 320 && /^(one|two|three|four|five|six|seven|eight)$/.test(x.text));
  assert.is(wrapped.length, 8);
  assert.ok(
    wrapped.every((x) => x.xMin >= 299 && x.xMax <= 300 + 120 + 1),
    'inside the column',
  );
  assert.ok(new Set(wrapped.map((x) => Math.round(x.yMin))).size >= 3, 'wrapped over several lines');
  for (const p of [2, 9]) assert.is(pageText(pdf, p), pageText(FED, p));
  assert.equal(fontsEmbedded(pdf).length, fontsEmbedded(FED).length + 2, 'Helvetica and Courier, not embedded');
  const blue = await count(pdf, 1, (p) => p[2] > 200 && p[0] < 80 && p[1] < 80, [60, 60, 200, 100]);
  assert.ok(blue.length > 20, `blue pixels: ${blue.length}`);
});

const upload = async (path: string) => {
  const r = await post('/upload', { file: { file: path } });
  return r.body.files[0].id as string;
};

test('added text outside Latin-1: embedded Unicode fonts, extractable, rendered; page "all"; right-to-left', async () => {
  const { pdf } = await produce('/pdf-with-added-text', {
    file: { file: ROT },
    text_objects: JSON.stringify([
      {
        font: 'Times New Roman',
        max_width: '500',
        opacity: '1',
        page: 'all',
        rotation: '0',
        text: 'Привет мир 日本語テスト',
        text_color_rgb: '0,0,0',
        text_size: '18',
        x: '60',
        y: '200',
      },
      {
        font: 'Arial',
        max_width: '200',
        opacity: '1',
        page: '1',
        rotation: '0',
        text: 'שלום עולם',
        text_color_rgb: '0,0,0',
        text_size: '18',
        x: '300',
        y: '500',
        is_rtl: 'true',
      },
    ]),
  });
  check(pdf);
  for (const p of [1, 2]) {
    const text = pageText(pdf, p);
    assert.ok(text.includes('Привет мир'), text);
    assert.ok(text.includes('日本語テスト'), text);
  }
  assert.ok(fontsEmbedded(pdf).filter((e) => e === 'yes').length >= 3, 'Liberation Serif, Noto Sans CJK, Noto Sans Hebrew embedded');
  const hebrew = words(pdf, 1).filter((w) => /[\u0590-\u05FF]/.test(w.text));
  assert.ok(hebrew.length >= 1);
  // Right-aligned in the column [300, 500].
  assert.ok(Math.abs(Math.max(...hebrew.map((w) => w.xMax)) - 500) < 3, JSON.stringify(hebrew));
  // The Cyrillic and CJK glyphs are drawn: dark pixels where the line is on the /Rotate 90 page.
  const dark = await count(pdf, 2, (p) => p[0] < 100 && p[1] < 100 && p[2] < 100, [55, 612 - 220, 300, 612 - 190]);
  assert.ok(dark.length > 50, `dark pixels: ${dark.length}`);
});

test('added text on a /Rotate 90 page sits at (x, y) of the page as seen, upright', async () => {
  const { pdf } = await produce('/pdf-with-added-text', {
    file: { file: ROT },
    text_objects: JSON.stringify([
      {
        font: 'Helvetica',
        max_width: '300',
        opacity: '1',
        page: '2',
        rotation: '0',
        text: 'Landscape',
        text_color_rgb: '0,0,0',
        text_size: '24',
        x: '500',
        y: '100',
      },
    ]),
  });
  const w = word(pdf, 2, 'Landscape');
  assert.ok(w.xMax - w.xMin > 2 * (w.yMax - w.yMin), 'upright');
  assert.ok(Math.abs(w.xMin - 500) < 2, JSON.stringify(w));
  assert.ok(w.yMax > 612 - 100 && w.yMax < 612 - 100 + 9, JSON.stringify(w));
  assert.is(pageText(pdf, 1), pageText(ROT, 1));
});

test('added text errors name the parameter', async () => {
  const one = {
    font: 'Arial',
    max_width: '100',
    opacity: '1',
    page: '1',
    rotation: '0',
    text: 'x',
    text_color_rgb: '0,0,0',
    text_size: '12',
    x: '10',
    y: '10',
  };
  const bad = async (fields: Record<string, FormValue>, status: number, re: RegExp) => {
    const r = await post('/pdf-with-added-text', fields);
    assert.is(r.status, status, JSON.stringify(r.body));
    assert.match(r.body.error, re);
  };
  await bad(
    { file: { file: ROT }, text_objects: JSON.stringify([{ ...one, text_size: '200' }]) },
    400,
    /200 is not within the acceptable range for text_objects\[0\]\.text_size/,
  );
  await bad({ file: { file: ROT }, text_objects: JSON.stringify([{ ...one, page: '3' }]) }, 400, /page/);
  await bad({ file: { file: ROT }, text_objects: JSON.stringify([{ ...one, font: 'Nope' }]) }, 400, /The requested font was not found/);
  await bad({ file: { file: ROT }, text_objects: JSON.stringify([{ ...one, text: undefined }]) }, 400, /text_objects\[0\]\.text is required/);
  await bad({ file: { file: ROT }, text_objects: '[{"font": "Arial",' }, 400, /JSON data provided is not properly formatted/);
  await bad({ file: { file: ROT } }, 400, /text_objects is required/);
  await bad({ file: { file: LOCKED }, text_objects: JSON.stringify([one]) }, 401, /password protected/);
});

// ---- /pdf-with-added-image ----

test('added JPEG: the same bytes, its pixel size, lower-left at (x, y), on the asked page only', async () => {
  const jpg = corpus('images/hopper.jpg');
  const { body, pdf } = await produce('/pdf-with-added-image', { file: { file: LOREM }, image_file: { file: jpg }, x: '100', y: '200', page: '1' });
  assert.is(body.inputId.length, 2);
  check(pdf);
  assert.match(tool('pdfimages', ['-list', pdf]), /\n\s+1\s+0 image\s+128\s+128\s+rgb\s+3\s+8\s+jpeg/);
  execFileSync('pdfimages', ['-j', pdf, join(tmp, 'jpg')]);
  assert.ok(readFileSync(join(tmp, 'jpg-000.jpg')).equals(readFileSync(jpg)), 'JPEG embedded byte for byte');
  assert.match(pageText(pdf, 1), /Lorem ipsum/);
  // 128 px at 72 dpi = 128 pt: drawn in the box x 100-228, y 200-328 (from the bottom of an 842-high page).
  const r = await render(pdf, 1);
  const k = 50 / 72;
  const inside = r.px(Math.round(164 * k), Math.round((842 - 264) * k));
  const outside = r.px(Math.round(90 * k), Math.round((842 - 264) * k));
  assert.ok(
    inside.some((v) => v < 200),
    `image pixel ${inside}`,
  );
  assert.equal(outside, [255, 255, 255]);
});

test('added images: CMYK JPEG kept right, PNG alpha as soft mask, GIF and TIFF, EXIF orientation applied', async () => {
  const cmykJpg = corpus('images/baiona-cmyk.jpg');
  const cmyk = await produce('/pdf-with-added-image', { file: { file: ROT }, image_file: { file: cmykJpg }, x: '0', y: '0', page: '1' });
  assert.match(tool('pdfimages', ['-list', cmyk.pdf]), /640\s+682\s+cmyk\s+4\s+8\s+jpeg/);
  // Scaled to fit 612 wide: compare the rendered picture with the JPEG converted by libvips.
  const [{ data: ours }, { data: ref }] = await Promise.all([
    (async () => {
      const dir = join(tmp, 'cmyk');
      execFileSync('pdftoppm', ['-r', '36', '-png', '-f', '1', '-l', '1', cmyk.pdf, dir]);
      const png = readdirSync(tmp).find((n) => n.startsWith('cmyk-'))!;
      const shown = 612 * 0.5;
      return sharp(join(tmp, png))
        .extract({ left: 0, top: Math.round(396 - (682 * 612) / 640 / 2), width: Math.round(shown), height: Math.round((682 * shown) / 640) })
        .resize(16, 16, { fit: 'fill' })
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
    })(),
    sharp(cmykJpg).toColourspace('srgb').resize(16, 16, { fit: 'fill' }).removeAlpha().raw().toBuffer({ resolveWithObject: true }),
  ]);
  let diff = 0;
  for (let i = 0; i < ours.length; i++) diff += Math.abs(ours[i] - ref[i]);
  assert.ok(diff / ours.length < 40, `mean difference ${diff / ours.length}`);

  // The corpus PNG's alpha is all opaque: one with a transparent half is made here.
  const rgba = Buffer.alloc(64 * 48 * 4);
  for (let i = 0; i < 64 * 48; i++) rgba.set([0, 160, 0, i % 64 < 32 ? 255 : 0], i * 4);
  const alpha = await sharp(rgba, { raw: { width: 64, height: 48, channels: 4 } })
    .png()
    .toBuffer();
  const png = await produce('/pdf-with-added-image', { file: { file: ROT }, image_file: { bytes: alpha, name: 'half.png' }, x: '10', y: '10', page: '2' });
  const list = tool('pdfimages', ['-list', png.pdf]);
  assert.match(list, /\n\s+2\s+\d+ image\s+64\s+48\s+rgb/);
  assert.match(list, /smask\s+64\s+48/);
  for (const name of ['hopper.gif', 'hopper.tif']) {
    const r = await produce('/pdf-with-added-image', { file: { file: ROT }, image_file: { file: corpus(`images/${name}`) }, x: '10', y: '10', page: '1' });
    assert.match(tool('pdfimages', ['-list', r.pdf]), /\n\s+1\s+0 image\s+128\s+128\s+rgb/, name);
  }
  // EXIF 6: the picture must look like the source turned upright, not like the stored pixels.
  const exif = corpus('images/hopper-exif-orientation-6.jpg');
  const turned = await produce('/pdf-with-added-image', { file: { file: ROT }, image_file: { file: exif }, x: '0', y: '0', page: '1' });
  const shot = join(tmp, 'exif');
  execFileSync('pdftoppm', ['-r', '72', '-png', '-f', '1', '-l', '1', '-x', '0', '-y', String(792 - 128), '-W', '128', '-H', '128', turned.pdf, shot]);
  const grey = (s: sharp.Sharp) => s.resize(16, 16, { fit: 'fill' }).greyscale().raw().toBuffer();
  const shown = await grey(sharp(join(tmp, readdirSync(tmp).find((n) => n.startsWith('exif-'))!)));
  const upright = await grey(sharp(exif).rotate());
  const stored = await grey(sharp(exif));
  const dist = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0);
  assert.ok(dist(shown, upright) < dist(shown, stored) / 2, `upright ${dist(shown, upright)} stored ${dist(shown, stored)}`);
});

test('added image errors: unreadable image, page beyond the last, x off the page, password', async () => {
  const bad = async (fields: Record<string, FormValue>, status: number, re: RegExp) => {
    const r = await post('/pdf-with-added-image', fields);
    assert.is(r.status, status, JSON.stringify(r.body));
    assert.match(r.body.error, re);
  };
  const jpg = { file: corpus('images/hopper.jpg') };
  await bad(
    { file: { file: ROT }, image_file: { bytes: Buffer.from('not an image'), name: 'x.png' }, x: '0', y: '0', page: '1' },
    400,
    /^There was a problem reading the input image$/,
  );
  await bad({ file: { file: ROT }, image_file: jpg, x: '0', y: '0', page: '3' }, 400, /3 is not within the acceptable range for page/);
  await bad({ file: { file: ROT }, image_file: jpg, x: '900', y: '0', page: '1' }, 400, /for x/);
  await bad({ file: { file: ROT }, image_file: jpg, x: '0', y: '0' }, 400, /page is required/);
  await bad({ file: { file: LOCKED }, image_file: jpg, x: '0', y: '0', page: '1' }, 401, /password protected/);
});

test.run();
