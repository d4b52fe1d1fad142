// npx tsx scripts/bench/optimise.bench.ts: /compressed-pdf levels (compressPdf end to end) against the bare commands
// a user would type, on image-heavy and text-only corpus PDFs, in the same run: size as a % of the input and time.
// Bare commands: `qpdf --recompress-flate --compression-level=9 --object-streams=generate` and Ghostscript's
// presets `-dPDFSETTINGS=/ebook` (150 dpi) and `/screen` (72 dpi). Also /pdfa (PDF/A-2b) against bare gs -dPDFA=2.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressPdf, LEVELS } from '../../app/rewrite/index.js';
import { GS_ICC_DIR, outputIntentProlog, pdfwriteArgs } from '../../engines/ghostscript-pdfwrite.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const corpus = (p: string) => resolve(root, '../shared/corpus', p);
const FILES = [
  ['image', 'scans/french-diacritics-scan.pdf'],
  ['image', 'pdf/image-cmyk.pdf'],
  ['image', 'scans/huckleberry-finn-p22-scan.pdf'],
  ['image', 'pdf/image-cmyk-jpeg-devicecmyk.pdf'],
  ['mixed', 'pdf/google-docs-export.pdf'],
  ['mixed', 'pdf/federal-register-15-pages.pdf'],
  ['text', 'pdf/multicolumn-3-pages.pdf'],
  ['text', 'pdf/standard-14-fonts-14-pages.pdf'],
  ['text', 'pdf/tagged-word365.pdf'],
  ['text', 'pdf/table-nics-background-checks-landscape.pdf'],
] as const;

const work = mkdtempSync(join(tmpdir(), 'quire-bench-opt-'));
const size = (p: string) => statSync(p).size;
const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(0)}%`;

function bare(cmd: string, args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0 && !(cmd === 'qpdf' && r.status === 3)) throw new Error(`${cmd} ${r.status}: ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await f();
  return [r, (performance.now() - t0) / 1000];
}

async function main() {
  const ctx = { cwd: work, timeoutMs: 300_000 };
  console.log('file (kind, KB) | low: ours / qpdf | medium: ours / gs ebook | high: ours / gs screen | s ours low/med/high | s qpdf / ebook / screen');
  const flags: string[] = [];
  const totals = { in: 0, low: 0, qpdf: 0, medium: 0, ebook: 0, high: 0, screen: 0 };
  for (const [kind, rel] of FILES) {
    const input = corpus(rel);
    const out: Record<string, number> = {};
    const secs: Record<string, number> = {};
    for (const level of ['low', 'medium', 'high'] as const) {
      const dir = mkdtempSync(join(work, `${level}-`));
      const pages = Number(spawnSync('qpdf', ['--show-npages', input], { encoding: 'utf8' }).stdout.trim());
      const [r, s] = await timed(() => compressPdf(input, dir, { settings: LEVELS[level], objectStreams: true, fallback: true }, { ...ctx, cwd: dir, pages }));
      out[level] = r.size;
      secs[level] = s;
    }
    const q = join(work, 'q.pdf');
    secs.qpdf = bare('qpdf', ['--recompress-flate', '--compression-level=9', '--object-streams=generate', input, q]);
    out.qpdf = size(q);
    for (const preset of ['ebook', 'screen']) {
      const o = join(work, `${preset}.pdf`);
      const t0 = performance.now();
      const r = spawnSync('gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=pdfwrite', `-dPDFSETTINGS=/${preset}`, `-sOutputFile=${o}`, input], {
        cwd: work,
        encoding: 'utf8',
      });
      secs[preset] = (performance.now() - t0) / 1000;
      // Bare gs "succeeds" on files it cannot read (an empty page): counted as the input's size, flagged with *.
      const broken = /Couldn't initialise file/.test(r.stdout + r.stderr);
      out[preset] = broken ? size(input) : size(o);
      if (broken) flags.push(`${basename(rel)} ${preset}`);
    }
    const n = size(input);
    totals.in += n;
    for (const k of Object.keys(out) as (keyof typeof totals)[]) totals[k] += out[k];
    console.log(
      `${basename(rel)} (${kind}, ${(n / 1024).toFixed(0)}) | ${pct(out.low, n)} / ${pct(out.qpdf, n)} | ${pct(out.medium, n)} / ${pct(out.ebook, n)} | ${pct(out.high, n)} / ${pct(out.screen, n)} | ${[secs.low, secs.medium, secs.high].map((s) => s.toFixed(2)).join(' / ')} | ${[secs.qpdf, secs.ebook, secs.screen].map((s) => s.toFixed(2)).join(' / ')}`,
    );
  }
  if (flags.length) console.log(`bare gs wrote an empty page instead of failing (counted as no reduction): ${flags.join(', ')}`);
  const t = totals;
  console.log(
    `all files (${(t.in / 1024).toFixed(0)} KB) | ${pct(t.low, t.in)} / ${pct(t.qpdf, t.in)} | ${pct(t.medium, t.in)} / ${pct(t.ebook, t.in)} | ${pct(t.high, t.in)} / ${pct(t.screen, t.in)} |`,
  );

  // PDF/A-2b: our prolog-driven gs run against the same bare command (the service adds checks and qpdf reads).
  const prolog = join(work, 'pdfa.ps');
  const icc = `${GS_ICC_DIR}/srgb.icc`;
  writeFileSync(prolog, outputIntentProlog({ profile: icc, components: 3, subtype: 'GTS_PDFA1', identifier: 'sRGB IEC61966-2.1' }));
  const fed = corpus('pdf/federal-register-15-pages.pdf');
  const ours = bare('gs', pdfwriteArgs(fed, join(work, 'a.pdf'), { pdfa: 2, colorConversion: 'RGB', readable: [icc], prologs: [prolog] }));
  const plain = bare('gs', [
    '-dSAFER',
    '-dBATCH',
    '-dNOPAUSE',
    '-q',
    '-sDEVICE=pdfwrite',
    '-dPDFA=2',
    '-dPDFACompatibilityPolicy=1',
    '-sColorConversionStrategy=RGB',
    `-sOutputFile=${join(work, 'b.pdf')}`,
    fed,
  ]);
  console.log(
    `PDF/A-2b of the 15-page Federal Register: gs with our OutputIntent prolog ${ours.toFixed(2)} s, bare gs -dPDFA=2 (no OutputIntent) ${plain.toFixed(2)} s`,
  );
  rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
