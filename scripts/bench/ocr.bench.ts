// npx tsx scripts/bench/ocr.bench.ts: /pdf-with-ocr-text against OCRmyPDF (Debian's ocrmypdf 14, the reference
// tool) on the corpus scans, in the same run: wall time as a ratio, and the character error rate (CER) of the
// text each one puts into the PDF (pdftotext -raw) against the known text of corpus/MANIFEST.md.
// OCRmyPDF runs twice: with its defaults (PDF/A output, a Ghostscript round trip) and with --output-type pdf.
// Both get --rotate-pages on the file whose scans are turned (ours reads turned pages by itself).
// Each figure is the best of RUNS runs, the tools taking turns (other work on the machine skews single runs).
// Skips OCRmyPDF when it is not installed. Images (tif, png) are wrapped in PDFs first (sharp + pdf-lib).
// CPU seconds (user + system, of this process and the engines it waited for) are printed beside wall time: on a
// shared machine they measure each tool's work better than the wall clock does. OCR_BENCH_ONLY=<text> runs only
// the files whose name contains it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import op from '../../app/operations/pdf-with-ocr-text.js';
import { LANGUAGES, type Language, ocrStageMs } from '../../app/render/index.js';

const CORPUS = process.env.QUIRE_CORPUS ?? resolve(import.meta.dirname, '../../../shared/corpus');
const corpus = (rel: string) => join(CORPUS, rel);
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-ocr-'));

const sh = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** An image-only PDF of one image, its page sized from the image's resolution. */
async function imagePdf(image: string, dpi: number, out: string): Promise<string> {
  const { data, info } = await sharp(image).png().toBuffer({ resolveWithObject: true });
  const doc = await PDFDocument.create();
  const png = await doc.embedPng(data);
  doc
    .addPage([(info.width * 72) / dpi, (info.height * 72) / dpi])
    .drawImage(png, { x: 0, y: 0, width: (info.width * 72) / dpi, height: (info.height * 72) / dpi });
  writeFileSync(out, await doc.save());
  return out;
}

const norm = (s: string) =>
  s
    .normalize('NFKC')
    .replace(/[‘’‚‛]/g, "'")
    .replace(/[“”„‟«»]/g, '"')
    .replace(/[‐‑‒–—]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();

/** Levenshtein distance; with `within`, the best match of `truth` anywhere inside `text` (truth is an excerpt). */
function distance(truth: string, text: string, within = false): number {
  let prev = new Uint32Array(text.length + 1);
  let cur = new Uint32Array(text.length + 1);
  for (let j = 0; j <= text.length; j++) prev[j] = within ? 0 : j;
  for (let i = 1; i <= truth.length; i++) {
    cur[0] = i;
    const c = truth.charCodeAt(i - 1);
    for (let j = 1; j <= text.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (c === text.charCodeAt(j - 1) ? 0 : 1));
    }
    [prev, cur] = [cur, prev];
  }
  return within ? Math.min(...prev) : prev[text.length];
}

interface Case {
  name: string;
  pdf: string;
  languages: Language[];
  /** Known text per page (one entry per page), or one excerpt to be found in the whole text. */
  truth: string[];
  excerpt?: boolean;
  /** No known text: timed only. */
  timeOnly?: boolean;
  turned?: boolean;
}

const manifestText = (file: string) => {
  const row = readFileSync(corpus('MANIFEST.md'), 'utf8')
    .split('\n')
    .find((l) => l.includes(`\`${file}\``))!;
  return /'([^']+(?:'[^' |][^']*)*)'/.exec(
    row.slice(row.indexOf('visible in the image') > 0 ? row.indexOf('visible in the image') : row.indexOf('should contain')),
  )![1];
};

async function cases(): Promise<Case[]> {
  const linn = readFileSync(corpus('scans/linn-brochure-two-columns.expected.txt'), 'utf8');
  const linn8 = join(dir, 'linn-8-pages.pdf');
  sh('qpdf', ['--empty', '--pages', ...Array(8).fill(corpus('scans/linn-scan-ccitt.pdf')), '--', linn8]);
  // A 150 dpi grey scan of a three-column text (no known text, so timed only).
  const fr150 = join(dir, 'federal-register-150dpi.pdf');
  sh('gs', [
    '-q',
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-sDEVICE=pdfimage8',
    '-r150',
    '-dFirstPage=1',
    '-dLastPage=8',
    `-sOutputFile=${fr150}`,
    corpus('pdf/federal-register-15-pages.pdf'),
  ]);
  return [
    {
      name: 'phototest.tif (1 p)',
      pdf: await imagePdf(corpus('scans/tesseract-phototest.tif'), 200, join(dir, 'phototest.pdf')),
      languages: ['English'],
      truth: [readFileSync(corpus('scans/tesseract-phototest.expected.txt'), 'utf8')],
    },
    {
      name: 'eurotext.tif (1 p, 6 langs)',
      pdf: await imagePdf(corpus('scans/tesseract-eurotext-multilingual.tif'), 300, join(dir, 'eurotext.pdf')),
      languages: ['English', 'German', 'French', 'Italian', 'Spanish', 'Portuguese'],
      truth: [readFileSync(corpus('scans/tesseract-eurotext-multilingual.expected.txt'), 'utf8')],
    },
    {
      name: 'linn.png (1 p)',
      pdf: await imagePdf(corpus('scans/linn-brochure-two-columns.png'), 300, join(dir, 'linn.pdf')),
      languages: ['English'],
      truth: [linn],
    },
    { name: 'linn-scan-ccitt.pdf (1 p)', pdf: corpus('scans/linn-scan-ccitt.pdf'), languages: ['English'], truth: [linn] },
    { name: 'image-jbig2-scan.pdf (1 p)', pdf: corpus('pdf/image-jbig2-scan.pdf'), languages: ['English'], truth: [linn] },
    {
      name: 'french-diacritics-scan.pdf (1 p, fra)',
      pdf: corpus('scans/french-diacritics-scan.pdf'),
      languages: ['French'],
      truth: [manifestText('scans/french-diacritics-scan.pdf')],
    },
    {
      name: 'huckleberry-finn-p22-scan.pdf (1 p, excerpt)',
      pdf: corpus('scans/huckleberry-finn-p22-scan.pdf'),
      languages: ['English'],
      truth: [manifestText('scans/huckleberry-finn-p22-scan.pdf')],
      excerpt: true,
    },
    {
      name: 'linn-scan-4-orientations.pdf (4 p)',
      pdf: corpus('scans/linn-scan-4-orientations.pdf'),
      languages: ['English'],
      truth: Array(4).fill(linn),
      turned: true,
    },
    { name: 'linn-scan-ccitt x8 (8 p)', pdf: linn8, languages: ['English'], truth: Array(8).fill(linn) },
    { name: 'federal-register 150 dpi scan (8 p)', pdf: fr150, languages: ['English'], truth: [], timeOnly: true },
  ];
}

function cer(c: Case, out: string): number {
  if (c.timeOnly) return NaN;
  if (c.excerpt) {
    const truth = norm(c.truth[0]);
    return distance(truth, norm(sh('pdftotext', ['-raw', out, '-'])), true) / truth.length;
  }
  let errors = 0;
  let chars = 0;
  c.truth.forEach((t, i) => {
    const truth = norm(t);
    errors += distance(truth, norm(sh('pdftotext', ['-raw', '-f', String(i + 1), '-l', String(i + 1), out, '-'])));
    chars += truth.length;
  });
  return errors / chars;
}

type Stages = typeof ocrStageMs;

/** CPU seconds used so far by this process and by the children it has waited for (/proc/self/stat, in ticks of 1/100 s). */
function cpuSeconds(): number {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const { user, system } = process.cpuUsage();
  // Fields 16 and 17 of stat (cutime, cstime), counted from the state field (3).
  return (user + system) / 1e6 + (Number(f[13]) + Number(f[14])) / 100;
}

interface Timing {
  s: number;
  cpu: number;
  out: string;
}

async function ours(c: Case, work: string): Promise<Timing & { stages: Stages }> {
  for (const k of Object.keys(ocrStageMs) as (keyof Stages)[]) ocrStageMs[k] = 0;
  const input = { id: 'bench', name: 'in.pdf', type: 'application/pdf', path: c.pdf };
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const result = await op.run({
    fields: { languages: c.languages, pages: '1-last', output: undefined },
    inputs: { file: [input] },
    input,
    dir: work,
    signal: new AbortController().signal,
    progress: () => {},
    outputName: 'out',
    timeoutMs: 600_000,
    urlPolicy: undefined as never,
    concurrency: 1,
  });
  return { s: (performance.now() - t0) / 1000, cpu: cpuSeconds() - cpu0, out: result.files![0].path, stages: { ...ocrStageMs } };
}

function ocrmypdf(c: Case, work: string, extra: string[]): Timing {
  const out = join(work, 'ocrmypdf.pdf');
  const args = [
    '-q',
    '-l',
    c.languages.map((l) => LANGUAGES[l]).join('+'),
    '--jobs',
    String(availableParallelism()),
    ...(c.turned ? ['--rotate-pages'] : []),
    ...extra,
    c.pdf,
    out,
  ];
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const r = spawnSync('ocrmypdf', args, { cwd: work, encoding: 'utf8', env: { ...process.env, OMP_THREAD_LIMIT: '1' } });
  if (r.status !== 0) throw new Error(`ocrmypdf: ${r.stderr}`);
  return { s: (performance.now() - t0) / 1000, cpu: cpuSeconds() - cpu0, out };
}

const RUNS = Number(process.argv[2] ?? 2);

/** The fastest of RUNS runs of each tool, taking turns; `cpu` is the least CPU time of its runs. */
async function best<T extends Timing>(tools: (() => Promise<T>)[]): Promise<T[]> {
  const results: (T | null)[] = tools.map(() => null);
  for (let r = 0; r < RUNS; r++) {
    for (const [i, tool] of tools.entries()) {
      const x = await tool();
      const cpu = Math.min(x.cpu, results[i]?.cpu ?? Infinity);
      if (!results[i] || x.s < results[i]!.s) results[i] = x;
      results[i]!.cpu = cpu;
    }
  }
  return results as T[];
}

async function main() {
  const hasPeer = spawnSync('ocrmypdf', ['--version']).status === 0;
  console.log(
    `${availableParallelism()} cores; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; best of ${RUNS} runs; OCRmyPDF ${hasPeer ? sh('ocrmypdf', ['--version']).trim() : 'not installed: peer columns skipped'}`,
  );
  console.log(
    'file | ours s | ocrmypdf s | ocrmypdf pdf s | ocrmypdf / ours | ocrmypdf pdf / ours | ours CPU s | ocrmypdf CPU s | ocrmypdf pdf CPU s | CPU ocrmypdf / ours | CPU ocrmypdf pdf / ours | ours CER | ocrmypdf CER | ocrmypdf pdf CER',
  );
  const pct = (x: number) => (Number.isNaN(x) ? '-' : `${(x * 100).toFixed(1)}%`);
  const total = { ours: 0, peer: 0, peerPdf: 0, oursCpu: 0, peerCpu: 0, peerPdfCpu: 0 };
  const stages: [string, number, Stages][] = [];
  const only = process.env.OCR_BENCH_ONLY;
  for (const c of (await cases()).filter((x) => !only || x.name.includes(only))) {
    const run = (name: string) => mkdtempSync(join(dir, `${name}-`));
    const [a, b, p] = await best<Timing & { stages?: Stages }>([
      () => ours(c, run('ours')),
      ...(hasPeer ? [async () => ocrmypdf(c, run('ocrmypdf'), []), async () => ocrmypdf(c, run('ocrmypdf-pdf'), ['--output-type', 'pdf'])] : []),
    ]);
    stages.push([c.name, a.s, a.stages!]);
    const row = [c.name, a.s.toFixed(2)];
    if (hasPeer) {
      row.push(b.s.toFixed(2), p.s.toFixed(2), (b.s / a.s).toFixed(2), (p.s / a.s).toFixed(2));
      row.push(a.cpu.toFixed(2), b.cpu.toFixed(2), p.cpu.toFixed(2), (b.cpu / a.cpu).toFixed(2), (p.cpu / a.cpu).toFixed(2));
      row.push(pct(cer(c, a.out)), pct(cer(c, b.out)), pct(cer(c, p.out)));
      total.peer += b.s;
      total.peerPdf += p.s;
      total.peerCpu += b.cpu;
      total.peerPdfCpu += p.cpu;
    } else {
      row.push('-', '-', '-', '-', a.cpu.toFixed(2), '-', '-', '-', '-', pct(cer(c, a.out)), '-', '-');
    }
    total.ours += a.s;
    total.oursCpu += a.cpu;
    console.log(row.join(' | '));
  }
  if (hasPeer) {
    const r = (x: number, y: number) => (x / y).toFixed(2);
    console.log(
      [
        'all',
        ...[total.ours, total.peer, total.peerPdf].map((x) => x.toFixed(2)),
        r(total.peer, total.ours),
        r(total.peerPdf, total.ours),
        ...[total.oursCpu, total.peerCpu, total.peerPdfCpu].map((x) => x.toFixed(2)),
        r(total.peerCpu, total.oursCpu),
        r(total.peerPdfCpu, total.oursCpu),
        '',
        '',
        '',
      ].join(' | '),
    );
  }
  // Seconds summed over pages (the pages of a document are read on all cores at once, so a document's stages add
  // up to more than its wall time); nothing is optimised afterwards (no Ghostscript pass: the text is added to the
  // original file as an incremental update).
  console.log('\nWhere our time goes (best run; survey and layer per document, the others summed over pages):');
  console.log('file | wall s | survey s | draw s | tesseract s | reread (psm 1) s | text layer s | optimisation s');
  const sum = { wall: 0, survey: 0, draw: 0, tesseract: 0, reread: 0, layer: 0 };
  for (const [name, wall, st] of stages) {
    console.log([name, wall.toFixed(2), ...[st.survey, st.draw, st.tesseract, st.reread, st.layer].map((ms) => (ms / 1000).toFixed(2)), '0'].join(' | '));
    sum.wall += wall;
    for (const k of Object.keys(st) as (keyof Stages)[]) sum[k] += st[k];
  }
  console.log(
    ['all', sum.wall.toFixed(2), ...[sum.survey, sum.draw, sum.tesseract, sum.reread, sum.layer].map((ms) => (ms / 1000).toFixed(2)), '0'].join(' | '),
  );
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  rmSync(dir, { recursive: true, force: true });
}

await main();
