// npm run bench -- orientation: /rotated-pdf rotation=auto on every scan of the corpus, each rescaled to 150, 200
// and 300 ppi (drawn by MuPDF at that resolution, bi-level scans thresholded back to 1 bit with sharp, put back
// into a PDF by the project's own image-to-PDF code at that resolution) and shown turned 0, 90, 180 and 270
// degrees (qpdf --rotate). A page ends upright (turned right, or already upright and left), left alone (turned,
// but left as it was: undecided), or turned wrongly. A picture without text must be left alone. Each ppi is one
// request of all its pages, read one page per core as the server does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { DEFAULT_READ_BUDGETS, withReadBudgets } from '../../app/document/index.js';
import type { PageOrientation } from '../../app/impose/index.js';
import op from '../../app/operations/rotated-pdf.js';
import { imagesToPdf } from '../../engines/image-pdf.js';

const CORPUS = process.env.QUIRE_CORPUS ?? resolve(import.meta.dirname, '../../../shared/corpus');
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-orientation-'));

const sh = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

interface Source {
  file: string;
  page: number;
  colors: 'mono' | 'gray' | 'rgb';
  /** The clockwise turn that makes the page upright as it is in the corpus (from MANIFEST.md); null: no text. */
  upright: number | null;
}

// Every scan in the corpus (MANIFEST.md's scans/ and the image-only PDFs with text), and a picture without text.
const SOURCES: Source[] = [
  { file: 'scans/huckleberry-finn-p22-scan.pdf', page: 1, colors: 'rgb', upright: 0 },
  { file: 'scans/french-diacritics-scan.pdf', page: 1, colors: 'gray', upright: 0 },
  { file: 'scans/linn-scan-ccitt.pdf', page: 1, colors: 'mono', upright: 0 },
  { file: 'pdf/image-jbig2-scan.pdf', page: 1, colors: 'mono', upright: 0 },
  { file: 'scans/linn-brochure-two-columns.png', page: 1, colors: 'mono', upright: 0 },
  { file: 'scans/tesseract-phototest.tif', page: 1, colors: 'mono', upright: 0 },
  { file: 'scans/tesseract-phototest-rotated-180.png', page: 1, colors: 'mono', upright: 180 },
  { file: 'scans/tesseract-eurotext-multilingual.tif', page: 1, colors: 'mono', upright: 0 },
  // Tesseract's orientation 90 (page 2) and 270 (page 4) are turns of 270 and 90 clockwise.
  ...[0, 270, 180, 90].map((upright, i) => ({ file: 'scans/linn-scan-4-orientations.pdf', page: i + 1, colors: 'mono' as const, upright })),
  { file: 'pdf/image-grayscale-flate.pdf', page: 1, colors: 'gray', upright: null },
];
const TURNS = [0, 90, 180, 270];
const PPIS = process.argv.slice(2).map(Number).filter(Boolean).length ? process.argv.slice(2).map(Number).filter(Boolean) : [150, 200, 300];

/** The source page as a one-page scan at `ppi`. */
async function rescaled(s: Source, ppi: number, k: number): Promise<string> {
  const drawn = join(dir, `src-${k}-${ppi}.png`);
  sh('mutool', ['draw', '-q', '-r', String(ppi), '-c', s.colors === 'rgb' ? 'rgb' : 'gray', '-o', drawn, join(CORPUS, s.file), String(s.page)]);
  const png = join(dir, `scan-${k}-${ppi}.png`);
  let img = sharp(drawn).withMetadata({ density: ppi });
  if (s.colors === 'mono') img = img.threshold(128).png({ colours: 2, palette: true });
  await img.toFile(png);
  const pdf = join(dir, `scan-${k}-${ppi}.pdf`);
  await imagesToPdf([png], pdf, { lossless: true, maxDpi: null }, { cwd: dir, signal: new AbortController().signal, timeoutMs: 60_000 });
  return pdf;
}

async function main() {
  console.log(
    `${availableParallelism()} cores; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log('ppi | turn | pages | upright | left alone | turned wrongly | textless left alone | s');
  const total = { pages: 0, upright: 0, left: 0, wrong: 0, textless: 0, textlessLeft: 0 };
  const wrongs: string[] = [];
  const lefts: string[] = [];
  for (const ppi of PPIS) {
    // One document per ppi: every source, each turned four ways; the page order says what each page is.
    const scans = await Promise.all(SOURCES.map((s, k) => rescaled(s, ppi, k)));
    const turned = TURNS.map((t) => {
      const out = join(dir, `all-${ppi}-${t}.pdf`);
      sh('qpdf', ['--empty', '--pages', ...scans, '--', out]);
      if (!t) return out;
      const rot = join(dir, `all-${ppi}-${t}-r.pdf`);
      sh('qpdf', [`--rotate=+${t}`, out, rot]);
      return rot;
    });
    const all = join(dir, `all-${ppi}.pdf`);
    sh('qpdf', ['--empty', '--pages', ...turned, '--', all]);
    const input = { id: 'bench', name: 'in.pdf', type: 'application/pdf', path: all };
    const work = mkdtempSync(join(dir, `run-${ppi}-`));
    const t0 = performance.now();
    // The decisions are measured here, not the time: a loaded machine must not cut a page's drawing short.
    const budgets = { ...DEFAULT_READ_BUDGETS, renderPageMs: 300_000 };
    const result = await withReadBudgets(budgets, () =>
      op.run({
        fields: { rotation: 'auto', pages: '1-last', min_confidence: 14, output: undefined },
        inputs: { file: [input] },
        input,
        dir: work,
        signal: new AbortController().signal,
        progress: () => {},
        outputName: 'out',
        timeoutMs: 3_600_000,
      } as never),
    );
    const s = (performance.now() - t0) / 1000;
    const found = (result.json as { orientations: PageOrientation[] }).orientations;
    TURNS.forEach((t, ti) => {
      const row = { pages: 0, upright: 0, left: 0, wrong: 0, textlessLeft: 0 };
      SOURCES.forEach((src, k) => {
        const f = found[ti * SOURCES.length + k];
        const name = `${src.file}${src.page > 1 ? ` p${src.page}` : ''} at ${ppi} ppi +${t}`;
        const why = `${f.reason}; ${f.readings.map((r) => `${r.of} ${r.dpi} dpi: ${r.rotate ?? '-'} (${r.confidence})`).join(', ')}`;
        if (src.upright === null) {
          total.textless++;
          if (!f.turn) row.textlessLeft++;
          else wrongs.push(`${name} (textless) turned ${f.turn}: ${why}`);
          return;
        }
        row.pages++;
        const needed = (src.upright - t + 360) % 360;
        if ((f.turn ?? 0) === needed) row.upright++;
        else if (f.turn === null) {
          row.left++;
          lefts.push(`${name}: ${why}`);
        } else {
          row.wrong++;
          wrongs.push(`${name} turned ${f.turn} (needed ${needed}): ${why}`);
        }
      });
      console.log(`${ppi} | +${t} | ${row.pages} | ${row.upright} | ${row.left} | ${row.wrong} | ${row.textlessLeft}/1 | ${ti ? '' : s.toFixed(1)}`);
      total.pages += row.pages;
      total.upright += row.upright;
      total.left += row.left;
      total.wrong += row.wrong;
      total.textlessLeft += row.textlessLeft;
    });
  }
  console.log(
    `all | | ${total.pages} | ${total.upright} | ${total.left} | ${total.wrong} | ${total.textlessLeft}/${total.textless} | load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  for (const l of lefts) console.log(`left alone: ${l}`);
  for (const w of wrongs) console.log(`WRONG: ${w}`);
  rmSync(dir, { recursive: true, force: true });
}

await main();
