// Fidelity of /word, /excel or /powerpoint on documents nobody here chose: every PDF of <corpus>/word-fidelity
// (pdf2docx's test samples) and of <corpus>/word-fidelity-pdfjs (pdf.js's: forms, invoices, reports, papers) plus
// six corpus PDFs. Each PDF is converted by the service, the export rendered back
// to PDF by LibreOffice and its words matched to the original's on the same page (office-fidelity-measure.ts).
// Prints per file, per folder and overall (word-weighted, and the mean of the files with text): recall (original words found
// anywhere, and on their page), in place (box centre within 3 % of the page size), sized (of those in place, size
// within 10 %), styled (size within 10 % and same bold/italic), pages (original -> round trip), time.
// Run: npm run bench -- office-fidelity, or node --import tsx scripts/bench/office-fidelity.bench.ts
//   [word|excel|powerpoint] [part of a file name...]
// QUIRE_URL=http://host:port measures a running server (e.g. another checkout) instead of this one in-process.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { compare, type Fidelity, officeToPdf, stextWords } from './office-fidelity-measure.js';

const CORPUS = resolve(process.env.QUIRE_CORPUS ?? new URL('../../../shared/corpus', import.meta.url).pathname);
const FOLDERS = ['word-fidelity', 'word-fidelity-pdfjs'];
const DOCS = [
  ...FOLDERS.flatMap((folder) =>
    readdirSync(join(CORPUS, folder))
      .filter((f) => f.endsWith('.pdf'))
      .sort()
      .map((f) => `${folder}/${f}`),
  ),
  'pdf/multicolumn-3-pages.pdf',
  'pdf/federal-register-15-pages.pdf',
  'pdf/google-docs-export.pdf',
  'pdf/tagged-libreoffice.pdf',
  'pdf/tagged-word365.pdf',
  'pdf/table-nics-background-checks-landscape.pdf',
];
const EXT = { word: 'docx', excel: 'xlsx', powerpoint: 'pptx' } as const;
const named = process.argv[2] && process.argv[2] in EXT;
const format = (named ? process.argv[2] : 'word') as keyof typeof EXT;
const only = process.argv.slice(named ? 3 : 2).filter((a) => !a.includes('/'));
if (!(format in EXT)) throw new Error(`format must be one of ${Object.keys(EXT).join(', ')}`);
const work = mkdtempSync(join(tmpdir(), 'qbench-fidelity-'));

type Convert = (pdf: string) => Promise<string>;

/** Posts the PDF to a running server and downloads the result. */
function remote(base: string): Convert {
  return async (pdf) => {
    const fd = new FormData();
    fd.append('file', new Blob([readFileSync(pdf)]), basename(pdf));
    const res = await fetch(`${base}/${format}`, { method: 'POST', body: fd });
    const body = (await res.json()) as { outputUrl?: string };
    if (res.status !== 200 || !body.outputUrl) throw new Error(`${pdf}: ${res.status} ${JSON.stringify(body)}`);
    const file = join(mkdtempSync(join(work, 'r-')), `out.${EXT[format]}`);
    const out = new URL(body.outputUrl);
    writeFileSync(file, Buffer.from(await (await fetch(`${base}${out.pathname}${out.search}`)).arrayBuffer()));
    return file;
  };
}

async function main() {
  let close = async () => undefined as unknown;
  let convert: Convert;
  if (process.env.QUIRE_URL) convert = remote(process.env.QUIRE_URL.replace(/\/$/, ''));
  else {
    const { startApp } = await import('../../test/helpers.js');
    const t = await startApp();
    close = t.close;
    convert = async (pdf) => {
      const res = await t.form(`/${format}`, { file: { file: pdf } });
      const body = (await res.json()) as { outputUrl?: string };
      if (res.status !== 200 || !body.outputUrl) throw new Error(`${pdf}: ${res.status} ${JSON.stringify(body)}`);
      return t.download(body.outputUrl);
    };
  }
  const share = (n: number, d: number) => (d ? (n / d).toFixed(3) : '-');
  console.log(`/${format} round trip through LibreOffice ${process.env.QUIRE_URL ? `(${process.env.QUIRE_URL})` : '(this checkout)'}`);
  console.log(['document', 'words', 'recall (any page)', 'recall (same page)', 'in place', 'sized', 'styled', 'pages', 'convert'].join(' | '));
  const zero = (): Fidelity => ({ words: 0, anywhere: 0, found: 0, inPlace: 0, sized: 0, styled: 0 });
  const total = zero();
  const folders = new Map(FOLDERS.map((f) => [f, { sum: zero(), files: 0, samePages: 0, placed: [] as [string, number][] }]));
  const placed: number[] = [];
  let files = 0;
  let samePages = 0;
  let offByOne = 0;
  const failed: string[] = [];
  for (const doc of DOCS.filter((d) => !only.length || only.some((o) => d.includes(o)))) {
    const pdf = join(CORPUS, doc);
    const t0 = process.hrtime.bigint();
    let exported: string;
    try {
      exported = await convert(pdf);
    } catch (err) {
      failed.push(basename(doc));
      console.log([basename(doc), '-', (err as Error).message.slice(0, 200)].join(' | '));
      continue;
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const rendered = await officeToPdf(exported, EXT[format]);
    const [original, back] = [await stextWords(pdf), await stextWords(rendered)];
    const f = compare(original, back);
    rmSync(join(rendered, '..'), { recursive: true, force: true });
    const folder = folders.get(doc.split('/')[0]);
    for (const k of Object.keys(total) as (keyof Fidelity)[]) {
      total[k] += f[k];
      if (folder) folder.sum[k] += f[k];
    }
    files++;
    if (folder) {
      folder.files++;
      if (original.length === back.length) folder.samePages++;
      if (f.words) folder.placed.push([basename(doc), f.inPlace / f.words]);
    }
    if (original.length === back.length) samePages++;
    else if (Math.abs(original.length - back.length) === 1) offByOne++;
    if (f.words) placed.push(f.inPlace / f.words);
    console.log(
      [
        basename(doc),
        f.words,
        share(f.anywhere, f.words),
        share(f.found, f.words),
        share(f.inPlace, f.words),
        share(f.sized, f.inPlace),
        share(f.styled, f.words),
        `${original.length} -> ${back.length}`,
        `${ms.toFixed(0)} ms`,
      ].join(' | '),
    );
  }
  for (const [name, { sum, files: n, samePages: same, placed: fp }] of folders) {
    if (!n) continue;
    const lowest = [...fp].sort((x, y) => x[1] - y[1]).slice(0, 3);
    console.log(
      [
        `${name}/ (word-weighted)`,
        sum.words,
        share(sum.anywhere, sum.words),
        share(sum.found, sum.words),
        share(sum.inPlace, sum.words),
        share(sum.sized, sum.inPlace),
        share(sum.styled, sum.words),
        `${same}/${n} equal`,
        `lowest ${lowest.map(([d, p]) => `${d} ${p.toFixed(3)}`).join(', ')}`,
      ].join(' | '),
    );
  }
  console.log(
    [
      'overall (word-weighted)',
      total.words,
      share(total.anywhere, total.words),
      share(total.found, total.words),
      share(total.inPlace, total.words),
      share(total.sized, total.inPlace),
      share(total.styled, total.words),
      `${samePages}/${files} equal, ${offByOne} off by one`,
      '',
    ].join(' | '),
  );
  const mean = placed.reduce((a, b) => a + b, 0) / (placed.length || 1);
  console.log(
    `file mean in place ${mean.toFixed(3)} over ${placed.length} files with text; lowest ${Math.min(...placed).toFixed(3)}; below 0.60: ${placed.filter((p) => p < 0.6).length}; failed: ${failed.length ? failed.join(', ') : 'none'}`,
  );
  await close();
  rmSync(work, { recursive: true, force: true });
}

void main();
