// Page tools and scan clean-up: (1) time of each endpoint through the whole service against the raw engine command
// in the same run, as ratios; (2) accuracy on pages made here from corpus scans with independent tools: auto-rotation
// of pages turned 90/180/270 (read back with qpdf), blank-page detection (precision and recall on scanned blanks with
// noise, edges and shadows, and on pages with little text), skew after deskewing (the angle applied by sharp vs the
// angle the endpoint measured and corrected).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { loadConfig } from '../../app/config.js';
import { createDeps } from '../../app/deps.js';
import { createApp } from '../../app/server.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const corpusDir = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
const corpus = (rel: string) => join(corpusDir, rel);
const work = mkdtempSync(join(tmpdir(), 'quire-bench-pages-'));
const at = (name: string) => join(work, name);
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 }).toString();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn: () => unknown, runs = 3): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

const deps = await createDeps(loadConfig({ DATA_DIR: at('data'), LOG_LEVEL: 'silent' }));
const app = createApp(deps);
async function post(path: string, file: string, fields: Record<string, string> = {}): Promise<Record<string, any>> {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const res = await app.request(`http://bench${path}`, { method: 'POST', body: fd });
  const body = (await res.json()) as Record<string, any>;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
async function download(body: Record<string, any>, name: string): Promise<string> {
  const res = await app.request(String([body.outputUrl].flat()[0]).replace(/^https?:\/\/[^/]+/, 'http://bench'));
  writeFileSync(at(name), Buffer.from(await res.arrayBuffer()));
  return at(name);
}

// ---- (1) Time against the raw engine.
const fed = corpus('pdf/federal-register-15-pages.pdf');
const big = at('fed-300.pdf');
sh('qpdf', ['--empty', '--pages', ...Array(20).fill(fed), '--', big]);
const scans = at('scans-2.pdf');
sh('qpdf', ['--empty', '--pages', corpus('scans/huckleberry-finn-p22-scan.pdf'), corpus('scans/linn-scan-ccitt.pdf'), '--', scans]);
const rows: [string, number, number, string][] = [];
rows.push([
  '/rotated-pdf 90, 300 pages',
  await time(() => post('/rotated-pdf', big, { rotation: '90' })),
  await time(() => sh('qpdf', [big, '--rotate=+90:1-300', at('r.pdf')])),
  'qpdf --rotate',
]);
rows.push([
  '/reordered-pdf 300-1',
  await time(() => post('/reordered-pdf', big, { pages: '300-1' })),
  await time(() => sh('qpdf', [big, '--pages', big, '300-1', '--', at('o.pdf')])),
  'qpdf --pages',
]);
rows.push([
  '/resized-pdf crop, 300 pages',
  await time(() => post('/resized-pdf', big, { mode: 'crop' }), 1),
  await time(() => sh('gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-r720', '-sDEVICE=bbox', big]), 1),
  'gs -sDEVICE=bbox -r720',
]);
rows.push([
  '/separated-pdf barcode, 15 pages',
  await time(() => post('/separated-pdf', fed), 1),
  await time(() => {
    sh('mutool', ['draw', '-q', '-r', '200', '-c', 'gray', '-o', at('sep-%d.pgm'), fed]);
    // zbarimg exits 4 when it finds no code (these pages have none).
    try {
      sh('zbarimg', ['-q', '--raw', ...Array.from({ length: 15 }, (_, i) => at(`sep-${i + 1}.pgm`))]);
    } catch (err) {
      if ((err as { status?: number }).status !== 4) throw err;
    }
  }, 1),
  'mutool draw -r 200 + zbarimg',
]);
rows.push([
  '/deskewed-pdf, 2 scanned pages',
  await time(() => post('/deskewed-pdf', scans), 1),
  await time(() => {
    sh('mutool', ['draw', '-q', '-r', '300', '-c', 'gray', '-o', at('dsk-%d.pgm'), scans]);
    for (const n of [1, 2])
      sh('unpaper', [
        '-q',
        '--overwrite',
        '--no-blackfilter',
        '--no-noisefilter',
        '--no-blurfilter',
        '--no-grayfilter',
        '--no-mask-scan',
        '--no-border-scan',
        at(`dsk-${n}.pgm`),
        at(`dsk-out-${n}.pgm`),
      ]);
  }, 1),
  'mutool draw -r 300 + unpaper --deskew',
]);
console.log('| request | Quire | raw engine | ratio | raw command |\n|---|---|---|---|---|');
for (const [what, ours, raw, cmd] of rows)
  console.log(`| ${what} | ${(ours / 1000).toFixed(2)} s | ${(raw / 1000).toFixed(2)} s | ${(ours / raw).toFixed(2)}x | ${cmd} |`);

// ---- (2a) Auto-rotation: scan pages turned a quarter, a half, three quarters (qpdf), read back with qpdf.
const sources = ['scans/linn-scan-ccitt.pdf', 'scans/huckleberry-finn-p22-scan.pdf', 'scans/french-diacritics-scan.pdf', 'pdf/text-4-pages-pdflatex.pdf'];
const turned = at('turned.pdf');
const pages: string[] = [];
for (const s of sources) for (let k = 0; k < 4; k++) pages.push(corpus(s), '1');
sh('qpdf', ['--empty', '--pages', ...pages, '--', at('upright.pdf')]);
const turns = sources.flatMap(() => [0, 90, 180, 270]);
sh('qpdf', [at('upright.pdf'), ...[90, 180, 270].map((a) => `--rotate=+${a}:${turns.flatMap((t, i) => (t === a ? [i + 1] : [])).join(',')}`), turned]);
const rotated = await download(await post('/rotated-pdf', turned, { rotation: 'auto' }), 'auto.pdf');
// pdfinfo's per-page lines: `Page    3 rot:  90`.
const rotateOf = (pdf: string) => [...sh('pdfinfo', ['-f', '1', '-l', '9999', pdf]).matchAll(/^Page\s+\d+\s+rot:\s+(\d+)/gm)].map((m) => Number(m[1]) % 360);
const before = rotateOf(turned);
const after = rotateOf(rotated);
let upright = 0;
let left = 0;
let wrong = 0;
after.forEach((r, i) => {
  if (r === 0) upright++;
  else if (r === before[i]) left++;
  else wrong++;
});
console.log(
  `\nauto-rotation (${turns.length} pages: ${sources.length} sources x 0/90/180/270): upright after ${upright}, left as they were ${left}, turned wrong ${wrong}`,
);

// ---- (2b) Blank pages: scanned blanks made with sharp (paper grey, dark edge strips, shadow, specks) and pages with
// little text (Ghostscript), beside corpus pages with content.
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
async function scanned(name: string, o: { band: number; shadow: number; specks: number }) {
  const [W, H] = [1275, 1650];
  const d = Buffer.alloc(W * H, 235);
  for (let y = 0; y < H; y++) for (let x = 0; x < o.band; x++) d[y * W + x] = 20;
  for (let y = 0; y < o.shadow; y++) for (let x = 0; x < W; x++) d[y * W + x] = Math.min(d[y * W + x], 40 + y * 4);
  for (let k = 0; k < o.specks; k++) {
    const x = Math.floor(rnd() * (W - 4));
    const y = Math.floor(rnd() * (H - 4));
    for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) d[(y + i) * W + x + j] = 15;
  }
  await sharp(d, { raw: { width: W, height: H, channels: 1 } })
    .withMetadata({ density: 150 })
    .png()
    .toFile(at(`${name}.png`));
  sh('mutool', ['convert', '-O', 'compress', '-o', at(`${name}.pdf`), at(`${name}.png`)]);
  return at(`${name}.pdf`);
}
const text = (name: string, body: string) => {
  writeFileSync(at(`${name}.ps`), `%!PS\n<< /PageSize [612 792] >> setpagedevice\n/Helvetica findfont 11 scalefont setfont\n${body}\nshowpage\n`);
  sh('ps2pdf', [at(`${name}.ps`), at(`${name}.pdf`)]);
  return at(`${name}.pdf`);
};
const blanks = [text('empty', ''), ...(await Promise.all([1, 2, 3, 4, 5].map((i) => scanned(`noisy-${i}`, { band: 10 * i, shadow: 5 * i, specks: 300 * i }))))];
const content = [
  text('one-line', '90 420 moveto (Only this single line of text is on this page.) show'),
  text('one-word', '290 420 moveto (Notes) show'),
  ...['scans/linn-scan-ccitt.pdf', 'scans/huckleberry-finn-p22-scan.pdf', 'pdf/text-minimal-pdflatex.pdf', 'pdf/vector-art-no-fonts.pdf'].map(corpus),
];
const mixed = [...blanks, ...content].map((f, i) => ({ f, blank: i < blanks.length })).sort(() => rnd() - 0.5);
sh('qpdf', ['--empty', '--pages', ...mixed.flatMap((m) => [m.f, '1']), '--', at('mixed.pdf')]);
const removed = new Set((await post('/pdf-without-blank-pages', at('mixed.pdf'))).removedPages as number[]);
const hits = mixed.filter((m, i) => m.blank && removed.has(i + 1)).length;
const falseHits = mixed.filter((m, i) => !m.blank && removed.has(i + 1)).length;
console.log(
  `blank pages (${blanks.length} blank, ${content.length} with content): recall ${(hits / blanks.length).toFixed(2)}, precision ${(hits / Math.max(1, hits + falseHits)).toFixed(2)}`,
);

// ---- (2c) Skew: scans turned by sharp, the angle /deskewed-pdf measured (and corrected) against the one applied.
const errors: number[] = [];
for (const s of ['scans/linn-brochure-two-columns.png', 'scans/tesseract-eurotext-multilingual.tif']) {
  // Both turn clockwise for a positive angle: sharp's rotate, and the skew the endpoint reports. The source's own
  // skew (its reading unturned) is added to what was applied.
  const measure = async (angle: number) => {
    const png = at(`skew-${angle}.png`);
    await sharp(corpus(s)).rotate(angle, { background: '#ffffff' }).withMetadata({ density: 300 }).png().toFile(png);
    sh('mutool', ['convert', '-o', at('skew.pdf'), png]);
    const body = await post('/deskewed-pdf', at('skew.pdf'));
    return (body.skew as { angle: number }[])[0]?.angle ?? 0;
  };
  const own = await measure(0);
  for (const angle of [-5, -2, -0.7, 1, 3, 8]) errors.push(Math.abs((await measure(angle)) - (angle + own)));
}
console.log(
  `deskew: measured vs applied angle (plus the source's own skew) over ${errors.length} pages: mean error ${(errors.reduce((a, b) => a + b, 0) / errors.length).toFixed(3)} deg, worst ${Math.max(...errors).toFixed(3)} deg`,
);
await deps.jobs.drain(1000);
process.exit(0);
