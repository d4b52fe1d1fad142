// /markdown against documents whose structure is known without our reader (issue 40). Each document is written
// first as structured data (headings with levels, paragraphs, lists, tables, code), then turned into PDF by other
// programs: (a) an HTML page printed by Chromium (its own running head and foot: date, title, file URL, "1/3"),
// (b) a .docx made with the `docx` package, converted by LibreOffice (headers and footers with page numbers). The
// expected Markdown is written from the same data. Printed per file and overall: text similarity (order-aware word
// edit distance), heading F1 (text alone, and text with level), table-cell word recall, furniture lines left in.
// The PDFs are cached in .cache/bench-markdown (made again when the source changes).
// Run: npm run bench -- markdown   (SHOW=name prints that file's Markdown)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  AlignmentType,
  Document,
  Footer,
  Header,
  HeadingLevel,
  LevelFormat,
  Packer,
  PageNumber,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
} from 'docx';
import { readMarkdown } from '../../app/document/index.js';

const CACHE = resolve(import.meta.dirname, '../../.cache/bench-markdown');

// ---------------------------------------------------------------- sources

interface Item {
  text: string;
  children?: Item[];
  ordered?: boolean;
}
type Block =
  | { h: number; text: string }
  | { p: string }
  | { list: Item[]; ordered?: boolean }
  | { table: string[][]; caption?: string /** [row, col, span]: a cell spanning columns. */; merged?: [number, number, number] }
  | { code: string[] };

interface Source {
  name: string;
  lang: string;
  rtl?: boolean;
  columns?: boolean;
  /** The renderers it goes through (both when not said). */
  kinds?: ('html' | 'docx')[];
  /** The running head (docx header; the HTML page's title, printed by Chromium at the top of each page). */
  head: string;
  blocks: Block[];
}

const EN = [
  'The utility supplies drinking water to about forty thousand homes in the valley.',
  'Most of the network was built between 1960 and 1985 and is now reaching the end of its service life.',
  'Leaks in the older cast iron mains account for a large share of the water lost each year.',
  'This report describes the work carried out during the year and the plans for the next five years.',
  'We replaced eleven kilometres of mains and installed new meters in the northern district.',
  'The treatment plant ran without interruption for the whole year.',
  'Customer complaints about pressure fell by a third after the new pumping station opened.',
  'Energy is the largest operating cost after staff, and prices rose sharply in the spring.',
  'A pilot project tested acoustic sensors that listen for leaks along the pipes at night.',
  'The sensors found twenty leaks that would otherwise have gone unnoticed for months.',
  'Water quality met every legal limit in all of the samples taken at the customer tap.',
  'Rainfall was below average for the third year in a row, so the reservoirs started the summer half empty.',
  'The board approved a new tariff that rewards households which use less water.',
  'Investment will focus on the areas where pipe bursts have been most frequent.',
  'We expect the renewal programme to cut water losses by a quarter within five years.',
  'Staff training covered safety in confined spaces and the new asset management system.',
  'The laboratory was accredited again after an external audit in October.',
  'Two new boreholes were drilled to make the supply more resilient during dry summers.',
  'Bills were sent electronically to more than half of all customers for the first time.',
  'The following sections give the figures for each part of the network.',
  'Readers who need the raw data can request the annual spreadsheet from the planning office.',
  'A public meeting on the tariff was held in each of the four towns served by the utility.',
  'Maintenance crews now receive their work orders on tablets instead of paper sheets.',
  'The cost of chemicals for treatment increased less than expected because of a long term contract.',
];
const AR = [
  'تهدف هذه الدراسة إلى قياس أثر التعليم الرقمي على طلاب المدارس الثانوية.',
  'جمعنا البيانات من اثنتي عشرة مدرسة في ثلاث مدن مختلفة خلال العام الدراسي.',
  'أظهرت النتائج أن الطلاب الذين استخدموا المنصة بانتظام حققوا درجات أعلى في الرياضيات.',
  'لم نلاحظ فرقا كبيرا في مادة اللغة العربية بين المجموعتين.',
  'يرى المعلمون أن التدريب المستمر ضروري لنجاح أي برنامج رقمي.',
  'واجهت بعض المدارس صعوبات في الاتصال بالإنترنت خاصة في المناطق الريفية.',
  'نوصي بتوفير أجهزة لوحية لكل طالب في الصفوف الأولى.',
  'يجب أن تشارك الأسر في متابعة تقدم أبنائها عبر التطبيق.',
  'تبلغ تكلفة البرنامج في السنة الأولى نحو مليوني ريال.',
  'سنعرض في الفصل التالي تفاصيل المنهجية المستخدمة في التحليل.',
  'شارك في الاستبيان أكثر من ألف وخمسمائة طالب ومعلم.',
  'تشير الأرقام إلى تحسن واضح في نسب الحضور بعد تطبيق البرنامج.',
];
const HE = [
  'מטרת המסמך הזה היא לתאר את תוכנית העבודה של הצוות לשנה הקרובה.',
  'בשנה שעברה השלמנו שלושה פרויקטים גדולים ועמדנו ברוב היעדים.',
  'הלקוחות ביקשו ממשק פשוט יותר ותמיכה טובה יותר בטלפונים ניידים.',
  'אנחנו מתכננים להעביר את השרתים לענן עד סוף הרבעון השני.',
  'כל עובד חדש יקבל הדרכה של שבוע לפני תחילת העבודה.',
  'התקציב הכולל לשנה הוא שניים וחצי מיליון שקלים.',
  'ישיבת הצוות מתקיימת בכל יום ראשון בשעה עשר בבוקר.',
  'חשוב לנו לשמור על איכות הקוד ולכתוב בדיקות לכל שינוי.',
  'המשרד בתל אביב ייפתח מחדש אחרי השיפוץ בחודש מרץ.',
  'נשמח לקבל הערות והצעות מכל חברי הצוות.',
  'הדוח המלא יפורסם באתר החברה בסוף החודש.',
  'שיתוף הפעולה עם האוניברסיטה נמשך גם השנה בהצלחה.',
];
/** A paragraph of `n` sentences of the pool, starting at `k` (deterministic). */
const para = (pool: string[], k: number, n = 4) => ({ p: Array.from({ length: n }, (_, i) => pool[(k * 5 + i * 7) % pool.length]).join(' ') });

const SOURCES: Source[] = [
  {
    name: 'report',
    lang: 'en',
    head: 'Valley Water Annual Report 2025',
    blocks: [
      { h: 1, text: 'Annual Report of the Valley Water Utility' },
      para(EN, 0),
      { h: 1, text: '1 Introduction' },
      para(EN, 1, 6),
      para(EN, 2, 5),
      { h: 2, text: '1.1 Scope of this report' },
      para(EN, 3, 6),
      { h: 2, text: '1.2 Sources of data' },
      para(EN, 4, 5),
      para(EN, 5, 6),
      { h: 1, text: '2 Network renewal' },
      para(EN, 6, 6),
      { h: 2, text: '2.1 Mains replaced' },
      para(EN, 7, 5),
      {
        table: [
          ['District', 'Kilometres', 'Cost'],
          ['North', '4.2', '1.9 million'],
          ['Centre', '3.1', '1.4 million'],
          ['South', '3.7', '1.6 million'],
        ],
        caption: 'Table 1. Mains replaced by district',
      },
      { h: 2, text: '2.2 Leak detection' },
      para(EN, 8, 6),
      { h: 3, text: '2.2.1 Acoustic sensors' },
      para(EN, 9, 6),
      para(EN, 10, 5),
      { h: 1, text: '3 Outlook' },
      para(EN, 11, 6),
      para(EN, 12, 6),
      para(EN, 13, 6),
    ],
  },
  {
    name: 'columns',
    lang: 'en',
    columns: true,
    head: 'Valley Water Newsletter',
    blocks: [
      { h: 1, text: 'News from the Valley Water Utility' },
      { h: 2, text: 'New pumping station' },
      para(EN, 14, 5),
      para(EN, 15, 4),
      { h: 2, text: 'Listening for leaks' },
      para(EN, 16, 5),
      para(EN, 17, 4),
      { h: 2, text: 'A fairer tariff' },
      para(EN, 18, 5),
      para(EN, 19, 4),
      { h: 2, text: 'Dry summers ahead' },
      para(EN, 20, 5),
    ],
  },
  {
    name: 'tables',
    lang: 'en',
    head: 'Valley Water Figures 2025',
    blocks: [
      { h: 1, text: 'Figures for 2025' },
      para(EN, 21, 3),
      {
        table: [
          ['Month', 'Rainfall mm', 'Demand ML', 'Losses ML'],
          ['January', '82', '410', '61'],
          ['February', '64', '395', '58'],
          ['March', '71', '402', '60'],
          ['April', '40', '430', '63'],
          ['May', '22', '470', '66'],
        ],
        caption: 'Table 2. Rainfall, demand and losses',
      },
      para(EN, 22, 3),
      { h: 2, text: '4.1 Costs' },
      {
        table: [
          ['Item', 'Budget', 'Actual'],
          ['Energy and chemicals', '2.4 million', ''],
          ['Staff', '3.8 million', '3.7 million'],
          ['Vehicles', '0.6 million', '0.5 million'],
        ],
        merged: [1, 1, 2],
      },
      { h: 2, text: '4.2 Customers' },
      para(EN, 23, 4),
    ],
  },
  {
    name: 'lists-code',
    lang: 'en',
    head: 'Valley Water Field Guide',
    blocks: [
      { h: 1, text: 'Field guide for maintenance crews' },
      para(EN, 2, 2),
      { h: 2, text: 'Before leaving the depot' },
      {
        list: [
          { text: 'Check the tablet is charged' },
          { text: 'Load the work orders for the day', children: [{ text: 'Urgent repairs first' }, { text: 'Then planned replacements' }] },
          { text: 'Collect the safety equipment' },
        ],
      },
      { h: 2, text: 'Closing a valve' },
      {
        list: [{ text: 'Tell the control room' }, { text: 'Turn the key slowly clockwise' }, { text: 'Record the number of turns' }],
        ordered: true,
      },
      para(EN, 6, 2),
      { h: 2, text: 'Reading the sensor log' },
      { p: 'The log can be filtered on the tablet with this command:' },
      { code: ['sensors --since 2025-01-01 --zone north', 'grep LEAK sensor.log | sort -k2'] },
      { p: 'The flow through a pipe is Q = v × A, where v is the speed of the water and A the area of the pipe.' },
    ],
  },
  {
    name: 'arabic',
    lang: 'ar',
    rtl: true,
    head: 'تقرير التعليم الرقمي 2025',
    blocks: [
      { h: 1, text: 'تقرير عن التعليم الرقمي في المدارس' },
      para(AR, 0, 4),
      { h: 2, text: 'المقدمة' },
      para(AR, 1, 6),
      para(AR, 2, 5),
      { h: 2, text: 'النتائج الرئيسية' },
      { list: [{ text: 'تحسن الأداء في الرياضيات' }, { text: 'زيادة نسب الحضور' }, { text: 'رضا المعلمين عن المنصة' }] },
      para(AR, 3, 5),
      {
        table: [
          ['المدينة', 'عدد المدارس', 'عدد الطلاب'],
          ['الرياض', '5', '640'],
          ['جدة', '4', '510'],
          ['الدمام', '3', '380'],
        ],
      },
      { h: 2, text: 'التوصيات' },
      para(AR, 4, 6),
      para(AR, 5, 6),
      para(AR, 6, 6),
      { h: 3, text: 'دور المعلمين' },
      para(AR, 7, 6),
      para(AR, 8, 6),
      { h: 3, text: 'دور الأسر' },
      para(AR, 9, 6),
      para(AR, 10, 6),
      { h: 2, text: 'الخاتمة' },
      para(AR, 11, 6),
      para(AR, 12, 6),
      para(AR, 13, 6),
    ],
  },
  {
    name: 'hebrew',
    lang: 'he',
    rtl: true,
    head: 'תוכנית עבודה 2026',
    blocks: [
      { h: 1, text: 'תוכנית העבודה של הצוות לשנת 2026' },
      para(HE, 0, 4),
      { h: 2, text: 'סיכום השנה שעברה' },
      para(HE, 1, 6),
      para(HE, 2, 5),
      { h: 2, text: 'יעדים לשנה הקרובה' },
      { list: [{ text: 'מעבר לענן עד סוף הרבעון השני' }, { text: 'ממשק חדש לטלפונים ניידים' }, { text: 'הדרכה לכל עובד חדש' }], ordered: true },
      para(HE, 3, 5),
      {
        table: [
          ['רבעון', 'תקציב', 'אחראי'],
          ['ראשון', '600', 'דנה'],
          ['שני', '700', 'יוסי'],
          ['שלישי', '550', 'מיכל'],
        ],
      },
      { h: 2, text: 'לוח זמנים' },
      para(HE, 4, 6),
      para(HE, 5, 6),
      para(HE, 6, 6),
      { h: 3, text: 'הרבעון הראשון' },
      para(HE, 7, 6),
      para(HE, 8, 6),
      { h: 3, text: 'הרבעון השני' },
      para(HE, 9, 6),
      para(HE, 10, 6),
      { h: 2, text: 'סיכום' },
      para(HE, 11, 6),
      para(HE, 12, 6),
      para(HE, 13, 6),
    ],
  },
  {
    name: 'hebrew-columns',
    lang: 'he',
    rtl: true,
    columns: true,
    kinds: ['html'],
    head: 'עלון הצוות',
    blocks: [
      { h: 1, text: 'עלון הצוות לחודש מרץ' },
      { h: 2, text: 'המשרד החדש' },
      para(HE, 14, 5),
      para(HE, 15, 4),
      { h: 2, text: 'עובדים חדשים' },
      para(HE, 16, 5),
      para(HE, 17, 4),
      { h: 2, text: 'אירועים' },
      para(HE, 18, 5),
      para(HE, 19, 5),
    ],
  },
];

// ---------------------------------------------------------------- expected Markdown

function expected(src: Source): string {
  const out: string[] = [];
  const items = (list: Item[], ordered: boolean, depth: number): string[] =>
    list.flatMap((it, i) => [`${'  '.repeat(depth)}${ordered ? `${i + 1}.` : '-'} ${it.text}`, ...items(it.children ?? [], !!it.ordered, depth + 1)]);
  for (const b of src.blocks) {
    if ('h' in b) out.push(`${'#'.repeat(b.h)} ${b.text}`);
    else if ('p' in b) out.push(b.p);
    else if ('list' in b) out.push(items(b.list, !!b.ordered, 0).join('\n'));
    else if ('code' in b) out.push(['```', ...b.code, '```'].join('\n'));
    else {
      const rows = b.table.map((r, i) => `| ${r.join(' | ')} |${i === 0 ? `\n|${' --- |'.repeat(r.length)}` : ''}`);
      if (b.caption) out.push(b.caption);
      out.push(rows.join('\n'));
    }
  }
  return `${out.join('\n\n')}\n`;
}

// ---------------------------------------------------------------- renderers

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function html(src: Source): string {
  const items = (list: Item[], ordered: boolean): string =>
    `<${ordered ? 'ol' : 'ul'}>${list.map((it) => `<li>${esc(it.text)}${it.children ? items(it.children, !!it.ordered) : ''}</li>`).join('')}</${ordered ? 'ol' : 'ul'}>`;
  const body = src.blocks
    .map((b) => {
      if ('h' in b) return `<h${b.h}>${esc(b.text)}</h${b.h}>`;
      if ('p' in b) return `<p>${esc(b.p)}</p>`;
      if ('list' in b) return items(b.list, !!b.ordered);
      if ('code' in b) return `<pre><code>${b.code.map(esc).join('\n')}</code></pre>`;
      const rows = b.table.map((r, i) => {
        const cells = r.flatMap((c, j) => {
          if (b.merged && b.merged[0] === i && j > b.merged[1] && j < b.merged[1] + b.merged[2]) return [];
          const span = b.merged && b.merged[0] === i && b.merged[1] === j ? ` colspan="${b.merged[2]}"` : '';
          return [i ? `<td${span}>${esc(c)}</td>` : `<th>${esc(c)}</th>`];
        });
        return `<tr>${cells.join('')}</tr>`;
      });
      return `<table>${b.caption ? `<caption>${esc(b.caption)}</caption>` : ''}${rows.join('')}</table>`;
    })
    .join('\n');
  const [title, ...rest] = body.split('\n');
  const font = src.lang === 'ar' ? '"Noto Naskh Arabic"' : src.lang === 'he' ? '"DejaVu Sans"' : '"Liberation Serif"';
  const css = `body{font:12pt ${font};margin:0} td,th{border:1px solid #444;padding:3pt 6pt} table{border-collapse:collapse;margin:8pt 0}
caption{caption-side:top;text-align:start;font-style:italic;padding-bottom:4pt} pre{font:10pt "Liberation Mono"}
.cols{column-count:2;column-gap:24pt} .cols h2{break-after:avoid}`;
  return `<!doctype html><html lang="${src.lang}"${src.rtl ? ' dir="rtl"' : ''}><head><meta charset="utf-8"><title>${esc(src.head)}</title><style>${css}</style></head>
<body>${src.columns ? `${title}<div class="cols">${rest.join('\n')}</div>` : body}</body></html>`;
}

async function docx(src: Source): Promise<Buffer> {
  const font = src.lang === 'ar' ? 'Noto Naskh Arabic' : src.lang === 'he' ? 'DejaVu Sans' : 'Liberation Serif';
  const run = (text: string, extra: Record<string, unknown> = {}) =>
    new TextRun({ text, rightToLeft: src.rtl, font: { ascii: font, hAnsi: font, cs: font }, size: 24, sizeComplexScript: 24, ...extra });
  const para = (text: string, opts: Record<string, unknown> = {}, runOpts: Record<string, unknown> = {}) =>
    new Paragraph({ bidirectional: src.rtl, spacing: { after: 120 }, children: [run(text, runOpts)], ...opts });
  const levels = [HeadingLevel.HEADING_1, HeadingLevel.HEADING_2, HeadingLevel.HEADING_3];
  const sizes = [36, 30, 26];
  const children: (Paragraph | Table)[] = [];
  const items = (list: Item[], ordered: boolean, depth: number) => {
    for (const it of list) {
      children.push(para(it.text, ordered ? { numbering: { reference: 'numbers', level: depth } } : { bullet: { level: depth } }));
      if (it.children) items(it.children, !!it.ordered, depth + 1);
    }
  };
  for (const b of src.blocks) {
    if ('h' in b)
      children.push(
        para(
          b.text,
          { heading: levels[b.h - 1], spacing: { before: 240, after: 120 } },
          { bold: true, size: sizes[b.h - 1], sizeComplexScript: sizes[b.h - 1] },
        ),
      );
    else if ('p' in b) children.push(para(b.p, { alignment: AlignmentType.BOTH }));
    else if ('list' in b) items(b.list, !!b.ordered, 0);
    else if ('code' in b) for (const l of b.code) children.push(para(l, { spacing: { after: 0 } }, { font: 'Liberation Mono', size: 20 }));
    else {
      if (b.caption) children.push(para(b.caption, {}, { italics: true }));
      children.push(
        new Table({
          visuallyRightToLeft: src.rtl,
          width: { size: 100, type: WidthType.PERCENTAGE },
          rows: b.table.map(
            (r, i) =>
              new TableRow({
                tableHeader: i === 0,
                children: r.flatMap((c, j) => {
                  if (b.merged && b.merged[0] === i && j > b.merged[1] && j < b.merged[1] + b.merged[2]) return [];
                  const columnSpan = b.merged && b.merged[0] === i && b.merged[1] === j ? b.merged[2] : undefined;
                  return [new TableCell({ columnSpan, children: [para(c, { spacing: { after: 0 } }, { bold: i === 0 })] })];
                }),
              }),
          ),
        }),
      );
      children.push(new Paragraph({ children: [] }));
    }
  }
  const [title, ...rest] = children;
  const header = new Header({ children: [para(src.head, { alignment: AlignmentType.CENTER }, { size: 18 })] });
  const pageNo = src.lang === 'en' ? ['Page ', ' of '] : src.lang === 'ar' ? ['صفحة ', ' من '] : ['עמוד ', ' מתוך '];
  const footer = new Footer({
    children: [
      new Paragraph({
        alignment: AlignmentType.CENTER,
        bidirectional: src.rtl,
        children: [
          run(pageNo[0], { size: 18 }),
          new TextRun({ children: [PageNumber.CURRENT], size: 18 }),
          run(pageNo[1], { size: 18 }),
          new TextRun({ children: [PageNumber.TOTAL_PAGES], size: 18 }),
        ],
      }),
    ],
  });
  const page = { margin: { top: 1200, bottom: 1200, left: 1200, right: 1200 } };
  const doc = new Document({
    numbering: {
      config: [
        {
          reference: 'numbers',
          levels: [0, 1, 2].map((level) => ({
            level,
            format: LevelFormat.DECIMAL,
            text: `%${level + 1}.`,
            style: { paragraph: { indent: { left: 720 * (level + 1), hanging: 360 } } },
          })),
        },
      ],
    },
    sections: src.columns
      ? [
          { properties: { page }, headers: { default: header }, footers: { default: footer }, children: [title] },
          {
            properties: { page, type: 'continuous' as never, column: { count: 2, space: 480 } },
            headers: { default: header },
            footers: { default: footer },
            children: rest,
          },
        ]
      : [{ properties: { page }, headers: { default: header }, footers: { default: footer }, children }],
  });
  return Packer.toBuffer(doc);
}

function chromiumPdf(htmlPath: string, pdf: string) {
  // Chromium's own header and footer are kept on: the date and title at the top, the file URL and "n/N" at the foot.
  // Its outline (bookmarks from h1-h6) is asked for; LibreOffice's PDFs of these .docx files have none.
  execFileSync('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--generate-pdf-document-outline', `--print-to-pdf=${pdf}`, `file://${htmlPath}`], {
    stdio: 'ignore',
    timeout: 120_000,
  });
}

function sofficePdf(file: string) {
  execFileSync('soffice', [`-env:UserInstallation=file://${join(CACHE, 'lo-profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', CACHE, file], {
    stdio: 'ignore',
    timeout: 180_000,
  });
}

/** The PDFs of every source (from the cache when the source and this script are unchanged). */
async function build(): Promise<{ name: string; pdf: string; src: Source; furniture: RegExp[] }[]> {
  mkdirSync(CACHE, { recursive: true });
  const out: { name: string; pdf: string; src: Source; furniture: RegExp[] }[] = [];
  const self = readFileSync(new URL(import.meta.url).pathname, 'utf8');
  for (const src of SOURCES) {
    const hash = createHash('sha256').update(self).update(JSON.stringify(src)).digest('hex').slice(0, 12);
    const num = String.raw`\d+`;
    for (const kind of src.kinds ?? (['html', 'docx'] as const)) {
      const base = join(CACHE, `${src.name}-${kind}`);
      const pdf = `${base}.pdf`;
      if (!existsSync(pdf) || !existsSync(`${base}.${hash}`)) {
        rmSync(pdf, { force: true });
        if (kind === 'html') {
          writeFileSync(`${base}.html`, html(src));
          chromiumPdf(`${base}.html`, pdf);
        } else {
          writeFileSync(`${base}.docx`, await docx(src));
          sofficePdf(`${base}.docx`);
        }
        writeFileSync(`${base}.${hash}`, '');
      }
      const head = new RegExp(src.head.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      const furniture =
        kind === 'html'
          ? [head, /file:\/\//, new RegExp(`^${num}/${num}$`), /^\d{1,2}\/\d{1,2}\/\d{2,4},/]
          : [head, new RegExp(`^(Page|صفحة|עמוד) ${num} (of|من|מתוך) ${num}$`), new RegExp(`^${num}$`)];
      out.push({ name: `${src.name} (${kind === 'html' ? 'Chromium' : 'docx, LibreOffice'})`, pdf, src, furniture });
    }
  }
  return out;
}

// ---------------------------------------------------------------- scores

/** Words of Markdown, its syntax left out (heading and list marks, table rules and pipes, fences). */
function words(md: string): string[] {
  return md
    .split('\n')
    .map((l) =>
      l
        .replace(/^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s)/, '')
        .replace(/^\|?(\s*:?-{3,}:?\s*\|)+\s*$/, '')
        .replace(/^```.*$/, '')
        .replace(/<!--.*?-->/g, ''),
    )
    .join(' ')
    .normalize('NFKC')
    .replace(/[|*_`\\]/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
}

function similarity(a: string[], b: string[]): number {
  if (!a.length && !b.length) return 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return 1 - prev[b.length] / Math.max(a.length, b.length);
}

const headings = (md: string, levels: boolean) =>
  md
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => `${levels ? l.indexOf(' ') : ''}|${words(l).join(' ')}`);

function f1(got: string[], want: string[]): number {
  const left = [...want];
  let hit = 0;
  for (const g of got) {
    const i = left.indexOf(g);
    if (i >= 0) {
      hit++;
      left.splice(i, 1);
    }
  }
  return got.length + want.length ? (2 * hit) / (got.length + want.length) : 1;
}

const tableWords = (md: string) =>
  words(
    md
      .split('\n')
      .filter((l) => l.trim().startsWith('|'))
      .join('\n'),
  );

function recall(got: string[], want: string[]): number {
  const bag = new Map<string, number>();
  for (const w of got) bag.set(w, (bag.get(w) ?? 0) + 1);
  let hit = 0;
  for (const w of want) {
    const c = bag.get(w) ?? 0;
    if (c) {
      hit++;
      bag.set(w, c - 1);
    }
  }
  return want.length ? hit / want.length : 1;
}

async function main() {
  const docs = await build();
  const rows: string[][] = [];
  const totals = [0, 0, 0, 0, 0];
  for (const d of docs) {
    const t0 = performance.now();
    const md = await readMarkdown(d.pdf, { cwd: CACHE }, { pageBreakComments: false });
    const ms = performance.now() - t0;
    const want = expected(d.src);
    if (process.env.SHOW && d.name.includes(process.env.SHOW)) console.log(`---- ${d.name}\n${md}\n---- expected\n${want}`);
    const furniture = md.split('\n').filter((l) => d.furniture.some((re) => re.test(l.replace(/^[#\-|\s]+|[|\s]+$/g, '')))).length;
    const s = [
      similarity(words(md), words(want)),
      f1(headings(md, false), headings(want, false)),
      f1(headings(md, true), headings(want, true)),
      recall(tableWords(md), tableWords(want)),
      furniture,
    ];
    s.forEach((v, i) => {
      totals[i] += v;
    });
    rows.push([d.name, ...s.slice(0, 4).map((v) => v.toFixed(2)), String(furniture), `${ms.toFixed(0)} ms`]);
  }
  rows.push(['**mean** (furniture: total)', ...totals.slice(0, 4).map((v) => (v / docs.length).toFixed(3)), String(totals[4]), '']);
  const head = ['document', 'text similarity', 'heading F1', 'heading F1 with level', 'table-cell words', 'furniture lines left', 'time'];
  console.log(`| ${head.join(' | ')} |\n|${head.map(() => ' --- |').join('')}`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

await main();
