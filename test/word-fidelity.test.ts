// /word keeps the look: the docx XML (columns, run and paragraph properties, running heads with a PAGE field)
// and the round trip (docx rendered back to PDF by LibreOffice, words matched to the original's by mutool).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PDFDocument, type PDFPage, rgb, StandardFonts, setTextRenderingMode, TextRenderingMode } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compare, officeToPdf, stextWords } from '../scripts/bench/office-fidelity-measure.js';
import { convertToPdf, corpus, type PdfWord, pdfWord, startApp, type TestApp, tool } from './helpers.js';

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
/** The table cell (w:tc) whose text contains `text`, and the cells of the row holding it. */
const cellOf = (xml: string, text: string) => [...xml.matchAll(/<w:tc>[\s\S]*?<\/w:tc>/g)].map((m) => m[0]).find((c) => c.includes(`>${text}<`)) ?? '';
const rowOf = (xml: string, text: string) => [...xml.matchAll(/<w:tr>[\s\S]*?<\/w:tr>/g)].map((m) => m[0]).find((r) => r.includes(`>${text}<`)) ?? '';
const borders = (cell: string) => ['top', 'left', 'bottom', 'right'].filter((side) => new RegExp(`<w:tcBorders>[\\s\\S]*<w:${side} w:val="single"`).test(cell));
const paragraphOf = (xml: string, text: string) => [...xml.matchAll(/<w:p>[\s\S]*?<\/w:p>/g)].map((m) => m[0]).find((p) => p.includes(text)) ?? '';

test('word: the two-column article: one Word page per PDF page, each paragraph a frame at its place, a centred 17 pt title', async () => {
  const docx = await word(corpus('pdf/multicolumn-3-pages.pdf'));
  const xml = unzip(docx, 'word/document.xml');
  // Three pages, three new-page sections: no text flows from one page onto the next.
  assert.is((xml.match(/<w:sectPr/g) ?? []).length, 3);
  // The right column's first paragraph (x 310.6 pt, top 249 pt on page 1) is framed where it is on the page.
  const right = paragraphOf(xml, 'pellentesque ante. Phasellus adipiscing semper elit.');
  const frame = /<w:framePr [^>]*w:x="(\d+)"[^>]*w:y="(\d+)"[^>]*w:hAnchor="page"[^>]*w:vAnchor="page"/.exec(right);
  assert.ok(frame, right.slice(0, 400));
  assert.ok(Math.abs(Number(frame![1]) / 20 - 310.6) < 3, `x ${Number(frame![1]) / 20}`);
  assert.ok(Math.abs(Number(frame![2]) / 20 - 249) < 6, `y ${Number(frame![2]) / 20}`);
  // Its rows break where the PDF's do: "Maece-" ends a row.
  assert.ok(/Maece-<\/w:t><\/w:r><w:r><w:br\/>/.test(right), 'the row ends with its hyphen and a line break');
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
  const headers = entries(docx)
    .filter((e) => /^word\/header\d+\.xml$/.test(e))
    .map((e) => unzip(docx, e));
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
    const rows = [
      ['North', 'Lakes', 120, 135],
      ['South', 'Coast', 98, 101],
      ['East', 'Plains', 77, 80],
      ['West', 'Hills', 64, 70],
      ['Central', 'Valley', 55, 58],
    ]
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
    tool('soffice', [
      `-env:UserInstallation=file://${dir}/profile`,
      '--headless',
      '--infilter=HTML (StarWriter)',
      '--convert-to',
      'pdf:writer_pdf_Export',
      '--outdir',
      dir,
      join(dir, 'fx.html'),
    ]);
    const docx = await word(join(dir, 'fx.pdf'));
    const xml = unzip(docx, 'word/document.xml');
    const link = /<w:hyperlink [^>]*r:id="([^"]+)"[^>]*>([\s\S]*?)<\/w:hyperlink>/.exec(xml);
    assert.ok(link, 'a w:hyperlink');
    assert.ok(/>the<\/w:t>|>the example site<\/w:t>/.test(link![2]) || link![2].includes('the example site'), link![2].slice(0, 300));
    assert.ok(
      new RegExp(`Id="${link![1]}"[^>]*Target="https://example.org/report"|Target="https://example.org/report"[^>]*Id="${link![1]}"`).test(
        unzip(docx, 'word/_rels/document.xml.rels'),
      ),
    );
    const table = /<w:tbl>[\s\S]*?<\/w:tbl>/.exec(xml)?.[0] ?? '';
    assert.ok(table.includes('>135<') && table.includes('>Valley<'), 'the figures are cells');
    assert.ok((table.match(/<w:gridCol /g) ?? []).length >= 3, 'the columns found on the page');
    assert.ok(/<w:jc w:val="right"\/>/.test(table), 'figures stay right-aligned');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('word: a ruled, shaded table keeps its borders, fills and merged cells; an underlined phrase stays underlined', async () => {
  // Printed by the service's Chromium: each cell is boxed by 1px rules, the header rows are shaded, "Region"
  // spans two rows and "Sales in 2024" two columns.
  const td = (text: string, extra = '') => `<td ${extra} style="border:1px solid #000; padding:6px 30px">${text}</td>`;
  const html = `<html><body style="font-family: Arial; font-size: 16pt">
<p>This paragraph has an <u>underlined phrase here</u> in the middle of it.</p>
<table style="border-collapse: collapse">
<tr style="background:#ffee99">${td('Region', 'rowspan="2" valign="top"')}${td('Sales in 2024', 'colspan="2" align="center"')}</tr>
<tr style="background:#ffee99">${td('Units')}${td('Revenue')}</tr>
${[
  ['North', 120, '1,440.00'],
  ['South', 75, '900.00'],
  ['East', 195, '2,340.00'],
]
  .map((r) => `<tr>${r.map((v) => td(String(v))).join('')}</tr>`)
  .join('\n')}
</table><p>Figures are rounded to whole units.</p></body></html>`;
  const { path: pdf } = await convertToPdf(t, { file: { bytes: Buffer.from(html), name: 'table.html' } });
  const docx = await word(pdf);
  const xml = unzip(docx, 'word/document.xml');
  const sales = cellOf(xml, 'Sales in 2024');
  assert.ok(sales.includes('<w:gridSpan w:val="2"/>'), sales.slice(0, 600));
  const region = cellOf(xml, 'Region');
  assert.ok(/<w:vMerge w:val="restart"\/>/.test(region), region.slice(0, 600));
  // The row below continues it: its first cell is the merged one's continuation, Units comes after it.
  const units = rowOf(xml, 'Units');
  assert.ok(/^<w:tr>[\s\S]*?<w:tc>(?:(?!<\/w:tc>)[\s\S])*<w:vMerge(?: w:val="continue")?\/>[\s\S]*?>Units</.test(units), units.slice(0, 900));
  for (const text of ['Region', 'Units', 'Revenue', 'Sales in 2024']) assert.ok(/<w:shd [^>]*w:fill="FFEE99"/.test(cellOf(xml, text)), `${text} is shaded`);
  assert.not.ok(/<w:shd /.test(cellOf(xml, 'North')), 'body cells are not shaded');
  for (const text of ['North', '120', '1,440.00', '900.00', 'East', '2,340.00'])
    assert.equal(borders(cellOf(xml, text)), ['top', 'left', 'bottom', 'right'], text);
  const runs = [...xml.matchAll(/<w:r>([\s\S]*?)<\/w:r>/g)].map((m) => m[1]);
  const underlined = runs
    .filter((r) => r.includes('<w:u w:val="single"/>'))
    .map((r) => /<w:t[^>]*>([^<]*)</.exec(r)?.[1] ?? '')
    .join('');
  assert.is(underlined.trim(), 'underlined phrase here');
  assert.ok(!/<w:u /.test(paragraphOf(xml, 'Figures are rounded')), 'text without a rule under it is not underlined');
  // Rendered by LibreOffice, the header cells are yellow around their text and the body cells white.
  const rendered = await officeToPdf(docx, 'docx');
  try {
    const box = (text: string) => {
      const m = new RegExp(`<word xMin="([\\d.]+)" yMin="([\\d.]+)" xMax="([\\d.]+)" yMax="([\\d.]+)">${text}</word>`).exec(
        tool('pdftotext', ['-bbox', rendered, '-']),
      );
      assert.ok(m, `${text} in the round trip`);
      return m!.slice(1).map(Number);
    };
    const beside = async (text: string) => {
      const [x0, y0, , y1] = box(text);
      const png = join(dirname(rendered), `${text}`);
      tool('pdftoppm', [
        '-r',
        '72',
        '-png',
        '-singlefile',
        '-x',
        String(Math.round(x0 - 8)),
        '-y',
        String(Math.round(y0)),
        '-W',
        '6',
        '-H',
        String(Math.max(2, Math.round(y1 - y0))),
        rendered,
        png,
      ]);
      const { dominant } = await sharp(`${png}.png`).stats();
      return [dominant.r, dominant.g, dominant.b];
    };
    const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) <= 24);
    assert.ok(near(await beside('Units'), [0xff, 0xee, 0x99]), `Units: ${await beside('Units')}`);
    assert.ok(near(await beside('North'), [255, 255, 255]), `North: ${await beside('North')}`);
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
});

test('word: the NICS table gets the rules the PDF draws, its shaded headers and its group headers merged', async () => {
  const xml = unzip(await word(corpus('pdf/table-nics-background-checks-landscape.pdf')), 'word/document.xml');
  assert.ok(rowOf(xml, 'Alabama').includes('>71,137<'), "a state's figures are cells of its row");
  // The page draws a rule above every fifth state (Alabama, Colorado, Georgia, ...), none between Alabama and Alaska.
  assert.ok(borders(cellOf(xml, 'Alabama')).includes('top'));
  assert.ok(borders(cellOf(xml, 'Colorado')).includes('top'));
  assert.not.ok(borders(cellOf(xml, 'Alaska')).includes('top'));
  // Every column is ruled off: the figures have their left and right rules.
  for (const text of ['18,870', '7,095', '71,137'])
    assert.ok(
      ['left', 'right'].every((s) => borders(cellOf(xml, text)).includes(s)),
      `${text}: ${borders(cellOf(xml, text))}`,
    );
  // "Pre-Pawn" heads three ruled columns (Handgun, Long Gun, *Other) and sits on a light blue fill.
  const prePawn = cellOf(xml, 'Pre-Pawn');
  assert.ok(prePawn.includes('<w:gridSpan w:val="3"/>'), prePawn.slice(0, 600));
  assert.ok(/<w:shd [^>]*w:fill="DCE6F1"/.test(prePawn), prePawn.slice(0, 600));
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

test('word: text MuPDF misplaces (Type 3 glyphs with broken bounding boxes) is set where Poppler places it', async () => {
  // demo-text-unnamed-fonts: MuPDF sets its rows 12 pt apart down the page, its "2." at y 158 instead of 326.
  const pdf = corpus('word-fidelity/demo-text-unnamed-fonts.pdf');
  const at = (file: string) => Number(/<word xMin="[\d.]+" yMin="([\d.]+)"[^>]*>2\.<\/word>/.exec(tool('pdftotext', ['-bbox', file, '-']))?.[1]);
  assert.ok(Math.abs(at(pdf) - 326.3) < 1);
  const rendered = await officeToPdf(await word(pdf), 'docx');
  try {
    assert.ok(Math.abs(at(rendered) - 326.3) < 12, `"2." at y ${at(rendered)}`);
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
});

test('word: the OCR layer under a scan (invisible text) is hidden text, not printed over the picture', async () => {
  // demo-text-hidden: a page-wide scan with Tesseract's invisible text (render mode 3) under it, and one visible
  // sentence. pdftotext reads both in the PDF; the round trip prints only the visible one.
  const pdf = corpus('word-fidelity/demo-text-hidden.pdf');
  assert.ok(tool('pdftotext', [pdf, '-']).includes('encouraged'));
  const docx = await word(pdf);
  const xml = unzip(docx, 'word/document.xml');
  const runs = [...xml.matchAll(/<w:r>([\s\S]*?)<\/w:r>/g)].map((m) => m[1]);
  const hidden = runs
    .filter((r) => r.includes('<w:vanish/>'))
    .map((r) => /<w:t[^>]*>([^<]*)</.exec(r)?.[1] ?? '')
    .join(' ');
  assert.ok(hidden.includes('encouraged') && hidden.includes('Presenting'), hidden.slice(0, 300));
  assert.not.ok(
    runs.some((r) => r.includes('displayed text') && r.includes('<w:vanish/>')),
    'the visible sentence is not hidden',
  );
  const rendered = await officeToPdf(docx, 'docx');
  try {
    const text = tool('pdftotext', [rendered, '-']);
    assert.ok(text.includes('This is displayed text'), text);
    assert.not.ok(/encouraged|Presenting/.test(text), text);
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
});

test('word: a rule dividing a ruled row into cells with rows of their own parts their text (figures beside charts)', async () => {
  // demo-table-close-underline: a form of figures (x 25-542) beside three charts, parted by a rule at x 543 from
  // top to bottom; read as one table, its rows ran over two Word pages and lost half their words.
  const pdf = corpus('word-fidelity/demo-table-close-underline.pdf');
  const rendered = await officeToPdf(await word(pdf), 'docx');
  try {
    assert.match(tool('pdfinfo', [rendered]), /Pages:\s+1\n/);
    const box = (file: string, text: string) => {
      const m = new RegExp(`<word xMin="([\\d.]+)" yMin="([\\d.]+)"[^>]*>${text}</word>`).exec(tool('pdftotext', ['-bbox', file, '-']));
      assert.ok(m, `${text} in ${file}`);
      return m!.slice(1).map(Number);
    };
    // Heads of the form and a chart's axis label, each where the PDF has it (within 3 % of the 792 x 612 pt page).
    for (const text of ['Cornstalks', 'Nearby', '32\\.00']) {
      const [[x0, y0], [x1, y1]] = [box(pdf, text), box(rendered, text)];
      assert.ok(Math.abs(x0 - x1) < 0.03 * 792 && Math.abs(y0 - y1) < 0.03 * 612, `${text}: ${x0},${y0} -> ${x1},${y1}`);
    }
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
});

test('word: text set a quarter turn stays turned: a stamp up the margin and a label down the page are turned text boxes at their place', async () => {
  // Printed by the service's Chromium: a stamp running up the left margin, a label running down the page, and upright
  // prose between them. Set upright, as /word did before, the turned words' boxes are wide and low in the round trip.
  const html = `<html><body style="font-family: Arial; font-size: 12pt; margin: 0">
<div style="position: absolute; left: 24px; top: 760px; transform-origin: 0 0; transform: rotate(-90deg); white-space: nowrap; font-size: 14pt">CONFIDENTIAL DRAFT NOT FOR CIRCULATION</div>
<div style="position: absolute; left: 640px; top: 300px; transform-origin: 0 0; transform: rotate(90deg); white-space: nowrap">Measured downwards along the gauge</div>
<p style="margin: 100px 140px 0 110px">An ordinary upright paragraph sits between the stamp and the label, set in rows across the page as text usually is.</p>
</body></html>`;
  const { path: pdf } = await convertToPdf(t, { file: { bytes: Buffer.from(html), name: 'turned.html' } });
  const docx = await word(pdf);
  const xml = unzip(docx, 'word/document.xml');
  const shapes = [...xml.matchAll(/<wps:wsp>[\s\S]*?<\/wps:wsp>/g)].map((m) => m[0]);
  const turnedAs = (text: string) => /<wps:bodyPr [^>]*vert="([^"]+)"/.exec(shapes.find((sh) => sh.includes(text)) ?? '')?.[1];
  assert.is(turnedAs('CONFIDENTIAL'), 'vert270', 'the stamp runs up the page');
  assert.is(turnedAs('downwards'), 'vert', 'the label runs down the page');
  assert.not.ok(
    shapes.some((sh) => sh.includes('ordinary')),
    'upright prose is not in a text box',
  );
  const rendered = await officeToPdf(docx, 'docx');
  try {
    const [width, height] = /Page size:\s+([\d.]+) x ([\d.]+)/
      .exec(tool('pdfinfo', [pdf]))!
      .slice(1)
      .map(Number);
    for (const text of ['CONFIDENTIAL', 'CIRCULATION', 'downwards', 'gauge', 'ordinary']) {
      const [a, b] = [pdfWord(pdf, 1, text), pdfWord(rendered, 1, text)];
      const tall = (w: PdfWord) => w.yMax - w.yMin > w.xMax - w.xMin;
      assert.is(tall(b), tall(a), `${text} turned as in the PDF`);
      const centre = (w: PdfWord) => [(w.xMin + w.xMax) / 2, (w.yMin + w.yMax) / 2];
      const [[x0, y0], [x1, y1]] = [centre(a), centre(b)];
      assert.ok(Math.abs(x0 - x1) < 0.03 * width && Math.abs(y0 - y1) < 0.03 * height, `${text}: ${x0},${y0} -> ${x1},${y1}`);
    }
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
});

test('word: text drawn invisibly on a page without a picture (an OCR layer without its scan) is hidden text, and said so', async () => {
  // Made with pdf-lib: page 1 prints a title and draws a sentence invisibly (render mode 3) beside it; page 2 draws
  // only invisible text, as a text-only OCR layer does. Neither page places an image.
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const invisible = (page: PDFPage, text: string, y: number) => {
    page.pushOperators(setTextRenderingMode(TextRenderingMode.Invisible));
    page.drawText(text, { x: 72, y, size: 12, font });
    page.pushOperators(setTextRenderingMode(TextRenderingMode.Fill));
  };
  const first = doc.addPage([612, 792]);
  first.drawText('Printed title of the report', { x: 72, y: 720, size: 18, font });
  invisible(first, 'unseen searchable sentence lies here', 600);
  first.drawText('A printed closing line follows it', { x: 72, y: 500, size: 12, font });
  invisible(doc.addPage([612, 792]), 'whole page of recognised words without their scan', 700);
  const dir = mkdtempSync(join(tmpdir(), 'quire-wordhidden-'));
  try {
    const pdf = join(dir, 'hidden.pdf');
    writeFileSync(pdf, await doc.save());
    assert.ok(tool('pdftotext', [pdf, '-']).includes('unseen searchable'), 'the PDF has the invisible text');
    const res = await t.form('/word', { file: { file: pdf } });
    const body = await res.json();
    assert.is(res.status, 200, JSON.stringify(body));
    assert.match(String(body.warning), /Pages 1, 2 draw text invisibly/);
    const docx = await t.download(body.outputUrl);
    const xml = unzip(docx, 'word/document.xml');
    const runs = [...xml.matchAll(/<w:r>([\s\S]*?)<\/w:r>/g)].map((m) => m[1]);
    const text = (hidden: boolean) =>
      runs
        .filter((r) => r.includes('<w:vanish/>') === hidden)
        .map((r) => /<w:t[^>]*>([^<]*)</.exec(r)?.[1] ?? '')
        .join(' ');
    for (const w of ['unseen', 'searchable', 'recognised', 'scan']) assert.ok(text(true).includes(w), `${w} is hidden: ${text(true)}`);
    for (const w of ['Printed', 'report', 'closing']) assert.ok(text(false).includes(w), `${w} is shown: ${text(false)}`);
    const rendered = await officeToPdf(docx, 'docx');
    try {
      const printed = tool('pdftotext', [rendered, '-']);
      assert.ok(printed.includes('Printed title') && printed.includes('closing line'), printed);
      assert.not.ok(/unseen|recognised/.test(printed), printed);
      assert.match(tool('pdfinfo', [rendered]), /Pages:\s+2\n/);
    } finally {
      rmSync(dirname(rendered), { recursive: true, force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Pages of a PDF, as qpdf counts them. */
const pagesOf = (pdf: string) => Number(tool('qpdf', ['--show-npages', pdf]).trim());

/** /word, rendered back by LibreOffice: the PDF's and the round trip's page counts and words (see compare). */
async function roundTrip(pdf: string) {
  const rendered = await officeToPdf(await word(pdf), 'docx');
  try {
    return {
      pages: [pagesOf(pdf), pagesOf(rendered)],
      f: compare(await stextWords(pdf), await stextWords(rendered)),
      text: tool('pdftotext', [rendered, '-']),
    };
  } finally {
    rmSync(dirname(rendered), { recursive: true, force: true });
  }
}

/**
 * A two-page form as tax forms are drawn: a title and a line under it repeated on both pages, then 38 ruled rows
 * of 6-7 pt labels, a line number and a filled-in field (an AcroForm text field whose appearance draws its value)
 * in a ruled column, a ticked box on some rows. Its first rows recur on both pages near the top.
 */
async function formPdf(file: string) {
  const doc = await PDFDocument.create();
  const [f, b, c] = await Promise.all([StandardFonts.Helvetica, StandardFonts.HelveticaBold, StandardFonts.Courier].map((n) => doc.embedFont(n)));
  const form = doc.getForm();
  for (let p = 0; p < 2; p++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`Form 7000 (2025) Statement of income, page ${p + 1}`, { x: 36, y: 760, size: 12, font: b });
    page.drawText('Department of Examples - Revenue Office', { x: 36, y: 748, size: 6, font: f });
    for (let i = 0; i < 38; i++) {
      const y = 735 - i * 17.5;
      page.drawLine({ start: { x: 36, y: y - 17.5 }, end: { x: 576, y: y - 17.5 }, thickness: 0.5 });
      for (const x of [400, 470]) page.drawLine({ start: { x, y }, end: { x, y: y - 17.5 }, thickness: 0.5 });
      page.drawText(`${i + 1}${p ? 'b' : 'a'}`, { x: 38, y: y - 8, size: 7, font: b });
      page.drawText(`Wages and other income of line ${i + 1} (see instructions)`, { x: 54, y: y - 7, size: 6.5, font: f });
      page.drawText('Attach a schedule if required', { x: 54, y: y - 14.5, size: 5.5, font: f });
      page.drawText(`${i + 1}`, { x: 405, y: y - 12, size: 7, font: b });
      if (i % 5 === 0) page.drawText('Yes', { x: 320, y: y - 12, size: 7, font: f });
      if (i % 3 === 2) continue;
      const field = form.createTextField(`line${p}.${i}`);
      field.setText(`${(i + 3) * 1234}.00`);
      field.addToPage(page, { x: 472, y: y - 16.5, width: 102, height: 15.5, font: c, borderWidth: 0 });
    }
  }
  form.updateFieldAppearances(c);
  writeFileSync(file, await doc.save());
}

/** A two-page festival timetable: a landscape grid of 34 half-hours by 10 stages, acts in 5-6 pt type, some cells shaded. */
async function timetablePdf(file: string) {
  const doc = await PDFDocument.create();
  const [f, b] = await Promise.all([StandardFonts.Helvetica, StandardFonts.HelveticaBold].map((n) => doc.embedFont(n)));
  for (let p = 0; p < 2; p++) {
    const page = doc.addPage([842, 595]);
    page.drawText(`Festival programme, day ${p + 1}`, { x: 30, y: 565, size: 14, font: b });
    const [left, top, cw, rh] = [70, 545, 78, 15.5];
    for (let c = 0; c < 10; c++) page.drawText(`Stage ${c + 1}`, { x: left + c * cw + 2, y: top - 11, size: 7, font: b });
    for (let r = 0; r < 34; r++) {
      const y = top - (r + 1) * rh;
      const time = `${10 + (r >> 1)}:${r % 2 ? '30' : '00'}`;
      page.drawText(time, { x: 32, y: y - 11, size: 6.5, font: f });
      for (let c = 0; c < 10; c++) {
        if ((r * 7 + c * 3 + p) % 4 === 0) continue;
        if ((r + c) % 5 === 0) page.drawRectangle({ x: left + c * cw, y: y - rh, width: cw, height: rh, color: rgb(0.85, 0.92, 1) });
        page.drawText(`Act ${p}${r}${c}`, { x: left + c * cw + 2, y: y - 7, size: 5.5, font: b });
        page.drawText(`${time}-${11 + (r >> 1)}:15`, { x: left + c * cw + 2, y: y - 13.5, size: 5, font: f });
      }
    }
    for (let r = 0; r <= 35; r++) page.drawLine({ start: { x: 30, y: top - r * rh }, end: { x: left + 10 * cw, y: top - r * rh }, thickness: 0.4 });
    for (let c = 0; c <= 10; c++) page.drawLine({ start: { x: left + c * cw, y: top }, end: { x: left + c * cw, y: top - 35 * rh }, thickness: 0.4 });
  }
  writeFileSync(file, await doc.save());
}

// Kinds of page that doubled (issue 42): a form whose first rows recur near the top of each page (they were taken
// for a running head, which pushed the body down), and a dense ruled grid (a repeated header row made LibreOffice
// break the table with room left; the table ran past the body). Each PDF page stays one Word page, words in place.
test('word: a two-page filled-in form and a two-page timetable keep their two pages, their field values and cells in place', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quire-wordforms-'));
  try {
    const [form, grid] = [join(dir, 'form.pdf'), join(dir, 'timetable.pdf')];
    await formPdf(form);
    await timetablePdf(grid);
    // In place (before: 0.32 and 0.25 on 4 and 6 pages): the form's first rows lose some places (a label row and
    // the small print under it share one table row; a substitute font runs them longer).
    for (const [pdf, floor] of [
      [form, 0.7],
      [grid, 0.9],
    ] as const) {
      const { pages, f, text } = await roundTrip(pdf);
      assert.equal(pages, [2, 2], pdf);
      assert.ok(f.found / f.words >= 0.99, `${pdf}: recall ${f.found}/${f.words}`);
      assert.ok(f.inPlace / f.words >= floor, `${pdf}: in place ${f.inPlace}/${f.words}`);
      // The fields' values (drawn by their appearances, not the page's content) are text of the Word pages.
      if (pdf === form) assert.ok(text.includes('4936.00') && text.includes('49360.00'), text.slice(0, 400));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A long document is written a few pages at a time (docx-package.ts: each batch's sections, headers, footers,
// pictures, links and lists moved into one package): the register's 15 pages are two batches, their second
// batch's running heads, pictures and page numbering parts of their own. LibreOffice reads the package whole.
test('word: a document written in batches opens whole: the register round-trips to its 15 pages, its words in place', async () => {
  const pdf = corpus('pdf/federal-register-15-pages.pdf');
  const { pages, f, text } = await roundTrip(pdf);
  assert.equal(pages, [15, 15]);
  assert.ok(f.found / f.words >= 0.99, `recall ${f.found}/${f.words}`);
  assert.ok(f.inPlace / f.words >= 0.9, `in place ${f.inPlace}/${f.words}`);
  // The last page's own words (after the last batch boundary) are there.
  const last = tool('pdftotext', ['-f', '15', '-l', '15', pdf, '-'])
    .split(/\s+/)
    .filter((w) => /^[A-Za-z]{6,}$/.test(w));
  assert.ok(last.length > 50 && last.filter((w) => text.includes(w)).length / last.length > 0.98);
});

// pdf.js's test documents (../shared/corpus/word-fidelity-pdfjs), a fixed subset of kinds the pdf2docx samples lack
// (the whole folder runs in the office-fidelity benchmark): pages drawing many small blocks (calgray, 3 pages, and
// canvas, 2, which became 6 and 3), a fillable form, a broker's report, a six-page article, a landscape slide
// export. Each keeps exactly its page count.
test('word: pdf.js samples of other kinds keep exactly their page count', async () => {
  const names = ['calgray', 'canvas', 'bug1883609', 'bug1997343', 'issue19971', 'knockout_groups_test', 'chrome-text-selection-markedContent'];
  const changed: string[] = [];
  for (const name of names) {
    const { pages } = await roundTrip(corpus(`word-fidelity-pdfjs/${name}.pdf`));
    if (pages[0] !== pages[1]) changed.push(`${name}: ${pages[0]} -> ${pages[1]}`);
  }
  assert.equal(changed, []);
});

// pdf2docx's test samples (../shared/corpus/word-fidelity): documents nobody here chose, all held to the same
// floors. Per file: converted (no 500, no refusal), exactly the PDF's page count (qpdf on both), and at least 0.6
// of its words in place (a page read in the wrong order or text flowing onto pages that do not exist drops a file
// below it). Over the folder, word-weighted: 0.85 of the words in place, 0.95 of those at their size.
test('word: every pdf2docx sample keeps exactly its pages and 0.6 of its words in place; the folder keeps 0.85 of its words in place', async () => {
  const dir = corpus('word-fidelity');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.pdf'))
    .sort();
  assert.ok(names.length >= 30, `${names.length} samples`);
  const problems: string[] = [];
  let words = 0;
  let inPlace = 0;
  let sized = 0;
  for (const name of names) {
    const pdf = join(dir, name);
    const res = await t.form('/word', { file: { file: pdf } });
    const body = await res.json();
    if (res.status !== 200) {
      problems.push(`${name}: ${res.status} ${JSON.stringify(body)}`);
      continue;
    }
    const rendered = await officeToPdf(await t.download(body.outputUrl), 'docx');
    try {
      const [original, back] = [await stextWords(pdf), await stextWords(rendered)];
      const f = compare(original, back);
      if (pagesOf(pdf) !== pagesOf(rendered)) problems.push(`${name}: ${pagesOf(pdf)} pages became ${pagesOf(rendered)}`);
      if (f.words && f.inPlace / f.words < 0.6) problems.push(`${name}: ${f.inPlace} of ${f.words} words in place`);
      words += f.words;
      inPlace += f.inPlace;
      sized += f.sized;
    } finally {
      rmSync(dirname(rendered), { recursive: true, force: true });
    }
  }
  assert.equal(problems, []);
  assert.ok(inPlace / words >= 0.85, `in place ${inPlace}/${words}`);
  assert.ok(sized / inPlace >= 0.95, `at their size ${sized}/${inPlace}`);
});

test.run();
