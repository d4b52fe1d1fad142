// Insertion: /watermarked-pdf (text) on a 15-page and a 300-page PDF through the whole service (upload, queue,
// qpdf JSON read, stamp drawn with pdf-lib, qpdf --overlay, store), against a bare `qpdf --overlay` of a
// ready-made stamp on the same file in the same run, as ratios. Also what loading and saving the whole
// document with pdf-lib (the alternative design) costs on the same files.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { degrees, PDFDocument, rgb, StandardFonts } from '@cantoo/pdf-lib';
import { loadConfig } from '../../app/config.js';
import { createDeps } from '../../app/deps.js';
import { createApp } from '../../app/server.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const corpusDir = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-insert-'));
const best = async (fn: () => unknown, runs = 3) => {
  let t = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    t = Math.min(t, performance.now() - t0);
  }
  return t;
};

const fed = join(corpusDir, 'pdf/federal-register-15-pages.pdf');
// 300 distinct pages: 20 copies under different names, so qpdf does not share their objects.
const copies = Array.from({ length: 20 }, (_, i) => {
  const p = join(work, `c${i}.pdf`);
  copyFileSync(fed, p);
  return p;
});
const big = join(work, 'big-300.pdf');
execFileSync('qpdf', ['--empty', '--pages', ...copies, '--', big]);

// The same stamp the service draws: one Letter page, 72 pt Helvetica, red, half opacity, 45 degrees.
const stampDoc = await PDFDocument.create();
const font = await stampDoc.embedFont(StandardFonts.Helvetica);
stampDoc.addPage([612, 792]).drawText('CONFIDENTIAL', { x: 150, y: 250, size: 72, font, color: rgb(1, 0, 0), opacity: 0.5, rotate: degrees(45) });
const stamp = join(work, 'stamp.pdf');
writeFileSync(stamp, await stampDoc.save());

const config = loadConfig({ DATA_DIR: join(work, 'data'), LOG_LEVEL: 'silent' });
const deps = await createDeps(config);
const app = createApp(deps);
const post = async (path: string, file: string, fields: Record<string, string>) => {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const res = await app.request(`http://bench${path}`, { method: 'POST', body: fd });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
const pdfLibWhole = async (file: string) => {
  const doc = await PDFDocument.load(readFileSync(file), { updateMetadata: false });
  const f = await doc.embedFont(StandardFonts.Helvetica);
  for (const p of doc.getPages()) p.drawText('CONFIDENTIAL', { x: 150, y: 250, size: 72, font: f, color: rgb(1, 0, 0), opacity: 0.5, rotate: degrees(45) });
  writeFileSync(join(work, 'pdf-lib.pdf'), await doc.save());
};

const rows: [string, number, number, number][] = [];
for (const [name, file] of [
  ['watermark 15 pages (714 KB)', fed],
  ['watermark 300 pages (14 MB)', big],
] as const) {
  const ours = await best(() => post('/watermarked-pdf', file, { watermark_text: 'CONFIDENTIAL', text_color_rgb: '255,0,0', rotation: '45' }));
  const raw = await best(() => execFileSync('qpdf', [file, '--overlay', stamp, '--repeat=1', '--', join(work, 'raw.pdf')]));
  const whole = await best(() => pdfLibWhole(file));
  rows.push([name, ours, raw, whole]);
}

console.log('| case | ours ms | bare qpdf --overlay ms | ratio | pdf-lib load+draw+save ms |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, ours, raw, whole] of rows)
  console.log(`| ${name} | ${ours.toFixed(0)} | ${raw.toFixed(0)} | ${(ours / raw).toFixed(2)} | ${whole.toFixed(0)} |`);
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);

await deps.jobs.drain(1000);
await deps.store.flushAll();
rmSync(work, { recursive: true, force: true });
