// /word, /excel and /powerpoint (their operations' run(), no HTTP) on three corpus PDFs, against a bare cold
// `soffice --headless --infilter=<pdf import> --convert-to docx|pptx` per document in the same run, as ratios.
// Best of 3 per case (the machine is shared). Run: npx tsx scripts/bench/run.ts office-export
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import excel from '../../app/operations/excel.js';
import powerpoint from '../../app/operations/powerpoint.js';
import word from '../../app/operations/word.js';
import type { Operation } from '../../app/requests/operation.js';
import { configurePool, shutdownPool } from '../../engines/libreoffice/pool.js';

const sh = promisify(execFile);
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? '../shared/corpus');
const DOCS = ['pdf/google-docs-export.pdf', 'pdf/multicolumn-3-pages.pdf', 'pdf/federal-register-15-pages.pdf'];
const work = mkdtempSync(join(tmpdir(), 'qbench-office-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

async function ours(op: Operation, doc: string): Promise<number> {
  const dir = mkdtempSync(join(work, 'o-'));
  const path = join(CORPUS, doc);
  const t = process.hrtime.bigint();
  await op.run({
    input: { id: 'bench', name: basename(doc), type: 'application/pdf', path },
    inputs: {},
    fields: {},
    dir,
    signal: new AbortController().signal,
    progress: () => undefined,
    outputName: 'out',
    timeoutMs: 300_000,
    urlPolicy: { enabled: false, allow: [] },
    concurrency: 1,
    limits: { officeMaxPages: 2000, officeTimeoutMs: 300_000 },
  } as never);
  return ms(t);
}

const profile = join(work, 'cold-profile');
async function cold(doc: string, filter: string, to: string): Promise<number> {
  const dir = mkdtempSync(join(work, 'c-'));
  const input = join(dir, 'input.pdf');
  copyFileSync(join(CORPUS, doc), input);
  const t = process.hrtime.bigint();
  await sh('soffice', [`-env:UserInstallation=file://${profile}`, '--headless', `--infilter=${filter}`, '--convert-to', to, '--outdir', dir, input], {
    cwd: dir,
  });
  return ms(t);
}

const best = async (fn: () => Promise<number>) => Math.min(await fn(), await fn(), await fn());

async function main() {
  configurePool({ size: 1 });
  // Warm-up (not measured): the pool's instance starts, the cold profile is created.
  await ours(powerpoint as unknown as Operation, DOCS[0]);
  await cold(DOCS[0], 'impress_pdf_import', 'pptx');

  console.log(['document', 'endpoint', 'ours', 'bare soffice (cold)', 'ratio (soffice / ours)'].join(' | '));
  for (const doc of DOCS) {
    const name = basename(doc);
    const writer = await best(() => cold(doc, 'writer_pdf_import', 'docx'));
    const impress = await best(() => cold(doc, 'impress_pdf_import', 'pptx'));
    const rows: [string, Operation, number, string][] = [
      ['/word', word as unknown as Operation, writer, 'writer_pdf_import -> docx'],
      ['/excel', excel as unknown as Operation, writer, 'writer_pdf_import -> docx'],
      ['/powerpoint', powerpoint as unknown as Operation, impress, 'impress_pdf_import -> pptx'],
    ];
    for (const [path, op, base, what] of rows) {
      const o = await best(() => ours(op, doc));
      console.log([name, path, `${o.toFixed(0)} ms`, `${base.toFixed(0)} ms (${what})`, `${(base / o).toFixed(2)}x`].join(' | '));
    }
  }
  await shutdownPool();
  rmSync(work, { recursive: true, force: true });
}

void main();
