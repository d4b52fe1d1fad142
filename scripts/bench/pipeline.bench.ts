// Pipelines: a 3-step pipeline in one POST /pipeline against the same three steps sent by a client, over real HTTP
// on loopback, in the same run: (a) three calls that download each output and upload it to the next step,
// (b) three calls chained by id (outputId -> id, only the first upload and the last download cross the wire).
// Time is the median of 5 runs; bytes are what crossed the connection (request and response bodies).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { loadConfig } from '../../app/config.js';
import { createDeps } from '../../app/deps.js';
import { createApp } from '../../app/server.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const corpusDir = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
const work = mkdtempSync(join(tmpdir(), 'quire-bench-pipeline-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const deps = await createDeps(loadConfig({ DATA_DIR: join(work, 'data'), LOG_LEVEL: 'silent' }));
const server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' });
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

let moved = 0;
async function call(path: string, body: FormData | Record<string, unknown>): Promise<Record<string, any>> {
  const init =
    body instanceof FormData ? { method: 'POST', body } : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
  const req = new Request(`${base}${path}`, init);
  moved += (await req.clone().arrayBuffer()).byteLength;
  const res = await fetch(req);
  const text = await res.text();
  moved += Buffer.byteLength(text);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}
async function download(url: string): Promise<Buffer> {
  const b = Buffer.from(await (await fetch(url)).arrayBuffer());
  moved += b.length;
  return b;
}
const form = (file: Buffer, name: string, fields: Record<string, string>) => {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(file)]), name);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  return fd;
};

interface Case {
  name: string;
  file: string;
  steps: { operation: string; fields: Record<string, string> }[];
}
// A 4-page scan (the corpus page four times) and the 15-page Federal Register, 1.4 MB.
const scan = join(work, 'scan-4.pdf');
const linn = join(corpusDir, 'scans/linn-scan-ccitt.pdf');
execFileSync('qpdf', ['--empty', '--pages', linn, linn, linn, linn, '--', scan]);
const cases: Case[] = [
  {
    name: 'scan archive: OCR, compress, PDF/A (4 scanned pages)',
    file: scan,
    steps: [
      { operation: '/pdf-with-ocr-text', fields: { languages: 'English' } },
      { operation: '/compressed-pdf', fields: { compression_level: 'medium' } },
      { operation: '/pdfa', fields: { output_type: 'PDF/A-2b' } },
    ],
  },
  {
    name: 'light: linearize, split, encrypt each page (15 text pages)',
    file: join(corpusDir, 'pdf/federal-register-15-pages.pdf'),
    steps: [
      { operation: '/linearized-pdf', fields: {} },
      { operation: '/split-pdf', fields: {} },
      { operation: '/encrypted-pdf', fields: { new_open_password: 'bench-password' } },
    ],
  },
];

/** The three ways in turn, five rounds (so a busy moment of the machine hits each alike); medians. */
async function measure(ways: (() => Promise<unknown>)[]) {
  const runs = ways.map(() => ({ ms: [] as number[], bytes: 0 }));
  for (let round = 0; round < 5; round++) {
    for (const [i, fn] of ways.entries()) {
      moved = 0;
      const t0 = performance.now();
      await fn();
      runs[i].ms.push(performance.now() - t0);
      runs[i].bytes = moved;
    }
  }
  return runs.map((r) => ({ ms: median(r.ms), bytes: r.bytes }));
}

console.log(
  '| pipeline | one POST /pipeline | 3 calls, re-uploading each output | ratio | 3 calls chained by id | ratio | bytes moved (pipeline / re-uploading / by id) |',
);
console.log('|---|---|---|---|---|---|---|');
for (const c of cases) {
  const input = readFileSync(c.file);
  const downloadAll = async (body: Record<string, any>) => Promise.all([body.outputUrl].flat().map((u: string) => download(u)));
  const viaPipeline = async () => downloadAll(await call('/pipeline', form(input, basename(c.file), { steps: JSON.stringify(c.steps) })));
  const reuploading = async () => {
    let files: { bytes: Buffer; name: string }[] = [{ bytes: input, name: basename(c.file) }];
    for (const s of c.steps) {
      const next: { bytes: Buffer; name: string }[] = [];
      for (const f of files) {
        const body = await call(s.operation, form(f.bytes, f.name, s.fields));
        for (const u of [body.outputUrl].flat() as string[]) next.push({ bytes: await download(u), name: `${f.name}.pdf` });
      }
      files = next;
    }
  };
  const chained = async () => {
    let ids: string[] = [];
    for (const [i, s] of c.steps.entries()) {
      const bodies =
        i === 0
          ? [await call(s.operation, form(input, basename(c.file), s.fields))]
          : await Promise.all(ids.map((id) => call(s.operation, { id, ...s.fields })));
      ids = bodies.flatMap((b) => [b.outputId].flat() as string[]);
      if (i === c.steps.length - 1) await Promise.all(bodies.flatMap((b) => [b.outputUrl].flat() as string[]).map(download));
    }
  };
  const [pipeline, reupload, byId] = await measure([viaPipeline, reuploading, chained]);
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const mb = (b: number) => `${(b / 1048576).toFixed(2)} MB`;
  console.log(
    `| ${c.name} | ${s(pipeline.ms)} | ${s(reupload.ms)} | ${(reupload.ms / pipeline.ms).toFixed(2)}x | ${s(byId.ms)} | ${(byId.ms / pipeline.ms).toFixed(2)}x | ${mb(pipeline.bytes)} / ${mb(reupload.bytes)} / ${mb(byId.bytes)} (input ${mb(input.length)}) |`,
  );
}
server.close();
await deps.jobs.drain(1000);
process.exit(0);
