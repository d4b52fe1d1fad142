// npx tsx scripts/bench/render.bench.ts: the image converters (renderImages: MuPDF pixels -> sharp / own encoders,
// or Ghostscript devices, pages split across cores) against the raw engines writing the same format, in the same run.
// Memory per worker = our Node process's peak growth during the render / workers + the peak of one worker's engine
// process (measured alone, with the same arguments, through GNU time); the raw engine's figure is its own peak.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderImages, splitRuns } from '../../app/render/index.js';
import { deviceArgs } from '../../engines/ghostscript-raster.js';
import type { ImageFormat } from '../../engines/images.js';
import { drawArgs, readPageBoxes } from '../../engines/mupdf.js';
import { pageCount } from '../../engines/qpdf.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SOURCE = resolve(root, '../shared/corpus/pdf/federal-register-15-pages.pdf');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-'));
// The yardstick is a 20-page text PDF: the 15-page Federal Register plus its first 5 pages again.
const PDF = join(work, 'twenty.pdf');
spawnSync('qpdf', ['--empty', '--pages', SOURCE, '1-15', SOURCE, '1-5', '--', PDF]);

/** Wall time and peak RSS (KB) of one raw command, through GNU time; its stdout is discarded. */
function raw(cmd: string, args: string[], cwd: string): { s: number; kb: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', cmd, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const [s, kb] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { s, kb };
}

const hwmKb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
const resetHwm = () => writeFileSync('/proc/self/clear_refs', '5');

// Compressed TIFF as ours is (Ghostscript has no Deflate; uncompressed tiff24nc would write 25 MB a page).
const GS_DEVICE: Partial<Record<ImageFormat, string[]>> = {
  png: ['-sDEVICE=png16m'],
  jpg: ['-sDEVICE=jpeg'],
  tif: ['-sDEVICE=tiff24nc', '-sCompression=lzw'],
  bmp: ['-sDEVICE=bmp16m'],
};
const POPPLER: Partial<Record<ImageFormat, string>> = { png: '-png', jpg: '-jpeg', tif: '-tiff' };
const VIA_GS = new Set<ImageFormat>(['jpg', 'bmp']);

async function main() {
  const boxes = await readPageBoxes(PDF, await pageCount(PDF, { cwd: work }), { cwd: work });
  const pages = boxes.map((b) => b.page);
  const workers = Math.min(availableParallelism(), pages.length);
  const firstRun = splitRuns(pages, workers)[0].items;
  console.log(`${pages.length}-page text PDF, rgb, ${workers} workers; ours = renderImages end to end (${pages.length} files)`);
  console.log('format dpi | ours s | mutool s | gs s | pdftoppm s | ours / fastest raw | MB per worker: ours (node + engine) | fastest raw MB | ratio');
  for (const dpi of [150, 300]) {
    for (const format of ['png', 'jpg', 'tif', 'gif', 'bmp'] as ImageFormat[]) {
      const dir = mkdtempSync(join(work, 'run-'));
      global.gc?.();
      resetHwm();
      const before = hwmKb();
      const t0 = performance.now();
      await renderImages(
        { input: PDF, boxes, pages, format, colorModel: 'rgb', resolution: dpi },
        { dir, signal: new AbortController().signal, timeoutMs: 300_000, progress: () => {} },
      );
      const ours = (performance.now() - t0) / 1000;
      const nodeKb = Math.max(0, hwmKb() - before);
      // One worker's engine process alone (never `-o /dev/null`: MuPDF deletes an output path before writing it), with the arguments the service gives it, writing where the service does.
      const engine = VIA_GS.has(format)
        ? raw(
            'gs',
            deviceArgs(PDF, join(dir, `w%d.${format}`), {
              device: format === 'jpg' ? 'jpeg' : 'bmp16m',
              pages: firstRun,
              resolution: dpi,
              smoothText: false,
              smoothLines: false,
              smoothImages: false,
            }),
            dir,
          )
        : raw('mutool', drawArgs(PDF, '-', { pages: firstRun, resolution: dpi, colorspace: 'rgb', graphicsAa: 0, textAa: 0 }), dir);
      const perWorkerMb = (nodeKb / workers + engine.kb) / 1024;

      const results: Record<string, { s: number; kb: number } | null> = { mutool: null, gs: null, pdftoppm: null };
      if (format === 'png') results.mutool = raw('mutool', ['draw', '-q', '-A', '0', '-r', String(dpi), '-o', 'm%d.png', PDF], dir);
      if (GS_DEVICE[format])
        results.gs = raw('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', ...GS_DEVICE[format]!, `-r${dpi}`, '-o', `g%d.${format}`, PDF], dir);
      // pdftoppm's PNG at 300 dpi takes ~19 s here: measured at 150 dpi only, to keep the run short.
      if (POPPLER[format] && dpi === 150) results.pdftoppm = raw('pdftoppm', [POPPLER[format]!, '-r', String(dpi), PDF, 'p'], dir);
      const measured = Object.values(results).filter((r): r is { s: number; kb: number } => r !== null);
      const fastest = measured.sort((a, b) => a.s - b.s)[0];
      const cell = (r: { s: number } | null) => (r ? r.s.toFixed(2) : '-');
      const rawMb = fastest ? fastest.kb / 1024 : 0;
      console.log(
        `${format} ${dpi} | ${ours.toFixed(2)} | ${cell(results.mutool)} | ${cell(results.gs)} | ${cell(results.pdftoppm)} | ${fastest ? (ours / fastest.s).toFixed(2) : '-'} | ${perWorkerMb.toFixed(0)} (${(nodeKb / workers / 1024).toFixed(0)} + ${(engine.kb / 1024).toFixed(0)}) | ${fastest ? rawMb.toFixed(0) : '-'} | ${fastest ? (perWorkerMb / rawMb).toFixed(2) : '-'}`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  rmSync(work, { recursive: true, force: true });
}

await main();
