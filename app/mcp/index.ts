import { Readable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Context, Hono } from 'hono';
import { AppError, TEXT, toClientError } from '../errors.js';
import { baseUrlOf, clientOf, type Deps, type Env } from '../requests/context.js';
import { fetchUrl } from '../requests/fetch-url.js';
import { requestSchema } from '../requests/schema.js';
import { submitOperation } from '../requests/submit.js';
import { storeStream } from '../requests/uploads.js';
import { isResourceId } from '../store/index.js';

/** What a tool may return inline: a resource read is the whole file, base64 in the JSON-RPC answer. */
const MAX_INLINE_BYTES = 20 * 1024 * 1024;
const RESOURCE_URI = 'quire://resource/{id}';
const uriOf = (id: string) => `quire://resource/${id}`;

const uploadTool: Tool = {
  name: 'upload',
  description:
    'Store a file on the server and get its id, the input of every other tool. Give either name and content_base64 (the bytes), or url (fetched by the server; private and loopback addresses are refused unless the operator allows them).',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'File name with extension, e.g. report.pdf' },
      content_base64: { type: 'string', description: 'The file bytes, base64' },
      url: { type: 'string', description: 'An http(s) URL to fetch instead' },
    },
  },
};

/** Every operation as a tool named after its path; its input schema is the operation's JSON body (ids, not bytes). */
function toolsOf(deps: Deps): Tool[] {
  const ops = deps.operations.map((op) => ({
    name: op.path.slice(1),
    title: op.summary,
    description: [op.summary, op.description].filter(Boolean).join('. '),
    inputSchema: requestSchema(op, false) as Tool['inputSchema'],
  }));
  return [uploadTool, ...ops];
}

const text = (value: unknown): CallToolResult['content'][number] => ({
  type: 'text',
  text: typeof value === 'string' ? value : JSON.stringify(value, null, 2),
});
const failure = (err: unknown): CallToolResult => ({ isError: true, content: [text(toClientError(err).body.error)] });

async function upload(args: Record<string, unknown>, deps: Deps, owner: string | null, signal: AbortSignal) {
  const opts = { store: deps.store, owner, maxBytes: deps.config.maxUploadBytes, fileFields: new Set<string>() };
  if (typeof args.url === 'string' && args.url) {
    const fetched = await fetchUrl(args.url, { enabled: deps.config.urlFetch, allow: deps.config.urlAllow }, signal);
    return storeStream(fetched.stream, fetched.name, opts);
  }
  if (typeof args.content_base64 !== 'string' || typeof args.name !== 'string' || !args.name.trim()) {
    throw new AppError('missing_input', 'upload needs name and content_base64, or url');
  }
  const bytes = Buffer.from(args.content_base64, 'base64');
  if (bytes.length > deps.config.maxUploadBytes)
    throw new AppError('too_large', `The upload is larger than this server's limit of ${Math.round(deps.config.maxUploadBytes / 1048576)} MB (MAX_UPLOAD_MB).`);
  return storeStream(Readable.from([bytes]), args.name, opts);
}

/**
 * One MCP server per request (stateless Streamable HTTP): tools call the operations through the same checks and
 * queues as HTTP requests (the caller's key, lanes, limits), so an error is the HTTP error's text.
 */
function mcpServer(deps: Deps, tools: Tool[], c: Context<Env>): Server {
  const server = new Server({ name: deps.meta.product, version: deps.meta.version }, { capabilities: { tools: {}, resources: {} } });
  const owner = c.get('owner');
  const baseUrl = baseUrlOf(deps.config, c.req.url);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    try {
      if (req.params.name === 'upload') {
        const rec = await upload(args, deps, owner, extra.signal);
        const stored = { id: rec.id, name: rec.name, type: rec.type, size: rec.size };
        return { content: [text(stored), { type: 'resource_link', uri: uriOf(rec.id), name: rec.name, mimeType: rec.type }], structuredContent: stored };
      }
      const op = deps.operations.find((o) => o.path === `/${req.params.name}`);
      if (!op) throw new AppError('not_found', `No tool ${req.params.name}`);
      const { done } = await submitOperation(op, { fields: args, files: {} }, deps, { owner, client: clientOf(c), baseUrl, clientSignal: extra.signal });
      const result = await done;
      const links = [result.outputId ?? []].flat().map((id) => ({ type: 'resource_link' as const, uri: uriOf(String(id)), name: String(id) }));
      return { content: [text(result), ...links], structuredContent: result };
    } catch (err) {
      return failure(err);
    }
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: RESOURCE_URI,
        name: 'Stored file',
        description: 'A file stored on the server (an upload or an output), by id',
        mimeType: 'application/octet-stream',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const id = /^quire:\/\/resource\/([^/?#]+)$/.exec(req.params.uri)?.[1] ?? '';
    const rec = isResourceId(id) ? await deps.store.getFor(id, owner) : undefined;
    const stream = rec && (await deps.store.read(id));
    if (!rec || !stream) throw new Error(TEXT.unknownResource);
    if (rec.size > MAX_INLINE_BYTES) {
      stream.destroy();
      throw new Error(`${rec.name} is ${Math.round(rec.size / 1048576)} MB: download it from ${baseUrl}/resource/${id} instead`);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { contents: [{ uri: req.params.uri, mimeType: rec.type, blob: Buffer.concat(chunks).toString('base64') }] };
  });
  return server;
}

/** POST /mcp: the Model Context Protocol over Streamable HTTP (stateless: no session to keep between replicas). */
export function mountMcp(app: Hono<Env>, deps: Deps): void {
  // The schemas of every operation, converted once (the registry is fixed when the app is built).
  const tools = toolsOf(deps);
  app.post('/mcp', async (c) => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer(deps, tools, c);
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  // Stateless: no server-initiated stream to resume and no session to end.
  for (const method of ['get', 'delete'] as const)
    app[method]('/mcp', (c) =>
      c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless (POST only).' }, id: null }, 405),
    );
}
