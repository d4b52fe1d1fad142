// Stops of a real server process in the middle of polled and watched-folder jobs: SIGTERM (docker stop) and kill -9.
// Jobs are held at a language model on loopback that answers only when the test says so, so each job is exactly
// where the test needs it (running, cut by the grace, waiting in the queue) on a machine of any speed.
// (A kill -9 in the middle of a watched-folder run is in watched-folders.test.ts, a worker's in scale.test.ts.)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, until } from './helpers.js';
import { crash, type Proc, startQuire, stop, tail } from './processes.js';

const test = suite('stop-faults');
const GRACE_S = 5;

/**
 * An OpenAI-compatible model that holds every request until the test releases the marker word its prompt carries
 * ("ALPHA", "BRAVO"...); released markers are answered at once from then on.
 */
async function markedModel() {
  const held: { raw: string; res: ServerResponse }[] = [];
  const released = new Set<string>();
  const answer = ({ raw, res }: { raw: string; res: ServerResponse }) => {
    const body = JSON.parse(raw);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: `Summary of ${markerOf(raw)}.` }, finish_reason: 'stop' }],
      }),
    );
  };
  const markerOf = (raw: string) => /\b(ALPHA|BRAVO|CHARLIE|DELTA|ECHO|WATCHED)\b/.exec(raw)?.[1] ?? '?';
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => (released.has(markerOf(raw)) ? answer({ raw, res }) : held.push({ raw, res })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`,
    /** Markers of the requests held now (a request whose asker went away still counts until it is released). */
    holding: () => held.filter((h) => !h.res.destroyed).map((h) => markerOf(h.raw)),
    release(marker: string) {
      released.add(marker);
      for (const h of held.filter((x) => markerOf(x.raw) === marker)) if (!h.res.destroyed) answer(h);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const text = (marker: string) => ({
  bytes: Buffer.from(`${marker}. This report is about ${marker}. It has three sentences about ${marker}.\n`),
  name: `${marker}.txt`,
});

async function post(p: Proc, path: string, file: { bytes: Buffer; name: string }, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(file.bytes)]), file.name);
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const res = await fetch(`${p.base}${path}`, { method: 'POST', body: fd, headers });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
const polled = async (p: Proc, marker: string) => {
  const r = await post(p, '/summarized-pdf-text', text(marker), { summary_format: 'abstract' }, { 'Request-Type': 'requestId' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  return r.body.requestId as string;
};
const status = async (p: Proc, id: string) => (await (await fetch(`${p.base}/request-status/${id}`)).json()) as Record<string, any>;
const ls = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : []);

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'quire-stops-'));
  const defs = join(root, 'pipelines');
  mkdirSync(defs);
  writeFileSync(
    join(defs, 'sum.json'),
    JSON.stringify({ steps: [{ operation: '/summarized-pdf-text', fields: { summary_format: 'abstract', output_type: 'file' } }] }),
  );
  return { root, defs, watch: join(root, 'watch'), dataDir: join(root, 'data') };
}

test(`SIGTERM: a running job finishes within STOP_GRACE_SECONDS=${GRACE_S}, one that cannot is recorded failed 503, a queued one too, a watched file stays in in/; exit 0; after a restart every id answers and the file is taken again`, async () => {
  const { defs, watch, dataDir } = setup();
  const model = await markedModel();
  // Three jobs run at once (CPU_BUDGET=3: the watched file, ALPHA, BRAVO); CHARLIE waits in the queue.
  const env = {
    DATA_DIR: dataDir,
    PIPELINES_DIR: defs,
    WATCH_DIR: watch,
    WATCH_SETTLE_SECONDS: '1',
    LLM_URL: model.url,
    LLM_MODEL: 'held',
    LLM_TIMEOUT_SECONDS: '600',
    CPU_BUDGET: '3',
    STOP_GRACE_SECONDS: String(GRACE_S),
  };
  let q = await startQuire('stopping', env);
  try {
    // One finished before the stop: still answered after it.
    const minimal = { bytes: readFileSync(corpus('pdf/text-minimal-pdflatex.pdf')), name: 'a.pdf' };
    const info = await post(q, '/pdf-info', minimal, { queries: 'page_count' }, { 'Request-Type': 'requestId' });
    assert.is(info.status, 200, JSON.stringify(info.body));
    const done = info.body.requestId as string;
    await until('the finished request settled', async () => (await status(q, done)).status !== 'pending', 120_000);
    assert.is((await status(q, done)).status, 'completed', JSON.stringify(await status(q, done)));

    writeFileSync(join(watch, 'sum/in/WATCHED.txt'), text('WATCHED').bytes);
    await until('the watched file is held at the model', () => model.holding().includes('WATCHED'), 180_000);
    const alpha = await polled(q, 'ALPHA');
    const bravo = await polled(q, 'BRAVO');
    await until('ALPHA and BRAVO are held at the model', () => ['ALPHA', 'BRAVO'].every((m) => model.holding().includes(m)), 180_000);
    const charlie = await polled(q, 'CHARLIE');
    assert.is((await status(q, charlie)).status, 'pending');
    assert.not.ok(model.holding().includes('CHARLIE'), 'CHARLIE waits in the queue');

    const t0 = Date.now();
    process.kill(q.pid, 'SIGTERM');
    // Running jobs may finish: ALPHA's model answers now.
    model.release('ALPHA');
    await until('the server exits', () => q.exited, (GRACE_S + 60) * 1000);
    const tookS = (Date.now() - t0) / 1000;
    console.log(`  SIGTERM -> exit: ${tookS.toFixed(1)} s (STOP_GRACE_SECONDS=${GRACE_S}, then 5 s at most for aborts and engines)`);
    // 0: it drained and closed on its own; 1 would be the hard stop at grace + 5 s.
    assert.ok(
      q.log.some((l) => l.includes('[exited: code 0')),
      tail(q),
    );
    assert.equal(ls(join(watch, 'sum/in')), ['WATCHED.txt'], 'the cut file is still in in/');
    assert.equal([...ls(join(watch, 'sum/done')), ...ls(join(watch, 'sum/failed'))], [], 'and was neither filed as done nor blamed');

    for (const m of ['WATCHED', 'BRAVO', 'CHARLIE', 'DELTA']) model.release(m);
    q = await startQuire('restarted', env);
    const answers = Object.fromEntries(await Promise.all(Object.entries({ done, alpha, bravo, charlie }).map(async ([k, id]) => [k, await status(q, id)])));
    assert.is(answers.done.status, 'completed', JSON.stringify(answers.done));
    assert.is(answers.alpha.status, 'completed', JSON.stringify(answers.alpha));
    assert.match(answers.alpha.summary, /Summary of ALPHA/);
    assert.equal(answers.bravo, { status: 'failed', requestId: bravo, error: 'The server is shutting down.', statusCode: 503 });
    // Queued when the stop came: the stop's reason, as for the running one (not the 499 of a client's own cancel).
    assert.equal(answers.charlie, { status: 'failed', requestId: charlie, error: 'The server is shutting down.', statusCode: 503 });
    await until('the watched file is taken again and filed', () => ls(join(watch, 'sum/done')).length === 1, 180_000);
    assert.equal(ls(join(watch, 'sum/out')), ['WATCHED.md']);
  } finally {
    await stop(q);
    await model.close();
  }
});

test('kill -9 during polled jobs: after a restart every id answers (a result, or failed with a reason), none is unknown', async () => {
  const { dataDir } = setup();
  const model = await markedModel();
  // One job runs at a time: ALPHA runs, BRAVO and CHARLIE wait.
  const env = { DATA_DIR: dataDir, LLM_URL: model.url, LLM_MODEL: 'held', LLM_TIMEOUT_SECONDS: '600', CPU_BUDGET: '1' };
  let q = await startQuire('crashing', env);
  try {
    model.release('ECHO');
    const echo = await polled(q, 'ECHO');
    await until('ECHO completed', async () => (await status(q, echo)).status === 'completed', 180_000);
    const echoBefore = await status(q, echo);
    const alpha = await polled(q, 'ALPHA');
    await until('ALPHA is held at the model', () => model.holding().includes('ALPHA'), 180_000);
    const bravo = await polled(q, 'BRAVO');
    const charlie = await polled(q, 'CHARLIE');
    // Killed right after answering an id: the id was answered once its record was written.
    const delta = await polled(q, 'DELTA');
    await crash(q);

    q = await startQuire('after-crash', env);
    assert.equal(await status(q, echo), echoBefore, 'a finished request answers as before');
    for (const [name, id] of Object.entries({ alpha, bravo, charlie, delta })) {
      const s = await status(q, id);
      assert.equal(
        s,
        { status: 'failed', requestId: id, error: 'The server restarted before this request finished; send it again.', statusCode: 503 },
        `${name}: ${JSON.stringify(s)}`,
      );
    }
  } finally {
    await stop(q);
    await model.close();
  }
});

test.run();
