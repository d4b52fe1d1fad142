// npx tsx scripts/bench/redact.bench.ts: /pdf-with-redacted-text-preview then /pdf-with-redacted-text-applied
// (their run(), no HTTP) on the 15-page Federal Register, against one bare `mutool run` script doing the same
// literal redactions with MuPDF's own search (page.search, createAnnotation, applyRedactions, save), best of 3.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import applied from '../../app/operations/pdf-with-redacted-text-applied.js';
import preview from '../../app/operations/pdf-with-redacted-text-preview.js';
import type { Redaction } from '../../app/redact/index.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const PDF = resolve(root, '../shared/corpus/pdf/federal-register-15-pages.pdf');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-redact-'));
const LITERALS = ['Boeing Company', 'regulations.gov', 'August 6, 2020', 'Airworthiness'];

const BARE = `
var doc = new PDFDocument(scriptArgs[0]);
var needles = JSON.parse(scriptArgs[2]);
for (var i = 0; i < doc.countPages(); i++) {
  var page = doc.loadPage(i);
  for (var n = 0; n < needles.length; n++) {
    var hits = page.search(needles[n]);
    for (var h = 0; h < hits.length; h++) { var a = page.createAnnotation("Redact"); a.setQuadPoints(hits[h]); a.update(); }
  }
  page.applyRedactions(true, 2);
}
doc.save(scriptArgs[1], "garbage,compress");
`;

async function ours(redactions: Redaction[], dir: string): Promise<number> {
  const ctx = {
    dir,
    signal: new AbortController().signal,
    timeoutMs: 600_000,
    progress: () => {},
    outputName: 'out',
    inputs: {},
    urlPolicy: {} as never,
    concurrency: 1,
  };
  const input = { id: 'x', name: 'in.pdf', type: 'application/pdf', path: PDF };
  const t0 = performance.now();
  const p = await preview.run({ ...ctx, input, fields: { redactions } } as never);
  const marked = { ...input, path: p.files![0].path };
  const dir2 = mkdtempSync(join(work, 'apply-'));
  await applied.run({ ...ctx, dir: dir2, input: marked, fields: { rgb_color: [0, 0, 0] } } as never);
  return (performance.now() - t0) / 1000;
}

function bare(dir: string): number {
  const script = join(dir, 'bare.js');
  writeFileSync(script, BARE);
  const t0 = performance.now();
  const r = spawnSync('mutool', ['run', script, PDF, join(dir, 'bare.pdf'), JSON.stringify(LITERALS)], { cwd: dir });
  if (r.status !== 0) throw new Error(String(r.stderr));
  return (performance.now() - t0) / 1000;
}

const best = async (f: () => Promise<number> | number) => {
  let b = Infinity;
  for (let i = 0; i < 3; i++) b = Math.min(b, await f());
  return b;
};

async function main() {
  const literal = LITERALS.map((value) => ({ type: 'literal' as const, value }));
  const presets: Redaction[] = [...literal, ...(['email', 'url', 'date', 'phone_number'] as const).map((value) => ({ type: 'preset' as const, value }))];
  const raw = await best(() => bare(mkdtempSync(join(work, 'bare-'))));
  const a = await best(() => ours(literal, mkdtempSync(join(work, 'ours-'))));
  const b = await best(() => ours(presets, mkdtempSync(join(work, 'ours-'))));
  console.log('15-page Federal Register, preview + apply, best of 3');
  console.log('case | ours s | bare mutool s | ratio');
  console.log(`4 literals | ${a.toFixed(2)} | ${raw.toFixed(2)} | ${(a / raw).toFixed(2)}`);
  console.log(`4 literals + 4 presets | ${b.toFixed(2)} | ${raw.toFixed(2)} (literals only) | ${(b / raw).toFixed(2)}`);
}

main().finally(() => rmSync(work, { recursive: true, force: true }));
