import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chunk, estimateTokens } from '../app/ai/index.js';
import { corpus, type FormValue, startApp, type TestApp } from './helpers.js';

/**
 * A real OpenAI-compatible server in its own process, on loopback. Its answers are derived from the request,
 * so the tests can follow the text through the map, merge and final steps; markers in the document make it
 * fail (FAIL_500, RATE_429, CTX_400, SLOW). GET /requests returns what it received.
 */
const SERVER = String.raw`
const http = require('node:http');
const seen = [];
const words = (s, n) => s.split(/\s+/).filter(Boolean).slice(0, n).join(' ');
const inside = (s, tag) => { const m = new RegExp('<' + tag + '>\\n([\\s\\S]*)\\n</' + tag + '>').exec(s); return m ? m[1] : ''; };
http.createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/requests') return res.end(JSON.stringify(seen));
    if (req.method === 'DELETE' && req.url === '/requests') { seen.length = 0; return res.end('{}'); }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') { res.statusCode = 404; return res.end('{"error":{"message":"no such route"}}'); }
    const body = JSON.parse(raw);
    seen.push({ authorization: req.headers.authorization ?? null, body });
    const system = body.messages[0].content, user = body.messages[1].content;
    const reply = (content, finish = 'stop') => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }] })); };
    if (user.includes('FAIL_500')) { res.statusCode = 500; return res.end('{"error":{"message":"model crashed"}}'); }
    if (user.includes('RATE_429')) { res.statusCode = 429; res.setHeader('retry-after', '7'); return res.end('{"error":{"message":"slow down"}}'); }
    if (user.includes('CTX_400')) { res.statusCode = 400; return res.end('{"error":{"message":"This model\'s maximum context length is 4096 tokens"}}'); }
    if (user.includes('SLOW')) return setTimeout(() => reply('late'), 120000);
    if (system.includes('translator')) {
      const lang = /\(([^)]+)\)\. Translate/.exec(system)[1];
      return reply('SOURCE: en\n\n[' + lang + '] ' + inside(user, 'text'));
    }
    const limit = Number((/at most (\d+) words/.exec(user) || [])[1] || 10);
    if (user.startsWith('This is part')) return reply('[part ' + /part (\d+ of \d+)/.exec(user)[1] + '] ' + words(inside(user, 'document_part'), limit));
    if (user.startsWith('These are summaries')) return reply('[merge] ' + words(inside(user, 'summaries'), limit));
    return reply('[summary] ' + words(inside(user, 'document') || inside(user, 'part_summaries'), 12), user.includes('TRUNCATE') ? 'length' : 'stop');
  });
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });
`;

let server: ChildProcess;
let llmUrl: string;
let t: TestApp; // LLM configured, 8192-token window, the default timeout
let small: TestApp; // 1024-token window: documents are cut into parts
let none: TestApp; // no LLM_URL
let dir: string;

test.before(async () => {
  server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
  llmUrl = `http://127.0.0.1:${port}/v1/`;
  const env = { LLM_URL: llmUrl, LLM_MODEL: 'test-model', LLM_API_KEY: 'sk-test-123' };
  [t, small, none] = await Promise.all([startApp(env), startApp({ ...env, LLM_CONTEXT_TOKENS: '1024' }), startApp()]);
  dir = mkdtempSync(join(tmpdir(), 'quire-ai-'));
});
test.after(async () => {
  await Promise.all([t.close(), small.close(), none.close()]);
  server.kill();
  rmSync(dir, { recursive: true, force: true });
});

interface Seen {
  authorization: string | null;
  body: { model: string; max_tokens: number; messages: { role: string; content: string }[] };
}
const requests = async (): Promise<Seen[]> => (await fetch(new URL('/requests', llmUrl))).json() as Promise<Seen[]>;
const reset = () => fetch(new URL('/requests', llmUrl), { method: 'DELETE' });
const textFile = (name: string, content: string): FormValue => {
  writeFileSync(join(dir, name), content);
  return { file: join(dir, name) };
};

async function call(app: TestApp, path: string, fields: Record<string, FormValue | FormValue[]>, status = 200) {
  const res = await app.form(path, fields);
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, res };
}

test('chunk: parts fit the budget, keep every word in order, and cut oversized blocks', () => {
  const blocks = ['alpha '.repeat(50), 'beta '.repeat(400), 'gamma', '日本語'.repeat(300)];
  const parts = chunk(blocks, 100);
  assert.ok(parts.length > 5);
  assert.ok(
    parts.every((p) => estimateTokens(p) <= 100),
    'each part within budget',
  );
  assert.is(parts.join(' ').replace(/\s+/g, ''), blocks.join('').replace(/\s+/g, ''));
});

test('without LLM_URL: what needs a model answers 503 naming the setting (the offline rest: ai-offline.test.ts)', async () => {
  for (const [path, extra] of [
    ['/summarized-pdf-text', { summary_format: 'abstract' }],
    ['/translated-pdf-text', { output_language: 'fr' }],
  ] as const) {
    const { body } = await call(none, path, { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, ...extra }, 503);
    assert.match(body.error, /LLM_URL/);
  }
});

test('summarize a PDF: one request with the document text, the model, the key, format and length; {summary}', async () => {
  await reset();
  const { body } = await call(t, '/summarized-pdf-text', {
    file: { file: corpus('pdf/google-docs-export.pdf') },
    target_word_count: '120',
    summary_format: 'bullet_points',
  });
  assert.is(body.summary, '[summary] # Example document Beautiful is better than ugly. Explicit is better than');
  assert.is(body.engine, 'llm');
  assert.is(typeof body.inputId, 'string');
  assert.is(body.warning, undefined);
  const seen = await requests();
  assert.is(seen.length, 1);
  const { body: req, authorization } = seen[0];
  assert.is(authorization, 'Bearer sk-test-123');
  assert.is(req.model, 'test-model');
  assert.is(req.max_tokens, 230);
  const user = req.messages[1].content;
  assert.match(user, /Beautiful is better than ugly\. Explicit is better than implicit\./);
  assert.match(user, /a bulleted list of the main points/);
  assert.match(user, /about 120 words/);
  assert.match(user, /Format the answer as Markdown/);
});

test('summarize: pages select the text, plaintext asks for no markup, output_type=file stores a .md', async () => {
  await reset();
  const { body } = await call(t, '/summarized-pdf-text', {
    file: { file: corpus('pdf/standard-14-fonts-14-pages.pdf') },
    pages: '2-3',
    output_format: 'plaintext',
    output_type: 'file',
    output: 'fonts-summary',
  });
  const user = (await requests())[0].body.messages[1].content;
  assert.match(user, /FONT: courierB/);
  assert.match(user, /FONT: courierI/);
  assert.not.match(user, /FONT: courier\b/);
  assert.match(user, /plain text without any Markdown/);
  const info = await (await t.request(`/resource/${body.outputId}?format=info`)).json();
  assert.is(info.name, 'fonts-summary.md');
  assert.match(readFileSync(await t.download(body.outputUrl), 'utf8'), /^\[summary\] /);
});

test('summarize a long document in a small window: parts, then merge rounds, then one final summary', async () => {
  await reset();
  const { body } = await call(small, '/summarized-pdf-text', {
    file: { file: corpus('pdf/multicolumn-3-pages.pdf') },
    target_word_count: '50',
    summary_format: 'abstract',
  });
  const seen = (await requests()).map((s) => s.body);
  const kind = (b: Seen['body']) =>
    /^This is part/.test(b.messages[1].content) ? 'part' : /^These are summaries/.test(b.messages[1].content) ? 'merge' : 'final';
  const kinds = seen.map(kind);
  const parts = kinds.filter((k) => k === 'part').length;
  assert.ok(parts >= 3, `${parts} parts`);
  assert.ok(kinds.includes('merge'), kinds.join());
  assert.is(kinds.filter((k) => k === 'final').length, 1);
  assert.is(kinds[kinds.length - 1], 'final');
  for (const b of seen) assert.ok(estimateTokens(b.messages.map((m) => m.content).join('')) + b.max_tokens <= 1024, 'each request fits the window');
  // The first part starts the document; the final prompt is built from the merged summaries, in order.
  // Parts go two at a time and may arrive in either order.
  const first = seen.find((b) => /^This is part 1 of/.test(b.messages[1].content));
  assert.match(first?.messages[1].content ?? '', /part 1 of \d+[\s\S]*Two-Column Document with Lorem Ipsum/);
  const final = seen[seen.length - 1].messages[1].content;
  assert.match(final, /an abstract/);
  assert.match(final, /<part_summaries>\n\[merge\] \[part 1 of/);
  assert.match(body.summary, /^\[summary\] \[merge\]/);
});

test('translate a .txt: target language in the prompt, source languages from the model, the text in order', async () => {
  await reset();
  const txt = readFileSync(corpus('text/cups-testfile.txt'), 'utf8');
  const { body } = await call(t, '/translated-pdf-text', { file: { file: corpus('text/cups-testfile.txt') }, output_language: 'DE-ch', pages: '1' });
  assert.is(body.output_language, 'de-CH');
  assert.equal(body.source_languages, ['en']);
  assert.match(body.translated_text, /^\[de-CH\] All work and no play makes Johhny a dull boy\./);
  const seen = await requests();
  assert.is(seen.length, 1);
  assert.match(seen[0].body.messages[0].content, /into Swiss High German \(de-CH\)/);
  assert.ok(seen[0].body.messages[1].content.includes(txt.split(/\r?\n/)[0].trim()));
});

test('translate a long PDF in a small window: several parts, joined in order; file output keeps the language fields', async () => {
  await reset();
  const { body } = await call(small, '/translated-pdf-text', {
    file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') },
    output_language: 'fr',
    output_type: 'file',
  });
  assert.is(body.output_language, 'fr');
  assert.equal(body.source_languages, ['en']);
  // Parts go two at a time, so they may reach the server in either order: sort them by the part they name.
  const partOf = (s: { body: { messages: { content: string }[] } }) => Number(/^This is part (\d+) of/.exec(s.body.messages[1].content)?.[1]);
  const seen = (await requests()).sort((a, b) => partOf(a) - partOf(b));
  assert.ok(seen.length >= 3, `${seen.length} requests`);
  seen.forEach((s, i) => assert.match(s.body.messages[1].content, new RegExp(`^This is part ${i + 1} of ${seen.length}`)));
  const out = readFileSync(await small.download(body.outputUrl), 'utf8');
  assert.is(out.split('[fr] ').length - 1, seen.length, 'one translated part per request');
  const info = await (await small.request(`/resource/${body.outputId}?format=info`)).json();
  assert.match(info.name, /\.txt$/);
  // Every part's text comes back, in the document's order.
  const firsts = seen.map((s) => `[fr] ${/<text>\n(.{30})/.exec(s.body.messages[1].content)![1]}`);
  let at = -1;
  for (const f of firsts) {
    const i = out.indexOf(f, at + 1);
    assert.ok(i > at, `${f} in order`);
    at = i;
  }
});

test("translate: source_languages come from Quire's own detection, not the model's SOURCE line", async () => {
  await reset();
  // The test model always answers "SOURCE: en"; the document is Chinese.
  const { body } = await call(t, '/translated-pdf-text', { file: { file: corpus('pdf/cjk-chinese-gbk-nonembedded.pdf') }, output_language: 'en' });
  assert.equal(body.source_languages, ['zh']);
  assert.is(body.engine, 'llm');
  assert.match(body.translated_text, /^\[en\] 我们都是黑体字/);
  assert.is((await requests()).length, 1);
});

test('JSON body with an id', async () => {
  const up = (await (await t.form('/upload', { file: textFile('note.md', '# Notes\n\nShip the release on Friday.') })).json()) as any;
  const res = await t.json('/summarized-pdf-text', { id: up.files[0].id, summary_format: 'action_items', target_word_count: 30 });
  const body = (await res.json()) as any;
  assert.is(res.status, 200, JSON.stringify(body));
  assert.is(body.summary, '[summary] # Notes Ship the release on Friday.');
  assert.is(body.inputId, up.files[0].id);
});

test('bad parameters and inputs are 4xx with the texts clients match', async () => {
  const pdf = { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } };
  const fails = async (path: string, fields: Record<string, FormValue>, status: number, pattern: RegExp) => {
    const { body } = await call(t, path, fields, status);
    assert.match(body.error, pattern);
  };
  await fails(
    '/translated-pdf-text',
    { ...pdf, output_language: 'fr', output_format: 'invalid-format' },
    400,
    /^invalid-format is not a valid input for 'output_format'$/,
  );
  await fails('/summarized-pdf-text', { ...pdf, output_format: 'html' }, 400, /output_format/);
  await fails('/translated-pdf-text', { ...pdf }, 400, /output_language is required/);
  await fails('/translated-pdf-text', { ...pdf, output_language: 'zz' }, 400, /zz is not within the acceptable range for output_language/);
  await fails('/translated-pdf-text', { ...pdf, output_language: 'english' }, 400, /output_language/);
  await fails('/summarized-pdf-text', { ...pdf, summary_format: 'poem' }, 400, /summary_format/);
  await fails('/summarized-pdf-text', { ...pdf, target_word_count: '0' }, 400, /target_word_count/);
  await fails('/summarized-pdf-text', { ...pdf, target_word_count: '9000' }, 400, /target_word_count: the language model's context window allows at most/);
  await fails('/summarized-pdf-text', { ...pdf, pages: '5' }, 400, /page/);
  await fails('/summarized-pdf-text', { file: { file: `${corpus('images/')}hopper-exif-orientation-6.jpg` } }, 400, /not a PDF, Markdown/);
  await fails('/summarized-pdf-text', { file: { file: corpus('encrypted/rc4-128-user-view-owner-master.pdf') } }, 401, /password protected/);
  await fails('/translated-pdf-text', { file: { file: corpus('scans/huckleberry-finn-p22-scan.pdf') }, output_language: 'fr' }, 400, /No text was found/);
});

test("model failures: 503 (retryable, not the client's fault) saying what happened; a context overflow is the client's 400", async () => {
  const up = async (marker: string, path = '/summarized-pdf-text', extra: Record<string, FormValue> = {}) =>
    await call(t, path, { file: textFile(`${marker}.txt`, `Some text. ${marker}`), ...extra }, marker === 'CTX_400' ? 400 : 503);
  assert.match((await up('FAIL_500')).body.error, /^The language model at LLM_URL answered HTTP 500\. Try again later\.$/);
  const limited = await up('RATE_429', '/translated-pdf-text', { output_language: 'it' });
  assert.match(limited.body.error, /HTTP 429/);
  assert.is(limited.res.headers.get('retry-after'), '7');
  // SLOW is answered after two minutes: far past a 1 s timeout however busy the machine, and a timeout that does
  // not fire fails the test (a 200) rather than hanging it. The other apps keep the default, which no answer of the
  // model here comes near.
  const hasty = await startApp({ LLM_URL: llmUrl, LLM_MODEL: 'test-model', LLM_TIMEOUT_SECONDS: '1' });
  try {
    const { body } = await call(hasty, '/summarized-pdf-text', { file: textFile('SLOW.txt', 'Some text. SLOW') }, 503);
    assert.match(body.error, /did not answer within 1 s \(LLM_TIMEOUT_SECONDS\)/);
  } finally {
    await hasty.close();
  }
  assert.match((await up('CTX_400')).body.error, /context window/);
  const gone = await startApp({ LLM_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'm' });
  try {
    const { body } = await call(gone, '/summarized-pdf-text', { file: textFile('a.txt', 'Hello there.') }, 503);
    assert.match(body.error, /cannot be reached/);
    assert.not.match(body.error, /sk-test/);
  } finally {
    await gone.close();
  }
});

test('an answer cut at max_tokens comes with a warning', async () => {
  const { body } = await call(t, '/summarized-pdf-text', { file: textFile('cut.txt', 'TRUNCATE this text please.') });
  assert.match(body.warning, /length limit/);
});

test('config: LLM_MODEL is required with LLM_URL; LLM_CONTEXT_TOKENS has a floor', async () => {
  const { loadConfig } = await import('../app/config.js');
  assert.throws(() => loadConfig({ LLM_URL: 'http://127.0.0.1:1/v1' }), /LLM_MODEL/);
  assert.throws(() => loadConfig({ LLM_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm', LLM_CONTEXT_TOKENS: '100' }), /LLM_CONTEXT_TOKENS/);
  const c = loadConfig({ LLM_URL: 'http://127.0.0.1:1/v1/', LLM_MODEL: 'm' });
  assert.equal(c.llm, { url: 'http://127.0.0.1:1/v1', apiKey: undefined, model: 'm', timeoutMs: 120_000, contextTokens: 8192 });
  assert.is(loadConfig({}).llm, null);
});

test.run();
