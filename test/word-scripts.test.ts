// /word on text the standard fonts lack, on form values no appearance draws, and on list numbers set against
// their text: the docx XML (unzip) and the round trip (LibreOffice renders the docx, words matched by mutool;
// text and places read back by pdftotext).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compare, officeToPdf, stextWords } from '../scripts/bench/office-fidelity-measure.js';
import { corpus, pdfWords, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const word = async (file: string) => {
  const res = await t.form('/word', { file: { file } });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  return t.download(body.outputUrl);
};
const documentXml = (docx: string) => execFileSync('unzip', ['-p', docx, 'word/document.xml'], { encoding: 'utf8', maxBuffer: 1 << 28 });
const pagesOf = (pdf: string) => Number(tool('qpdf', ['--show-npages', pdf]).trim());

/** The docx rendered back by LibreOffice: page counts, words matched (see compare), and its words with their boxes. */
async function roundTrip(pdf: string, docx: string) {
  const rendered = await officeToPdf(docx, 'docx');
  try {
    return { pages: [pagesOf(pdf), pagesOf(rendered)], f: compare(await stextWords(pdf), await stextWords(rendered)), words: pdfWords(rendered) };
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
}

// pdf.js's issue13211: a Thai exam page set in a narrow Thai face the machine lacks. LibreOffice draws Thai in the
// face fontconfig has for it, far wider: rows wrapped onto the rows below (0.50 of the words in place).
test('word: Thai rows set in a face the machine lacks keep their width: the Thai face named, rows narrowed by character scale', async () => {
  const pdf = corpus('word-fidelity-pdfjs/issue13211.pdf');
  const docx = await word(pdf);
  const xml = documentXml(docx);
  const face = tool('fc-match', ['--format=%{family[0]}', ':charset=e01']).trim();
  const thai = [...xml.matchAll(/<w:r>((?:(?!<\/w:r>)[\s\S])*?)<w:t[^>]*>([^<]*[\u0e00-\u0e7f][^<]*)<\/w:t>/g)];
  assert.ok(thai.length > 10, `${thai.length} Thai runs`);
  assert.ok(
    thai.every((m) => m[1].includes(`w:cs="${face}"`)),
    thai.find((m) => !m[1].includes(`w:cs="${face}"`))?.[0].slice(0, 400),
  );
  const scaled = thai.filter((m) => /<w:w w:val="(\d+)"\/>/.test(m[1])).map((m) => Number(/<w:w w:val="(\d+)"\/>/.exec(m[1])![1]));
  assert.ok(scaled.length >= 5 && scaled.every((s) => s >= 50 && s < 100), String(scaled));
  const { pages, f } = await roundTrip(pdf, docx);
  assert.equal(pages, [1, 1]);
  assert.ok(f.inPlace / f.words >= 0.7, `in place ${f.inPlace}/${f.words}`);
});

// LibreOffice's form (corpus forms/libreoffice-form.pdf) holds 'Alice' and 'Bob' as field values whose appearance
// streams draw nothing (/Tx BMC EMC, /NeedAppearances true): MuPDF shows neither, so the page model had neither.
test("word: form values no appearance draws are text at their field's place", async () => {
  const pdf = corpus('forms/libreoffice-form.pdf');
  assert.not.ok(/Alice|Bob/.test(tool('mutool', ['draw', '-F', 'txt', '-o', '-', pdf])), 'MuPDF draws neither value');
  const docx = await word(pdf);
  const xml = documentXml(docx);
  assert.ok(xml.includes('>Alice<') && xml.includes('>Bob<'), 'both values are in the document');
  const { pages, words } = await roundTrip(pdf, docx);
  assert.equal(pages, [1, 1]);
  // Their fields' rectangles (qpdf): First Name [119.5 710.4 203.9 718.1], First Name_2 [77.2 491.0 230.8 499.4], on A4.
  for (const [text, x0, x1, top] of [
    ['Alice', 119.5, 203.9, 841.89 - 718.1],
    ['Bob', 77.2, 230.8, 841.89 - 499.4],
  ] as const) {
    const w = words.find((x) => x.text === text);
    assert.ok(w, `${text} is printed`);
    assert.ok(w!.xMin >= x0 - 1 && w!.xMax <= x1 + 1, `${text} x ${w!.xMin}-${w!.xMax}`);
    assert.ok(Math.abs((w!.yMin + w!.yMax) / 2 - (top + 4)) < 8, `${text} y ${w!.yMin}-${w!.yMax}`);
  }
});

// pdf.js's issue17056: a numbered list whose numbers from 10 on are set against their text ("10.Link", MuPDF
// putting no space there, a 1.3 pt gap on the page): the item's text lost its first word. (The fidelity measure
// reads the original with MuPDF too, so it counts "10.Link" as one word that the round trip, "10." and "Link",
// lacks either way: the words are checked here instead.)
test('word: a list number set against its text keeps the text after it, where it starts on the page', async () => {
  const pdf = corpus('word-fidelity-pdfjs/issue17056.pdf');
  const docx = await word(pdf);
  const xml = documentXml(docx);
  const items = (xml.match(/>Link to page \d+\.</g) ?? []).length;
  assert.ok(items >= 26, `${items} items keep 'Link'`);
  const { pages, words } = await roundTrip(pdf, docx);
  assert.equal(pages, [pagesOf(pdf), pagesOf(pdf)]);
  // Every item's "Link" starts at 88.8 pt on the page, as in the PDF.
  const links = words.filter((w) => w.text === 'Link');
  assert.ok(links.length >= 26, `${links.length} printed`);
  assert.ok(
    links.every((w) => Math.abs(w.xMin - 88.8) < 6),
    links.map((w) => w.xMin.toFixed(1)).join(' '),
  );
});

test.run();
