import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlignmentType, Document, LevelFormat, Packer, Paragraph, TextRun } from 'docx';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { convertToPdf, corpus, expectOk, pdfWords, startApp, type TestApp, tool } from './helpers.js';

/**
 * Right-to-left text read in logical order. The PDFs are made here by other programs than our reader: Chromium
 * (HTML) and LibreOffice (a .docx written with the docx library) both draw Arabic and Hebrew glyphs in visual
 * order, Chromium with Arabic presentation forms; WeasyPrint's corpus file maps one glyph to a whole word in
 * logical order. Poppler's pdftotext (logical order, bidi controls stripped) is the independent reading.
 */

const test = suite('rtl-text');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-rtl-'));

const ARABIC = ['تعلم البرمجة بلغة Python في 30 يوما مع أمثلة عملية.', 'هذا النص العربي يحتوي على رقم 2024 وكلمة English في الوسط.'];
const HEBREW = ['זהו טקסט בעברית עם המספר 42 והמילה Quire באמצע.', 'שלום עולם, זו שורה שנייה.'];

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const html = (lang: string, lines: string[]) =>
  `<!doctype html><html lang="${lang}" dir="rtl"><head><meta charset="utf-8"><style>body{font: 14pt "DejaVu Sans"}</style></head><body>${lines.map((l) => `<p>${l}</p>`).join('')}</body></html>`;

// Chromium's own print (not /pdf's, which scales a wide layout to the paper: see the note in the README).
function chromium(lang: string, lines: string[]): string {
  const page = join(work, `${lang}.html`);
  writeFileSync(page, html(lang, lines));
  const pdf = join(work, `${lang}-chromium.pdf`);
  execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page],
    {
      stdio: 'ignore',
      timeout: 120_000,
    },
  );
  return pdf;
}
const CHROMIUM = ['/usr/bin/chromium', '/usr/lib/chromium/chromium'].find((p) => existsSync(p)) ?? 'chromium';

async function docx(lines: string[]): Promise<string> {
  const doc = new Document({
    sections: [
      {
        children: lines.map(
          (l) => new Paragraph({ bidirectional: true, children: [new TextRun({ text: l, rightToLeft: true, font: 'DejaVu Sans', size: 28 })] }),
        ),
      },
    ],
  });
  const path = join(work, `rtl-${lines[0].length}.docx`);
  writeFileSync(path, await Packer.toBuffer(doc));
  return path;
}

// Poppler's reading, presentation forms as letters; it wraps runs in embedding controls and puts spaces inside
// them, so the comparison leaves out white space.
const bare = (s: string) => s.replace(/[\u202a-\u202e\u200e\u200f\s]/g, '').normalize('NFKC');
const poppler = (pdf: string) => bare(tool('pdftotext', [pdf, '-']));
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

async function extracted(pdf: string) {
  const body = await expectOk(await t.form('/extracted-text', { file: { file: pdf }, word_coordinates: 'on' }));
  return body as { fullText: string; words: { text: string; coordinates: { topLeft: { x: number } } }[] };
}

for (const [label, lines, make] of [
  ['Arabic through Chromium', ARABIC, async () => chromium('ar', ARABIC)],
  ['Hebrew through Chromium', HEBREW, async () => chromium('he', HEBREW)],
  ['Arabic through LibreOffice', ARABIC, async () => (await convertToPdf(t, { file: { file: await docx(ARABIC) } })).path],
  ['Hebrew through LibreOffice', HEBREW, async () => (await convertToPdf(t, { file: { file: await docx(HEBREW) } })).path],
] as const) {
  test(`${label}: text, Markdown and words in reading order, as Poppler reads them`, async () => {
    const pdf = await make();
    const { fullText, words } = await extracted(pdf);
    for (const line of lines) {
      assert.ok(squash(fullText).includes(line), `${JSON.stringify(line)} in ${JSON.stringify(fullText)}`);
      assert.ok(poppler(pdf).includes(bare(line)), `Poppler reads ${JSON.stringify(line)}`);
    }
    const { markdown } = (await expectOk(await t.form('/markdown', { file: { file: pdf } }))) as { markdown: string };
    for (const line of lines) assert.ok(squash(markdown).includes(line), `${JSON.stringify(line)} in the Markdown`);
    // Words keep their place: in a right-to-left line the first word read is the rightmost.
    const first = lines[0].split(' ');
    const at = (w: string) => words.find((x) => x.text === w)!.coordinates.topLeft.x;
    assert.ok(at(first[0]) > at(first[1]), `${first[0]} right of ${first[1]}`);
  });
}

// Sentences with lam-alef ligatures (الأسر, الطلاب, الاتصال, الأولى), set justified over several lines.
const JUSTIFIED = [
  'تهدف هذه الدراسة إلى قياس أثر التعليم الرقمي على طلاب المدارس الثانوية.',
  'يجب أن تشارك الأسر في متابعة تقدم أبنائها عبر التطبيق.',
  'واجهت بعض المدارس صعوبات في الاتصال بالإنترنت خاصة في المناطق الريفية.',
  'أظهرت النتائج أن الطلاب الذين استخدموا المنصة بانتظام حققوا درجات أعلى في الرياضيات.',
  'نوصي بتوفير أجهزة لوحية لكل طالب في الصفوف الأولى.',
];

test('a justified Arabic paragraph from LibreOffice (kashida strokes, lam-alef ligatures) reads in logical order', async () => {
  const font = 'Noto Naskh Arabic';
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({
            bidirectional: true,
            alignment: AlignmentType.BOTH,
            children: [
              new TextRun({ text: JUSTIFIED.join(' '), rightToLeft: true, font: { ascii: font, hAnsi: font, cs: font }, size: 24, sizeComplexScript: 24 }),
            ],
          }),
        ],
      },
    ],
  });
  const source = join(work, 'justified.docx');
  writeFileSync(source, await Packer.toBuffer(doc));
  const { path } = await convertToPdf(t, { file: { file: source } });
  // LibreOffice stretches the lines with unmapped kashida glyphs, which Poppler reads as breaks inside words: the
  // case this test is about (Poppler splits more words than the text has).
  const popplerWords = tool('pdftotext', [path, '-']).split(/\s+/).filter(Boolean);
  assert.ok(popplerWords.length > JUSTIFIED.join(' ').split(' ').length, 'the lines are stretched inside words');
  const { fullText } = await extracted(path);
  const { markdown } = (await expectOk(await t.form('/markdown', { file: { file: path } }))) as { markdown: string };
  for (const sentence of JUSTIFIED) {
    assert.ok(squash(fullText).includes(sentence), `${JSON.stringify(sentence)} in ${JSON.stringify(fullText)}`);
    assert.ok(squash(markdown).includes(sentence), `${JSON.stringify(sentence)} in the Markdown`);
  }
});

test("Chromium's print header over a right-to-left page: the date reads as printed, and it and the title are left out of the Markdown", async () => {
  const page = join(work, 'stamped.html');
  writeFileSync(
    page,
    `<!doctype html><html lang="he" dir="rtl"><head><meta charset="utf-8"><title>עלון הצוות</title><style>body{font: 14pt "DejaVu Sans"}</style></head><body><h1>עלון הצוות לחודש מרץ</h1>${HEBREW.map((l) => `<p>${l}</p>`).join('')}</body></html>`,
  );
  const pdf = join(work, 'stamped.pdf');
  execFileSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page], {
    stdio: 'ignore',
    timeout: 120_000,
  });
  // Poppler reads the stamp: the date and time at the top left, the page's title beside it.
  const stamp = /\d{1,2}\/\d{1,2}\/\d{2,4}, \d{1,2}:\d{2}(?: [AP]M)?/;
  const date = stamp.exec(tool('pdftotext', [pdf, '-']))?.[0];
  assert.ok(date, 'Poppler reads the date');
  const { fullText } = await extracted(pdf);
  assert.ok(fullText.includes(date), `${date} in ${JSON.stringify(fullText)}`);
  const { markdown } = (await expectOk(await t.form('/markdown', { file: { file: pdf } }))) as { markdown: string };
  assert.match(markdown, /^# עלון הצוות לחודש מרץ$/m, markdown);
  assert.not.ok(markdown.includes(date), markdown);
  assert.not.match(markdown, /^עלון הצוות$/m, markdown);
  for (const line of HEBREW) assert.ok(squash(markdown).includes(line), line);
});

test('a numbered right-to-left list from LibreOffice (each number at the right end of its row) is a Markdown list', async () => {
  const items = ['מעבר לענן עד סוף הרבעון השני', 'ממשק חדש לטלפונים ניידים', 'הדרכה לכל עובד חדש'];
  const run = (text: string) => new TextRun({ text, rightToLeft: true, font: 'DejaVu Sans', size: 24 });
  const doc = new Document({
    numbering: {
      config: [
        {
          reference: 'numbers',
          levels: [{ level: 0, format: LevelFormat.DECIMAL, text: '%1.', style: { paragraph: { indent: { left: 720, hanging: 360 } } } }],
        },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph({ bidirectional: true, children: [run('היעדים לשנה הקרובה הם:')] }),
          ...items.map((text) => new Paragraph({ bidirectional: true, numbering: { reference: 'numbers', level: 0 }, children: [run(text)] })),
          new Paragraph({ bidirectional: true, children: [run('נשמח לקבל הערות והצעות מכל חברי הצוות.')] }),
        ],
      },
    ],
  });
  const source = join(work, 'numbered.docx');
  writeFileSync(source, await Packer.toBuffer(doc));
  const { path } = await convertToPdf(t, { file: { file: source } });
  // Poppler's boxes: each number stands right of its text, over an em away (Poppler reads its dot apart).
  const words = pdfWords(path);
  for (const n of ['1', '2', '3']) {
    const number = words.find((w) => w.text === n);
    assert.ok(number, `Poppler reads ${n}`);
    const row = words.filter((w) => /\p{L}/u.test(w.text) && Math.abs(w.yMin - number!.yMin) < 2);
    assert.ok(row.length && Math.max(...row.map((w) => w.xMax)) < number!.xMin - 12, `${n} right of its text`);
  }
  const { markdown } = (await expectOk(await t.form('/markdown', { file: { file: path } }))) as { markdown: string };
  assert.ok(markdown.includes(items.map((text, i) => `${i + 1}. ${text}`).join('\n')), markdown);
});

test('a right-to-left table: each cell its own words, a pipe table in reading order (rightmost column first)', async () => {
  const rows = [
    ['רבעון', 'תקציב', 'אחראי'],
    ['ראשון', '600', 'דנה'],
    ['שני', '750', 'יוסי'],
  ];
  const table = `<table style="border-collapse:collapse">${rows.map((r) => `<tr>${r.map((c) => `<td style="padding:4pt 24pt">${c}</td>`).join('')}</tr>`).join('')}</table>`;
  const page = join(work, 'table.html');
  writeFileSync(
    page,
    `<!doctype html><html lang="he" dir="rtl"><head><meta charset="utf-8"><style>body{font: 14pt "DejaVu Sans"}</style></head><body>${table}</body></html>`,
  );
  const pdf = join(work, 'table.pdf');
  execFileSync(
    CHROMIUM,
    ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', `--user-data-dir=${join(work, 'profile')}`, `--print-to-pdf=${pdf}`, page],
    {
      stdio: 'ignore',
      timeout: 120_000,
    },
  );
  // Poppler sees the cells apart: the independent reading of what the page shows.
  const popplerWords = tool('pdftotext', [pdf, '-'])
    .replace(/[\u202a-\u202e\u200e\u200f]/g, '')
    .split(/\s+/);
  for (const cell of rows.flat()) assert.ok(popplerWords.includes(cell), `Poppler reads ${cell}`);
  const { words } = await extracted(pdf);
  for (const cell of rows.flat())
    assert.ok(
      words.some((w) => w.text === cell),
      `${cell} is a word of its own`,
    );
  const { markdown } = (await expectOk(await t.form('/markdown', { file: { file: pdf } }))) as { markdown: string };
  const tableRows = markdown.split('\n').filter((l) => l.startsWith('|') && !/^\|[\s|:-]+\|$/.test(l));
  assert.equal(
    tableRows.map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    ),
    rows,
    markdown,
  );
});

test('/pdf of a right-to-left page at every web_layout: every line on the paper, set against its right margin', async () => {
  for (const web_layout of ['desktop', 'tablet', 'mobile']) {
    const { path } = await convertToPdf(t, { file: { bytes: Buffer.from(html('he', HEBREW)), name: 'he.html' }, web_layout });
    for (const line of HEBREW) assert.ok(poppler(path).includes(bare(line)), `${web_layout}: ${JSON.stringify(line)} printed whole`);
    const words = pdfWords(path);
    // Chromium's own scaling put the text off the paper's left edge (half of each line lost at desktop).
    assert.ok(Math.min(...words.map((w) => w.xMin)) >= 0, `${web_layout}: nothing left of the paper`);
    assert.ok(Math.max(...words.map((w) => w.xMax)) > 612 / 2 + 150, `${web_layout}: against the right margin`);
  }
});

test('a glyph that maps to a whole word in reading order (WeasyPrint) is left as it is', async () => {
  const { fullText } = await extracted(corpus('pdf/rtl-arabic-weasyprint.pdf'));
  assert.match(fullText, /حَبيبي habibi/);
  assert.not.match(fullText, /يبيبحَ/);
});

test.run();
