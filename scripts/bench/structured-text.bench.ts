// /pdf from Markdown: a ~20-page document with GFM tables and images, through the whole request (upload parsing,
// typesetting, the warm Chromium with its per-job context and proxy, storing the output) vs a bare
// `chromium --headless --print-to-pdf` of the very same HTML. Goal: ours / bare <= 1.0.
// Run: node --import tsx scripts/bench/structured-text.bench.ts
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { typesetStructured } from '../../app/convert/index.js';
import { startApp } from '../../test/helpers.js';

const sh = promisify(execFile);
const CORPUS = resolve(process.env.QUIRE_CORPUS ?? '../shared/corpus');
const IMAGES = ['images/hopper.png', 'images/baiona-rgba-alpha.png'];
const RUNS = 5;
const SECTIONS = 16;
const work = mkdtempSync(join(tmpdir(), 'qbench-md-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function document(): string {
  const parts: string[] = ['# Structured text benchmark\n'];
  for (let s = 1; s <= SECTIONS; s++) {
    parts.push(`## Section ${s}\n`);
    for (let p = 0; p < 3; p++)
      parts.push(
        `Paragraph ${p + 1} of section ${s}: ${'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. '.repeat(3)}\n`,
      );
    parts.push('| Item | Region | Units | Price |\n|:-----|:------:|------:|------:|');
    for (let r = 0; r < 12; r++)
      parts.push(`| Item ${s}.${r} | ${['North', 'South', 'East', 'West'][r % 4]} | ${(r + 1) * 17} | ${((r + 1) * 3.25).toFixed(2)} |`);
    parts.push('');
    if (s % 2 === 0) parts.push(`![Figure ${s}](${IMAGES[(s / 2) % 2].split('/').pop()})\n`);
    parts.push('```\nconst total = rows.reduce((a, r) => a + r.units * r.price, 0);\n```\n');
  }
  return parts.join('\n');
}

async function main() {
  const md = document();
  writeFileSync(join(work, 'bench.md'), md);
  const t = await startApp();
  const form = { file: { file: join(work, 'bench.md') }, image_files: IMAGES.map((i) => ({ file: join(CORPUS, i) })), structured_text_options: '{}' };
  const ours = async () => {
    const started = process.hrtime.bigint();
    const res = await t.form('/pdf', form);
    const body = (await res.json()) as { outputUrl: string; error?: string };
    if (res.status !== 200) throw new Error(body.error);
    const elapsed = ms(started);
    return { elapsed, path: await t.download(body.outputUrl) };
  };
  // The same HTML the request prints, for the bare run.
  const images = IMAGES.map((i) => ({ name: i.split('/').pop()!, path: join(CORPUS, i) }));
  const typeset = await typesetStructured(
    'markdown',
    readFileSync(join(work, 'bench.md')),
    'bench.md',
    {},
    { uploads: images, ids: [], maxPixels: 1e8, maxBytes: 50 * 1024 * 1024 },
  );
  const html = join(work, 'bench.html');
  // The request's margins go to the printer; the bare run gets them from CSS.
  writeFileSync(html, typeset.html.replace('</style>', '@page { margin: 72pt; }</style>'));
  const bare = async () => {
    const dir = mkdtempSync(join(work, 'b-'));
    const started = process.hrtime.bigint();
    await sh('chromium', [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      `--user-data-dir=${join(dir, 'ud')}`,
      '--no-pdf-header-footer',
      `--print-to-pdf=${join(dir, 'b.pdf')}`,
      `file://${html}`,
    ]);
    return { elapsed: ms(started), path: join(dir, 'b.pdf') };
  };

  await ours(); // the browser's first start is not a document's cost
  const o: number[] = [];
  const b: number[] = [];
  let pages = { ours: 0, bare: 0 };
  for (let i = 0; i < RUNS; i++) {
    const r1 = await ours();
    const r2 = await bare();
    o.push(r1.elapsed);
    b.push(r2.elapsed);
    const count = async (p: string) => Number((await sh('qpdf', ['--show-npages', p])).stdout.trim());
    pages = { ours: await count(r1.path), bare: await count(r2.path) };
  }
  await t.close();
  rmSync(work, { recursive: true, force: true });
  console.log('case | ours | bare chromium --print-to-pdf | ours / bare');
  console.log(
    `Markdown, ${pages.ours} pages (bare: ${pages.bare}), ${SECTIONS} tables, ${SECTIONS / 2} images, median of ${RUNS} | ${median(o).toFixed(0)} ms | ${median(b).toFixed(0)} ms | ${(median(o) / median(b)).toFixed(2)}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
