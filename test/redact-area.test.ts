import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, imageColumnsDiff, nearColour, pixelAt as pagePixel, pdfText, pdfWord, startApp, type TestApp, tool } from './helpers.js';

// Area redactions: a box drawn on the page (type "area") instead of a text looked for.

let t: TestApp;
const scratch = mkdtempSync(join(tmpdir(), 'quire-redact-area-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

const GDOCS = corpus('pdf/google-docs-export.pdf'); // A4 (596 x 842), 'Beautiful is better than ugly.' ...
const ROTATION = corpus('pdf/rotation-2-pages.pdf'); // Letter; page 2 /Rotate 90
const JPEG = corpus('pdf/image-jpeg-dct.pdf'); // A4, text + a 300x200 JPEG at x 147.6-447.6, y 412.6-612.6

type Body = { outputUrl?: string; outputId?: string; inputId?: string; error?: string; warning?: string };

async function post(path: string, fields: Record<string, string | { file: string }>, status = 200): Promise<{ body: Body; file: string }> {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, file: status === 200 ? await t.download(body.outputUrl!) : '' };
}
const preview = (file: string, redactions: unknown, status = 200) =>
  post('/pdf-with-redacted-text-preview', { file: { file }, redactions: typeof redactions === 'string' ? redactions : JSON.stringify(redactions) }, status);
const apply = (file: string, fields: Record<string, string> = {}) => post('/pdf-with-redacted-text-applied', { file: { file }, ...fields });

/** The /Redact annotations of each page (qpdf's reading, not MuPDF's, which wrote them). */
function redactAnnots(file: string): { page: number; rect: number[]; contents: string }[] {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=pages', '--json-key=qpdf', file]));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const get = (v: unknown): unknown => (typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]?.value : v);
  const out: { page: number; rect: number[]; contents: string }[] = [];
  (json.pages as { object: string }[]).forEach((p, i) => {
    const page = get(p.object) as Record<string, unknown>;
    for (const ref of (get(page['/Annots']) as string[] | undefined) ?? []) {
      const a = get(ref) as Record<string, unknown>;
      if (a['/Subtype'] !== '/Redact') continue;
      out.push({ page: i + 1, rect: get(a['/Rect']) as number[], contents: String(a['/Contents'] ?? '').replace(/^u:/, '') });
    }
  });
  return out;
}

/** Words of one page as displayed (pdftotext -bbox over the crop box: points, origin top-left). */
function shownWords(file: string, page: number): { text: string; x0: number; y0: number; x1: number; y1: number }[] {
  const xml = tool('pdftotext', ['-bbox', '-cropbox', '-f', String(page), '-l', String(page), file, '-']);
  return [...xml.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    text: m[5],
    x0: Number(m[1]),
    y0: Number(m[2]),
    x1: Number(m[3]),
    y1: Number(m[4]),
  }));
}

const pixelAt = (file: string, page: number, x: number, y: number) => pagePixel(file, page, x, y, scratch);
const near = nearColour;
const count = (text: string, word: string) => text.split(/\s+/).filter((w) => w === word).length;

test('a box over one line: those words are removed, the same words elsewhere stay', async () => {
  // pdftotext's boxes as displayed (origin top-left); the area is from the lower-left of the 842-point page.
  const first = pdfWord(GDOCS, 1, 'Beautiful');
  const last = pdfWord(GDOCS, 1, 'ugly.');
  const area = { page: 1, x: first.xMin - 1, y: 842 - last.yMax - 1, width: last.xMax - first.xMin + 2, height: last.yMax - last.yMin + 2 };
  const before = pdfText(GDOCS);
  const { file: marked } = await preview(GDOCS, [{ type: 'area', value: area }]);
  const annots = redactAnnots(marked);
  assert.is(annots.length, 1);
  assert.is(annots[0].contents, 'Beautiful is better than ugly.');
  // The mark is the box itself (plus the half point of border the appearance is drawn with).
  const [x0, y0, x1, y1] = annots[0].rect;
  assert.ok(Math.abs(x0 + 0.5 - area.x) < 0.01 && Math.abs(y0 + 0.5 - area.y) < 0.01, `${annots[0].rect}`);
  assert.ok(Math.abs(x1 - 0.5 - (area.x + area.width)) < 0.01 && Math.abs(y1 - 0.5 - (area.y + area.height)) < 0.01, `${annots[0].rect}`);
  assert.match(pdfText(marked), /Beautiful is better than ugly/);

  const { file } = await apply(marked);
  const after = pdfText(file);
  assert.not.match(after, /Beautiful|ugly/);
  assert.is(count(after, 'better'), count(before, 'better') - 1);
  assert.match(after, /Explicit is better than implicit\./);
  assert.match(after, /Example document/);
});

test('a box over part of an image: those pixels are blanked in the image and painted in the fill colour', async () => {
  // The picture spans x 147.6-447.6, y 412.6-612.6 (lower-left origin): the box covers its left half and some margin.
  const area = { page: 1, x: 140, y: 400, width: 157, height: 220 };
  const { file: marked } = await preview(JPEG, [{ type: 'area', value: JSON.stringify(area) }]);
  const { file } = await apply(marked, { rgb_color: '0, 0, 255' });
  const diff = await imageColumnsDiff(JPEG, file, scratch);
  // The image's own pixels are replaced under the box (not only covered), the rest is kept.
  assert.ok(diff(0, 140) > 30, `left part replaced: ${diff(0, 140)}`);
  assert.ok(diff(160, 300) < 5, `right part kept: ${diff(160, 300)}`);
  // Rendered: the fill colour over the box, the picture beside it.
  for (const [x, y] of [
    [150, 842 - 420],
    [220, 842 - 510],
    [290, 842 - 600],
  ])
    near(await pixelAt(file, 1, x, y), [0, 0, 255], `fill at ${x}, ${y}`);
  const kept = await pixelAt(file, 1, 380, 842 - 510);
  assert.ok(!(kept[0] < 20 && kept[1] < 20 && kept[2] > 230), `right of the box: ${kept}`);
  assert.match(pdfText(file), /Lorem ipsum/);
});

test('a /Rotate 90 page with an offset crop box: the box is read on the page as seen', async () => {
  const doc = await PDFDocument.load(readFileSync(ROTATION));
  doc.getPage(1).setCropBox(20, 30, 580, 750); // user space x 20-600, y 30-780; as seen: 750 wide, 580 tall
  const input = join(scratch, 'rotated-cropped.pdf');
  writeFileSync(input, await doc.save());
  const ws = shownWords(input, 2);
  const second = ws.find((w) => w.text === 'second')!;
  const page = ws.find((w) => w.text === 'page.')!;
  assert.ok(second && page, ws.map((w) => w.text).join(' '));
  // As seen from the lower-left: y up from the bottom of the 580-point-tall page as displayed. Kept 2 points inside
  // the words' height: the lines are 13.8 points apart and MuPDF removes every glyph whose font box (16 points of
  // Times, ascent to descent) touches the area, so a box reaching the line below would take its letters too.
  const area = { page: 2, x: second.x0 - 1, y: 580 - page.y1 + 2, width: page.x1 - second.x0 + 2, height: page.y1 - page.y0 - 4 };
  const { file: marked, body } = await preview(input, [{ type: 'area', value: area }]);
  assert.is(body.warning, undefined);
  assert.equal(
    redactAnnots(marked).map((a) => [a.page, a.contents]),
    [[2, 'second page.']],
  );
  // Drawn to the words' full height, the box meets the font boxes of the line below: the preview says which letters.
  const tall = await preview(input, [{ type: 'area', value: { ...area, y: area.y - 3, height: area.height + 6 } }]);
  assert.match(tall.body.warning!, /^redactions\[0\]\.value \(page 2\) also meets "e here\." outside the box: applying removes every character/);
  const { file } = await apply(marked, { rgb_color: '255, 0, 0' });
  const p2 = tool('pdftotext', ['-f', '2', '-l', '2', file, '-']);
  assert.not.match(p2, /second page/);
  assert.match(p2, /This is my/);
  assert.match(p2, /Second line here/);
  assert.match(tool('pdftotext', ['-f', '1', '-l', '1', file, '-']), /This is the second line on the page/);
  // The red box is where the words were on the page as displayed.
  near(await pixelAt(file, 2, (second.x0 + page.x1) / 2, (second.y0 + second.y1) / 2), [255, 0, 0], 'fill over the words');
});

test('text and area redactions together; an area on a page without text still marks it', async () => {
  const { file: marked } = await preview(ROTATION, [
    { type: 'literal', value: 'first page' },
    { type: 'area', value: { page: '2', x: '0', y: '0', width: '50', height: '50' } },
  ]);
  const annots = redactAnnots(marked);
  assert.equal(
    annots.map((a) => [a.page, a.contents]),
    [
      [1, 'first page'],
      [2, ''],
    ],
  );
});

test('an area over vector drawings says they are painted over, not removed; one over empty paper or text does not', async () => {
  const VECTOR = corpus('pdf/vector-art-no-fonts.pdf'); // A4, shapes in the upper half, text drawn as curves below
  const over = await preview(VECTOR, [{ type: 'area', value: { page: 1, x: 150, y: 480, width: 200, height: 150 } }]);
  assert.match(over.body.warning ?? '', /redactions\[0\]\.value \(page 1\) lies over \d+ vector drawings.*\/rasterized-pdf/);
  const blank = await preview(VECTOR, [{ type: 'area', value: { page: 1, x: 100, y: 20, width: 300, height: 60 } }]);
  assert.not.match(blank.body.warning ?? '', /vector/);
  assert.is(redactAnnots(blank.file).length, 1);
  // A page's full-size background fill is not a drawing under the box.
  const text = await preview(GDOCS, [{ type: 'area', value: { page: 1, x: 60, y: 700, width: 200, height: 30 } }]);
  assert.not.match(text.body.warning ?? '', /vector/);
});

test('bad areas -> 400 naming the field', async () => {
  const bad = async (value: unknown, pattern: RegExp) =>
    assert.match(
      (
        await preview(
          GDOCS,
          [
            { type: 'literal', value: 'x' },
            { type: 'area', value },
          ],
          400,
        )
      ).body.error!,
      pattern,
    );
  const ok = { page: 1, x: 10, y: 10, width: 20, height: 20 };
  await bad({ ...ok, page: 2 }, /2 is not within the acceptable range for redactions\[1\]\.value\.page: the document has 1 page/);
  await bad({ ...ok, page: 0 }, /0 is not within the acceptable range for redactions\[1\]\.value\.page/);
  await bad({ ...ok, width: -5 }, /-5 is not within the acceptable range for redactions\[1\]\.value\.width/);
  await bad({ ...ok, height: 'tall' }, /tall is not within the acceptable range for redactions\[1\]\.value\.height/);
  await bad({ page: 1, x: 10, y: 10, width: 20 }, /redactions\[1\]\.value\.height is required/);
  await bad('not json', /redactions\[1\]\.value/);
  await bad({ ...ok, x: 700 }, /redactions\[1\]\.value is off page 1: .* must lie within x 0 to 596, y 0 to 842/);
  await bad({ ...ok, y: -30 }, /redactions\[1\]\.value is off page 1/);
  // Less than a point over the edge is a client's rounding: cut at the edge.
  const { file } = await preview(GDOCS, [{ type: 'area', value: { page: 1, x: 576.5, y: 822.5, width: 20, height: 20 } }]);
  const [x0, y0, x1, y1] = redactAnnots(file)[0].rect;
  assert.equal([x0, y0, x1, y1], [576, 822, 596.5, 842.5]);
});

test.run();
