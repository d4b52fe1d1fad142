// The S3 store failing under a running server: stopped (kill -9: connections refused or cut) or hung (SIGSTOP: it
// accepts connections and answers nothing) before and in the middle of an upload, a result write and a fetch. The
// S3 server is a TEST DOUBLE, s3rver (a devDependency), run as its own process on a loopback port so that it can be
// killed, frozen and started again over the same directory; the app talks to it through @aws-sdk/client-s3 as it
// would to AWS or MinIO.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, startApp, type TestApp, until } from './helpers.js';
import { freePort } from './processes.js';

const test = suite('s3-faults');
const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PDF = corpus('pdf/text-4-pages-pdflatex.pdf');
const BUCKET = 'quire-faults';
const MB = 1024 * 1024;
process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';

const s3dir = mkdtempSync(join(tmpdir(), 'quire-s3rver-faults-'));
const port = await freePort();
const endpoint = `http://127.0.0.1:${port}`;
const env = { S3_BUCKET: BUCKET, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', RESOURCE_TTL_SECONDS: '0' };
const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });

/** The S3 server as a process of its own, over the same directory each time (objects survive its restarts). */
let server: ChildProcess | undefined;
async function startS3(): Promise<void> {
  const script = `const S3rver = require('s3rver');
    new S3rver({ address: '127.0.0.1', port: ${port}, silent: true, directory: ${JSON.stringify(s3dir)}, configureBuckets: [{ name: '${BUCKET}', configs: [] }] })
      .run().then(() => console.log('listening'));`;
  const child = spawn(process.execPath, ['-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((ok, fail) => {
    child.stdout!.on('data', (d) => String(d).includes('listening') && ok());
    child.once('exit', (code) => fail(new Error(`s3rver exited at start (${code})`)));
  });
  server = child;
}
/** kill -9: the port refuses connections, open ones are cut. */
async function killS3(): Promise<void> {
  const child = server!;
  server = undefined;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

const keys = async () =>
  ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'resources/' }))).Contents ?? []).map((o) => o.Key!.slice(10)).sort();
const emptyBucket = async () => Promise.all((await keys()).map((id) => s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `resources/${id}` }))));
/** Ids recorded in the local index (lowdb shards in DATA_DIR/index). */
const recorded = (t: TestApp) =>
  readdirSync(join(t.dataDir, 'index'))
    .filter((f) => /^[0-9a-f]{2}\.json$/.test(f))
    .flatMap((f) => Object.keys(JSON.parse(readFileSync(join(t.dataDir, 'index', f), 'utf8'))))
    .sort();
/** Files of the local cache of S3 objects (a failed write leaves no .part behind). */
const cached = (t: TestApp) => (existsSync(join(t.dataDir, 'work', '.cache')) ? readdirSync(join(t.dataDir, 'work', '.cache')) : []);
/** The app and its S3 client (keep-alive sockets would keep the test process alive). */
const closeApp = async (t: TestApp) => {
  await t.close();
  await t.deps.store.bytes.close();
};
const upload = (t: TestApp, bytes: Buffer, name = 'file.bin') =>
  t.request('/upload', { method: 'POST', headers: { 'content-filename': name }, body: new Uint8Array(bytes) });

/**
 * Times the answer: the S3 client gives up on a silent store after 5 s, twice (app/store/s3-bytes.ts), so a hang is
 * answered in about 10 s by design, whatever the machine; 60 s fails a request that waits for the store forever.
 */
async function timed(what: string, fn: () => Promise<Response>): Promise<Response> {
  const t0 = Date.now();
  const res = await Promise.race([fn(), new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`${what}: no answer within 60 s`)), 60_000).unref())]);
  console.log(`  ${what}: ${res.status} after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return res;
}

test.before(startS3);
test.after(async () => {
  if (server) await killS3();
  s3.destroy();
  rmSync(s3dir, { recursive: true, force: true });
});

test('S3 stopped before an upload: 503 naming the bucket, nothing recorded or cached, /ready 503; back, the same upload is stored', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    await killS3();
    await expectError(
      await timed('upload, S3 stopped', () => upload(t, Buffer.alloc(MB, 1))),
      503,
      /storage \(S3 bucket quire-faults\) is unavailable: connection refused/,
    );
    const ready = await t.request('/ready');
    assert.is(ready.status, 503);
    assert.equal((await ready.json()).storage, { ok: false });
    assert.equal(recorded(t), []);
    assert.equal(cached(t), []);
    // A multipart form: the part cannot be stored, the request ends at once with 503 (not a hang, not a 500).
    await expectError(await timed('multipart upload, S3 stopped', () => t.form('/upload', { file: { file: PDF } })), 503, /S3 bucket quire-faults/);
    await startS3();
    const up = await expectOk(await upload(t, Buffer.alloc(MB, 1)));
    assert.equal(await keys(), [up.files[0].id]);
    assert.equal(recorded(t), [up.files[0].id]);
  } finally {
    await closeApp(t);
  }
});

test('S3 killed in the middle of a streamed multipart upload: 503, no object, no record, no cached part; back, it is stored', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    const chunk = Buffer.alloc(MB, 2);
    let sent = 0;
    // 20 MB in 1 MB chunks, no Content-Length: parts of 8 MB go to S3 while the client still sends; the store dies
    // once 12 MB were sent (the first part handed to the SDK), and the client keeps sending.
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 12) await killS3();
        if (sent++ >= 20) c.close();
        else c.enqueue(new Uint8Array(chunk));
      },
    });
    const res = await timed('streamed upload, S3 killed at 12 MB', () =>
      t.request('/upload', { method: 'POST', headers: { 'content-filename': 'big.bin' }, body, duplex: 'half' } as RequestInit),
    );
    await expectError(res, 503, /S3 bucket quire-faults\) is unavailable/);
    assert.equal(recorded(t), []);
    assert.equal(cached(t), []);
    await startS3();
    assert.equal(await keys(), [], 'no object: the parts sent never became one');
    const up = await expectOk(await upload(t, Buffer.alloc(20 * MB, 3)));
    assert.equal(await keys(), [up.files[0].id]);
  } finally {
    await closeApp(t);
  }
});

test('S3 hung (SIGSTOP) during an upload: 503 "no answer" from the client timeouts, not a hang; its late object has no record and the sweep removes it', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    server!.kill('SIGSTOP');
    let res: Response;
    try {
      res = await timed('upload, S3 hung', () => upload(t, Buffer.alloc(MB, 4)));
    } finally {
      server!.kill('SIGCONT');
    }
    await expectError(res, 503, /S3 bucket quire-faults\) is unavailable: no answer within 5 s/);
    assert.equal(recorded(t), []);
    // Woken up, the store may still complete a request it had fully received before it froze: an object nobody
    // recorded, which the orphan sweep removes at its second look after the grace.
    await until(
      'the bucket holds nothing but swept orphans',
      async () => {
        await t.deps.store.sweepExpired();
        return (await keys()).length === 0;
      },
      60_000,
    );
    await expectOk(await upload(t, Buffer.alloc(MB, 4)));
  } finally {
    await closeApp(t);
  }
});

test('S3 stopped between the outputs of a job: 503, the outputs already stored are removed, the input stays; back, the same request succeeds', async () => {
  await emptyBucket();
  const t = await startApp(env);
  try {
    const input = (await expectOk(await t.form('/upload', { file: { file: PDF } }))).files[0].id as string;
    // The store dies right after the job's first output is stored: the fault lands between two writes by construction.
    const bytes = t.deps.store.bytes;
    const put = bytes.put.bind(bytes);
    let puts = 0;
    bytes.put = async (id, src, copy) => {
      const size = await put(id, src, copy);
      if (++puts === 1) await killS3();
      return size;
    };
    const res = await timed('split into 2 outputs, S3 killed after the first', () => t.json('/split-pdf', { id: input, pages: ['1', '2-4'] }));
    bytes.put = put;
    await expectError(res, 503, /S3 bucket quire-faults\) is unavailable: connection refused/);
    assert.is(puts, 1, 'the second output found the store gone');
    assert.equal(recorded(t), [input], 'only the input is recorded');
    await startS3();
    // The first output's object outlived its record (the store was down for the delete): an orphan, swept.
    await until(
      'only the input left in the bucket',
      async () => {
        await t.deps.store.sweepExpired();
        return JSON.stringify(await keys()) === JSON.stringify([input]);
      },
      60_000,
    );
    const ok = await expectOk(await t.json('/split-pdf', { id: input, pages: ['1', '2-4'] }));
    assert.is(ok.outputId.length, 2);
  } finally {
    await closeApp(t);
  }
});

test('S3 stopped or hung before a fetch: a job on an input not cached here and a download answer 503; back, both succeed', async () => {
  await emptyBucket();
  const dataDir = mkdtempSync(join(tmpdir(), 'quire-s3-faults-'));
  const a = await startApp(env, { dataDir });
  const id = (await expectOk(await a.form('/upload', { file: { file: PDF } }))).files[0].id as string;
  await closeApp(a);
  // A new process over the same index: its cache is empty, so the job's input and the download come from the bucket.
  const t = await startApp(env, { dataDir });
  try {
    await killS3();
    await expectError(await timed('job on an uncached input, S3 stopped', () => t.json('/split-pdf', { id, pages: ['1'] })), 503, /S3 bucket quire-faults/);
    await expectError(await timed('download, S3 stopped', () => t.request(`/resource/${id}?format=file`)), 503, /S3 bucket quire-faults/);
    await startS3();
    server!.kill('SIGSTOP');
    let res: Response;
    try {
      res = await timed('job on an uncached input, S3 hung', () => t.json('/split-pdf', { id, pages: ['1'] }));
    } finally {
      server!.kill('SIGCONT');
    }
    await expectError(res, 503, /no answer within 5 s/);
    assert.equal(recorded(t), [id], 'the failed jobs recorded nothing');
    const ok = await expectOk(await t.json('/split-pdf', { id, pages: ['1'] }));
    assert.equal(recorded(t), [id, ok.outputId[0]].sort());
    const dl = await t.request(`/resource/${id}?format=file`);
    assert.is(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(readFileSync(PDF)));
  } finally {
    await closeApp(t);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
