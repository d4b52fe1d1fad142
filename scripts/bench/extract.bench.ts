// Quality and cost of the text reading endpoints (/markdown, /extracted-text).
// 1. Builds PDFs from known structure with LibreOffice (an HTML page with headings, lists and a table; a .fodt
//    with a two-column section), runs the /markdown logic and scores what came back against the source.
// 2. Words recovered by /extracted-text against pdftotext on corpus files, and time against the raw engine.
// Run: npx tsx scripts/bench/extract.bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pageText, readPages, toMarkdown } from '../../app/document/index.js';

const CORPUS = process.env.QUIRE_CORPUS ?? resolve(import.meta.dirname, '../../../shared/corpus');
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-extract-'));
const ctx = { cwd: dir };

// ---------------------------------------------------------------- sources with known structure
const LOREM =
  'Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua Ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat'.split(
    ' ',
  );
const sentence = (seed: number, n: number) => Array.from({ length: n }, (_, i) => LOREM[(seed * 7 + i * 3) % LOREM.length]).join(' ');
const para = (seed: number) =>
  `${['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot', 'Golf', 'Hotel', 'India', 'Juliet', 'Kilo', 'Lima'][seed % 12]} ${seed} ${sentence(seed, 45)}.`;

interface Source {
  headings: string[];
  items: string[];
  cells: string[];
  paragraphs: string[];
}

function htmlDoc(): { html: string; src: Source } {
  const src: Source = { headings: [], items: [], cells: [], paragraphs: [] };
  let body = '';
  const h = (lvl: number, t: string) => {
    src.headings.push(t);
    body += `<h${lvl}>${t}</h${lvl}>\n`;
  };
  const p = (seed: number) => {
    const t = para(seed);
    src.paragraphs.push(t);
    body += `<p>${t}</p>\n`;
  };
  h(1, 'Quarterly Report Overview');
  p(1);
  p(2);
  h(2, 'Key Findings');
  body += '<ul>';
  for (const t of ['Revenue grew in every region', 'Costs stayed flat', 'Two new offices opened', 'Customer churn fell sharply']) {
    src.items.push(t);
    body += `<li>${t}</li>`;
  }
  body += '</ul>\n';
  p(3);
  h(2, 'Next Steps');
  body += '<ol>';
  for (const t of ['Hire three engineers', 'Ship the mobile client', 'Review pricing in spring']) {
    src.items.push(t);
    body += `<li>${t}</li>`;
  }
  body += '</ol>\n';
  h(3, 'Regional Figures');
  const rows = [
    ['Region', 'Sales', 'Growth'],
    ['North', '1200', '4%'],
    ['South', '950', '7%'],
    ['East', '1430', '2%'],
    ['West', '870', '9%'],
  ];
  body +=
    '<table border="1" cellpadding="4">' +
    rows.map((r, i) => `<tr>${r.map((c) => (i ? `<td>${c}</td>` : `<th>${c}</th>`)).join('')}</tr>`).join('') +
    '</table>\n';
  src.cells.push(...rows.flat());
  p(4);
  return { html: `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>${body}</body></html>`, src };
}

function twoColumnDoc(): { fodt: string; src: Source } {
  const src: Source = { headings: [], items: [], cells: [], paragraphs: [] };
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  let inner = '';
  const h = (t: string) => {
    src.headings.push(t);
    inner += `<text:h text:style-name="Heading_20_2" text:outline-level="2">${esc(t)}</text:h>`;
  };
  const p = (seed: number) => {
    const t = para(seed);
    src.paragraphs.push(t);
    inner += `<text:p text:style-name="Text_20_body">${esc(t)}</text:p>`;
  };
  src.headings.push('A Study in Two Columns');
  h('Introduction');
  for (let i = 10; i < 14; i++) p(i);
  h('Method');
  for (let i = 14; i < 18; i++) p(i);
  h('Results');
  for (let i = 18; i < 21; i++) p(i);
  const fodt = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:styles>
<style:style style:name="Text_20_body" style:display-name="Text body" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="0.2cm" fo:text-align="justify"/><style:text-properties fo:font-size="10pt"/></style:style>
<style:style style:name="Heading_20_1" style:display-name="Heading 1" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="0.4cm" fo:text-align="center"/><style:text-properties fo:font-size="20pt" fo:font-weight="bold"/></style:style>
<style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph"><style:paragraph-properties fo:margin-top="0.3cm" fo:margin-bottom="0.2cm"/><style:text-properties fo:font-size="14pt" fo:font-weight="bold"/></style:style>
</office:styles>
<office:automatic-styles><style:style style:name="Sect1" style:family="section"><style:section-properties><style:columns fo:column-count="2" fo:column-gap="0.8cm"/></style:section-properties></style:style></office:automatic-styles>
<office:body><office:text>
<text:h text:style-name="Heading_20_1" text:outline-level="1">A Study in Two Columns</text:h>
<text:section text:style-name="Sect1" text:name="S1">${inner}</text:section>
</office:text></office:body></office:document>`;
  return { fodt, src };
}

function soffice(file: string): string {
  const profile = join(dir, 'lo-profile');
  // HTML opens as a Writer document (not Writer/Web, which lays it out as a web page).
  const filter = file.endsWith('.html') ? ['--infilter=HTML (StarWriter)'] : [];
  execFileSync(
    'soffice',
    [`-env:UserInstallation=file://${profile}`, '--headless', ...filter, '--convert-to', 'pdf:writer_pdf_Export', '--outdir', dir, file],
    { stdio: 'ignore', timeout: 120_000 },
  );
  return file.replace(/\.\w+$/, '.pdf');
}

const norm = (s: string) =>
  s
    .replace(/[*_`\\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

function score(md: string, src: Source) {
  const lines = md.split('\n').map((l) => l.trim());
  const headingLines = new Set(lines.filter((l) => /^#{1,6} /.test(l)).map((l) => norm(l.replace(/^#+ /, ''))));
  const itemLines = new Set(lines.filter((l) => /^(- |\d+\. )/.test(l)).map((l) => norm(l.replace(/^(- |\d+\. )/, ''))));
  const cellSet = new Set(
    lines
      .filter((l) => l.startsWith('|'))
      .flatMap((l) => l.split('|').map((c) => norm(c)))
      .filter(Boolean),
  );
  const frac = (xs: string[], ok: (x: string) => boolean) => (xs.length ? xs.filter(ok).length / xs.length : 1);
  const flat = norm(md);
  const pos = src.paragraphs.map((p) => flat.indexOf(norm(p)));
  let ordered = 0;
  for (let i = 1; i < pos.length; i++) if (pos[i - 1] >= 0 && pos[i] > pos[i - 1]) ordered++;
  return {
    headings: frac(src.headings, (h) => headingLines.has(h)),
    listItems: frac(src.items, (i) => itemLines.has(i)),
    tableCells: frac(src.cells, (c) => cellSet.has(c)),
    paragraphsIntact: frac(src.paragraphs, (p) => flat.includes(norm(p))),
    textOrder: pos.length > 1 ? ordered / (pos.length - 1) : 1,
  };
}

const ms = (f: () => unknown) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

async function main() {
  console.log('## Structure recovered by /markdown (1 = all of it)');
  const { html, src: hsrc } = htmlDoc();
  writeFileSync(join(dir, 'structure.html'), html);
  const { fodt, src: fsrc } = twoColumnDoc();
  writeFileSync(join(dir, 'columns.fodt'), fodt);
  const docs: [string, string, Source][] = [
    ['headings+lists+table (HTML)', soffice(join(dir, 'structure.html')), hsrc],
    ['two columns (fodt)', soffice(join(dir, 'columns.fodt')), fsrc],
  ];
  const rows: string[][] = [];
  for (const [name, pdf, src] of docs) {
    const n = Number(execFileSync('qpdf', ['--show-npages', pdf], { encoding: 'utf8' }).trim());
    const pages = await readPages(
      pdf,
      Array.from({ length: n }, (_, i) => i + 1),
      ctx,
    );
    const s = score(toMarkdown(pages, { pageBreakComments: false }), src);
    rows.push([name, ...Object.values(s).map((v) => v.toFixed(2))]);
    if (process.env.SHOW) console.log(toMarkdown(pages, { pageBreakComments: false }));
  }
  table(['document', 'headings', 'list items', 'table cells', 'paragraphs intact', 'text order'], rows);

  console.log('\n## Words recovered by /extracted-text vs pdftotext, and time vs the raw engine');
  const files = [
    'pdf/google-docs-export.pdf',
    'pdf/multicolumn-3-pages.pdf',
    'pdf/text-4-pages-pdflatex.pdf',
    'pdf/federal-register-15-pages.pdf',
    'pdf/tagged-libreoffice.pdf',
    'pdf/table-senate-expenditures.pdf',
    'pdf/rotation-2-pages.pdf',
    'pdf/cjk-japanese-vertical-3-pages.pdf',
  ];
  const wrows: string[][] = [];
  for (const rel of files) {
    const file = join(CORPUS, rel);
    const n = Number(execFileSync('qpdf', ['--show-npages', file], { encoding: 'utf8' }).trim());
    const all = Array.from({ length: n }, (_, i) => i + 1);
    const theirs = words(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }));
    const t0 = performance.now();
    const model = await readPages(file, all, ctx, { colours: true });
    const text = model.map((p) => pageText(p, false)).join(' ');
    const ours = performance.now() - t0;
    const raw = ms(() => execFileSync('mutool', ['draw', '-q', '-F', 'stext', '-o', join(dir, 'raw.xml'), file], { stdio: 'ignore' }));
    const p2t = ms(() => execFileSync('pdftotext', ['-bbox-layout', file, join(dir, 'raw.html')], { stdio: 'ignore' }));
    const bag = new Map<string, number>();
    for (const w of words(text)) bag.set(w, (bag.get(w) ?? 0) + 1);
    let hit = 0;
    for (const w of theirs) {
      const c = bag.get(w) ?? 0;
      if (c > 0) {
        hit++;
        bag.set(w, c - 1);
      }
    }
    wrows.push([
      rel,
      String(n),
      String(theirs.length),
      (hit / Math.max(1, theirs.length)).toFixed(3),
      `${ours.toFixed(0)} ms`,
      (ours / raw).toFixed(2),
      (ours / p2t).toFixed(2),
    ]);
  }
  table(['file', 'pages', 'pdftotext words', 'recall', 'ours (words+style+colour)', 'vs mutool stext', 'vs pdftotext -bbox'], wrows);
  console.log(`\npeak RSS of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

function words(s: string): string[] {
  return s
    .normalize('NFKC')
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
}

function table(head: string[], rows: string[][]) {
  console.log(`| ${head.join(' | ')} |\n|${head.map(() => ' --- |').join('')}`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

try {
  await main();
} finally {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}: ${readdirSync(dir).join(', ')}`);
}
