import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, pdfInfoBox, pdfPages, startApp, type TestApp, UUID_V4 } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp({ MAX_UPLOAD_MB: '1' });
});
test.after(async () => t.close());

const PDF = corpus('pdf/text-minimal-pdflatex.pdf');

test('multipart body with an upload: the upload becomes a resource and is the inputId', async () => {
  const res = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count,filename' });
  assert.is(res.status, 200);
  const body = await res.json();
  assert.is(body.page_count, 1);
  assert.is(body.filename, 'text-minimal-pdflatex.pdf');
  assert.match(body.inputId, UUID_V4);
  assert.is(body.allQueriesProcessed, true);
  assert.not.ok('warning' in body);
  const info = await (await t.request(`/resource/${body.inputId}?format=info`)).json();
  assert.is(info.type, 'application/pdf');
});

test('JSON body with an id and loosely typed values (the official SDK)', async () => {
  const up = await (await t.form('/upload', { file: { file: PDF } })).json();
  const res = await t.json('/pdf-info', { id: up.files[0].id, queries: ['page_count', 'title'] });
  assert.is(res.status, 200);
  const body = await res.json();
  assert.is(body.page_count, 1);
  assert.is(body.inputId, up.files[0].id);
  const blank = await t.json('/blank-pdf', { page_size: 'letter', page_count: 2, page_orientation: 'portrait' });
  assert.is(blank.status, 200);
  const out = await t.download((await blank.json()).outputUrl);
  assert.is(pdfPages(out), 2);
});

test('url-encoded and repeated name[] fields are read like the others', async () => {
  const res = await t.request('/blank-pdf', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'page_size=A5&page_count=3&page_orientation=landscape',
  });
  assert.is(res.status, 200);
  const out = await t.download((await res.json()).outputUrl);
  assert.is(pdfPages(out), 3);
  assert.match(pdfInfoBox(out), /MediaBox:\s+0\.00\s+0\.00\s+595\.28\s+419\.53/);
});

test('one-of rule: both file and id -> 400 with the spec text; neither -> 400 naming the fields', async () => {
  const up = await (await t.form('/upload', { file: { file: PDF } })).json();
  const both = await t.form('/pdf-info', { file: { file: PDF }, id: up.files[0].id, queries: 'page_count' });
  assert.is(both.status, 400);
  assert.equal(await both.json(), { error: 'This route will only accept a File or an ID, not both.' });
  const neither = await t.json('/pdf-info', { queries: 'page_count' });
  assert.is(neither.status, 400);
  assert.match((await neither.json()).error, /file .*id/);
});

test('both inputs -> the upload of the refused request is not kept', async () => {
  const before = readdirSync(join(t.dataDir, 'resources')).length;
  const up = await (await t.form('/upload', { file: { file: PDF } })).json();
  await t.form('/pdf-info', { file: { file: PDF }, id: up.files[0].id, queries: 'page_count' });
  assert.is(readdirSync(join(t.dataDir, 'resources')).length, before + 1);
});

test('unknown id -> 404 naming the id field', async () => {
  const res = await t.json('/pdf-info', { id: '3f0c1c7e-1b7a-4c55-9a51-2d2b9f0b7a11', queries: 'page_count' });
  assert.is(res.status, 404);
  assert.match((await res.json()).error, /does not exist.*id/);
});

test('range errors use the spec sentence and name the parameter', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ page_size: 'A4', page_count: '1001', page_orientation: 'portrait' }, '1001 is not within the acceptable range for page_count'],
    [{ page_size: 'A4', page_count: 0, page_orientation: 'portrait' }, '0 is not within the acceptable range for page_count'],
    [{ page_size: 'B5', page_count: 1, page_orientation: 'portrait' }, 'B5 is not within the acceptable range for page_size'],
    [{ page_size: 'A4', page_count: 1, page_orientation: 'sideways' }, 'sideways is not within the acceptable range for page_orientation'],
    [{ page_size: 'custom', page_count: 1, custom_width: '-5', custom_height: 100 }, '-5 is not within the acceptable range for custom_width'],
    [{ page_size: 'A4', page_count: 'ten', page_orientation: 'portrait' }, 'ten is not within the acceptable range for page_count'],
  ];
  for (const [body, error] of cases) {
    const res = await t.json('/blank-pdf', body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.equal(await res.json(), { error });
  }
  const missing = await t.json('/blank-pdf', { page_size: 'A4', page_orientation: 'portrait' });
  assert.equal(await missing.json(), { error: 'page_count is required' });
  const bad = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count,colour' });
  assert.equal(await bad.json(), { error: 'colour is not within the acceptable range for queries' });
});

test('output naming: given name + extension, default pattern, sanitised', async () => {
  const named = await (await t.form('/blank-pdf', { page_size: 'A4', page_count: '1', page_orientation: 'portrait', output: 'my-file' })).json();
  assert.is((await (await t.request(`/resource/${named.outputId}?format=info`)).json()).name, 'my-file.pdf');
  const dflt = await (await t.json('/blank-pdf', { page_size: 'A4', page_count: 1, page_orientation: 'portrait' })).json();
  assert.is((await (await t.request(`/resource/${dflt.outputId}?format=info`)).json()).name, 'service_blank-pdf.pdf');
  const evil = await (await t.json('/blank-pdf', { page_size: 'A4', page_count: 1, page_orientation: 'portrait', output: '../../etc/x\u0000y' })).json();
  const name = (await (await t.request(`/resource/${evil.outputId}?format=info`)).json()).name;
  assert.is(name, 'x_y.pdf');
  // Bytes live under the id, never under a client's name.
  const files = readdirSync(join(t.dataDir, 'resources'));
  assert.ok(files.every((f) => UUID_V4.test(f)));
});

test('upload beyond MAX_UPLOAD_MB -> 413 JSON, nothing stored', async () => {
  const before = readdirSync(join(t.dataDir, 'resources')).length;
  const big = Buffer.alloc(1.5 * 1024 * 1024, 65);
  const res = await t.form('/pdf-info', { file: { bytes: big, name: 'big.pdf' }, queries: 'page_count' });
  assert.is(res.status, 413);
  assert.match((await res.json()).error, /MAX_UPLOAD_MB/);
  const raw = await t.request('/upload', { method: 'POST', headers: { 'content-filename': 'big.bin' }, body: big });
  assert.is(raw.status, 413);
  assert.is(readdirSync(join(t.dataDir, 'resources')).length, before);
  assert.equal(
    readdirSync(join(t.dataDir, 'resources')).filter((f) => f.endsWith('.part')),
    [],
  );
});

test('not a PDF -> 400 "Uploaded file is not valid input for this route" on PDF routes', async () => {
  const res = await t.form('/blank-pdf', { page_size: 'A4', page_count: '1', page_orientation: 'portrait' });
  assert.is(res.status, 200);
  const info = await t.form('/pdf-info', { file: { file: corpus('images/hopper.png') }, queries: 'page_count,filename' });
  const body = await info.json();
  assert.is(info.status, 200);
  assert.is(body.allQueriesProcessed, false);
  assert.match(body.warning, /not a PDF/);
  assert.is(body.filename, 'hopper.png');
});

test('unknown path -> 404 JSON; malformed JSON -> 400 JSON', async () => {
  const res = await t.request('/no-such-thing', { method: 'POST' });
  assert.is(res.status, 404);
  assert.match((await res.json()).error, /No route/);
  const bad = await t.request('/blank-pdf', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"page_size": ' });
  assert.is(bad.status, 400);
  assert.equal(await bad.json(), { error: 'JSON data provided is not properly formatted' });
});

test('/up, /health, /ready, /openapi.json and /docs with self-served assets', async () => {
  const up = await (await t.request('/up')).json();
  assert.is(up.status, 'OK');
  assert.match(up.releaseDate, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(up.version && up.product);
  assert.is((await t.request('/health')).status, 200);
  const ready = await (await t.request('/ready')).json();
  assert.match(ready.engines.qpdf.version, /^\d+\.\d+/);
  const doc = await (await t.request('/openapi.json')).json();
  assert.is(doc.openapi, '3.1.0');
  const blank = doc.paths['/blank-pdf'].post.requestBody.content['application/json'].schema;
  assert.equal(blank.properties.page_count, { type: 'integer', minimum: 1, maximum: 1000 });
  assert.ok(blank.required.includes('page_size'));
  assert.ok(doc.paths['/pdf-info'].post.requestBody.content['multipart/form-data'].schema.properties.file.format === 'binary');
  const html = await (await t.request('/docs')).text();
  assert.not.match(html, /https?:\/\//);
  const js = await t.request('/docs/swagger-ui-bundle.js');
  assert.is(js.status, 200);
  assert.ok(Number((await js.arrayBuffer()).byteLength) > 100_000);
});

test('a missing engine disables only its endpoints, with 503 naming the package', async () => {
  const qpdf = t.deps.tools.qpdf;
  delete t.deps.tools.qpdf;
  try {
    const res = await t.form('/pdf-info', { file: { file: PDF }, queries: 'page_count' });
    assert.is(res.status, 503);
    assert.match((await res.json()).error, /Debian package qpdf/);
    const blank = await t.json('/blank-pdf', { page_size: 'A4', page_count: 1, page_orientation: 'portrait' });
    assert.is(blank.status, 200);
  } finally {
    t.deps.tools.qpdf = qpdf;
  }
});

test('error bodies never carry stacks or paths', async () => {
  const res = await t.form('/pdf-info', { file: { file: corpus('malformed/empty-zero-bytes.pdf') }, queries: 'all' });
  const text = await res.text();
  assert.not.match(text, /\/work\/|\bat [\w.]+ \(/);
  assert.ok(statSync(PDF).size > 0);
});

test.run();
