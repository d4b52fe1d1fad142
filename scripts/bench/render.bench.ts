// npx tsx scripts/bench/render.bench.ts: the image converters' pipeline (MuPDF pixels -> sharp / own encoders,
// pages split across cores) against the raw engines writing the same format, measured in the same run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImageFormat } from '../../engines/images.js';
import { readPageBoxes } from '../../engines/mupdf.js';
import { renderImages } from '../../app/operations/lib/render.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const PDF = resolve(root, '../shared/corpus/pdf/federal-register-15-pages.pdf');

/** Wall time and peak RSS (KB) of one raw command, through GNU time. */
function raw(cmd: string, args: string[], cwd: string): { s: number; kb: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', cmd, ...args], { cwd, encoding: 'utf8' });
  const [s, kb] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  return { s, kb };
}

const GS_DEVICE: Partial<Record<ImageFormat, string>> = { png: 'png16m', jpg: 'jpeg', tif: 'tiff24nc', bmp: 'bmp16m' };
const POPPLER: Partial<Record<ImageFormat, string>> = { png: '-png', jpg: '-jpeg', tif: '-tiff' };

async function main() {
  const boxes = await readPageBoxes(PDF, { cwd: tmpdir() });
  const pages = boxes.map((b) => b.page);
  console.log(`${PDF.split('/').pop()}: ${pages.length} pages; ours = wall time of renderImages (mutool + encoders, ${pages.length} files)`);
  console.log('format dpi | ours s | mutool s | gs s | pdftoppm s | ours / fastest raw | raw peak RSS MB (fastest) | mutool child peak MB');
  for (const dpi of [150, 300]) {
    for (const format of ['png', 'jpg', 'tif', 'gif', 'bmp'] as ImageFormat[]) {
      const dir = mkdtempSync(join(tmpdir(), 'quire-bench-'));
      const t0 = performance.now();
      await renderImages(
        { input: PDF, boxes, pages, format, colorModel: 'rgb', resolution: dpi },
        { dir, signal: new AbortController().signal, timeoutMs: 120_000, progress: () => {} },
      );
      const ours = (performance.now() - t0) / 1000;
      // The renderer's own peak, with our arguments, for one page (a worker holds one batch).
      const child = raw('mutool', ['draw', '-q', '-F', 'pam', '-o', '/dev/null', '-r', String(dpi), '-c', 'rgb', '-A', '0/0', '-B', '256', PDF, '1'], dir);
      const results: Record<string, { s: number; kb: number } | null> = { mutool: null, gs: null, pdftoppm: null };
      if (format === 'png') results.mutool = raw('mutool', ['draw', '-q', '-A', '0', '-r', String(dpi), '-o', 'm%d.png', PDF], dir);
      if (GS_DEVICE[format]) results.gs = raw('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', `-sDEVICE=${GS_DEVICE[format]}`, `-r${dpi}`, '-o', `g%d.${format}`, PDF], dir);
      // pdftoppm's PNG at 300 dpi takes ~19 s here: measured at 150 dpi only, to keep the run short.
      if (POPPLER[format] && dpi === 150) results.pdftoppm = raw('pdftoppm', [POPPLER[format]!, '-r', String(dpi), PDF, 'p'], dir);
      const measured = Object.values(results).filter((r): r is { s: number; kb: number } => r !== null);
      const fastest = measured.sort((a, b) => a.s - b.s)[0];
      const cell = (r: { s: number } | null) => (r ? r.s.toFixed(2) : '-');
      console.log(
        `${format} ${dpi} | ${ours.toFixed(2)} | ${cell(results.mutool)} | ${cell(results.gs)} | ${cell(results.pdftoppm)} | ${fastest ? (ours / fastest.s).toFixed(2) : '-'} | ${fastest ? (fastest.kb / 1024).toFixed(0) : '-'} | ${(child.kb / 1024).toFixed(0)}`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`node peak RSS over the run: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

await main();
