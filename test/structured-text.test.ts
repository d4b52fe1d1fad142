import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  convertToPdf,
  corpus,
  expectError,
  expectOk,
  type FormValue,
  pdfText,
  startApp,
  type TestApp,
  tool,
  uploadId,
  type PdfWord as Word,
  pdfWords as words,
} from './helpers.js';

/**
 * /pdf from structured text (Markdown, plain text, CSV, JSON, XML) through Chromium: every outcome read back
 * from the PDF with poppler (pdftotext -bbox, pdffonts, pdfinfo, pdfimages) and MuPDF (mutool stext).
 */

const test = suite('structured-text');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-structured-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const file = (name: string, text: string): FormValue => ({ bytes: Buffer.from(text), name });
const options = (o: unknown) => JSON.stringify(o);
const convert = (fields: Record<string, FormValue | FormValue[]>, status = 200) => convertToPdf(t, fields, status);
const info = (p: string) => tool('pdfinfo', [p]);
/** Chromium rounds the paper to whole CSS pixels: within one point. */
const assertPageSize = (p: string, w: number, h: number) => {
  const [pw, ph] = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(info(p))!.slice(1).map(Number);
  assert.ok(Math.abs(pw - w) < 1 && Math.abs(ph - h) < 1, `${pw} x ${ph}, not ${w} x ${h}`);
};

const word = (ws: Word[], text: string) => {
  const w = ws.find((x) => x.text === text);
  assert.ok(w, `no word ${text} in ${ws.map((x) => x.text).join(' ')}`);
  return w!;
};
/** Each text line's font and size, read by MuPDF. */
function stextLines(path: string): { text: string; font: string; size: number }[] {
  const xml = tool('mutool', ['draw', '-q', '-F', 'stext', '-o', '-', path]);
  return [...xml.matchAll(/<line [^>]*>([\s\S]*?)<\/line>/g)].map((m) => {
    const font = /<font name="([^"]*)" size="([\d.]+)"/.exec(m[1])!;
    const text = [...m[1].matchAll(/ c="([^"]*)"/g)].map((c) => c[1]).join('');
    return { text, font: font[1], size: Number(font[2]) };
  });
}
const line = (lines: ReturnType<typeof stextLines>, text: string) => {
  const l = lines.find((x) => x.text.trim() === text);
  assert.ok(l, `no line ${text} in ${lines.map((x) => x.text).join(' | ')}`);
  return l!;
};

const REPORT = `# Quarterly report

Intro paragraph with **bold** text.

## Sales table

| Name | Region | Qty |
|:-----|:------:|----:|
| Apple | North | 3 |
| Banana | South | 1200 |

### Notes

Body text after the table.
`;

test('Markdown: heading sizes follow text_size and heading_scale; heading_font and font as asked', async () => {
  const { path } = await convert({
    file: file('report.md', REPORT),
    structured_text_options: options({ style: { text_size: 10, heading_scale: 1.5, font: 'DejaVu Serif', heading_font: 'Arial Bold' } }),
  });
  const lines = stextLines(path);
  // h1, h2, h3 = 2, 1.6, 1.35 x text size x heading_scale.
  assert.is(line(lines, 'Quarterly report').size, 30);
  assert.is(line(lines, 'Sales table').size, 24);
  assert.ok(Math.abs(line(lines, 'Notes').size - 20.25) < 0.05, String(line(lines, 'Notes').size));
  assert.match(line(lines, 'Quarterly report').font, /LiberationSans-Bold/);
  const body = line(lines, 'Body text after the table.');
  assert.ok(Math.abs(body.size - 10) < 0.05, String(body.size));
  assert.match(body.font, /DejaVuSerif/);
  const fonts = tool('pdffonts', [path]);
  assert.match(fonts, /LiberationSans-Bold/);
  assert.match(fonts, /DejaVuSerif/);
});

test('Markdown: GFM table cells in reading order, columns left to right, rows top to bottom, aligned as the delimiter row says', async () => {
  const { path } = await convert({ file: file('report.md', REPORT) });
  const ws = words(path);
  const [name, region, qty] = ['Name', 'Region', 'Qty'].map((x) => word(ws, x));
  const [apple, north, three] = ['Apple', 'North', '3'].map((x) => word(ws, x));
  const [banana, south, many] = ['Banana', 'South', '1200'].map((x) => word(ws, x));
  assert.ok(name.xMax < region.xMin && region.xMax < qty.xMin, 'header left to right');
  assert.ok(name.yMax <= apple.yMin && apple.yMax <= banana.yMin, 'rows top to bottom');
  assert.ok(Math.abs(apple.yMin - north.yMin) < 1 && Math.abs(apple.yMin - three.yMin) < 1, 'a row on one line');
  // ---: right-aligns, :---: centres, :--- left-aligns.
  assert.ok(Math.abs(three.xMax - many.xMax) < 0.5, `right: ${three.xMax} vs ${many.xMax}`);
  assert.ok(Math.abs((north.xMin + north.xMax) / 2 - (south.xMin + south.xMax) / 2) < 0.5, 'centred');
  assert.ok(Math.abs(apple.xMin - banana.xMin) < 0.5, 'left');
  // The reading order of the text is the table's.
  assert.match(pdfText(path).replace(/\s+/g, ' '), /Name Region Qty Apple North 3 Banana South 1200/);
});

test('tagging: a structure tree, /Lang and the title when enable_tagging; none when not asked', async () => {
  const tagged = await convert({
    file: file('report.md', REPORT),
    structured_text_options: options({ enable_tagging: true, title: 'Quarterly service summary', language: 'en-US' }),
  });
  assert.match(info(tagged.path), /Tagged:\s+yes/);
  assert.match(info(tagged.path), /Title:\s+Quarterly service summary/);
  const struct = tool('pdfinfo', ['-struct', tagged.path]);
  for (const tag of ['H1', 'H2', 'Table', 'TH', 'TD', 'P']) assert.match(struct, new RegExp(`\\b${tag}\\b`), tag);
  const catalog = tool('qpdf', ['--show-object=trailer', '--', tagged.path]);
  const root = /\/Root (\d+) 0 R/.exec(catalog)![1];
  assert.match(tool('qpdf', [`--show-object=${root}`, '--', tagged.path]), /\/Lang \(en-US\)/);
  // Bookmarks from the headings.
  assert.match(tool('qpdf', [`--show-object=${root}`, '--', tagged.path]), /\/Outlines/);

  const plain = await convert({ file: file('report.md', REPORT), structured_text_options: options({}) });
  assert.match(info(plain.path), /Tagged:\s+no/);
});

test('Markdown images: only from image_ids / image_files, by file name or image_sources; alt text rules', async () => {
  const png = await uploadId(t, corpus('images/hopper.png'));
  const jpg = await uploadId(t, corpus('images/hopper.jpg'));
  const md = '# Pictures\n\n![Grace Hopper](hopper.png)\n\n![Logo](logo-target)\n\n![](https://example.com/remote.png)\n';
  writeFileSync(join(work, 'pictures.md'), md);
  const id = await uploadId(t, join(work, 'pictures.md'));
  const body = await expectOk(
    await t.json('/pdf', {
      id,
      image_ids: [png, jpg],
      structured_text_options: { enable_tagging: true, markdown: { image_sources: { 'logo-target': { image_id_index: 1 } } } },
    }),
  );
  assert.equal(body.inputId, [id, png, jpg]);
  // The remote one is not fetched: it stays its (missing) alt text, and the client is told.
  assert.match(body.warning, /not among the request's images.*https:\/\/example\.com\/remote\.png/);
  assert.match(body.warning, /without alternate text: https:\/\/example\.com\/remote\.png/);
  const path = await t.download(body.outputUrl);
  const list = tool('pdfimages', ['-list', path]).split('\n').slice(2).filter(Boolean);
  assert.is(list.length, 2, list.join('\n'));
  for (const l of list) assert.match(l, /\s128\s+128\s/);
  assert.match(tool('pdfinfo', ['-struct', path]), /Figure/);

  // fail: an image without alternate text is refused, naming the option.
  writeFileSync(join(work, 'noalt.md'), '![](hopper.png)\n');
  const noAlt = await uploadId(t, join(work, 'noalt.md'));
  await expectError(
    await t.json('/pdf', { id: noAlt, image_ids: [png], structured_text_options: { markdown: { missing_image_alt_text: 'fail' } } }),
    400,
    /missing_image_alt_text.*hopper\.png/,
  );
  // image_alt_text supplies it.
  await expectOk(
    await t.json('/pdf', {
      id: noAlt,
      image_ids: [png],
      structured_text_options: { markdown: { missing_image_alt_text: 'fail', image_alt_text: { 'hopper.png': 'Grace Hopper' } } },
    }),
  );
  // A bad index names the option.
  await expectError(
    await t.json('/pdf', { id, image_ids: [png], structured_text_options: { markdown: { image_sources: { 'logo-target': { image_id_index: 3 } } } } }),
    400,
    /image_id_index/,
  );
  // Not an image.
  await expectError(
    await t.json('/pdf', { id: noAlt, image_ids: [id], structured_text_options: { markdown: { image_sources: { 'hopper.png': { image_id_index: 0 } } } } }),
    400,
    /GIF, JPEG, PNG, or TIFF/,
  );
});

test('Markdown: TIFF from an image_files upload by upload_index; column_width_weights size the table', async () => {
  const tiff = join(work, 'scan.tif');
  await sharp(corpus('images/hopper.png')).tiff().toFile(tiff);
  const md = '![A scan](figure-target)\n\n| Key | Description |\n|---|---|\n| a | b |\n';
  const { path, body } = await convert({
    file: file('figure.md', md),
    image_files: { file: tiff },
    structured_text_options: options({
      markdown: { image_sources: { 'figure-target': { upload_index: 0 } } },
      style: { table: { column_width_weights: [1, 3] } },
    }),
  });
  assert.is(body.warning, undefined);
  const list = tool('pdfimages', ['-list', path]).split('\n').slice(2).filter(Boolean);
  assert.is(list.length, 1);
  assert.match(list[0], /\s128\s+128\s/);
  // Weights 1:3 over the printable width (Letter, 72 pt margins): the second column starts a quarter across
  // (its text after the 5 pt cell padding).
  const description = word(words(path), 'Description');
  assert.ok(Math.abs(description.xMin - (72 + (612 - 144) / 4 + 5)) < 3, String(description.xMin));
});

test('tables: the header row repeats on every page the table spans unless repeat_headers_on_overflow is false', async () => {
  const csv = `Code,Label\n${Array.from({ length: 150 }, (_, i) => `R${i},Row number ${i}`).join('\n')}\n`;
  const repeated = await convert({ file: file('long.csv', csv), structured_text_options: options({}) });
  assert.ok(tool('qpdf', ['--show-npages', repeated.path]).trim() !== '1');
  assert.ok(
    words(repeated.path, 2).some((w) => w.text === 'Code'),
    'header on page 2',
  );
  const once = await convert({ file: file('long.csv', csv), structured_text_options: options({ style: { table: { repeat_headers_on_overflow: false } } }) });
  assert.not.ok(
    words(once.path, 2).some((w) => w.text === 'Code'),
    'no header on page 2',
  );
  assert.ok(words(once.path, 1).some((w) => w.text === 'Code'));
});

test('Markdown raw HTML: shown escaped by default; rendered without scripts when include_unrendered_html', async () => {
  const md = 'Before <b>raw bold</b> after.\n\n<script>document.write("SCRIPTRAN")</script>\n\n<img src="http://127.0.0.1:9/x.png" alt="remote">\n';
  const escaped = await convert({ file: file('raw.md', md) });
  assert.match(pdfText(escaped.path), /Before <b>raw bold<\/b> after\./);
  const rendered = await convert({ file: file('raw.md', md), structured_text_options: options({ include_unrendered_html: true }) });
  const text = pdfText(rendered.path);
  assert.match(text, /Before raw bold after\./);
  assert.not.match(text, /SCRIPTRAN|<b>|document\.write/);
  assert.match(tool('pdffonts', [rendered.path]), /LiberationSans-Bold/);
  assert.not.match(tool('pdffonts', [escaped.path]), /Bold/);
  assert.is(tool('pdfimages', ['-list', rendered.path]).split('\n').slice(2).filter(Boolean).length, 0);
});

test('CSV: header row, delimiter, alignment and width weights; real corpus CSV', async () => {
  const csv = 'Item;Price;Note\nPen;1.50;blue\nNotebook;12.00;A4 ruled\nDesk;250.00;oak\n';
  const { path } = await convert({
    file: file('prices.csv', csv),
    structured_text_options: options({
      csv: {
        delimiter: ';',
        columns: [
          { index: 0, text_align: 'right', width_weight: 1 },
          { index: 2, width_weight: 3 },
        ],
      },
    }),
  });
  const ws = words(path);
  // Column 0 set right: right edges line up; column 1 is all numbers: right-aligned by default.
  assert.ok(Math.abs(word(ws, 'Pen').xMax - word(ws, 'Notebook').xMax) < 0.5);
  assert.ok(Math.abs(word(ws, 'Pen').xMax - word(ws, 'Desk').xMax) < 0.5);
  assert.ok(Math.abs(word(ws, '1.50').xMax - word(ws, '250.00').xMax) < 0.5);
  // Column 2 is left-aligned and, at weight 3 of 5 (the unset one counts 1), starts 2/5 across the printable width.
  assert.ok(Math.abs(word(ws, 'blue').xMin - word(ws, 'oak').xMin) < 0.5);
  const left = 72;
  const width = 612 - 144;
  assert.ok(Math.abs(word(ws, 'Note').xMin - (left + (2 / 5) * width + 5)) < 3, String(word(ws, 'Note').xMin));
  assert.match(tool('mutool', ['draw', '-q', '-F', 'stext', '-o', '-', path]), /<font name="LiberationSans-Bold"[^>]*>\s*<char [^>]*c="I"/);

  // The corpus sheet, as a typeset table rather than a LibreOffice spreadsheet; no header row asked.
  const sheet = await convert({
    file: { file: corpus('office/gotenberg-sheet.csv') },
    structured_text_options: options({ csv: { first_row_is_header: false } }),
  });
  assert.match(pdfText(sheet.path).replace(/\s+/g, ' '), /Name Amount Alice 100 Bob 200/);
  assert.not.match(tool('pdffonts', [sheet.path]), /Bold/);
  assert.match(info(sheet.path), /Producer:\s+Skia/);

  // auto orientation: a wide table goes landscape.
  const wide = `${Array.from({ length: 12 }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: 12 }, (_, i) => i).join(',')}\n`;
  const landscape = await convert({ file: file('wide.csv', wide), structured_text_options: options({}) });
  assertPageSize(landscape.path, 792, 612);
});

test('plain text: preserve keeps every line, reflow joins a paragraph and wraps it to the page', async () => {
  const source = readFileSync(corpus('scans/linn-brochure-two-columns.expected.txt'), 'utf8');
  const preserve = await convert({
    file: { file: corpus('scans/linn-brochure-two-columns.expected.txt'), name: 'linn.txt' },
    structured_text_options: options({ plain_text: { line_handling: 'preserve' } }),
  });
  const reflow = await convert({
    file: { file: corpus('scans/linn-brochure-two-columns.expected.txt'), name: 'linn.txt' },
    structured_text_options: options({ plain_text: { line_handling: 'reflow' }, page_setup: { size: 'A4' } }),
  });
  const count = (p: string) =>
    tool('pdftotext', ['-nopgbrk', p, '-'])
      .split('\n')
      .filter((l) => l.trim()).length;
  const sourceLines = source.split('\n').filter((l) => l.trim()).length;
  assert.ok(count(preserve.path) >= sourceLines, `${count(preserve.path)} vs ${sourceLines}`);
  // 'The LinnSequencer\n32 Track MIDI Sequence Recorder': one paragraph, so reflow puts it on one line.
  assert.not.match(pdfText(preserve.path), /The LinnSequencer 32 Track/);
  assert.match(pdfText(reflow.path), /The LinnSequencer 32 Track MIDI Sequence Recorder/);
  assert.ok(count(reflow.path) < sourceLines, `${count(reflow.path)} vs ${sourceLines}`);
  assertPageSize(reflow.path, 595.28, 841.89);
});

const JSON_DOC = '{"invoice": {"number": "INV-7", "lines": [{"sku": "A1", "qty": 2}], "paid": false}}';
const XML_DOC = '<?xml version="1.0"?>\n<invoice number="INV-7">\n  <line sku="A1"><qty>2</qty></line>\n  <paid>false</paid>\n</invoice>\n';

test('JSON and XML: source keeps the syntax; hierarchy indents each level under its parent', async () => {
  const source = await convert({ file: file('data.json', JSON_DOC), structured_text_options: options({ data_presentation: 'source' }) });
  assert.match(pdfText(source.path), /\{"invoice": \{"number": "INV-7"/);
  assert.match(tool('pdffonts', [source.path]), /LiberationMono/);

  const tree = await convert({ file: file('data.json', JSON_DOC), structured_text_options: options({ data_presentation: 'hierarchy' }) });
  const ws = words(tree.path);
  assert.not.match(pdfText(tree.path), /[{}"]/);
  const [invoice, lines, sku] = ['invoice', 'lines', 'sku:'].map((x) => word(ws, x));
  assert.ok(invoice.xMin < lines.xMin && lines.xMin < sku.xMin, `${invoice.xMin} ${lines.xMin} ${sku.xMin}`);
  assert.ok(invoice.yMin < lines.yMin && lines.yMin < sku.yMin);
  assert.match(pdfText(tree.path), /number: INV-7/);

  const xml = await convert({ file: file('data.xml', XML_DOC), structured_text_options: options({ data_presentation: 'hierarchy' }) });
  const xw = words(xml.path);
  assert.ok(word(xw, 'invoice').xMin < word(xw, 'line').xMin && word(xw, 'line').xMin < word(xw, 'qty:').xMin);
  assert.match(pdfText(xml.path), /number="INV-7"/);
  assert.match(pdfText(xml.path), /paid: false/);
  const xmlSource = await convert({ file: file('data.xml', XML_DOC) });
  assert.match(pdfText(xmlSource.path), /<line sku="A1"><qty>2<\/qty><\/line>/);
});

test('CJK text is extractable; cjk_font and page setup apply', async () => {
  const { path } = await convert({
    file: file('cjk.md', '# 見出し\n\n日本語の本文です。中文文本。한국어 텍스트.\n'),
    structured_text_options: options({
      language: 'ja-JP',
      style: { cjk_font: 'Noto Sans CJK JP' },
      page_setup: { size: 'A5', orientation: 'landscape', margin: { top: 20, left: 30, right: 30, bottom: 20 } },
    }),
  });
  const text = pdfText(path);
  assert.match(text, /見出し/);
  assert.match(text, /日本語の本文です。中文文本。한국어 텍스트/);
  assertPageSize(path, 595.28, 419.53);
  assert.ok(Math.abs(words(path)[0].xMin - 30) < 2, String(words(path)[0].xMin));
});

test('large sources (over 256 KB) are typeset in a worker thread: same output, errors keep their status', async () => {
  // Link reference definitions print nothing: a large source that still makes one page.
  const refs = Array.from({ length: 8000 }, (_, i) => `[r${i}]: https://example.com/${i} "Reference ${i}"`).join('\n');
  const md = `# Large document\n\nSee [the first][r0].\n\n${refs}\n`;
  assert.ok(md.length > 256 * 1024);
  const { path } = await convert({ file: file('large.md', md), structured_text_options: options({ style: { text_size: 12 } }) });
  assert.is(line(stextLines(path), 'Large document').size, 24);
  assert.match(pdfText(path), /See the first\./);
  const broken = `{"items": [${'"x", '.repeat(60000)}`;
  await expectError(await t.form('/pdf', { file: file('large.json', broken) }), 400, /large\.json is not valid JSON/);
});

test('bad options: 400 naming them', async () => {
  const json = file('data.json', JSON_DOC);
  await expectError(
    await t.form('/pdf', { file: json, structured_text_options: options({ data_presentation: 'tree' }) }),
    400,
    /tree is not within the acceptable range for structured_text_options\.data_presentation/,
  );
  await expectError(
    await t.form('/pdf', { file: json, structured_text_options: options({ style: { font: 'Comic Sans' } }) }),
    400,
    /Comic Sans is not within the acceptable range for structured_text_options\.style\.font/,
  );
  await expectError(
    await t.form('/pdf', { file: json, structured_text_options: options({ style: { text_size: 5 } }) }),
    400,
    /structured_text_options\.style\.text_size/,
  );
  await expectError(
    await t.form('/pdf', { file: json, structured_text_options: options({ page_setup: { width: 612 } }) }),
    400,
    /structured_text_options\.page_setup\.width/,
  );
  await expectError(await t.form('/pdf', { file: json, structured_text_options: options({ page_setup: { width: 200, height: 200 } }) }), 400, /usable width/);
  await expectError(await t.form('/pdf', { file: file('bad.json', '{"a": ') }), 400, /bad\.json is not valid JSON/);
  await expectError(await t.form('/pdf', { file: file('bad.xml', '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>') }), 400, /DOCTYPE/);
  await expectError(
    await t.form('/pdf', { file: file('a.csv', 'a,b\n1,2\n'), structured_text_options: options({ csv: { columns: [{ index: 5 }] } }) }),
    400,
    /csv\.columns\[0\]\.index/,
  );
});

test('Markdown images count against HTML_MAX_MB before they are read: 422 naming it', async () => {
  const small = await startApp({ HTML_MAX_MB: '1' });
  try {
    const noise = join(work, 'noise.png');
    const raw = Buffer.alloc(900 * 900 * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
    await sharp(raw, { raw: { width: 900, height: 900, channels: 3 } })
      .png({ compressionLevel: 0 })
      .toFile(noise);
    const res = await small.form('/pdf', { file: file('big.md', '![Noise](noise.png)\n'), image_files: { file: noise } });
    await expectError(res, 422, /HTML_MAX_MB=1/);
  } finally {
    await small.close();
  }
});

test.run();
