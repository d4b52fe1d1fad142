import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../app/config.js';
import { corpus, expectError, expectOk, pdfPages, startApp, type TestApp } from './helpers.js';

// API keys and resources: by default an id is a capability (the cloud API's behaviour); with KEY_SCOPE=owner a key
// sees only what it created, and another key's ids read as unknown ones. Outputs read back with qpdf.
const PDF = corpus('pdf/text-4-pages-pdflatex.pdf');
const A = 'tenant-a-key-0123456789';
const B = 'tenant-b-key-0123456789';
const as = (key: string) => ({ 'Api-Key': key });

async function setup(t: TestApp) {
  const up = await expectOk(await t.form('/upload', { file: { file: PDF } }, as(A)));
  const id = up.files[0].id as string;
  const out = await expectOk(await t.json('/split-pdf', { id, pages: ['1-2'] }, as(A)));
  return { id, out: out.outputId[0] as string };
}

test('default (KEY_SCOPE=any): another key may read and process an id, not delete it', async () => {
  const t = await startApp({ API_KEYS: `${A},${B}` });
  try {
    const { id, out } = await setup(t);
    assert.is((await t.request(`/resource/${out}`)).status, 200, 'downloads by id need no key');
    const split = await expectOk(await t.json('/split-pdf', { id, pages: ['3-4'] }, as(B)));
    assert.is(pdfPages(await t.download(split.outputUrl[0])), 2);
    await expectError(await t.request(`/resource/${id}`, { method: 'DELETE', headers: as(B) }), 403, /does not own/);
  } finally {
    await t.close();
  }
});

test('KEY_SCOPE=owner: a key reads, processes and deletes only its own; others get 404 as for an unknown id', async () => {
  const t = await startApp({ API_KEYS: `${A},${B}`, KEY_SCOPE: 'owner' });
  try {
    const { id, out } = await setup(t);
    // The owner: downloads (with its key), processes, pipelines.
    const mine = await t.request(`/resource/${out}`, { headers: as(A) });
    assert.is(mine.status, 200);
    assert.is((await t.request(`/resource/${out}?format=info`, { headers: as(A) })).status, 200);
    await expectOk(await t.json('/pipeline', { id, steps: [{ operation: '/split-pdf', fields: { pages: ['1'] } }] }, as(A)));
    // Without a key a download is refused; with another key the id does not exist.
    await expectError(await t.request(`/resource/${out}`), 401, /Api-Key/);
    const unknown = '3b241101-e2bb-4255-8caf-4136c566a962';
    for (const probe of [out, unknown]) {
      await expectError(await t.request(`/resource/${probe}`, { headers: as(B) }), 404, /does not exist/i);
      await expectError(await t.json('/pdf-info', { id: probe, queries: 'page_count' }, as(B)), 404, /That file does not exist/);
      await expectError(await t.json('/pipeline', { id: probe, steps: [{ operation: '/split-pdf' }] }, as(B)), 404, /That file does not exist/);
      await expectError(await t.request(`/resource/${probe}`, { method: 'DELETE', headers: as(B) }), 404, /does not exist/i);
    }
    // Secondary inputs too: B cannot merge A's file into its own.
    const own = (await expectOk(await t.form('/upload', { file: { file: PDF } }, as(B)))).files[0].id;
    await expectError(await t.json('/merged-pdf', { id: [own, id] }, as(B)), 404, /That file does not exist/);
    // Nothing of A's was touched by B.
    assert.is((await t.request(`/resource/${id}?format=info`, { headers: as(A) })).status, 200);
    assert.equal((await expectOk(await t.request(`/resource/${id}`, { method: 'DELETE', headers: as(A) }))).deletionResponses, {
      [id]: 'Successfully Deleted',
    });
  } finally {
    await t.close();
  }
});

test('config: KEY_SCOPE=owner needs API_KEYS', () => {
  assert.is(loadConfig({}).keyScope, 'any');
  assert.throws(() => loadConfig({ KEY_SCOPE: 'owner' }), /KEY_SCOPE=owner: needs API_KEYS/);
  assert.throws(() => loadConfig({ KEY_SCOPE: 'tenant', API_KEYS: A }), /KEY_SCOPE/);
});

test.run();
