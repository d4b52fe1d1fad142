import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import * as assert from 'uvu/assert';
import { loadConfig } from '../app/config.js';
import { createDeps } from '../app/deps.js';
import { shutdownThreads } from '../app/jobs/operation-thread.js';
import type { Deps } from '../app/requests/context.js';
import type { Operation } from '../app/requests/operation.js';
import { createApp } from '../app/server.js';
import { shutdownBrowser } from '../engines/chromium/browser.js';
import { shutdownPool } from '../engines/libreoffice/pool.js';
import { until } from './waiting.js';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const CORPUS = process.env.QUIRE_CORPUS ?? resolve(root, '../shared/corpus');
export const corpus = (rel: string) => join(CORPUS, rel);

export interface TestApp {
  deps: Deps;
  app: ReturnType<typeof createApp>;
  dataDir: string;
  request: (path: string, init?: RequestInit) => Promise<Response>;
  /** POST a multipart form: values are strings, arrays (repeated fields) or {file: path}. */
  form: (path: string, fields: Record<string, FormValue | FormValue[]>, headers?: Record<string, string>) => Promise<Response>;
  json: (path: string, body: unknown, headers?: Record<string, string>) => Promise<Response>;
  /** Downloads a result by its outputUrl into a temp file and returns the path. */
  download: (url: string) => Promise<string>;
  close: () => Promise<void>;
}

export type FormValue = string | { file: string; name?: string } | { bytes: Buffer; name: string };

/** A fresh app over a fresh DATA_DIR, with the real engines. */
export async function startApp(env: Record<string, string> = {}, opts: { operations?: Operation[]; dataDir?: string } = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'quire-test-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  const deps = await createDeps(config);
  if (opts.operations) deps.operations = [...deps.operations, ...opts.operations];
  const app = createApp(deps);
  const base = 'http://quire.test';
  const request = async (path: string, init?: RequestInit) => app.request(`${base}${path}`, init);
  const downloads: string[] = [];
  return {
    deps,
    app,
    dataDir,
    request,
    form: (path, fields, headers = {}) => {
      const fd = new FormData();
      for (const [k, v] of Object.entries(fields)) {
        for (const item of Array.isArray(v) ? v : [v]) {
          if (typeof item === 'string') fd.append(k, item);
          else if ('file' in item) fd.append(k, new Blob([readFileSync(item.file)]), item.name ?? basename(item.file));
          else fd.append(k, new Blob([item.bytes]), item.name);
        }
      }
      return request(path, { method: 'POST', body: fd, headers });
    },
    json: (path, body, headers = {}) =>
      request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }),
    download: async (url: string) => {
      const res = await request(new URL(url).pathname + new URL(url).search);
      if (res.status !== 200) throw new Error(`download ${url}: ${res.status} ${await res.text()}`);
      const dir = mkdtempSync(join(tmpdir(), 'quire-dl-'));
      downloads.push(dir);
      const file = join(dir, 'out');
      writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      return file;
    },
    close: async () => {
      await deps.jobs.drain(1000);
      shutdownThreads();
      await Promise.all([shutdownPool(), shutdownBrowser()]);
      await deps.store.flushAll();
      for (const d of downloads) rmSync(d, { recursive: true, force: true });
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Independent readers of outputs (poppler and qpdf command lines, not our code). */
export const tool = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 512 * 1024 * 1024 });

export interface PdfImage {
  page: number;
  type: string;
  width: number;
  height: number;
  color: string;
  comp: number;
  enc: string;
  object: number;
  xppi: number;
  yppi: number;
}
/** Poppler's image list (`pdfimages -list`): one record per image, soft mask and stencil drawn. */
export const pdfImages = (pdf: string): PdfImage[] =>
  tool('pdfimages', ['-list', pdf])
    .split('\n')
    .slice(2)
    .filter((l) => /^\s*\d/.test(l))
    .map((l) => l.trim().split(/\s+/))
    .map((c) => ({
      page: Number(c[0]),
      type: c[2],
      width: Number(c[3]),
      height: Number(c[4]),
      color: c[5],
      comp: Number(c[6]),
      enc: c[8],
      object: Number(c[10]),
      xppi: Number(c[12]),
      yppi: Number(c[13]),
    }));

/**
 * Compares the first embedded image of two PDFs (extracted with pdfimages into `scratch`): the mean absolute
 * difference per RGB channel (0-255) over the image's columns x0 to x1, so a redaction test can tell pixels
 * replaced under a mark from pixels kept beside it.
 */
export async function imageColumnsDiff(before: string, after: string, scratch: string): Promise<(x0: number, x1: number) => number> {
  const pixels = async (pdf: string) => {
    const prefix = `img-${basename(pdf, '.pdf')}-${Math.random().toString(36).slice(2)}`;
    tool('pdfimages', ['-png', '-f', '1', '-l', '1', pdf, join(scratch, prefix)]);
    const png = readdirSync(scratch).find((f) => f.startsWith(`${prefix}-`));
    if (!png) throw new Error(`no image in ${pdf}`);
    return sharp(join(scratch, png)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  };
  const a = await pixels(before);
  const b = await pixels(after);
  assert.is(b.info.width, a.info.width, 'the image keeps its width');
  return (x0, x1) => {
    let sum = 0;
    let n = 0;
    for (let y = 0; y < a.info.height; y++)
      for (let x = x0; x < x1; x++)
        for (let c = 0; c < 3; c++) {
          const o = (y * a.info.width + x) * 3 + c;
          sum += Math.abs(a.data[o] - b.data[o]);
          n++;
        }
    return sum / n;
  };
}

/** RGB of the pixel at (x, y) points from the top-left of `page` as displayed (its crop box, rendered at 50 dpi into `scratch`). */
export async function pixelAt(file: string, page: number, x: number, y: number, scratch: string): Promise<number[]> {
  const prefix = join(scratch, `px-${page}-${Math.random().toString(36).slice(2)}`);
  tool('pdftoppm', ['-r', '50', '-cropbox', '-f', String(page), '-l', String(page), '-png', '-singlefile', file, prefix]);
  const { data, info } = await sharp(`${prefix}.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const o = (Math.round((y * 50) / 72) * info.width + Math.round((x * 50) / 72)) * info.channels;
  return [data[o], data[o + 1], data[o + 2]];
}

/** Asserts two RGB colours agree within 12 per channel (anti-aliasing and JPEG noise). */
export const nearColour = (a: number[], b: number[], what: string) =>
  assert.ok(
    a.every((v, i) => Math.abs(v - b[i]) <= 12),
    `${what}: ${a} vs ${b}`,
  );

export interface PdfWord {
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}
/** Poppler's word boxes (`pdftotext -bbox`: points, origin top-left of the page as displayed), in reading order. */
export function pdfWords(pdf: string, page = 1): PdfWord[] {
  const html = tool('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), pdf, '-']);
  return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    text: m[5]
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
    xMin: Number(m[1]),
    yMin: Number(m[2]),
    xMax: Number(m[3]),
    yMax: Number(m[4]),
  }));
}
/** The first word `text` on `page`; fails naming the words that are there. */
export function pdfWord(pdf: string, page: number, text: string): PdfWord {
  const ws = pdfWords(pdf, page);
  const w = ws.find((x) => x.text === text);
  assert.ok(
    w,
    `"${text}" on page ${page}: ${ws
      .map((x) => x.text)
      .join(' ')
      .slice(0, 400)}`,
  );
  return w!;
}
export const pdfPages = (path: string) => Number(tool('qpdf', ['--show-npages', path]).trim());
export const pdfText = (path: string) => tool('pdftotext', ['-layout', path, '-']);
export const pdfInfoBox = (path: string) => tool('pdfinfo', ['-box', path]);
/** pdffonts' "emb" column, one entry per font. */
export const fontsEmbedded = (path: string) =>
  tool('pdffonts', [path])
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((l) => / (yes|no) +(yes|no) +(yes|no) +\d+ +\d+\s*$/.exec(l)![1]);

/** POST /pdf as a multipart form; on 200 the output is downloaded. Throws when the status is not `status`. */
export async function convertToPdf(
  t: TestApp,
  fields: Record<string, FormValue | FormValue[]>,
  status = 200,
): Promise<{ path: string; body: Record<string, unknown> }> {
  const res = await t.form('/pdf', fields);
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(body)}`);
  return { path: status === 200 ? await t.download(String(body.outputUrl)) : '', body };
}

export const UUID_V4 = /^[12]?[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export { sleep, until } from './waiting.js';

/** The JSON body of a 200 answer (the body is shown when the status is not 200). */
export async function expectOk(res: Response): Promise<Record<string, any>> {
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  return body;
}

/** An `{error}` answer with this status whose text matches. */
export async function expectError(res: Response, status: number, pattern: RegExp): Promise<void> {
  const body = (await res.json()) as { error: string };
  assert.is(res.status, status, JSON.stringify(body));
  assert.match(body.error, pattern);
}

/** Polls /request-status until the request is no longer pending and returns its last answer. */
export async function settledStatus(app: TestApp, requestId: string, headers: Record<string, string> = {}, timeoutMs = 60_000): Promise<Record<string, any>> {
  let status: Record<string, any> = {};
  await until(
    `request ${requestId} to settle`,
    async () => {
      status = (await (await app.request(`/request-status/${requestId}`, { headers })).json()) as Record<string, any>;
      return status.status !== 'pending';
    },
    timeoutMs,
  );
  return status;
}

/** Stores a file through /upload and returns its id. */
export const uploadId = async (t: TestApp, path: string): Promise<string> =>
  ((await (await t.form('/upload', { file: { file: path } })).json()) as { files: { id: string }[] }).files[0].id;
