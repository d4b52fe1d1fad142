// Office through the warm pool vs a cold `soffice --convert-to` per document, sequential and with 4
// concurrent clients; HTML through our Chromium path (long-lived browser, fresh context and filtering proxy
// per job, network-idle wait) vs a bare `chromium --headless --print-to-pdf`, sequential and 4 at a time.
// Run: npx tsx scripts/bench/convert.bench.ts
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { shutdownBrowser } from '../../engines/chromium/browser.js';
import { printHtml } from '../../engines/chromium/print.js';
import { configurePool, officeToPdf, shutdownPool } from '../../engines/libreoffice/pool.js';

const sh = promisify(execFile);
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? '../shared/corpus');
const DOCS = ['office/poi-SampleDoc.docx', 'office/poi-SampleSS.xlsx', 'office/poi-SampleShow.pptx', 'office/poi-SampleDoc.doc'];
const work = mkdtempSync(join(tmpdir(), 'qbench-'));
const ROUNDS = 1; // each document this many times per measurement

const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const jobs = () =>
  Array.from({ length: ROUNDS }, () => DOCS)
    .flat()
    .map((d, i) => ({ d, i }));

function stage(doc: string, i: number, tag: string): { input: string; dir: string } {
  const dir = mkdtempSync(join(work, `${tag}${i}-`));
  const input = join(dir, `input.${doc.split('.').pop()}`);
  copyFileSync(join(CORPUS, doc), input);
  return { input, dir };
}

async function pooled(doc: string, i: number): Promise<void> {
  const { input, dir } = stage(doc, i, 'p');
  await officeToPdf(
    input,
    join(dir, 'out.pdf'),
    { lossless: false, maxImageDpi: 300, tagged: false, locale: 'en-US', ext: input.split('.').pop()! },
    { cwd: dir, timeoutMs: 60_000 },
  );
}

let coldProfile = 0;
async function cold(doc: string, i: number): Promise<void> {
  const { input, dir } = stage(doc, i, 'c');
  // Own profile per concurrent process (a shared one hands work over and exits); created beforehand, so only process start is measured.
  const profile = join(work, `cold-profile-${coldProfile++ % 4}`);
  await sh('soffice', [`-env:UserInstallation=file://${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, input], { cwd: dir });
}

async function measure(fn: (d: string, i: number) => Promise<void>, clients: number): Promise<number> {
  const queue = jobs();
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let j = queue.shift(); j; j = queue.shift()) await fn(j.d, j.i);
    }),
  );
  return ms(t) / (ROUNDS * DOCS.length);
}

function sofficeRssMb(): number {
  let total = 0;
  try {
    const out = execFileSync('ps', ['-C', 'soffice.bin', '-o', 'rss=']).toString();
    total = out
      .split('\n')
      .filter(Boolean)
      .reduce((s, v) => s + Number(v), 0);
  } catch {
    /* none running */
  }
  return total / 1024;
}

async function main() {
  configurePool({ size: 2 });
  // Warm-up: start both instances and create the cold profiles (not measured).
  await Promise.all([pooled(DOCS[0], 900), pooled(DOCS[1], 901)]);
  await Promise.all([0, 1, 2, 3].map((k) => cold(DOCS[0], 800 + k)));
  coldProfile = 0;

  const rows: string[][] = [];
  for (const clients of [1, 4]) {
    const p = await measure(pooled, clients);
    const c = await measure(cold, clients);
    rows.push([`office, ${clients === 1 ? 'sequential' : '4 clients'}`, `${p.toFixed(0)} ms/doc`, `${c.toFixed(0)} ms/doc`, `${(c / p).toFixed(1)}x`]);
  }
  const rss = sofficeRssMb();
  await shutdownPool();

  const html = join(CORPUS, 'web/gotenberg-pages-3.html');
  const letter = { width: 612, height: 792, margin: 72 };
  const ours = async () => {
    const dir = mkdtempSync(join(work, 'h-'));
    copyFileSync(html, join(dir, 'page.html'));
    await printHtml(
      join(dir, 'page.html'),
      join(dir, 'o.pdf'),
      { viewportWidth: 1280, paper: letter, scale: 624 / 1280, settleMs: 5000, resolveHost: async () => null },
      { cwd: dir, timeoutMs: 60_000 },
    );
  };
  const bare = async () => {
    const dir = mkdtempSync(join(work, 'b-'));
    const short = mkdtempSync(join(tmpdir(), 'qb-'));
    await sh(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        `--user-data-dir=${join(dir, 'ud')}`,
        '--no-pdf-header-footer',
        `--print-to-pdf=${join(dir, 'b.pdf')}`,
        `file://${html}`,
      ],
      { env: { ...process.env, TMPDIR: short } },
    );
    rmSync(short, { recursive: true, force: true });
  };
  const timed = async (fn: () => Promise<void>, n: number, clients: number) => {
    let left = n;
    const t = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (left-- > 0) await fn();
      }),
    );
    return ms(t) / n;
  };
  const t = process.hrtime.bigint();
  await ours(); // launches the browser
  const firstJob = ms(t);
  for (const clients of [1, 4]) {
    const o = await timed(ours, 8, clients);
    const b = await timed(bare, 8, clients);
    rows.push([
      `html (3 pages), ${clients === 1 ? 'sequential' : '4 clients'}`,
      `${o.toFixed(0)} ms/doc`,
      `${b.toFixed(0)} ms/doc (bare chromium)`,
      `${(b / o).toFixed(1)}x`,
    ]);
  }
  rows.push(['html, first job (browser launch)', `${firstJob.toFixed(0)} ms`, '', '']);
  await shutdownBrowser();

  console.log(['case', 'ours', 'raw engine', 'speed-up'].join(' | '));
  for (const r of rows) console.log(r.join(' | '));
  console.log(
    `peak soffice RSS (2 warm instances, after the office runs): ${rss.toFixed(0)} MB; node RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`,
  );
  rmSync(work, { recursive: true, force: true });
}

void main();
