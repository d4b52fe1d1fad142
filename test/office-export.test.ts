import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseNumber } from '../app/export/index.js';
import { corpus, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const post = async (path: string, file: string, fields: Record<string, string> = {}, status = 200) => {
  const res = await t.form(path, { file: { file }, ...fields });
  const body = await res.json();
  assert.is(res.status, status, `${path} ${file}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};
/** Posts, checks the stored record, downloads the output. */
const convert = async (path: string, file: string, ext: string, type: string) => {
  const body = await post(path, file);
  const info = await (await t.request(`/resource/${body.outputId}?format=info`)).json();
  const base = file
    .split('/')
    .pop()!
    .replace(/\.pdf$/, '');
  assert.is(info.name, `${base}_service_${path.slice(1)}.${ext}`);
  assert.is(info.type, type);
  assert.not.ok(body.warning);
  return t.download(body.outputUrl);
};
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

const unzip = (file: string, entry: string) => execFileSync('unzip', ['-p', file, entry], { encoding: 'utf8', maxBuffer: 1 << 28 });
const entries = (file: string) => tool('unzip', ['-Z1', file]).split('\n').filter(Boolean);
const xmlText = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
/**
 * Paragraphs of a docx as Word stores them: the style and the text of each w:p. /word keeps the PDF's line
 * breaks: a break reads as a space, and a hyphen before it as a word cut in two (joined again, as pdftotext does).
 */
const paragraphs = (docx: string, part = 'word/document.xml') =>
  [
    ...unzip(docx, part)
      .replace(/-<\/w:t>((?:<\/w:r>)?(?:<w:r>)?(?:<w:rPr>[\s\S]*?<\/w:rPr>)?)<w:br\/>/g, '</w:t>$1')
      .replace(/<w:br\/>/g, '<w:t> </w:t>')
      .matchAll(/<w:p[ >][\s\S]*?<\/w:p>/g),
  ].map((m) => ({
    style: /<w:pStyle w:val="([^"]+)"/.exec(m[0])?.[1] ?? '',
    list: m[0].includes('<w:numPr>'),
    text: xmlText([...m[0].matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((x) => x[1]).join('')),
  }));
const words = (s: string) =>
  s
    .normalize('NFKC')
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
/** Share of pdftotext's words (with repetitions) found in `text`. */
function recall(pdfWords: string[], text: string): number {
  const bag = new Map<string, number>();
  for (const w of words(text)) bag.set(w, (bag.get(w) ?? 0) + 1);
  let found = 0;
  for (const w of pdfWords) {
    const n = bag.get(w) ?? 0;
    if (n > 0) {
      bag.set(w, n - 1);
      found++;
    }
  }
  return found / pdfWords.length;
}

// ---------------------------------------------------------------- /word

test('word: google-docs-export keeps the text, the heading style, the table and the picture', async () => {
  const file = corpus('pdf/google-docs-export.pdf');
  const docx = await convert('/word', file, 'docx', DOCX);
  const ps = paragraphs(docx);
  const all = ps.map((p) => p.text).join('\n');
  assert.ok(recall(words(tool('pdftotext', [file, '-'])), all) >= 0.98);
  assert.ok(
    ps.some((p) => p.style === 'Heading1' && p.text === 'Example document'),
    JSON.stringify(ps.slice(0, 3)),
  );
  // Lines of one paragraph are joined: this sentence crosses a line break in the PDF.
  assert.ok(ps.some((p) => p.text.includes('Complex is better than complicated.') && p.text.includes('Beautiful is better than ugly.')));
  const xml = unzip(docx, 'word/document.xml');
  assert.ok(xml.includes('<w:tbl>'));
  assert.ok(xml.includes('Vatican City'));
  assert.ok(
    entries(docx).some((e) => /^word\/media\/.+\.png$/.test(e)),
    'the snake picture is embedded',
  );
  assert.match(xml, /<w:pgSz w:w="119\d\d" w:h="168\d\d"/); // A4 in twips
});

test('word: multicolumn-3-pages reads column by column, one new-page section per page', async () => {
  const file = corpus('pdf/multicolumn-3-pages.pdf');
  const docx = await convert('/word', file, 'docx', DOCX);
  const text = paragraphs(docx)
    .map((p) => p.text)
    .join(' ');
  const pdf = words(tool('pdftotext', [file, '-']));
  assert.ok(recall(pdf, text) >= 0.98);
  // Each page starts a new-page section (its columns are continuous sections inside it).
  assert.is((unzip(docx, 'word/document.xml').match(/<w:type w:val="nextPage"\/>/g) ?? []).length, 3);
  // Reading order: word trigrams taken along pdftotext's (column by column) text appear in the same order in ours.
  const ours = words(text).join(' ');
  const probes = Array.from({ length: 30 }, (_, i) =>
    pdf.slice(Math.floor((i * (pdf.length - 3)) / 30), Math.floor((i * (pdf.length - 3)) / 30) + 3).join(' '),
  );
  const at = probes.map((p) => ours.indexOf(p)).filter((i) => i >= 0);
  assert.ok(at.length >= 25, `${at.length} of 30 probes found`);
  const inOrder = at.filter((v, i) => i === 0 || v > at[i - 1]).length;
  assert.ok(inOrder >= at.length - 2, `${inOrder}/${at.length} in order`);
  const abstract = paragraphs(docx).find((p) => p.text === 'Abstract');
  assert.ok(abstract && /^Heading\d$/.test(abstract.style));
});

test('word: tagged-word365 lists are Word lists, headings Heading styles', async () => {
  const docx = await convert('/word', corpus('pdf/tagged-word365.pdf'), 'docx', DOCX);
  const ps = paragraphs(docx);
  assert.ok(ps.some((p) => p.style === 'Heading1' && p.text === 'Titre'));
  const items = ps.filter((p) => p.list).map((p) => p.text);
  assert.equal(items, ['Liste', 'Liste 2', 'Liste 3', 'Liste numérotée', 'Liste numérotée']);
  assert.ok(unzip(docx, 'word/numbering.xml').includes('w:val="decimal"'));
  assert.ok(ps.some((p) => p.text === 'En-tête 1'));
});

test('word: federal-register-15-pages keeps 98 % of the words and its 15 pages', async () => {
  const file = corpus('pdf/federal-register-15-pages.pdf');
  const docx = await convert('/word', file, 'docx', DOCX);
  // The running heads are in the header parts.
  const parts = entries(docx).filter((e) => /^word\/(document|header\d+|footer\d+)\.xml$/.test(e));
  assert.ok(
    recall(
      words(tool('pdftotext', [file, '-'])),
      parts
        .flatMap((e) => paragraphs(docx, e))
        .map((p) => p.text)
        .join(' '),
    ) >= 0.98,
  );
  const xml = unzip(docx, 'word/document.xml');
  assert.is((xml.match(/<w:type w:val="nextPage"\/>/g) ?? []).length, 15);
  assert.match(xml, /<w:pgSz w:w="12240" w:h="15840"/); // Letter
  assert.ok(entries(docx).filter((e) => e.startsWith('word/media/')).length >= 10, 'the scanned figures are kept');
});

// ---------------------------------------------------------------- /excel

/** A worksheet read straight from its XML: cell reference -> number, or string (inline, or from the shared strings when the package has them). */
function sheet(xlsx: string, n = 1): Map<string, number | string> {
  const shared = [...(entries(xlsx).includes('xl/sharedStrings.xml') ? unzip(xlsx, 'xl/sharedStrings.xml') : '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    xmlText([...m[1].matchAll(/<t(?: [^>]*)?>([^<]*)<\/t>/g)].map((x) => x[1]).join('')),
  );
  const cells = new Map<string, number | string>();
  for (const m of unzip(xlsx, `xl/worksheets/sheet${n}.xml`).matchAll(/<c r="([A-Z]+\d+)"([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const v = /<v>([^<]*)<\/v>/.exec(m[3] ?? '')?.[1];
    if (v === undefined) continue;
    cells.set(m[1], / t="s"/.test(m[2]) ? shared[Number(v)] : / t="(str|inlineStr)"/.test(m[2]) ? xmlText(v) : Number(v));
  }
  return cells;
}
const rowOf = (cells: Map<string, number | string>, r: number) =>
  [...cells.entries()]
    .filter(([ref]) => Number(ref.replace(/[A-Z]+/, '')) === r)
    .sort(([a], [b]) => a.length - b.length || a.localeCompare(b))
    .map(([, v]) => v);

/** Every state row of the NICS table: its numbers in the sheet equal pdftotext's, as numbers. */
function checkNics(xlsx: string, file: string) {
  const cells = sheet(xlsx);
  const layout = tool('pdftotext', ['-layout', file, '-']).split('\n');
  const states = layout.filter((l) => /^\s*(Alabama|Alaska|Texas|Wyoming|Kentucky|New York|District of Columbia)\s{2,}/.test(l));
  assert.is(states.length, 7);
  for (const line of states) {
    const [name, ...tokens] = line.trim().split(/\s{2,}/);
    const expected = tokens
      .join(' ')
      .split(/\s+/)
      .map((s) => Number(s.replace(/,/g, '')));
    const r = [...cells.entries()].find(([, v]) => v === name)![0].replace(/[A-Z]+/, '');
    const got = rowOf(cells, Number(r)).slice(1);
    assert.ok(
      got.every((v) => typeof v === 'number'),
      `${name}: ${JSON.stringify(got)}`,
    );
    assert.equal(got, expected, name);
  }
  const totals = [...cells.entries()].find(([, v]) => v === 'Totals' && true);
  assert.ok(totals);
  assert.ok([...cells.values()].includes(2236457), 'the grand total is a number');
}

test("excel: NICS table cells hold pdftotext's numbers as numbers (landscape page)", async () => {
  const file = corpus('pdf/table-nics-background-checks-landscape.pdf');
  checkNics(await convert('/excel', file, 'xlsx', XLSX), file);
});

test('excel: the same table on a /Rotate 90 page reads the same', async () => {
  const file = corpus('pdf/table-nics-background-checks-rotate90.pdf');
  const xlsx = await convert('/excel', file, 'xlsx', XLSX);
  checkNics(xlsx, file);
  assert.match(unzip(xlsx, 'xl/workbook.xml'), /<sheet [^>]*name="Page 1"/);
});

test("excel: senate expenditures amounts are numbers that add up like pdftotext's", async () => {
  const file = corpus('pdf/table-senate-expenditures.pdf');
  const cells = sheet(await convert('/excel', file, 'xlsx', XLSX));
  const head = [...cells.entries()].find(([, v]) => v === 'AMOUNT ($)')!;
  const col = head[0].replace(/\d+/, '');
  const amounts = [...cells.entries()].filter(([ref, v]) => ref.replace(/\d+/, '') === col && typeof v === 'number').map(([, v]) => v as number);
  const theirs = [...tool('pdftotext', ['-layout', file, '-']).matchAll(/\s(\d{1,3}(?:,\d{3})*\.\d\d)\s*$/gm)].map((m) => Number(m[1].replace(/,/g, '')));
  assert.ok(theirs.length > 20);
  assert.is(amounts.length, theirs.length);
  assert.is(Math.round(amounts.reduce((a, b) => a + b, 0) * 100), Math.round(theirs.reduce((a, b) => a + b, 0) * 100));
  assert.ok([...cells.values()].includes('DHAW20190001') && [...cells.values()].includes('05/03/2019'), 'codes and dates stay text');
});

test('excel: parseNumber reads numbers as printed and leaves the rest as text', () => {
  const cases: [string, number | string, string | undefined][] = [
    ['1,234', 1234, '#,##0'],
    ['(1,234.00)', -1234, '#,##0.00;(#,##0.00)'],
    ['$1,234.56', 1234.56, '"$"#,##0.00'],
    ['12.5%', 0.125, '0.0%'],
    ['\u22123', -3, undefined],
    ['98 452', 98452, '#,##0'],
    ['1,5', '1,5', undefined],
    ['007', '007', undefined],
    ['(5)', '(5)', undefined],
    ['05/03/2019', '05/03/2019', undefined],
    ['12345678901234567', '12345678901234567', undefined],
  ];
  for (const [text, value, format] of cases) assert.equal(parseNumber(text), format ? { value, format } : { value }, text);
});

// ---------------------------------------------------------------- /powerpoint

const slides = (pptx: string) =>
  entries(pptx)
    .filter((e) => /^ppt\/slides\/slide\d+\.xml$/.test(e))
    .sort((a, b) => Number(/(\d+)\.xml/.exec(a)![1]) - Number(/(\d+)\.xml/.exec(b)![1]));
const slideText = (pptx: string, entry: string) => xmlText([...unzip(pptx, entry).matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((m) => m[1]).join(' '));

test("powerpoint: one slide per page, each with its page's text as editable text", async () => {
  const file = corpus('pdf/multicolumn-3-pages.pdf');
  const pptx = await convert('/powerpoint', file, 'pptx', PPTX);
  const s = slides(pptx);
  assert.is(s.length, 3);
  s.forEach((entry, i) => {
    const page = words(tool('pdftotext', ['-f', String(i + 1), '-l', String(i + 1), file, '-']));
    const r = recall(page, slideText(pptx, entry));
    assert.ok(r >= 0.95, `slide ${i + 1}: ${r}`);
  });
  assert.match(unzip(pptx, s[0]), /<p:sp>[\s\S]*?<p:txBody>[\s\S]*?<a:t>/, 'text boxes, not only a picture of the page');
  assert.match(unzip(pptx, 'ppt/presentation.xml'), /<p:sldSz cx="75\d{5}" cy="106\d{5}"/); // A4 portrait in EMU
});

test('powerpoint: a /Rotate 90 page gives a landscape slide with the table text', async () => {
  const file = corpus('pdf/table-senate-expenditures.pdf');
  const pptx = await convert('/powerpoint', file, 'pptx', PPTX);
  const [cx, cy] = /<p:sldSz cx="(\d+)" cy="(\d+)"/.exec(unzip(pptx, 'ppt/presentation.xml'))!.slice(1).map(Number);
  assert.ok(cx > cy, `${cx}x${cy}`);
  const text = slideText(pptx, slides(pptx)[0]);
  assert.ok(recall(words(tool('pdftotext', [file, '-'])), text) >= 0.95);
});

// ---------------------------------------------------------------- errors, naming, JSON bodies

test('office export: password 401, broken PDF 400, non-PDF 400, for all three', async () => {
  const locked = corpus('encrypted/rc4-128-user-and-owner-test.pdf');
  for (const path of ['/word', '/excel', '/powerpoint']) {
    const pw = await post(path, locked, {}, 401);
    assert.is(pw.error, 'The input file is password protected and cannot be processed.');
    const broken = await t.form(path, {
      file: { bytes: Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< >>\n%%EOF\n'), name: 'broken.pdf' },
    });
    assert.is(broken.status, 400, `${path} broken`);
    assert.match((await broken.json()).error, /not valid input/);
    const png = await t.form(path, { file: { file: corpus('scans/linn-brochure-two-columns.png') } });
    assert.is(png.status, 400, `${path} png`);
  }
});

test('office export: JSON body with an id and an output name', async () => {
  const up = await t.form('/upload', { file: { file: corpus('pdf/tagged-libreoffice.pdf') } });
  const id = (await up.json()).files[0].id;
  for (const [path, ext] of [
    ['/word', 'docx'],
    ['/excel', 'xlsx'],
  ]) {
    const res = await t.json(path, { id, output: 'my-file' });
    const body = await res.json();
    assert.is(res.status, 200, JSON.stringify(body));
    assert.is(body.inputId, id);
    const info = await (await t.request(`/resource/${body.outputId}?format=info`)).json();
    assert.is(info.name, `my-file.${ext}`);
  }
  // A scan has no text: the document holds the page image and a warning says how to get text.
  const scan = await post('/word', corpus('scans/linn-scan-ccitt.pdf'));
  assert.match(scan.warning, /pdf-with-ocr-text/);
  const docx = await t.download(scan.outputUrl);
  assert.ok(entries(docx).some((e) => e.startsWith('word/media/')));
  assert.ok(readFileSync(docx).length > 10_000);
});

test.run();
