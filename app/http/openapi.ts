import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Hono } from 'hono';
import type { Deps, Env } from '../requests/context.js';
import type { Operation } from '../requests/operation.js';
import { requestSchema, uuid } from '../requests/schema.js';

const ERROR = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
const errors = {
  '400': { description: 'Bad input (the text names the parameter)', content: { 'application/json': { schema: ERROR } } },
  '401': { description: 'Missing or invalid Api-Key, or a password-protected input', content: { 'application/json': { schema: ERROR } } },
  '404': { description: 'Unknown resource id', content: { 'application/json': { schema: ERROR } } },
  '413': { description: 'Upload larger than MAX_UPLOAD_MB', content: { 'application/json': { schema: ERROR } } },
  '429': { description: 'Queue full; see Retry-After', content: { 'application/json': { schema: ERROR } } },
  '503': {
    description: 'An engine this endpoint needs is not installed, or cannot be started now (Retry-After)',
    content: { 'application/json': { schema: ERROR } },
  },
  '507': {
    description: "The server's storage refused the request's bytes (full, over quota, read-only); nothing of the request was kept",
    content: { 'application/json': { schema: ERROR } },
  },
};
const urlOrList = (many: boolean) => (many ? { type: 'array', items: { type: 'string' } } : { type: 'string' });

function successSchema(op: Operation) {
  const many = op.output === 'files';
  const file = { outputUrl: urlOrList(many), outputId: urlOrList(many) };
  const inputId = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
  const properties: Record<string, unknown> = { inputId, warning: { type: 'string' } };
  if (op.output !== 'json') Object.assign(properties, file);
  return { type: 'object', properties, additionalProperties: op.output === 'json' || op.output === 'json-or-file' };
}

/** OpenAPI 3.1 from the same zod schemas that validate requests, plus the fixed resource routes. */
export function buildOpenApi(deps: Deps) {
  const paths: Record<string, unknown> = {};
  const polling = {
    name: 'Request-Type',
    in: 'header',
    required: false,
    schema: { type: 'string', enum: ['requestId'] },
    description: 'Answer {requestId} at once and poll /request-status/{id}',
  };
  const webhooks = [
    {
      name: 'Webhook-Url',
      in: 'header',
      required: false,
      schema: { type: 'string', format: 'uri' },
      description:
        'Answer 202 {requestId} at once, then POST the JSON /request-status/{id} gives, once final, to this http(s) URL. Signed when the server has WEBHOOK_SECRET: header `Quire-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. Up to 5 attempts (waits 1, 3, 9, 27 s; Retry-After honoured within 1-30 s) on network errors, 5xx and 429; other answers are final. Private, loopback and metadata addresses are refused (400) unless listed in URL_ALLOW.',
    },
    {
      name: 'Webhook-Error-Url',
      in: 'header',
      required: false,
      schema: { type: 'string', format: 'uri' },
      description: 'Where a failed request is sent instead (needs Webhook-Url); same rules.',
    },
    {
      name: 'Webhook-Extra-Headers',
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description:
        'A JSON object of header names to string values added to the webhook POST (at most 20, 8 KB), e.g. {"Authorization": "Bearer ..."}. Framing and routing headers (Host, Content-Length, Content-Type, Transfer-Encoding, Connection...) and Quire-Signature are refused (400).',
    },
  ];
  for (const op of deps.operations) {
    paths[op.path] = {
      post: {
        tags: [op.tag],
        summary: op.summary,
        description: op.description,
        operationId: op.path.slice(1),
        parameters: [polling, ...webhooks],
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: requestSchema(op, true) }, 'application/json': { schema: requestSchema(op, false) } },
        },
        responses: {
          '200': { description: 'Success', content: { 'application/json': { schema: successSchema(op) } } },
          '202': {
            description: 'Accepted (Webhook-Url): the result follows at the webhook',
            content: { 'application/json': { schema: { type: 'object', properties: { requestId: uuid } } } },
          },
          ...errors,
        },
      },
    };
  }
  const idParam = { name: 'id', in: 'path', required: true, schema: uuid };
  const info = {
    type: 'object',
    properties: {
      id: uuid,
      name: { type: 'string' },
      url: { type: 'string' },
      type: { type: 'string' },
      size: { type: 'integer' },
      modified: { type: 'string', format: 'date-time' },
    },
  };
  Object.assign(paths, {
    '/upload': {
      post: {
        tags: ['Resources'],
        summary: 'Store files for later use by id',
        description: 'Multipart parts named `file` (repeatable), `url` fields, a JSON body `{"url": [...]}`, or a raw body with a `Content-Filename` header.',
        requestBody: {
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: { file: { type: 'array', items: { type: 'string', format: 'binary' } }, url: { type: 'array', items: { type: 'string' } } },
              },
            },
            'application/json': { schema: { type: 'object', properties: { url: { type: 'array', items: { type: 'string' } } } } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: {
          '200': {
            description: 'Stored',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { files: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, id: uuid } } } },
                },
              },
            },
          },
          ...errors,
        },
      },
    },
    '/resource/{id}': {
      get: {
        tags: ['Resources'],
        summary: 'Download a resource, or its URL or info record',
        parameters: [
          idParam,
          { name: 'format', in: 'query', schema: { type: 'string', enum: ['file', 'url', 'info'], default: 'file' } },
          {
            name: 'disposition',
            in: 'query',
            schema: { type: 'string', enum: ['attachment', 'inline'], default: 'attachment' },
            description: 'inline shows PDFs and raster images in the browser; other types are always attachments',
          },
        ],
        responses: {
          '200': {
            description: 'The bytes (format=file), {url} or the info record',
            content: { 'application/json': { schema: info }, 'application/octet-stream': {} },
          },
          ...errors,
        },
      },
      delete: {
        tags: ['Resources'],
        summary: 'Delete a resource (the key that created it)',
        parameters: [idParam],
        responses: { '200': { description: 'Deleted' }, ...errors },
      },
    },
    '/delete': {
      post: {
        tags: ['Resources'],
        summary: 'Delete several resources',
        requestBody: {
          content: {
            'application/json': { schema: { type: 'object', properties: { ids: { type: 'string', description: 'Comma-separated ids' } }, required: ['ids'] } },
          },
        },
        responses: {
          '200': {
            description: 'Per-id outcome',
            content: {
              'application/json': {
                schema: { type: 'object', properties: { deletionResponses: { type: 'object', additionalProperties: { type: 'string' } } } },
              },
            },
          },
        },
      },
    },
    '/request-status/{id}': {
      get: {
        tags: ['Resources'],
        summary: 'Poll a request sent with Request-Type: requestId',
        description: "status is pending (with progress 0..1 where known), completed (with the endpoint's result fields) or failed (with error and status).",
        parameters: [idParam],
        responses: { '200': { description: 'State' }, ...errors },
      },
    },
    '/pipeline': {
      post: {
        tags: ['Pipelines'],
        summary: 'Run several operations in one request, inside the server',
        description:
          'Inputs as every endpoint takes them (file uploads and/or id, several of either). steps: a JSON array of {"operation": "/compressed-pdf", "fields": {...}} (at most 20), each any processing endpoint with the fields it takes alone; or pipeline: the name of a stored pipeline (GET /pipelines). Each step takes the files the step before produced: an operation with one input runs once per file (fan-out), /merged-pdf and /zip take them all in order (fan-in). Other inputs of a step (an image, a certificate) are ids in its fields (image_id...). Everything is checked before anything runs; errors name the place (steps[1].fields.compression_level: ...). The answer is the last step\'s, plus steps: [{operation, outputId, ms}] (intermediate outputs are stored resources too); a JSON operation last answers its JSON (results: [...] when it ran on several files). Polling and webhooks as for every endpoint; each step runs in its own lane as this client\'s job.',
        operationId: 'pipeline',
        parameters: [polling, ...webhooks],
        requestBody: {
          required: true,
          content: Object.fromEntries(
            (['multipart/form-data', 'application/json'] as const).map((type) => [
              type,
              {
                schema: {
                  type: 'object',
                  properties: {
                    ...(type === 'multipart/form-data' ? { file: { type: 'array', items: { type: 'string', format: 'binary' } } } : {}),
                    id: { type: 'array', items: uuid, description: 'Ids of stored files' },
                    steps: {
                      type: type === 'application/json' ? 'array' : 'string',
                      description: 'JSON array of {operation, fields}',
                      items:
                        type === 'application/json'
                          ? { type: 'object', properties: { operation: { type: 'string' }, fields: { type: 'object' } }, required: ['operation'] }
                          : undefined,
                    },
                    pipeline: { type: 'string', description: 'Name of a stored pipeline, instead of steps' },
                  },
                },
              },
            ]),
          ),
        },
        responses: {
          '200': {
            description: "The last step's answer plus steps",
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    outputId: urlOrList(true),
                    outputUrl: urlOrList(true),
                    inputId: {},
                    steps: { type: 'array', items: { type: 'object', properties: { operation: { type: 'string' }, outputId: {}, ms: { type: 'integer' } } } },
                  },
                  additionalProperties: true,
                },
              },
            },
          },
          '202': { description: 'Accepted (Webhook-Url)' },
          ...errors,
        },
      },
    },
    '/pipelines': {
      get: {
        tags: ['Pipelines'],
        summary: 'Stored pipelines (PIPELINES_DIR)',
        description: 'pipelines: [{name, description, steps}]; invalid: files left out at start, with why.',
        responses: { '200': { description: 'The pipelines' } },
      },
    },
    '/up': { get: { tags: ['Service'], summary: 'Product, version and release date (liveness)', responses: { '200': { description: 'Up' } } } },
    '/health': {
      get: {
        tags: ['Service'],
        summary: 'Readiness: the state of each engine',
        description:
          'Starts no engine. engines: {name: "ok" | "missing" | "down"}: "missing" when not installed (status "degraded", still 200), ' +
          '"down" when installed but its pool (LibreOffice, Chromium) could not start it (503, error names it). ' +
          'storage: {freeMb, minFreeMb, low}: the least free space of DATA_DIR and the job dirs; low (below STORAGE_MIN_FREE_MB) answers 503.',
        responses: {
          '200': { description: 'status "ok" (or "degraded": an engine is missing) and engines' },
          '503': { description: 'status "unavailable": an engine is down, or the storage is nearly full; error names which' },
        },
      },
    },
    '/ready': {
      get: {
        tags: ['Service'],
        summary: 'Engines and their versions, endpoints disabled by missing engines, queue',
        responses: { '200': { description: 'Ready' }, '503': { description: 'An engine is down, or in cluster mode Redis or the storage' } },
      },
    },
  });
  if (deps.config.metrics) {
    paths['/metrics'] = {
      get: {
        tags: ['Service'],
        summary: 'Prometheus metrics (METRICS=on)',
        description: 'Prometheus text format. With API_KEYS or METRICS_TOKEN set: an API key or the token, as Api-Key or Authorization: Bearer.',
        responses: { '200': { description: 'Metrics', content: { 'text/plain': {} } }, ...errors },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: deps.meta.product,
      version: deps.meta.version,
      description: 'Self-hosted document processing API. Every POST accepts multipart/form-data or application/json.',
    },
    components: { securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'Api-Key' } } },
    security: deps.config.apiKeys ? [{ ApiKey: [] }] : [],
    paths,
  };
}

const DOCS_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Quire API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="ui"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui' });`;

/** /openapi.json and /docs, whose assets come from our own node_modules (air-gapped users have no CDN). */
export function mountDocs(app: Hono<Env>, deps: Deps): void {
  const doc = buildOpenApi(deps);
  const uiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  app.get('/openapi.json', (c) => c.json(doc));
  app.get('/docs', (c) => c.html(DOCS_HTML));
  app.get('/docs/init.js', (c) => c.body(DOCS_INIT, 200, { 'Content-Type': 'text/javascript' }));
  for (const [file, type] of [
    ['swagger-ui.css', 'text/css'],
    ['swagger-ui-bundle.js', 'text/javascript'],
  ] as const) {
    let cached: Buffer | undefined;
    app.get(`/docs/${file}`, async (c) => {
      cached ??= await readFile(join(uiDir, file));
      return c.body(new Uint8Array(cached), 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
    });
  }
}
