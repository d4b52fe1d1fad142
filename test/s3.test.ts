// Resource bytes in S3 (S3_BUCKET, S3_ENDPOINT). The S3 server here is a TEST DOUBLE: s3rver, an
// S3-compatible emulator from npm (a devDependency), run in this process on a free loopback port. The app
// talks to it through @aws-sdk/client-s3 exactly as it would to AWS or MinIO, and the test reads the bucket
// back through the S3 API with its own client.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../app/config.js';
import { watchFolders } from '../app/pipelines/index.js';
import { corpus, pdfPages, sleep, startApp, type TestApp, until } from './helpers.js';

const PDF = corpus('pdf/text-4-pages-pdflatex.pdf');
const BUCKET = 'quire-test';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// The SDK reads credentials from the standard AWS variables itself (s3rver's fixed pair).
process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';

const s3dir = mkdtempSync(join(tmpdir(), 'quire-s3rver-'));
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3dir, configureBuckets: [{ name: BUCKET, configs: [] }] });
const { port } = (await server.run()) as { port: number };
const endpoint = `http://127.0.0.1:${port}`;
const s3 = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
const env = { S3_BUCKET: BUCKET, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1' };

const keys = async () => ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'resources/' }))).Contents ?? []).map((o) => o.Key!).sort();
const object = async (key: string) => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
const emptyBucket = async () => Promise.all((await keys()).map((Key) => s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }))));
/** Nothing of the bytes is kept in DATA_DIR: no resources dir, or an empty one. */
const noLocalResources = (t: TestApp) => !existsSync(join(t.dataDir, 'resources')) || readdirSync(join(t.dataDir, 'resources')).length === 0;
const closeApp = async (t: TestApp) => {
  await t.close();
  await t.deps.store.bytes.close();
};

test('upload -> object; process by id after a restart (inputs fetched from S3); download streams the bytes; DELETE removes the object', async () => {
  await emptyBucket();
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-s3-'));
  const t = await startApp({ ...env, RESOURCE_TTL_SECONDS: '0' }, { dataDir });
  let t2: TestApp | undefined;
  try {
    const ready = await (await t.request('/ready')).json();
    assert.equal(ready.storage, { ok: true }, '/ready reports the bucket');
    const up = await (await t.request('/upload', { method: 'POST', headers: { 'content-filename': 'four.pdf' }, body: readFileSync(PDF) })).json();
    const id = up.files[0].id;
    assert.equal(await keys(), [`resources/${id}`], 'the upload is an object in the bucket');
    assert.is(sha256(await object(`resources/${id}`)), sha256(readFileSync(PDF)));
    assert.ok(noLocalResources(t));
    await closeApp(t);

    // A new process over the same index: its cache is empty, so the type check is a ranged GET and the job's
    // input a download.
    t2 = await startApp({ ...env, RESOURCE_TTL_SECONDS: '0' }, { dataDir });
    const cache = join(dataDir, 'work', '.cache');
    assert.equal(readdirSync(cache), [], 'a new process starts with an empty cache');
    const head = await t2.deps.store.head(id, 5);
    assert.is(head.toString('latin1'), '%PDF-');
    const res = await t2.request(`/resource/${id}?format=file`);
    assert.is(res.status, 200);
    assert.is(res.headers.get('content-type'), 'application/pdf');
    assert.is(res.headers.get('content-length'), String(readFileSync(PDF).length));
    assert.is(sha256(Buffer.from(await res.arrayBuffer())), sha256(readFileSync(PDF)), 'the bytes streamed from the object are the corpus file');
    assert.equal(readdirSync(cache), [], 'the type check and the download read the object, not a local copy');
    const split = await t2.json('/split-pdf', { id, pages: ['1'] });
    const body = await split.json();
    assert.is(split.status, 200, JSON.stringify(body));
    assert.is(body.inputId, id);
    const outId = body.outputId[0];
    assert.equal(await keys(), [`resources/${id}`, `resources/${outId}`].sort(), 'the output is an object too');
    assert.is(pdfPages(await t2.download(body.outputUrl[0])), 1);
    assert.is(readdirSync(cache).length, 2, 'the job fetched its input into the cache and wrote its output through');

    assert.is((await t2.request(`/resource/${id}`, { method: 'DELETE' })).status, 200);
    assert.equal(await keys(), [`resources/${outId}`], 'DELETE removed the object');
    assert.is((await t2.request(`/resource/${id}`)).status, 404);
    assert.equal(await (await t2.json('/delete', { ids: outId })).json(), { deletionResponses: { [outId]: 'Successfully Deleted' } });
    assert.equal(await keys(), []);
    assert.ok(noLocalResources(t2), 'nothing under DATA_DIR/resources');
  } finally {
    if (t2) await closeApp(t2);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('multipart: a large upload streams to S3 in parts; over MAX_UPLOAD_MB it is cut with 413 and leaves no object', async () => {
  await emptyBucket();
  const t = await startApp({ ...env, MAX_UPLOAD_MB: '20' });
  try {
    const big = randomBytes(18 * 1024 * 1024);
    const up = await (await t.request('/upload', { method: 'POST', headers: { 'content-filename': 'big.bin' }, body: big })).json();
    const id = up.files[0].id;
    assert.equal(await keys(), [`resources/${id}`]);
    const res = await t.request(`/resource/${id}`);
    assert.is(sha256(Buffer.from(await res.arrayBuffer())), sha256(big));

    // No Content-Length: the limit is found while streaming, after parts were sent.
    const chunk = randomBytes(1024 * 1024);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ >= 30) c.close();
        else c.enqueue(new Uint8Array(chunk));
      },
    });
    const tooBig = await t.request('/upload', { method: 'POST', headers: { 'content-filename': 'huge.bin' }, body, duplex: 'half' } as RequestInit);
    assert.is(tooBig.status, 413);
    assert.equal(await keys(), [`resources/${id}`], 'the cut upload left no object');
    assert.ok(noLocalResources(t));
  } finally {
    await closeApp(t);
  }
});

test('expiry: the sweep deletes the objects of expired records', async () => {
  await emptyBucket();
  const t = await startApp({ ...env, RESOURCE_TTL_SECONDS: '1' });
  try {
    const { files } = await (await t.form('/upload', { file: [{ file: PDF }, { file: PDF }] })).json();
    assert.is((await keys()).length, 2);
    await sleep(1100);
    assert.is(await t.deps.store.sweepExpired(), 2);
    assert.equal(await keys(), [], 'expired objects are deleted');
    assert.is((await t.request(`/resource/${files[0].id}`)).status, 404);
  } finally {
    await closeApp(t);
  }
});

test('a processing request with its upload: streamed to S3 and written through for the job; an object gone under its record reads as 404', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    const res = await t.form('/split-pdf', { file: { file: PDF }, 'pages[]': ['2-3'] });
    const body = await res.json();
    assert.is(res.status, 200, JSON.stringify(body));
    assert.equal(await keys(), [`resources/${body.inputId}`, `resources/${body.outputId[0]}`].sort());
    assert.is(pdfPages(await t.download(body.outputUrl[0])), 2);
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `resources/${body.outputId[0]}` }));
    // The record stays: only the object went (another tool, a lifecycle rule), and this replica's copy too.
    (t.deps.store.bytes as unknown as { cache: { forget(id: string): void } }).cache.forget(body.outputId[0]);
    assert.is((await t.request(`/resource/${body.outputId[0]}`)).status, 404);
    const again = await t.json('/split-pdf', { id: body.outputId[0], pages: ['1'] });
    assert.is(again.status, 404, 'a job whose input object is gone answers 404, like an unknown id');
    assert.ok(noLocalResources(t));
  } finally {
    await closeApp(t);
  }
});

test('orphans: an object without a record goes at the second sweep after the grace, not at the first', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    const { files } = await (await t.form('/upload', { file: { file: PDF } })).json();
    // Its record vanishes (as a Redis expiry or a crash between upload and record would leave it).
    await (t.deps.store as unknown as { index: { delete(id: string): Promise<boolean> } }).index.delete(files[0].id);
    assert.is(await t.deps.store.sweepExpired(), 0, 'first seen: kept (it may be an upload whose record is being written)');
    assert.is((await keys()).length, 1);
    await sleep(5100);
    assert.is(await t.deps.store.sweepExpired(), 1);
    assert.equal(await keys(), []);
  } finally {
    await closeApp(t);
  }
});

test('a watched S3 prefix: a dropped object is split, its outputs and the original filed under out/ and done/, junk under failed/', async () => {
  const defs = mkdtempSync(join(tmpdir(), 'quire-s3-pipelines-'));
  mkdirSync(defs, { recursive: true });
  writeFileSync(join(defs, 'halves.json'), JSON.stringify({ steps: [{ operation: '/split-pdf', fields: { pages: ['1-2', '3-4'] } }] }));
  // Only the watched prefix is in S3 here; the resources stay in DATA_DIR.
  const t = await startApp({ PIPELINES_DIR: defs, WATCH_DIR: `s3://${BUCKET}/watch`, WATCH_SETTLE_SECONDS: '1', S3_ENDPOINT: endpoint });
  const w = await watchFolders(t.deps, { pollMs: 200 });
  const list = async (place: string) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `watch/halves/${place}/` }))).Contents ?? [])
      .map((o) => o.Key!.slice(`watch/halves/${place}/`.length))
      .sort();
  try {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'watch/halves/in/report.pdf', Body: readFileSync(PDF) }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'watch/halves/in/junk.pdf', Body: 'not a pdf' }));
    await until('both filed', async () => (await list('done')).length + (await list('failed')).length === 3, 60_000);
    assert.equal(await list('in'), []);
    assert.equal(await list('done'), ['report.pdf']);
    assert.equal(await list('out'), ['report_1.pdf', 'report_2.pdf']);
    assert.equal(await list('failed'), ['junk.pdf', 'junk.pdf.error.json']);
    const part = join(mkdtempSync(join(tmpdir(), 'quire-s3-out-')), 'p.pdf');
    writeFileSync(part, await object('watch/halves/out/report_2.pdf'));
    assert.is(pdfPages(part), 2);
    assert.match(JSON.parse((await object('watch/halves/failed/junk.pdf.error.json')).toString()).error, /junk\.pdf is not a PDF/);
    assert.equal((await object('watch/halves/done/report.pdf')).equals(readFileSync(PDF)), true, 'the original, byte for byte');
  } finally {
    await w.stop();
    await t.close();
  }
});

test('config: S3_BUCKET turns S3 on, S3_REGION defaults to us-east-1, S3_ENDPOINT alone is refused', () => {
  assert.is(loadConfig({}).s3, undefined);
  assert.equal(loadConfig({ S3_BUCKET: 'docs' }).s3, { bucket: 'docs', endpoint: undefined, region: 'us-east-1' });
  assert.equal(loadConfig({ S3_BUCKET: 'docs', S3_ENDPOINT: 'http://minio:9000/', S3_REGION: 'eu-west-1' }).s3, {
    bucket: 'docs',
    endpoint: 'http://minio:9000',
    region: 'eu-west-1',
  });
  assert.throws(() => loadConfig({ S3_ENDPOINT: 'http://minio:9000' }), /S3_ENDPOINT: needs S3_BUCKET/);
  assert.is(loadConfig({ S3_ENDPOINT: 'http://minio:9000', WATCH_DIR: 's3://b/w/', PIPELINES_DIR: '/p' }).watchDir, 's3://b/w');
  assert.throws(() => loadConfig({ S3_BUCKET: 'a/b' }), /S3_BUCKET="a\/b"/);
});

test.after(async () => {
  s3.destroy();
  await server.close();
  rmSync(s3dir, { recursive: true, force: true });
});

test.run();
