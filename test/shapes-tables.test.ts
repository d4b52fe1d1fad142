import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, pdfPages, startApp, type TestApp, tool, uploadId, pdfWord as word } from './helpers.js';

let t: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'quire-shapes-'));
const LOREM = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 page A4 (595 x 842), 'Lorem ipsum dolor sit amet' near the top
const FED = corpus('pdf/federal-register-15-pages.pdf'); // 15 pages Letter
const TAGGED = corpus('pdf/tagged-libreoffice.pdf'); // tagged, 2 pages A4
const PNG = corpus('images/hopper.png');
let lorem = '';
let fed = '';

test.before(async () => {
  t = await startApp();
  [lorem, fed] = await Promise.all([uploadId(t, LOREM), uploadId(t, FED)]);
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const produce = async (path: string, body: Record<string, unknown>) => t.download((await expectOk(await t.json(path, body))).outputUrl);

let renders = 0;
/** One page rendered at 72 dpi (1 pixel = 1 unit); `px(x, y)` takes PDF coordinates (origin lower-left). */
async function render(pdf: string, page: number) {
  const prefix = join(tmp, `r${renders++}`);
  execFileSync('pdftoppm', ['-r', '72', '-png', '-f', String(page), '-l', String(page), pdf, prefix]);
  const file = readdirSync(tmp).find((n) => n.startsWith(`${prefix.slice(tmp.length + 1)}-`))!;
  const { data, info } = await sharp(join(tmp, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return (x: number, y: number) => {
    const row = info.height - 1 - Math.floor(y);
    const i = (row * info.width + Math.floor(x)) * 3;
    return [data[i], data[i + 1], data[i + 2]];
  };
}
const near = (got: number[], want: number[], tol = 12) =>
  assert.ok(
    got.every((v, i) => Math.abs(v - want[i]) <= tol),
    `pixel ${got} is not ~${want}`,
  );
const WHITE = [255, 255, 255];

const pageText = (pdf: string, page: number) => tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-']);
/** Text in content order (the overlay comes after the page's own content). */
const rawText = (pdf: string, page: number) => tool('pdftotext', ['-raw', '-f', String(page), '-l', String(page), pdf, '-']);
/** Uncompressed content of every stream, to read marked-content operators. */
const qdf = (pdf: string) => {
  const out = join(tmp, `q${renders++}.pdf`);
  execFileSync('qpdf', ['--qdf', '--object-streams=disable', pdf, out]);
  return readFileSync(out, 'latin1');
};

// ---- /pdf-with-added-shapes ----

test('shapes: line, filled and stroked rectangle, CMYK fill and opacity land on their pixels; original text kept', async () => {
  const pdf = await produce('/pdf-with-added-shapes', {
    id: lorem,
    shape_objects: [
      { type: 'line', page: 1, x1: 100, y1: 400, x2: 500, y2: 400, stroke_color_rgb: '26,72,112', stroke_width: 6 },
      { type: 'rectangle', page: '1', x: '100', y: 100, width: 200, height: 100, fill_color_rgb: '0,200,0', stroke_color_rgb: '0,0,255', stroke_width: 8 },
      { type: 'rectangle', page: 1, x: 350, y: 100, width: 100, height: 100, fill_color_cmyk: '0,0,0,50' },
      { type: 'rectangle', page: 1, x: 100, y: 250, width: 100, height: 100, fill_color_rgb: '255,0,0', opacity: 0.5 },
      { type: 'rectangle', page: 1, x: 350, y: 250, width: 100, height: 100, fill_color_cmyk: [100, 0, 0, 0] },
    ],
  });
  const px = await render(pdf, 1);
  near(px(300, 400), [26, 72, 112]);
  near(px(300, 405), WHITE); // the line is 6 units thick: 397-403
  near(px(200, 150), [0, 200, 0]);
  near(px(300, 150), [0, 0, 255]); // right edge, stroked 8 wide around x = 300
  near(px(100, 150), [0, 0, 255]);
  near(px(200, 198), [0, 0, 255]);
  near(px(400, 150), [128, 128, 128], 20); // 50 % black
  near(px(150, 300), [255, 128, 128], 15); // red at half opacity over white paper
  const cyan = px(400, 300); // full cyan: Poppler's CMYK conversion gives about 0,173,239
  assert.ok(cyan[0] < 40 && cyan[1] > 120 && cyan[1] < 230 && cyan[2] > 200, `cyan: ${cyan}`);
  near(px(50, 50), WHITE);
  assert.match(pageText(pdf, 1), /Lorem ipsum dolor sit amet/);
});

test('shapes: page "all" draws on every page; page beyond the count and page 0 are 400 naming page', async () => {
  const pdf = await produce('/pdf-with-added-shapes', {
    id: fed,
    shape_objects: JSON.stringify([{ type: 'rectangle', page: 'all', x: 10, y: 10, width: 40, height: 40, fill_color_rgb: '255,0,255' }]),
  });
  assert.is(pdfPages(pdf), 15);
  for (const p of [1, 8, 15]) near((await render(pdf, p))(30, 30), [255, 0, 255]);
  assert.match(pageText(pdf, 15), /\S/);
  await expectError(
    await t.json('/pdf-with-added-shapes', { id: fed, shape_objects: [{ type: 'line', page: 16, x1: 0, y1: 0, x2: 10, y2: 10 }] }),
    400,
    /page/,
  );
  await expectError(await t.json('/pdf-with-added-shapes', { id: fed, shape_objects: [{ type: 'line', page: 0, x1: 0, y1: 0, x2: 10, y2: 10 }] }), 400, /page/);
  await expectError(await t.json('/pdf-with-added-shapes', { id: fed, shape_objects: [{ type: 'circle', page: 1 }] }), 400, /type/);
  await expectError(
    await t.json('/pdf-with-added-shapes', { id: fed, shape_objects: [{ type: 'line', page: 1, x1: 0, y1: 0, x2: 1, y2: 1, dash: 3 }] }),
    400,
    /shape_objects/,
  );
});

test('shapes: tagging marks artifacts and actual text only with tag_enabled; tag options without it are 400', async () => {
  const shapes = [
    { type: 'line', page: 1, x1: 10, y1: 10, x2: 100, y2: 10, tag_is_artifact: true },
    { type: 'rectangle', page: 1, x: 10, y: 20, width: 50, height: 50, tag_actual_text: 'Signature box', tag_structure_type: 'Figure' },
  ];
  const content = qdf(await produce('/pdf-with-added-shapes', { id: lorem, shape_objects: shapes, tag_enabled: 'true' }));
  assert.match(content, /\/Artifact BMC/);
  // 'Signature box' in UTF-16BE hex.
  assert.match(content, /\/Figure BMC\s+\/Span <<\/ActualText <FEFF005300690067006E0061007400750072006500200062006F0078>>> BDC/);
  const plain = qdf(await produce('/pdf-with-added-shapes', { id: lorem, shape_objects: [{ type: 'line', page: 1, x1: 10, y1: 10, x2: 100, y2: 10 }] }));
  assert.not.match(plain, /BMC|BDC/);
  await expectError(await t.json('/pdf-with-added-shapes', { id: lorem, shape_objects: shapes }), 400, /tag_enabled/);
});

// ---- /pdf-with-added-tables ----

const border = { width: 2, color_rgb: '255,0,0' };
const grid = { top: border, right: border, bottom: border, left: border };

test('tables: cells in order and place, spans, borders and fills on pixels, fonts; original text kept', async () => {
  const table = {
    page: 1,
    x: 100,
    y: 600,
    width: 300,
    columns: [{ width: 100 }, { width: 100 }, { width: 100 }],
    style: { border: grid, padding: { top: 5, right: 5, bottom: 5, left: 5 }, text_size: 10 },
    header_rows: [{ cells: [{ text: 'Alpha', style: { font: 'Times Bold' } }, { text: 'Beta' }, { text: 'Gamma', style: { text_align: 'right' } }] }],
    rows: [
      {
        cells: [
          { text: 'Wide', col_span: 2, style: { background_color_rgb: '0,0,255', text_color_rgb: '255,255,255' } },
          { text: 'Tall', row_span: 2, style: { background_color_cmyk: [0, 0, 100, 0] } },
        ],
      },
      { cells: [{ text: 'Left' }, { text: 'Mid' }], min_height: 40 },
    ],
  };
  const pdf = await produce('/pdf-with-added-tables', { id: lorem, table_objects: JSON.stringify([table]) });
  assert.is(pdfPages(pdf), 1);
  assert.match(pageText(pdf, 1), /Lorem ipsum dolor sit amet/);
  // Content order (pdftotext -raw): row by row, a spanning cell in its first row.
  assert.match(tool('pdftotext', ['-raw', pdf, '-']), /Alpha Beta Gamma\s+Wide Tall\s+Left Mid/);
  // Rows from the top (842 - 600 = 242 from the page's top): header 10 * 1.2 + 10 = 22 high, then 22, then 40.
  const H = 842;
  const a = word(pdf, 1, 'Alpha');
  assert.ok(Math.abs(a.xMin - 105) < 1.5 && a.yMin > H - 600 && a.yMax < H - 600 + 22, JSON.stringify(a));
  const g = word(pdf, 1, 'Gamma');
  assert.ok(Math.abs(g.xMax - 395) < 1.5, `right aligned: ${JSON.stringify(g)}`);
  const wide = word(pdf, 1, 'Wide');
  assert.ok(Math.abs(wide.xMin - 105) < 1.5 && wide.yMin > H - 578 && wide.yMax < H - 556, JSON.stringify(wide));
  const tall = word(pdf, 1, 'Tall');
  assert.ok(Math.abs(tall.xMin - 305) < 1.5 && tall.yMin > H - 578, JSON.stringify(tall));
  const left = word(pdf, 1, 'Left');
  assert.ok(left.yMin > H - 556 && left.yMax < H - 516, JSON.stringify(left));
  assert.match(tool('pdffonts', [pdf]), /Times-Bold/);

  const px = await render(pdf, 1);
  near(px(100, 590), [255, 0, 0]); // outer left border
  near(px(200, 590), [255, 0, 0]); // between Alpha and Beta
  near(px(250, 600), [255, 0, 0]); // top edge
  near(px(150, 570), [0, 0, 255]); // Wide's fill across two columns
  near(px(200, 570), [0, 0, 255]); // no border inside the span
  near(px(350, 540), [255, 255, 0], 20); // Tall spans both rows: yellow down to 600 - 84
  near(px(350, 520), [255, 255, 0], 20);
  near(px(250, 516), [255, 0, 0]); // bottom border at 600 - 22 - 22 - 40
  near(px(250, 510), WHITE);
  near(px(150, 530), WHITE); // Left has no fill
});

test('tables: rows continue on inserted pages of the same size with the header repeated; originals follow', async () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({ cells: [{ text: `Item${i + 1}` }, { text: `Value${i + 1}` }] }));
  const table = {
    page: 1,
    x: 72,
    y: 300,
    width: 400,
    columns: [{ width: 200 }, { width: 200 }],
    style: { border: { bottom: { width: 1, color_rgb: '0,0,0' } } },
    header_rows: [{ cells: [{ text: 'Name', tag_structure_type: 'TH' }, { text: 'Amount' }], style: { background_color_rgb: '0,128,0' } }],
    rows,
    footer_rows: [{ cells: [{ text: 'Total', col_span: 2 }] }],
    continuation_page_top_margin: 72,
    page_bottom_margin: 72,
  };
  const pdf = await produce('/pdf-with-added-tables', { id: fed, table_objects: [table], tag_enabled: true });
  // Rows 10 * 1.2 + 2 * 4 = 20 high: page 1 holds (300 - 72 - 20) / 20 = 10 rows, a new Letter page (792 - 144 - 20) / 20 = 31.
  assert.is(pdfPages(pdf), 17);
  assert.match(tool('pdfinfo', ['-f', '2', '-l', '3', pdf]), /Page\s+2 size:\s+612 x 792/);
  assert.match(pageText(pdf, 1), /Item10\b/);
  assert.not.match(pageText(pdf, 1), /Item11\b/);
  for (const p of [2, 3]) {
    const name = word(pdf, p, 'Name');
    assert.ok(Math.abs(name.yMin - 72) < 8, `header repeated at the top margin of page ${p}: ${JSON.stringify(name)}`);
    near((await render(pdf, p))(250, 792 - 85), [0, 128, 0]); // the header fill, right of "Name"
  }
  assert.match(pageText(pdf, 2), /Item11\b[\s\S]*Item41\b/);
  assert.not.match(pageText(pdf, 2), /Item42\b/);
  assert.match(pageText(pdf, 3), /Item42\b[\s\S]*Item60\b[\s\S]*Total/);
  assert.not.match(pageText(pdf, 2), /Total/);
  // The input's pages 2-15 follow unchanged.
  assert.is(pageText(pdf, 4), pageText(FED, 2));
  assert.is(pageText(pdf, 17), pageText(FED, 15));
  // Header cells are /TH marked content on the first page, artifacts where repeated.
  const content = qdf(pdf);
  assert.match(content, /\/TH BMC/);
  assert.match(content, /\/TD BMC/);
  assert.match(content, /\/Artifact BMC/);
});

test('tables: tables on several pages each insert their continuation right after their own page', async () => {
  const tbl = (page: number, tag: string) => ({
    page,
    x: 72,
    y: 300,
    width: 200,
    columns: [{ width: 200 }],
    rows: Array.from({ length: 30 }, (_, i) => ({ cells: [{ text: `${tag}${i}` }] })),
  });
  const pdf = await produce('/pdf-with-added-tables', { id: fed, table_objects: [tbl(3, 'C'), tbl(1, 'A'), tbl(15, 'Z')] });
  assert.is(pdfPages(pdf), 18);
  const tags = (p: number) =>
    rawText(pdf, p)
      .match(/\b[ACZ]\d+\b/g)
      ?.join(',') ?? '';
  assert.match(tags(1), /^A0,.*A12$/);
  assert.match(tags(2), /^A13,.*A29$/);
  assert.is(pageText(pdf, 3), pageText(FED, 2));
  assert.match(tags(4), /^C0,.*C12$/);
  assert.match(tags(5), /^C13,.*C29$/);
  assert.is(pageText(pdf, 6), pageText(FED, 4));
  assert.match(tags(17), /^Z0,.*Z12$/);
  assert.match(tags(18), /^Z13,.*Z29$/);
});

test('tables: on a turned page continuation pages get its visible size; is_rtl lays columns right to left', async () => {
  const rot = await uploadId(t, corpus('pdf/rotation-2-pages.pdf')); // page 2 /Rotate 90: 792 x 612 as seen
  const pdf = await produce('/pdf-with-added-tables', {
    id: rot,
    table_objects: [
      {
        page: 2,
        x: 100,
        y: 200,
        width: 400,
        is_rtl: true,
        columns: [{ width: 100 }, { width: 300 }],
        rows: Array.from({ length: 20 }, (_, i) => ({ cells: [{ text: `First${i}` }, { text: `Second${i}` }] })),
      },
    ],
  });
  assert.is(pdfPages(pdf), 3);
  assert.match(tool('pdfinfo', ['-f', '3', '-l', '3', pdf]), /Page\s+3 size:\s+792 x 612/);
  // Upright on the turned page: the first column is the rightmost, 100 wide, ending at x = 500.
  const first = word(pdf, 2, 'First0');
  const second = word(pdf, 2, 'Second0');
  assert.ok(Math.abs(first.xMin - 404) < 1.5 && Math.abs(second.xMin - 104) < 1.5, `${JSON.stringify(first)} ${JSON.stringify(second)}`);
  assert.ok(Math.abs(first.yMin - (612 - 200)) < 8, JSON.stringify(first));
  // (200 - 36) / 20: rows 0-7 fit above the default bottom margin.
  assert.match(rawText(pdf, 3), /^First8\s+Second8\b/);
});

test('tables: split-row cuts a long row between lines at the page bottom; prefer-next-page moves it whole; move-row refuses a row taller than a page', async () => {
  const long = Array.from({ length: 40 }, (_, i) => `Line${i + 1}`).join('\n');
  const table = (extra: Record<string, unknown>, lines = long) => ({
    page: 1,
    x: 72,
    y: 300,
    width: 300,
    columns: [{ width: 300 }],
    page_bottom_margin: 72,
    rows: [{ cells: [{ text: 'First' }] }, { cells: [{ text: lines }] }],
    ...extra,
  });
  // 'First' takes 20 units; 300 - 20 - 72 = 208 left: (208 - 8) / 12 = 16 lines stay on page 1.
  const split = await produce('/pdf-with-added-tables', { id: fed, table_objects: [table({ overflow_behavior: 'split-row' })] });
  assert.is(pdfPages(split), 16);
  assert.match(rawText(split, 1), /First\s+Line1\b[\s\S]*Line16\s*$/);
  assert.match(pageText(split, 2), /^Line17\b[\s\S]*Line40\b/);
  const moved = await produce('/pdf-with-added-tables', {
    id: fed,
    table_objects: [table({ overflow_behavior: 'split-row', row_split_behavior: 'prefer-next-page' })],
  });
  assert.is(pdfPages(moved), 16);
  assert.not.match(pageText(moved, 1), /Line1\b/);
  assert.match(pageText(moved, 2), /^Line1\b[\s\S]*Line40\b/);
  const huge = Array.from({ length: 100 }, (_, i) => `Line${i + 1}`).join('\n');
  await expectError(await t.json('/pdf-with-added-tables', { id: fed, table_objects: [table({}, huge)] }), 400, /taller than the room a page has/);
  const three = await produce('/pdf-with-added-tables', {
    id: fed,
    table_objects: [table({ overflow_behavior: 'split-row', row_split_behavior: 'prefer-next-page' }, huge)],
  });
  assert.is(pdfPages(three), 17);
  assert.match(pageText(three, 3), /Line100\b/);
});

test('tables: tag_actual_text replaces the cell text for pdftotext; images from image_ids are placed in cells', async () => {
  const png = await uploadId(t, PNG);
  const table = {
    page: 1,
    horizontal_align: 'center',
    y: 500,
    width_percentage: 50,
    width_mode: 'relative',
    columns: [{ width: 1 }, { width: 1 }],
    rows: [{ cells: [{ text: 'Qty', tag_actual_text: 'Quantity ordered' }, { image: { image_index: 0, width: 60, tag_alt_text: 'Hopper' } }] }],
  };
  const pdf = await produce('/pdf-with-added-tables', { id: lorem, image_ids: [png], table_objects: [table], tag_enabled: 'true', tag_language: 'en-US' });
  assert.match(pageText(pdf, 1), /Quantity ordered/);
  assert.match(tool('pdfimages', ['-list', pdf]), /image\s+\d+\s+\d+/);
  // Centred half-page table: columns from 148.8 to 297.6 and to 446.4; the image 60 wide, 4 in from its cell.
  const px = await render(pdf, 1);
  const inImage = [0, 10, 20, 30, 40, 50].map((d) => px(297.6 + 4 + 5 + (d % 50), 500 - 4 - 20));
  assert.ok(
    inImage.some((p) => p.join() !== WHITE.join()),
    'image pixels',
  );
  near(px(297.6 + 4 + 70, 500 - 4 - 20), WHITE);
  assert.match(qdf(pdf), /\/Figure <<\/Alt <FEFF0048006F0070007000650072>>> BDC/);
});

test('tables: bad grids, missing images, too many cells and untagged tag options are 400', async () => {
  const base = { page: 1, x: 72, y: 700, width: 200, columns: [{ width: 100 }, { width: 100 }] };
  const bad = async (table: Record<string, unknown>, pattern: RegExp, extra: Record<string, unknown> = {}) =>
    expectError(await t.json('/pdf-with-added-tables', { id: lorem, table_objects: [table], ...extra }), 400, pattern);
  await bad({ ...base, rows: [{ cells: [{ text: 'a' }] }] }, /exactly 2 columns/);
  await bad({ ...base, rows: [{ cells: [{ text: 'a', col_span: 3 }] }] }, /overlapping or out-of-range span/);
  await bad({ ...base, rows: [{ cells: [{ text: 'a', row_span: 2 }, { text: 'b' }] }] }, /crosses its table section/);
  await bad({ ...base, width: 300, rows: [{ cells: [{ text: 'a' }, { text: 'b' }] }] }, /must total the table width/);
  await bad({ ...base, rows: [{ cells: [{ image: { image_index: 0 } }, { text: 'b' }] }] }, /image_index/);
  await bad({ ...base, page: 2, rows: [{ cells: [{ text: 'a' }, { text: 'b' }] }] }, /page/);
  await bad({ ...base, rows: [{ cells: [{ text: 'a', tag_structure_type: 'TH' }, { text: 'b' }] }] }, /tag_enabled/);
  await bad({ ...base, overflow_behavior: 'fail', rows: Array.from({ length: 40 }, () => ({ cells: [{ text: 'a' }, { text: 'b' }] })) }, /overflow_behavior/);
  const many = Array.from({ length: 10001 }, () => ({ cells: [{ text: 'a' }, { text: 'b' }] }));
  await bad({ ...base, rows: many }, /at most 20000 cells/);
});

test('tables: a tagged input keeps its structure tree; its text stays', async () => {
  const id = await uploadId(t, TAGGED);
  const pdf = await produce('/pdf-with-added-tables', {
    id,
    tag_enabled: true,
    table_objects: [
      { page: 2, x: 72, y: 300, width: 200, columns: [{ width: 200 }], rows: Array.from({ length: 30 }, (_, i) => ({ cells: [{ text: `Row${i}` }] })) },
    ],
  });
  assert.is(pdfPages(pdf), 3);
  assert.match(qdf(pdf), /\/StructTreeRoot/);
  assert.match(pageText(pdf, 2), /Row0/);
  assert.match(pageText(pdf, 3), /Row29/);
  assert.ok(pageText(pdf, 1) === pageText(TAGGED, 1));
});

test.run();
