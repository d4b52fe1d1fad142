// /word keeps the look: the docx XML (columns, run and paragraph properties, running heads with a PAGE field)
// and the round trip (docx rendered back to PDF by LibreOffice, words matched to the original's by mutool).
import { execFileSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compare, officeToPdf, stextWords } from '../scripts/bench/office-fidelity-measure.js';
import { corpus, startApp, tool, type TestApp } from './helpers.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
const unzip = (file: string, entry: string) => execFileSync('unzip', ['-p', file, entry], { encoding: 'utf8', maxBuffer: 1 << 28 });
const entries = (file: string) => tool('unzip', ['-Z1', file]).split('\n').filter(Boolean);
const paragraphOf = (xml: string, text: string) => [...xml.matchAll(/<w:p>[\s\S]*?<\/w:p>/g)].map((m) => m[0]).find((p) => p.includes(text)) ?? '';

test('word: the two-column article has two-column sections and a centred 17 pt title', async () => {
  const docx = await word(corpus('pdf/multicolumn-3-pages.pdf'));
  const xml = unzip(docx, 'word/document.xml');
  assert.ok(/<w:cols [^>]*w:num="2"/.test(xml), 'a two-column section');
  assert.ok(xml.includes('<w:type w:val="continuous"/>'), 'the title section and the columns below it are one page');
  assert.ok(xml.includes('<w:br w:type="column"/>'), 'columns end where the PDF ends them');
  const title = paragraphOf(xml, 'Two-Column');
  assert.ok(title.includes('<w:jc w:val="center"/>'), title.slice(0, 400));
  // CMR17 at 17.2154 pt: 34 half-points, not bold, and still Heading 1 for navigation.
  assert.ok(title.includes('<w:sz w:val="34"/>'), title.slice(0, 600));
  assert.ok(title.includes('<w:b w:val="false"/>'));
  assert.ok(title.includes('<w:pStyle w:val="Heading1"/>'));
  const abstract = paragraphOf(xml, '>Abstract<');
  assert.ok(/<w:b\/>|<w:b w:val="true"\/>/.test(abstract), 'the bold heading is bold');
  // Body rows keep their exact pitch.
  assert.ok(/w:lineRule="exact"/.test(paragraphOf(xml, 'Lorem ipsum dolor sit amet')));
});

test('word: the Federal Register keeps its running heads with the printed page number as a PAGE field', async () => {
  const docx = await word(corpus('pdf/federal-register-15-pages.pdf'));
  const headers = entries(docx).filter((e) => /^word\/header\d+\.xml$/.test(e)).map((e) => unzip(docx, e));
  const withPage = headers.filter((h) => /<w:instrText[^>]*>\s*PAGE\s*</.test(h));
  assert.ok(withPage.length >= 10, `${withPage.length} running heads number the page`);
  assert.ok(headers.some((h) => h.includes('Federal Register')));
  const xml = unzip(docx, 'word/document.xml');
  // The first page prints 47698: its section starts numbering there, and the head is not body text.
  assert.ok(xml.includes('<w:pgNumType w:start="47698"/>'));
  assert.ok(xml.includes('w:ascii="Arial"'), 'Helvetica is set as Arial');
});

test('word: a web link stays a hyperlink; a table keeps its columns and its right-aligned figures', async () => {
  // The fixture is made here: LibreOffice writes a PDF with a URI link annotation and a ruled table.
  const dir = mkdtempSync(join(tmpdir(), 'quire-wordfx-'));
  try {
    const rows = [['North', 'Lakes', 120, 135], ['South', 'Coast', 98, 101], ['East', 'Plains', 77, 80], ['West', 'Hills', 64, 70], ['Central', 'Valley', 55, 58]]
      .map(([a, b, c, d]) => `<tr><td>${a}</td><td>${b}</td><td align="right">${c}</td><td align="right">${d}</td></tr>`)
      .join('');
    writeFileSync(
      join(dir, 'fx.html'),
      `<html><body style="font-family: Liberation Serif; font-size: 12pt"><h1 style="text-align:center">Quarterly figures</h1>
<p>The full report is on <a href="https://example.org/report">the example site</a> for everyone to read.</p>
<table width="100%" border="1" cellspacing="0" cellpadding="6" style="border-collapse: collapse">
<tr><td colspan="2"><b>Region and area</b></td><td align="right"><b>Q1</b></td><td align="right"><b>Q2</b></td></tr>${rows}</table>
<p>Figures are rounded to whole units.</p></body></html>`,
    );
    tool('soffice', [`-env:UserInstallation=file://${dir}/profile`, '--headless', '--infilter=HTML (StarWriter)', '--convert-to', 'pdf:writer_pdf_Export', '--outdir', dir, join(dir, 'fx.html')]);
    const docx = await word(join(dir, 'fx.pdf'));
    const xml = unzip(docx, 'word/document.xml');
    const link = /<w:hyperlink [^>]*r:id="([^"]+)"[^>]*>([\s\S]*?)<\/w:hyperlink>/.exec(xml);
    assert.ok(link, 'a w:hyperlink');
    assert.ok(/>the<\/w:t>|>the example site<\/w:t>/.test(link![2]) || link![2].includes('the example site'), link![2].slice(0, 300));
    assert.ok(new RegExp(`Id="${link![1]}"[^>]*Target="https://example.org/report"|Target="https://example.org/report"[^>]*Id="${link![1]}"`).test(unzip(docx, 'word/_rels/document.xml.rels')));
    const table = /<w:tbl>[\s\S]*?<\/w:tbl>/.exec(xml)?.[0] ?? '';
    assert.ok(table.includes('>135<') && table.includes('>Valley<'), 'the figures are cells');
    assert.ok((table.match(/<w:gridCol /g) ?? []).length >= 3, 'the columns found on the page');
    assert.ok(/<w:jc w:val="right"\/>/.test(table), 'figures stay right-aligned');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The NICS page is a grid the page model does not take for a table: its rows are set at tab stops.
for (const name of ['multicolumn-3-pages', 'google-docs-export', 'table-nics-background-checks-landscape']) {
  test(`word: round trip of ${name} through LibreOffice keeps >= 0.90 of the words in place, >= 0.95 styled`, async () => {
    const pdf = corpus(`pdf/${name}.pdf`);
    const rendered = await officeToPdf(await word(pdf), 'docx');
    try {
      const f = compare(await stextWords(pdf), await stextWords(rendered));
      assert.ok(f.words > 100);
      assert.ok(f.found / f.words >= 0.99, `recall ${f.found}/${f.words}`);
      assert.ok(f.inPlace / f.words >= 0.9, `in place ${f.inPlace}/${f.words}`);
      assert.ok(f.styled / f.words >= 0.95, `styled ${f.styled}/${f.words}`);
    } finally {
      rmSync(dirname(rendered), { recursive: true, force: true });
    }
  });
}

test.run();
