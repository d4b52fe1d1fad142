import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlignmentType, Document, Footer, Header, HeadingLevel, Packer, PageNumber, Paragraph, Table, TableCell, TableRow, TextRun, WidthType } from 'docx';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { convertToPdf, corpus, expectOk, pdfWords, startApp, type TestApp, tool } from './helpers.js';

/**
 * /markdown's structure on documents whose structure is known without our reader: a .docx written here with the
 * docx library and converted by LibreOffice, a right-to-left page printed by Chromium, and a pdfLaTeX file of the
 * corpus whose outline mutool reads. Poppler (pdftotext) and mutool are the independent readings of the PDFs.
 */

const test = suite('markdown');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-markdown-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const markdown = async (pdf: string, fields: Record<string, string> = {}) =>
  ((await expectOk(await t.form('/markdown', { file: { file: pdf }, ...fields }))) as { markdown: string }).markdown;

async function report(): Promise<string> {
  const p = (text: string, opts: Record<string, unknown> = {}, run: Record<string, unknown> = {}) =>
    new Paragraph({ spacing: { after: 120 }, children: [new TextRun({ text, font: 'Liberation Serif', size: 22, ...run })], ...opts });
  const h = (level: 0 | 1 | 2, text: string) =>
    p(
      text,
      { heading: [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3][level], spacing: { before: 240, after: 120 } },
      { bold: true, size: [34, 28, 24][level] },
    );
  const body = 'The utility supplies drinking water to about forty thousand homes in the valley, most of them through mains laid decades ago.';
  const cell = (text: string, bold = false) => new TableCell({ children: [p(text, { spacing: { after: 0 } }, { bold })] });
  const doc = new Document({
    sections: [
      {
        footers: {
          default: new Footer({
            children: [
              new Paragraph({
                alignment: AlignmentType.CENTER,
                children: [
                  new TextRun('Page '),
                  new TextRun({ children: [PageNumber.CURRENT] }),
                  new TextRun(' of '),
                  new TextRun({ children: [PageNumber.TOTAL_PAGES] }),
                ],
              }),
            ],
          }),
        },
        children: [
          h(0, '1 Introduction'),
          p(body),
          h(1, '1.1 Scope'),
          p(body),
          h(2, '1.1.1 Sources'),
          p(body),
          p('Before leaving the depot:'),
          p('Check the tablet is charged', { bullet: { level: 0 } }),
          p('Load the work orders', { bullet: { level: 0 } }),
          p('Urgent repairs first', { bullet: { level: 1 } }),
          p('Then planned replacements', { bullet: { level: 1 } }),
          p('Collect the safety equipment', { bullet: { level: 0 } }),
          h(0, '2 Network renewal'),
          h(1, '2.1 Mains replaced'),
          new Table({
            width: { size: 100, type: WidthType.PERCENTAGE },
            rows: [
              new TableRow({ tableHeader: true, children: [cell('District', true), cell('Kilometres', true), cell('Cost', true)] }),
              new TableRow({ children: [cell('North'), cell('4.2'), cell('1.9 million')] }),
              new TableRow({ children: [cell('Centre'), cell('3.1'), cell('1.4 million')] }),
              new TableRow({ children: [cell('South'), cell('3.7'), cell('1.6 million')] }),
            ],
          }),
          h(1, '2.2 Leak detection'),
          p('The sensor log is filtered with this command:'),
          p('sensors --since 2025-01-01 --zone north', { spacing: { after: 0 } }, { font: 'Liberation Mono', size: 20 }),
          p('grep LEAK sensor.log | sort -k2', {}, { font: 'Liberation Mono', size: 20 }),
          p(body),
        ],
      },
    ],
  });
  const path = join(work, 'report.docx');
  writeFileSync(path, await Packer.toBuffer(doc));
  return (await convertToPdf(t, { file: { file: path } })).path;
}

test('a report made by LibreOffice: heading levels, nested list, table with its header row, code, page number left out', async () => {
  const pdf = await report();
  const poppler = tool('pdftotext', ['-layout', pdf, '-']);
  // What the PDF holds, as Poppler reads it: the numbered heads, the table's rows, and the footer's page number.
  assert.match(poppler, /2\.2 Leak detection/);
  assert.match(poppler, /South\s+3\.7\s+1\.6 million/);
  assert.match(poppler, /Page 1 of 1/);
  assert.is(tool('mutool', ['show', pdf, 'outline']).trim(), '', 'no outline: the levels come from numbering and size');
  const md = await markdown(pdf);
  assert.match(md, /^# 1 Introduction$/m, md);
  assert.match(md, /^## 1\.1 Scope$/m, md);
  assert.match(md, /^### 1\.1\.1 Sources$/m, md);
  assert.match(md, /^# 2 Network renewal$/m, md);
  assert.match(
    md,
    /^- Check the tablet is charged\n- Load the work orders\n {2}- Urgent repairs first\n {2}- Then planned replacements\n- Collect the safety equipment$/m,
  );
  assert.match(md, /^\| District \| Kilometres \| Cost \|\n\| --- \| --- \| --- \|\n\| North \| 4\.2 \| 1\.9 million \|$/m, md);
  // The numbered head right below the table is a heading, not the table's last row.
  assert.match(md, /\| South \| 3\.7 \| 1\.6 million \|\n\n## 2\.2 Leak detection$/m, md);
  assert.match(md, /^```\nsensors --since 2025-01-01 --zone north\ngrep LEAK sensor\.log \| sort -k2\n```$/m, md);
  assert.not.match(md, /Page 1 of 1/);
  assert.match(await markdown(pdf, { page_break_comments: 'on' }), /^<!--Page 1-->\n\n<!--Furniture: Page 1 of 1-->$/m);
});

test('heading levels from the outline: the corpus pdfLaTeX file, its entries as mutool reads them', async () => {
  const pdf = corpus('pdf/outline-bookmarks-links.pdf');
  const entries = [...tool('mutool', ['show', pdf, 'outline']).matchAll(/^[|+-](\t+)"([^"]+)"/gm)].map((m) => ({ level: m[1].length, title: m[2] }));
  assert.is(entries.length, 9);
  const md = await markdown(pdf);
  // The rows carry a section number the outline's titles do not ("1 Foo" for "Foo"); their size alone ranked them 2.
  const heads = [...md.matchAll(/^(#+) \d+ (Foo|Bar|Baz)$/gm)].map((m) => ({ level: m[1].length, title: m[2] }));
  assert.equal(heads, entries);
});

test('a heading after a table that runs across one of its column gaps ends the table (Chromium)', async () => {
  const rows = [
    ['District', 'Pipes', 'Meters', 'Pumps', 'Valves'],
    ['North', '42', '310', '3', '18'],
    ['Centre', '31', '280', '2', '11'],
    ['South', '37', '190', '4', '9'],
  ];
  const cells = (r: string[], tag: string) => `<tr>${r.map((c) => `<${tag} style="width:90pt;text-align:left;padding:2pt">${c}</${tag}>`).join('')}</tr>`;
  const page = join(work, 'table-heading.html');
  writeFileSync(
    page,
    `<!doctype html><html><head><meta charset="utf-8"><style>body{font:12pt "DejaVu Sans"} table{border-collapse:collapse}</style></head><body><h1>Network report</h1><p>The figures below give the state of the network at the end of the year, district by district, as counted by the field teams.</p><table>${cells(rows[0], 'th')}${rows
      .slice(1)
      .map((r) => cells(r, 'td'))
      .join(
        '',
      )}</table><h2>Next steps</h2><p>Replace the oldest mains first, and fit meters wherever a district still has none, so that losses can be measured.</p></body></html>`,
  );
  const pdf = join(work, 'table-heading.pdf');
  execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page],
    { stdio: 'ignore', timeout: 120_000 },
  );
  // Poppler's boxes: the heading runs across the gap between the first two columns, and stops before the third.
  const words = pdfWords(pdf);
  const box = (w: string) => words.find((o) => o.text === w)!;
  const firstColumnEnd = Math.max(...['District', 'North', 'Centre', 'South'].map((w) => box(w).xMax));
  assert.ok(
    box('Next').xMin < firstColumnEnd && box('steps').xMax > box('Pipes').xMin && box('steps').xMax < box('Meters').xMin,
    JSON.stringify(words.slice(0, 40)),
  );
  const md = await markdown(pdf);
  const table = rows.map((r) => `| ${r.join(' | ')} |`);
  assert.ok(md.includes([table[0], `|${' --- |'.repeat(5)}`, ...table.slice(1)].join('\n')), md);
  assert.match(md, /\| South \| 37 \| 190 \| 4 \| 9 \|\n\n## Next steps\n/, md);
});

test('the running head of a one-page and of a two-page document (LibreOffice) is left out of the flow', async () => {
  const body = 'The treatment plant ran without interruption for the whole year, and the new meters were read every month by the field teams.';
  for (const pages of [1, 2]) {
    const doc = new Document({
      sections: [
        {
          headers: {
            default: new Header({
              children: [new Paragraph({ alignment: AlignmentType.CENTER, children: [new TextRun({ text: 'Valley Water Bulletin', size: 20 })] })],
            }),
          },
          children: Array.from(
            { length: pages === 1 ? 4 : 40 },
            (_, i) => new Paragraph({ spacing: { after: 120 }, children: [new TextRun({ text: `${i + 1}. ${body}`, size: 24 })] }),
          ),
        },
      ],
    });
    const source = join(work, `head-${pages}.docx`);
    writeFileSync(source, await Packer.toBuffer(doc));
    const { path } = await convertToPdf(t, { file: { file: source } });
    // In the PDF, as Poppler reads it: the head at the top of each page.
    assert.is(Number(/Pages:\s+(\d+)/.exec(tool('pdfinfo', [path]))![1]), pages);
    for (let page = 1; page <= pages; page++) assert.match(tool('pdftotext', ['-f', String(page), '-l', String(page), path, '-']), /^Valley Water Bulletin/);
    const md = await markdown(path);
    assert.not.match(md, /Valley Water Bulletin/, md);
    assert.match(md, /^1\. The treatment plant ran without interruption/m, 'the body stays');
    const commented = await markdown(path, { page_break_comments: 'on' });
    assert.match(commented, /^<!--Page 1-->\n\n<!--Furniture: Valley Water Bulletin-->$/m);
  }
});

test("Chromium's lists, whose bullets are drawn shapes and no character, are lists (left to right, nested, and right to left)", async () => {
  const page = join(work, 'lists.html');
  writeFileSync(
    page,
    `<!doctype html><html><head><meta charset="utf-8"><style>body{font:12pt "DejaVu Sans"}</style></head><body><p>Before leaving the depot:</p><ul><li>Check the tablet is charged</li><li>Load the work orders<ul><li>Urgent repairs first</li><li>Then planned replacements</li></ul></li><li>Collect the safety equipment</li></ul><p>That is all for the morning round.</p><div dir="rtl" lang="he"><ul><li>מעבר לענן</li><li>ממשק חדש</li></ul></div></body></html>`,
  );
  const pdf = join(work, 'lists.pdf');
  execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page],
    { stdio: 'ignore', timeout: 120_000 },
  );
  // Poppler reads no bullet character; MuPDF's trace draws a small shape left of each item.
  assert.not.match(tool('pdftotext', [pdf, '-']), /[•◦▪●○]/);
  assert.ok((tool('mutool', ['trace', pdf]).match(/<(fill|stroke)_path/g) ?? []).length >= 7, 'shapes drawn');
  const md = await markdown(pdf);
  assert.match(
    md,
    /^- Check the tablet is charged\n- Load the work orders\n {2}- Urgent repairs first\n {2}- Then planned replacements\n- Collect the safety equipment$/m,
    md,
  );
  assert.match(md, /^- מעבר לענן\n- ממשק חדש$/m, md);
  assert.match(md, /^That is all for the morning round\.$/m, 'a paragraph stays one');
});

const CHROMIUM = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'].find((p) => existsSync(p)) ?? 'chromium';
const RIGHT =
  'מטרת המסמך הזה היא לתאר את תוכנית העבודה של הצוות לשנה הקרובה. בשנה שעברה השלמנו שלושה פרויקטים גדולים ועמדנו ברוב היעדים. הלקוחות ביקשו ממשק פשוט יותר ותמיכה טובה יותר בטלפונים ניידים.';
const LEFT =
  'אנחנו מתכננים להעביר את השרתים לענן עד סוף הרבעון השני. כל עובד חדש יקבל הדרכה של שבוע לפני תחילת העבודה. ישיבת הצוות מתקיימת בכל יום ראשון בשעה עשר בבוקר.';

test('a right-to-left page in two columns is read from the right column', async () => {
  const page = join(work, 'columns.html');
  const paras = (s: string) => `<p>${s}</p>`.repeat(3);
  writeFileSync(
    page,
    `<!doctype html><html lang="he" dir="rtl"><head><meta charset="utf-8"><style>body{font:12pt "DejaVu Sans"} .c{column-count:2;column-gap:30pt} h2{break-before:column}</style></head><body><h1>עלון הצוות</h1><div class="c"><h2>המשרד החדש</h2>${paras(RIGHT)}<h2>עובדים חדשים</h2>${paras(LEFT)}</div></body></html>`,
  );
  const pdf = join(work, 'columns.pdf');
  execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page],
    {
      stdio: 'ignore',
      timeout: 120_000,
    },
  );
  // Poppler's boxes: the first section stands in the right half of the page, the second in the left.
  const words = pdfWords(pdf);
  // Poppler may give a right-to-left word's letters in either order.
  const x = (w: string) => words.find((o) => o.text === w || o.text === [...w].reverse().join(''))!.xMin;
  assert.ok(x('המשרד') > 306 && x('עובדים') < 306, `${x('המשרד')} / ${x('עובדים')}`);
  const md = await markdown(pdf);
  assert.match(md, /^# עלון הצוות$/m, md);
  assert.ok(md.indexOf('## המשרד החדש') > 0 && md.indexOf('## המשרד החדש') < md.indexOf('## עובדים חדשים'), md);
  assert.ok(md.includes(RIGHT) && md.includes(LEFT), 'the paragraphs whole, in logical order');
  assert.ok(md.indexOf(RIGHT) < md.indexOf('## עובדים חדשים'));
});

test.run();
