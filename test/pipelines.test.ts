import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, pdfPages, startApp, type TestApp, tool, until, uploadId } from './helpers.js';

// POST /pipeline and named pipelines: real steps on real files, outputs read back with qpdf, pdftotext and sharp.
const FOUR = corpus('pdf/text-4-pages-pdflatex.pdf');
const pipelinesDir = mkdtempSync(join(tmpdir(), 'quire-pipelines-'));
writeFileSync(
  join(pipelinesDir, 'archive.json'),
  JSON.stringify({
    description: 'scan archive',
    steps: [
      { operation: '/compressed-pdf', fields: { compression_level: 'medium' } },
      { operation: '/pdfa', fields: { output_type: 'PDF/A-2b' } },
    ],
  }),
);
writeFileSync(join(pipelinesDir, 'broken.json'), JSON.stringify({ steps: [{ operation: '/no-such-thing' }] }));
writeFileSync(join(pipelinesDir, 'not json.json'), '{');
let t: TestApp;

test.before(async () => {
  t = await startApp({ PIPELINES_DIR: pipelinesDir, METRICS: 'on' });
});
test.after(async () => t.close());

const steps = (...s: unknown[]) => JSON.stringify(s);
const pageTexts = (pdf: string) =>
  tool('pdftotext', ['-layout', pdf, '-'])
    .split('\f')
    .map((p) => p.replace(/\s+/g, ' ').trim());

test('fan-out then fan-in: split, compress each page, merge back: 4 pages in their order', async () => {
  const original = pageTexts(FOUR);
  const body = await expectOk(
    await t.form('/pipeline', {
      file: { file: FOUR },
      steps: steps({ operation: '/split-pdf' }, { operation: 'compressed-pdf', fields: { compression_level: 'medium' } }, { operation: '/merged-pdf' }),
    }),
  );
  assert.type(body.outputId, 'string');
  assert.type(body.inputId, 'string');
  assert.equal(
    body.steps.map((s: { operation: string }) => s.operation),
    ['/split-pdf', '/compressed-pdf', '/merged-pdf'],
  );
  assert.is(body.steps[0].outputId.length, 4);
  assert.is(body.steps[1].outputId.length, 4);
  assert.ok(body.steps.every((s: { ms: number }) => Number.isInteger(s.ms) && s.ms >= 0));
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 4);
  const texts = pageTexts(out);
  for (let i = 0; i < 4; i++) assert.is(texts[i].slice(0, 60), original[i].slice(0, 60), `page ${i + 1}`);
  // Intermediate files stay on the server, as resources of the requester.
  const mid = await t.request(`/resource/${body.steps[0].outputId[2]}`);
  assert.is(pdfPages(await saveAs(mid)), 1);
});

async function saveAs(res: Response): Promise<string> {
  const p = join(mkdtempSync(join(tmpdir(), 'quire-pl-')), 'x.pdf');
  writeFileSync(p, Buffer.from(await res.arrayBuffer()));
  return p;
}

test('fan-out to the end: every page as PNG, one output per page', async () => {
  const body = await expectOk(
    await t.json('/pipeline', {
      id: await uploadId(t, FOUR),
      steps: [
        { operation: '/split-pdf', fields: { pages: ['1-2', '3-4'] } },
        { operation: '/png', fields: { resolution: '30' } },
      ],
    }),
  );
  assert.is(body.outputId.length, 4, 'two halves, two pages each');
  for (const url of body.outputUrl) {
    const meta = await sharp(await t.download(url)).metadata();
    assert.is(meta.format, 'png');
    assert.ok(meta.width! > 100 && meta.width! < 400, String(meta.width));
  }
});

test('several inputs fan in at a merge; a JSON operation last answers its JSON', async () => {
  const a = await uploadId(t, FOUR);
  const b = await uploadId(t, corpus('pdf/rotation-2-pages.pdf'));
  const merged = await expectOk(await t.json('/pipeline', { id: [a, b], steps: [{ operation: '/merged-pdf' }] }));
  assert.is(pdfPages(await t.download(merged.outputUrl)), 6);
  assert.equal(merged.inputId, [a, b]);
  const info = await expectOk(
    await t.json('/pipeline', {
      id: a,
      steps: [
        { operation: '/split-pdf', fields: { pages: ['1', '2-4'] } },
        { operation: '/pdf-info', fields: { queries: 'page_count' } },
      ],
    }),
  );
  assert.equal(
    info.results.map((r: { page_count: number }) => r.page_count),
    [1, 3],
  );
  assert.not.ok('outputId' in info);
});

test('a step with a second input (an image by id) works on the file of the step before, not on its image', async () => {
  const image = await uploadId(t, corpus('images/hopper.jpg'));
  const body = await expectOk(
    await t.json('/pipeline', {
      id: await uploadId(t, FOUR),
      steps: [
        { operation: '/split-pdf', fields: { pages: ['1-2'] } },
        { operation: '/pdf-with-added-image', fields: { image_id: image, x: 20, y: 20, page: 2 } },
      ],
    }),
  );
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 2, 'the split half, with the image on its page 2');
  assert.match(tool('pdfimages', ['-list', '-f', '2', '-l', '2', out]), /\n\s+2\s+\d+\s+image\s+\d+/);
  // Named after the PDF it worked on (the first input, as in a request), not after the image.
  const info = await expectOk(await t.request(`/resource/${body.outputId}?format=info`));
  assert.match(info.name, /^text-4-pages-pdflatex_service_split-pdf_1_service_pdf-with-added-image\.pdf$/);
});

test('everything is checked before anything runs: each error names its place', async () => {
  const id = await uploadId(t, FOUR);
  const before = (await t.deps.store.totals()).count;
  const cases: [unknown, number, RegExp][] = [
    [[{ operation: '/nope' }], 400, /^steps\[0\]\.operation: no operation \/nope/],
    [
      [{ operation: '/split-pdf' }, { operation: '/compressed-pdf', fields: { compression_level: 'extreme' } }],
      400,
      /^steps\[1\]\.fields\.compression_level: extreme is not within the acceptable range for compression_level$/,
    ],
    [
      [{ operation: '/png' }, { operation: '/merged-pdf' }],
      400,
      /^steps\[1\]\.operation: \/merged-pdf takes pdf files, but steps\[0\] \(\/png\) gives png files/,
    ],
    [
      [
        { operation: '/pdf-info', fields: { queries: 'page_count' } },
        { operation: '/compressed-pdf', fields: { compression_level: 'low' } },
      ],
      400,
      /^steps\[1\]\.operation: steps\[0\] \(\/pdf-info\) answers JSON/,
    ],
    [[{ operation: '/compressed-pdf', fields: { compression_level: 'low', id } }], 400, /^steps\[0\]\.fields\.id: a step's files come from the step before/],
    [[{ operation: '/pdf-with-added-image', fields: { x: 1, y: 1, page: 1 } }], 400, /^steps\[0\]\.fields\.image_id is required/],
    [
      [{ operation: '/pdf-with-added-image', fields: { x: 1, y: 1, page: 1, image_id: '3b241101-e2bb-4255-8caf-4136c566a962' } }],
      404,
      /^steps\[0\] \(\/pdf-with-added-image\): That file does not exist/,
    ],
    [[{ operation: '/split-pdf', extra: 1 }], 400, /steps\[0\]/],
    [Array.from({ length: 21 }, () => ({ operation: '/linearized-pdf' })), 400, /steps/],
    ['[{"operation": ', 400, /JSON/],
  ];
  for (const [s, status, pattern] of cases) await expectError(await t.json('/pipeline', { id, steps: s }), status, pattern);
  // A file the first step refuses, by its bytes.
  await expectError(
    await t.form('/pipeline', {
      file: { file: corpus('images/animated-dispose-bgnd.gif') },
      steps: steps({ operation: '/compressed-pdf', fields: { compression_level: 'low' } }),
    }),
    400,
    /^steps\[0\] \(\/compressed-pdf\): .*is not a PDF: it is a GIF image/,
  );
  await expectError(await t.json('/pipeline', { id }), 400, /steps is required/);
  await expectError(await t.json('/pipeline', { id, pipeline: 'archive', steps: [{ operation: '/split-pdf' }] }), 400, /either steps or pipeline/);
  await expectError(await t.json('/pipeline', { steps: [{ operation: '/split-pdf' }] }), 400, /file .* or id .* is required/);
  // Nothing ran: no output was stored (the refused multipart upload is discarded too).
  assert.is((await t.deps.store.totals()).count, before);
});

test('a step failing mid-run names the step and stops the pipeline', async () => {
  // /split-pdf of a 4-page file to page 9 fails at run time, in step 1.
  await expectError(
    await t.json('/pipeline', {
      id: await uploadId(t, FOUR),
      steps: [{ operation: '/linearized-pdf' }, { operation: '/split-pdf', fields: { pages: ['9'] } }],
    }),
    400,
    /^steps\[1\] \(\/split-pdf\): 9 is not within the acceptable range/,
  );
});

test('named pipelines: read at start, bad files left out and reported, run by name, polled', async () => {
  const list = await expectOk(await t.request('/pipelines'));
  assert.equal(
    list.pipelines.map((p: { name: string }) => p.name),
    ['archive'],
  );
  assert.is(list.pipelines[0].description, 'scan archive');
  const bad = Object.fromEntries(list.invalid.map((b: { file: string; error: string }) => [b.file, b.error]));
  assert.match(bad['broken.json'], /steps\[0\]\.operation: no operation \/no-such-thing/);
  assert.match(bad['not json.json'], /name must be/);
  await expectError(
    await t.json('/pipeline', { id: await uploadId(t, FOUR), pipeline: 'nope' }),
    400,
    /nope is not within the acceptable range for pipeline \(one of: archive\)/,
  );

  const res = await t.json(
    '/pipeline',
    { id: await uploadId(t, corpus('pdf/text-minimal-pdflatex.pdf')), pipeline: 'archive' },
    { 'Request-Type': 'requestId' },
  );
  const { requestId } = await expectOk(res);
  let status: Record<string, any> = {};
  await until('pipeline done', async () => (status = await (await t.request(`/request-status/${requestId}`)).json()).status !== 'pending', 120_000);
  assert.is(status.status, 'completed', JSON.stringify(status));
  assert.is(status.pipeline, 'archive');
  assert.equal(
    status.steps.map((s: { operation: string }) => s.operation),
    ['/compressed-pdf', '/pdfa'],
  );
  const out = await t.download(status.outputUrl);
  // The last step's output: a PDF/A-2b (XMP claim), with the text of the input.
  assert.match(tool('pdfinfo', ['-meta', out]), /pdfaid:part[^0-9]*2/);
  assert.match(tool('pdftotext', [out, '-']), /\w{3,}/);
  const metrics = await (await t.request('/metrics')).text();
  assert.match(metrics, /quire_pipeline_runs_total\{outcome="completed"\} [1-9]/);
  assert.match(metrics, /quire_job_duration_seconds_count\{operation="\/pdfa",lane="cpu",outcome="completed"\} [1-9]/);
});

test.run();
