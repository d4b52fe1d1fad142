// Fidelity of /word, /excel or /powerpoint on the corpus's text PDFs: each PDF is converted by the service, the
// export rendered back to PDF by LibreOffice and its words matched to the original's on the same page
// (office-fidelity-measure.ts). Prints per file and overall: recall (original words found anywhere, and on their
// page),
// in place (box centre within 3 % of the page size), styled (size within 10 % and same bold/italic), time.
// Run: node --import tsx scripts/bench/office-fidelity.bench.ts [word|excel|powerpoint] [part of a file name...]
// QUIRE_URL=http://host:port measures a running server (e.g. another checkout) instead of this one in-process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { compare, officeToPdf, stextWords, type Fidelity } from './office-fidelity-measure.js';

const CORPUS = resolve(process.env.QUIRE_CORPUS ?? new URL('../../../shared/corpus', import.meta.url).pathname);
const DOCS = [
  'pdf/multicolumn-3-pages.pdf',
  'pdf/federal-register-15-pages.pdf',
  'pdf/google-docs-export.pdf',
  'pdf/tagged-libreoffice.pdf',
  'pdf/tagged-word365.pdf',
  'pdf/table-nics-background-checks-landscape.pdf',
];
const EXT = { word: 'docx', excel: 'xlsx', powerpoint: 'pptx' } as const;
const format = (process.argv[2] ?? 'word') as keyof typeof EXT;
const only = process.argv.slice(3);
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
  console.log(['document', 'words', 'recall (any page)', 'recall (same page)', 'in place', 'styled', 'convert'].join(' | '));
  const total: Fidelity = { words: 0, anywhere: 0, found: 0, inPlace: 0, styled: 0 };
  for (const doc of DOCS.filter((d) => !only.length || only.some((o) => d.includes(o)))) {
    const pdf = join(CORPUS, doc);
    const t0 = process.hrtime.bigint();
    const exported = await convert(pdf);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const rendered = await officeToPdf(exported, EXT[format]);
    const f = compare(await stextWords(pdf), await stextWords(rendered));
    rmSync(join(rendered, '..'), { recursive: true, force: true });
    for (const k of Object.keys(total) as (keyof Fidelity)[]) total[k] += f[k];
    console.log([basename(doc), f.words, share(f.anywhere, f.words), share(f.found, f.words), share(f.inPlace, f.words), share(f.styled, f.words), `${ms.toFixed(0)} ms`].join(' | '));
  }
  console.log(['overall', total.words, share(total.anywhere, total.words), share(total.found, total.words), share(total.inPlace, total.words), share(total.styled, total.words), ''].join(' | '));
  await close();
  rmSync(work, { recursive: true, force: true });
}

void main();
