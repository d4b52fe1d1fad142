import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, pdfPages, startApp, type TestApp, tool } from './helpers.js';

// /mcp driven by the official SDK's own client over Streamable HTTP against a listening server: tools listed from the
// registry, an upload, two operations chained by id, errors as tool errors with the HTTP texts, keys as bearer tokens.
const PDF = corpus('pdf/text-4-pages-pdflatex.pdf');
const KEY = 'mcp-test-key-0123456789';

async function listen(env: Record<string, string> = {}): Promise<{ t: TestApp; url: URL; close: () => Promise<void> }> {
  const t = await startApp(env);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { t, url: new URL(`http://127.0.0.1:${port}/mcp`), close: async () => (server.close(), t.close()) };
}

async function connect(url: URL, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'quire-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

type Result = Awaited<ReturnType<Client['callTool']>>;
const json = (r: Result) => r.structuredContent as Record<string, any>;
const errorText = (r: Result) => {
  assert.ok(r.isError, JSON.stringify(r));
  return (r.content as { type: string; text: string }[])[0].text;
};

test('tools from the registry; upload, merge, pdf-info chained by id; the output as a resource', async () => {
  const s = await listen();
  const client = await connect(s.url);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    for (const n of ['upload', 'pdf-info', 'merged-pdf', 'compressed-pdf', 'png', 'split-pdf']) assert.ok(names.includes(n), n);
    assert.is(names.length, s.t.deps.operations.length + 1);
    const merge = tools.find((x) => x.name === 'merged-pdf')!;
    assert.is(merge.inputSchema.type, 'object');
    assert.ok('id' in (merge.inputSchema.properties ?? {}), 'inputs by id');
    assert.match(tools.find((x) => x.name === 'compressed-pdf')!.description!, /compress/i);

    const up = await client.callTool({ name: 'upload', arguments: { name: 'four.pdf', content_base64: readFileSync(PDF).toString('base64') } });
    const id = json(up).id as string;
    assert.is(json(up).name, 'four.pdf');
    const merged = await client.callTool({ name: 'merged-pdf', arguments: { id: [id, id], pages: ['1-2', '4'] } });
    assert.not.ok(merged.isError, JSON.stringify(merged));
    const out = json(merged).outputId as string;
    const info = await client.callTool({ name: 'pdf-info', arguments: { id: out, queries: 'page_count,file_size' } });
    assert.is(json(info).page_count, 3);
    // The bytes of the output, read back as an MCP resource and checked with qpdf.
    const res = await client.readResource({ uri: `quire://resource/${out}` });
    const file = join(mkdtempSync(join(tmpdir(), 'quire-mcp-')), 'out.pdf');
    writeFileSync(file, Buffer.from((res.contents[0] as { blob: string }).blob, 'base64'));
    assert.is(pdfPages(file), 3);
    assert.match(tool('pdftotext', ['-f', '3', '-l', '3', file, '-']).replace(/\s+/g, ' '), /\w{4,}/);
    const templates = await client.listResourceTemplates();
    assert.is(templates.resourceTemplates[0].uriTemplate, 'quire://resource/{id}');
  } finally {
    await client.close();
    await s.close();
  }
});

test('errors are tool errors with the same text as over HTTP', async () => {
  const s = await listen();
  const client = await connect(s.url);
  try {
    const id = json(await client.callTool({ name: 'upload', arguments: { name: 'four.pdf', content_base64: readFileSync(PDF).toString('base64') } })).id;
    const args = { id, compression_level: 'extreme' };
    const http = (await (await s.t.json('/compressed-pdf', args)).json()) as { error: string };
    assert.is(errorText(await client.callTool({ name: 'compressed-pdf', arguments: args })), http.error);
    assert.is(http.error, 'extreme is not within the acceptable range for compression_level');
    assert.match(errorText(await client.callTool({ name: 'pdf-info', arguments: { queries: 'page_count' } })), /file \(an upload\) or id .* is required/);
    assert.match(errorText(await client.callTool({ name: 'upload', arguments: { url: 'http://127.0.0.1:1/x.pdf' } })), /not public/);
  } finally {
    await client.close();
    await s.close();
  }
});

test('API_KEYS: the key as a bearer token or Api-Key; none is refused', async () => {
  const s = await listen({ API_KEYS: KEY });
  try {
    const bare = await fetch(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.is(bare.status, 401);
    for (const headers of [{ Authorization: `Bearer ${KEY}` }, { 'Api-Key': KEY }]) {
      const client = await connect(s.url, headers);
      const up = await client.callTool({ name: 'upload', arguments: { name: 'four.pdf', content_base64: readFileSync(PDF).toString('base64') } });
      const info = await client.callTool({ name: 'pdf-info', arguments: { id: json(up).id, queries: 'page_count' } });
      assert.is(json(info).page_count, 4);
      await client.close();
    }
    const refused = await connect(s.url, { Authorization: 'Bearer wrong-key-0123456789' }).then(
      () => '',
      (err: Error) => err.message,
    );
    assert.match(refused, /The provided key is not valid/);
  } finally {
    await s.close();
  }
});

test.run();
