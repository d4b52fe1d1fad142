import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseDrawnRects } from '../engines/mupdf-paths.js';
import { fidelity } from '../scripts/bench/office-fidelity-measure.js';
import { convertToPdf, corpus, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const convert = async (path: string, file: string) => {
  const res = await t.form(path, { file: { file } });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  return t.download(body.outputUrl);
};
const unzip = (file: string, entry: string) => execFileSync('unzip', ['-p', file, entry], { encoding: 'utf8', maxBuffer: 1 << 28 });
const entries = (file: string) => tool('unzip', ['-Z1', file]).split('\n').filter(Boolean);
const unxml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
const attr = (s: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(s)?.[1];

/** Words of a PDF page with their boxes (pdftotext -bbox, points, y down). */
function bboxWords(pdf: string, page = 1) {
  const html = tool('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), pdf, '-']);
  return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    x0: Number(m[1]),
    y0: Number(m[2]),
    x1: Number(m[3]),
    y1: Number(m[4]),
    text: unxml(m[5]),
  }));
}

/** Font size and colour of each word, from MuPDF's structured text of the PDF. */
function stextStyles(pdf: string, page = 1) {
  const xml = tool('mutool', ['draw', '-F', 'stext', '-o', '-', pdf, String(page)]);
  const out: { text: string; size: number; font: string; color: string }[] = [];
  for (const fm of xml.matchAll(/<font name="([^"]*)" size="([\d.]+)">([\s\S]*?)<\/font>/g)) {
    let text = '';
    let color = '';
    for (const cm of fm[3].matchAll(/<char ([^>]*)\/>/g)) {
      const c = unxml(attr(cm[1], 'c') ?? '');
      if (c === ' ') {
        if (text) out.push({ text, size: Number(fm[2]), font: fm[1], color });
        text = '';
      } else {
        text += c;
        color = attr(cm[1], 'color') ?? '';
      }
    }
    if (text) out.push({ text, size: Number(fm[2]), font: fm[1], color });
  }
  return out;
}

// ---------------------------------------------------------------- /excel

interface Cell {
  ref: string;
  col: number;
  row: number;
  value: string;
  font: string;
  fill: string;
  border: string;
}

/** The first sheet read straight from the package's XML, each cell with its resolved font, fill and border XML. */
function workbook(xlsx: string) {
  const styles = unzip(xlsx, 'xl/styles.xml');
  const list = (tag: string) =>
    [
      ...(new RegExp(`<${tag}s[^>]*>([\\s\\S]*?)</${tag}s>`).exec(styles)?.[1] ?? '').matchAll(new RegExp(`<${tag}\\b[^>]*?(?:/>|>[\\s\\S]*?</${tag}>)`, 'g')),
    ].map((m) => m[0]);
  const fonts = list('font');
  const fills = list('fill');
  const borders = list('border');
  const xfs = [...(/<cellXfs[^>]*>([\s\S]*?)<\/cellXfs>/.exec(styles)?.[1] ?? '').matchAll(/<xf [^>]*?(?:\/>|>[\s\S]*?<\/xf>)/g)].map((m) => m[0]);
  const shared = [...(entries(xlsx).includes('xl/sharedStrings.xml') ? unzip(xlsx, 'xl/sharedStrings.xml') : '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    unxml([...m[1].matchAll(/<t(?: [^>]*)?>([^<]*)<\/t>/g)].map((x) => x[1]).join('')),
  );
  const sheet = unzip(xlsx, 'xl/worksheets/sheet1.xml');
  const colNum = (letters: string) => [...letters].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0);
  const cells: Cell[] = [];
  for (const m of sheet.matchAll(/<c r="([A-Z]+)(\d+)"([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const xf = xfs[Number(attr(m[3], 's') ?? 0)] ?? '';
    const v = /<v>([^<]*)<\/v>/.exec(m[4] ?? '')?.[1];
    cells.push({
      ref: m[1] + m[2],
      col: colNum(m[1]),
      row: Number(m[2]),
      value: v === undefined ? '' : / t="s"/.test(m[3]) ? shared[Number(v)] : unxml(v),
      font: fonts[Number(attr(xf, 'fontId') ?? 0)] ?? '',
      fill: fills[Number(attr(xf, 'fillId') ?? 0)] ?? '',
      border: borders[Number(attr(xf, 'borderId') ?? 0)] ?? '',
    });
  }
  const widths = new Map<number, number>();
  for (const m of sheet.matchAll(/<col ([^>]*)\/>/g))
    for (let c = Number(attr(m[1], 'min')); c <= Number(attr(m[1], 'max')); c++) widths.set(c, Number(attr(m[1], 'width')));
  const merges = [...sheet.matchAll(/<mergeCell ref="([A-Z]+)(\d+):([A-Z]+)(\d+)"/g)].map((m) => ({ from: colNum(m[1]), to: colNum(m[3]), row: Number(m[2]) }));
  const find = (value: string) => cells.find((c) => c.value === value)!;
  return { cells, widths, merges, find, at: (row: number, col: number) => cells.find((c) => c.row === row && c.col === col) };
}
const fillRgb = (fill: string) => /<fgColor rgb="FF([0-9A-F]{6})"/.exec(fill)?.[1];
const hexRgb = (h: string) => [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
/** Excel's column width unit back to points (7 px per character plus 5 px of padding, at 96 dpi). */
const widthPt = (w: number) => (w * 7 + 5) * 0.75;

/** The colour most pixels of a page region have at 72 dpi (a cell's background around its text). */
function regionColour(pdf: string, box: { x0: number; y0: number; x1: number; y1: number }, dir: string): number[] {
  const out = join(dir, 'region');
  tool('pdftoppm', [
    '-r',
    '72',
    '-f',
    '1',
    '-l',
    '1',
    '-x',
    String(Math.round(box.x0)),
    '-y',
    String(Math.round(box.y0)),
    '-W',
    String(Math.max(1, Math.round(box.x1 - box.x0))),
    '-H',
    String(Math.max(1, Math.round(box.y1 - box.y0))),
    '-singlefile',
    pdf,
    out,
  ]);
  const ppm = readFileSync(`${out}.ppm`);
  // P6 header: magic, width, height, maxval, each followed by one whitespace byte.
  let pos = 0;
  for (let fields = 0; fields < 4; pos++) if (/\s/.test(String.fromCharCode(ppm[pos])) && !/\s/.test(String.fromCharCode(ppm[pos - 1]))) fields++;
  const count = new Map<string, number>();
  for (let i = pos; i + 2 < ppm.length; i += 3) {
    const k = `${ppm[i]},${ppm[i + 1]},${ppm[i + 2]}`;
    count.set(k, (count.get(k) ?? 0) + 1);
  }
  return [...count.entries()]
    .sort((a, b) => b[1] - a[1])[0][0]
    .split(',')
    .map(Number);
}
const near = (a: number[], b: number[], tol = 12) => a.every((v, i) => Math.abs(v - b[i]) <= tol);

test("excel: NICS table keeps fonts, fills, borders, merged group headers and the page's column widths", async () => {
  const pdf = corpus('pdf/table-nics-background-checks-landscape.pdf');
  const xlsx = await convert('/excel', pdf);
  const book = workbook(xlsx);
  const words = bboxWords(pdf);
  const styles = stextStyles(pdf);

  // Fonts: size and weight as MuPDF reads them from the PDF; the red title stays red.
  const header = book.find('State / Territory');
  const headerStyle = styles.find((s) => s.text === 'State')!;
  assert.ok(/Bold/i.test(headerStyle.font), headerStyle.font);
  assert.ok(header.font.includes('<b/>'), header.font);
  assert.is(Number(attr(/<sz [^>]*>/.exec(header.font)![0], 'val')), Math.round(headerStyle.size * 2) / 2);
  const alabama = book.find('Alabama');
  assert.not.ok(alabama.font.includes('<b/>'), 'body rows are not bold');
  const month = book.find('November - 2015');
  assert.is(styles.find((s) => s.text === 'November')!.color, '#ff0000');
  assert.match(month.font, /<color rgb="FFFF0000"\/>/);

  // Fills: the colour the rendered page shows around the word.
  const tmp = join(xlsx, '..');
  for (const text of ['Permit', 'Alabama']) {
    const w = words.find((x) => x.text === text)!;
    const page = regionColour(pdf, w, tmp);
    const cell = book.find(text);
    assert.ok(fillRgb(cell.fill), `${text} has a fill`);
    assert.ok(near(hexRgb(fillRgb(cell.fill)!), page), `${text}: ${fillRgb(cell.fill)} vs page ${page}`);
  }
  assert.not.equal(fillRgb(book.find('Permit').fill), fillRgb(alabama.fill), 'yellow header, cyan state column');

  // Borders: the ruled grid gives every numeric cell of a state row its left and right rules.
  const row = book.cells.filter((c) => c.row === alabama.row && c.col > alabama.col && c.col < alabama.col + 8);
  assert.is(row.length, 7);
  for (const c of row) assert.match(c.border, /<left style="thin">[\s\S]*<right style="thin">/, c.ref);

  // Merged cells: "Pre-Pawn" is centred over its three columns, which the next row names.
  const prePawn = book.find('Pre-Pawn');
  const merge = book.merges.find((m) => m.row === prePawn.row && m.from === prePawn.col)!;
  assert.ok(merge, 'Pre-Pawn is a merged cell');
  const under = [];
  for (let c = merge.from; c <= merge.to; c++) under.push(book.at(prePawn.row + 1, c)?.value);
  assert.equal(under, ['Handgun', 'Long Gun', '*Other']);

  // Column widths: the spacing of the Alabama row's right-aligned numbers on the page.
  const nums = words.filter((w) => Math.abs(w.y0 - words.find((x) => x.text === 'Alabama')!.y0) < 1 && /^[\d,]+$/.test(w.text)).sort((a, b) => a.x1 - b.x1);
  for (let i = 1; i < 6; i++) {
    const page = nums[i].x1 - nums[i - 1].x1;
    const sheet = widthPt(book.widths.get(alabama.col + 1 + i)!);
    assert.ok(Math.abs(sheet - page) <= 0.15 * page, `column ${alabama.col + 1 + i}: ${sheet.toFixed(1)} pt in the sheet, ${page.toFixed(1)} pt on the page`);
  }
});

test('excel: an HTML table printed to PDF comes back with its merged title, shading, colours and borders', async () => {
  const cell = 'border:1px solid #000; padding:4px 30px';
  const html = `<html><body style="font-family: Arial; font-size: 12pt"><table style="border-collapse: collapse">
<tr><th colspan="3" style="background:#336699; color:#ffffff; ${cell}">Quarterly sales</th></tr>
<tr style="background:#ffee99"><th style="${cell}">Region</th><th style="${cell}">Units</th><th style="${cell}">Revenue</th></tr>
<tr><td style="${cell}">North</td><td style="${cell}">120</td><td style="${cell}">1,440.00</td></tr>
<tr><td style="${cell}">South</td><td style="${cell}">75</td><td style="${cell}">900.00</td></tr>
<tr><td style="${cell}; color:#cc0000"><i>Total</i></td><td style="${cell}">195</td><td style="${cell}">2,340.00</td></tr>
</table></body></html>`;
  const { path: pdf } = await convertToPdf(t, { file: { bytes: Buffer.from(html), name: 'table.html' } });
  const book = workbook(await convert('/excel', pdf));
  const title = book.find('Quarterly sales');
  const region = book.find('Region');
  assert.equal(
    book.merges.find((m) => m.row === title.row),
    { row: title.row, from: region.col, to: region.col + 2 },
  );
  assert.ok(title.font.includes('<b/>') && title.font.includes('FFFFFFFF'), title.font);
  assert.is(fillRgb(title.fill), '336699');
  for (const h of ['Region', 'Units', 'Revenue']) assert.is(fillRgb(book.find(h).fill), 'FFEE99', h);
  assert.is(fillRgb(book.find('North').fill), undefined, 'unshaded body');
  const total = book.find('Total');
  assert.ok(total.font.includes('<i/>') && total.font.includes('FFCC0000'), total.font);
  assert.is(book.find('2340').value, '2340', 'numbers stay numbers');
  for (const c of book.cells.filter((c) => c.row >= region.row && c.col >= region.col && c.col <= region.col + 2)) {
    for (const side of ['left', 'right', 'top', 'bottom']) assert.match(c.border, new RegExp(`<${side} style="thin">`), `${c.ref} ${side}`);
  }
});

test('excel: line art read from mutool trace: filled and stroked rectangles, rules, no curves', () => {
  const xml = `<page number="3" mediabox="0 0 612 792">
<fill_path winding="eofill" colorspace="DeviceRGB" color="1 1 0" transform="1 0 0 -1 0 792"><moveto x="10" y="700"/><lineto x="110" y="700"/><lineto x="110" y="720"/><lineto x="10" y="720"/><closepath/></fill_path>
<stroke_path linewidth="2" colorspace="DeviceGray" color="0" transform="1 0 0 1 0 0"><moveto x="10" y="100"/><lineto x="210" y="100"/></stroke_path>
<stroke_path linewidth="1" colorspace="DeviceCMYK" color="0 1 1 0" transform="1 0 0 1 0 0"><moveto x="0" y="0"/><lineto x="50" y="0"/><lineto x="50" y="30"/><lineto x="0" y="30"/><closepath/></stroke_path>
<fill_path winding="nonzero" colorspace="DeviceGray" color=".5" transform="1 0 0 1 0 0"><moveto x="0" y="0"/><curveto x1="5" y1="5" x2="10" y2="5" x3="15" y3="0"/><lineto x="0" y="0"/></fill_path>
</page>`;
  const rects = parseDrawnRects(xml);
  assert.equal(rects[0], { page: 3, x0: 10, y0: 72, x1: 110, y1: 92, rgb: [1, 1, 0] });
  assert.equal(rects[1], { page: 3, x0: 9, y0: 99, x1: 211, y1: 101, rgb: [0, 0, 0] });
  // A stroked rectangle is its four edges, each one line width thick, in the CMYK red's RGB.
  assert.is(rects.length, 6);
  for (const r of rects.slice(2)) {
    assert.equal(r.rgb, [1, 0, 0]);
    assert.ok(Math.min(r.x1 - r.x0, r.y1 - r.y0) === 1, JSON.stringify(r));
  }
});

// ---------------------------------------------------------------- /powerpoint

const slides = (pptx: string) =>
  entries(pptx)
    .filter((e) => /^ppt\/slides\/slide\d+\.xml$/.test(e))
    .sort((a, b) => Number(/(\d+)\.xml/.exec(a)![1]) - Number(/(\d+)\.xml/.exec(b)![1]));
/** Text runs of a slide: text with their size (hundredths of a point), weight and colour. */
const runs = (xml: string) =>
  [...xml.matchAll(/<a:r><a:rPr ([^>]*)>([\s\S]*?)<\/a:rPr><a:t>([^<]*)<\/a:t><\/a:r>/g)].map((m) => ({
    text: unxml(m[3]),
    sz: Number(attr(m[1], 'sz')),
    bold: attr(m[1], 'b') === '1',
    color: /<a:srgbClr val="([0-9A-F]{6})"/.exec(m[2])?.[1],
  }));
const count = (text: string, word: string) => text.split(/\s+/).filter((w) => w === word).length;

test("powerpoint: a slide per page, text boxes in the PDF's sizes and weights over a text-free picture of the page", async () => {
  const pdf = corpus('pdf/multicolumn-3-pages.pdf');
  const pptx = await convert('/powerpoint', pdf);
  const s = slides(pptx);
  assert.is(s.length, Number(/Pages:\s+(\d+)/.exec(tool('pdfinfo', [pdf]))![1]));
  const styles = stextStyles(pdf);
  const first = runs(unzip(pptx, s[0]));
  const title = first.find((r) => r.text.startsWith('Two-Column Document'))!;
  assert.is(title.sz, Math.round(styles.find((x) => x.text === 'Two-Column')!.size * 100));
  const abstract = first.find((r) => r.text.trim() === 'Abstract')!;
  assert.ok(abstract.bold, 'bold heading');
  assert.is(abstract.sz, Math.round(styles.find((x) => x.text === 'Abstract')!.size * 100));
  assert.not.ok(first.find((r) => r.text.startsWith('Lorem ipsum'))!.bold);
  for (const entry of s) {
    const xml = unzip(pptx, entry);
    assert.match(xml, /<p:pic>[\s\S]*<a:blip r:embed=/, `${entry}: the page picture`);
    assert.ok(xml.indexOf('<p:pic>') < xml.indexOf('<p:sp>'), 'the picture is at the back');
    assert.not.match(xml, /descr="\//, 'no server paths');
  }
  assert.ok(entries(pptx).filter((e) => e.startsWith('ppt/media/')).length >= 3);

  // Rendered back by LibreOffice: the words appear once (the picture holds no text), in place.
  const dir = join(pptx, '..');
  const copy = join(dir, 'deck.pptx');
  writeFileSync(copy, readFileSync(pptx));
  tool('soffice', [`-env:UserInstallation=file://${join(dir, 'lo')}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, copy]);
  const back = tool('pdftotext', [join(dir, 'deck.pdf'), '-']);
  const orig = tool('pdftotext', [pdf, '-']);
  for (const w of ['Lorem', 'Abstract', 'Two-Column']) assert.is(count(back, w), count(orig, w), w);
  const f = await fidelity(pdf, pptx, 'pptx');
  assert.ok(f.inPlace / f.words >= 0.95 && f.styled / f.words >= 0.95, JSON.stringify(f));
});

test('powerpoint: a coloured title keeps its colour, a table its words in place', async () => {
  const pdf = corpus('pdf/table-nics-background-checks-landscape.pdf');
  const pptx = await convert('/powerpoint', pdf);
  const all = runs(unzip(pptx, slides(pptx)[0]));
  assert.is(
    all.find((r) => r.text.startsWith('November'))!.color,
    stextStyles(pdf)
      .find((x) => x.text === 'November')!
      .color.slice(1)
      .toUpperCase(),
  );
  assert.is(all.find((r) => r.text.startsWith('NICS'))!.color, '000000');
  const f = await fidelity(pdf, pptx, 'pptx');
  assert.ok(f.found / f.words >= 0.99 && f.inPlace / f.words >= 0.95, JSON.stringify(f));
});

test('powerpoint: a page of another size (a /Rotate 90 page after a portrait one) is scaled to fit the slide, centred', async () => {
  const pdf = corpus('pdf/rotation-2-pages.pdf');
  const pptx = await convert('/powerpoint', pdf);
  const [cx, cy] = /<p:sldSz cx="(\d+)" cy="(\d+)"/.exec(unzip(pptx, 'ppt/presentation.xml'))!.slice(1).map(Number);
  assert.ok(cy > cx, 'portrait, as the first page');
  const pic = (entry: string) =>
    /<p:pic>[\s\S]*?<a:off x="(\d+)" y="(\d+)"\/>\s*<a:ext cx="(\d+)" cy="(\d+)"\/>/.exec(unzip(pptx, entry))!.slice(1).map(Number);
  const [s1, s2] = slides(pptx);
  assert.equal(pic(s1), [0, 0, cx, cy]);
  const [x, y, w, h] = pic(s2);
  // The landscape page (792 x 612) at 612/792 of its size, as wide as the slide, centred vertically.
  assert.ok(Math.abs(w - cx) <= 2 && Math.abs(h - cx * (612 / 792)) <= 2 && x === 0, `${x} ${y} ${w} ${h}`);
  assert.ok(Math.abs(y - (cy - h) / 2) <= 2, `${y}`);
  const size = Math.round(stextStyles(pdf, 2)[0].size * (612 / 792) * 100);
  assert.ok(
    runs(unzip(pptx, s2)).some((r) => Math.abs(r.sz - size) <= 1),
    `text scaled with its page to ${size}`,
  );
});

test.run();
