import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type net from 'node:net';
import { dirname, join } from 'node:path';
import type { EngineContext } from '../context.js';
import { EngineError, onceMoreOnFreshInstance } from '../errors.js';
import { expectOutput } from '../run.js';
import { bounded, closeLease, openLease, usePage, watchMemory } from './browser.js';
import type { HtmlLimits } from './print.js';

/**
 * XFA forms laid out by pdf.js (pdfjs-dist, its browser build) in the shared headless Chromium, then printed.
 * pdf.js merges the XFA template with the datasets and lays the form out as HTML (its XfaLayer); the page reads
 * back where each field landed, and prints twice: as the form looks (values drawn), and without the fields'
 * controls (for AcroForm widgets to be placed on top). pdfjs-dist's Node build needs Node 22; only its browser
 * build is used, inside Chromium.
 *
 * The page runs offline: its context sends every request to a one-job HTTP server of ours, which serves the page,
 * the input PDF and pdf.js's own files (from node_modules, by a fixed list of names) and refuses anything else,
 * tunnels included. The form's own scripts do not run (pdf.js runs no XFA or PDF JavaScript here).
 */

/** A field as laid out, in PDF points (origin bottom-left of its page, 1-based page). */
export interface XfaField {
  /** SOM path with indices: `form1[0].page1[0].Name[0]`; for radio buttons, the exclusion group's. */
  name: string;
  type: 'text' | 'checkbox' | 'radio' | 'choice';
  page: number;
  rect: { x: number; y: number; width: number; height: number };
  /** Text or choice value(s); for check boxes and radio buttons, the on value when checked, else ''. */
  value: string[];
  /** Check box or radio button: the value that means on. */
  on?: string;
  /** Choice: the options (export values) in order. */
  options?: string[];
  multiline?: boolean;
  multiSelect?: boolean;
  /** Choice shown as a list rather than a drop-down. */
  list?: boolean;
  readOnly?: boolean;
  required?: boolean;
  /** Font size in points (0 = unknown). */
  fontSize: number;
}

export interface XfaLayout {
  pages: { width: number; height: number }[];
  fields: XfaField[];
}

/** Why the layout failed when the form is at fault (no XFA pdf.js can lay out, a template it cannot read). */
export class XfaLayoutError extends EngineError {
  constructor(readonly reason: string) {
    super('chromium', reason);
    this.name = 'XfaLayoutError';
  }
}

const ORIGIN_HOST = 'quire-xfa.invalid';
const ORIGIN = `http://${ORIGIN_HOST}`;
/** CSS pixels per PDF point: pdf.js lays XFA out in points, Chromium prints 96 CSS pixels to the inch. */
const PX_PER_PT = 96 / 72;

/** pdf.js's folder, and the files the page may load from it (dir -> names; `*` = any plain file name in it). */
const pdfjsRoot = (() => {
  try {
    return dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
  } catch {
    return null;
  }
})();
const ASSETS: Record<string, string[] | '*'> = {
  build: ['pdf.min.mjs', 'pdf.worker.min.mjs'],
  web: ['pdf_viewer.css'],
  standard_fonts: '*',
  cmaps: '*',
  wasm: '*',
  iccs: '*',
};
const TYPES: Record<string, string> = { mjs: 'text/javascript', js: 'text/javascript', css: 'text/css', wasm: 'application/wasm' };

/** The local file behind `/pdfjs/<dir>/<name>`, or null when the page may not have it. */
export function assetPath(pathname: string): string | null {
  const m = /^\/pdfjs\/([a-z_]+)\/([\w.-]+)$/.exec(pathname);
  if (!m || !pdfjsRoot || m[2].startsWith('.')) return null;
  const allowed = ASSETS[m[1]];
  if (!allowed || (allowed !== '*' && !allowed.includes(m[2]))) return null;
  const file = join(pdfjsRoot, m[1], m[2]);
  return existsSync(file) ? file : null;
}

/** Whether pdf.js's browser build is installed (the XFA layout needs it beside Chromium). */
export const xfaLayoutAvailable = () => pdfjsRoot !== null && assetPath('/pdfjs/build/pdf.min.mjs') !== null;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/pdfjs/web/pdf_viewer.css">
<style>
html, body { margin: 0; padding: 0; background: white; }
.qPage { position: relative; overflow: hidden; break-after: page; }
.qPage:last-child { break-after: auto; }
.qPage > .xfaLayer { position: absolute; left: 0; top: 0; transform-origin: 0 0; transform: scale(${PX_PER_PT}); }
.xfaLayer *:required { outline: none !important; }
.xfaLayer input, .xfaLayer textarea, .xfaLayer select { background: transparent !important; }
/* Without the controls' contents (their frames stay): the AcroForm widgets draw the values. */
body.qNoControls .xfaLayer input, body.qNoControls .xfaLayer textarea, body.qNoControls .xfaLayer select { color: transparent !important; -webkit-text-fill-color: transparent !important; }
/* Check boxes and radio buttons are drawn whole by their widgets (box and mark). */
body.qNoControls .xfaLayer input[type=checkbox], body.qNoControls .xfaLayer input[type=radio] { visibility: hidden !important; }
</style></head><body><div id="pages"></div>
<script type="module">
import * as pdfjs from '/pdfjs/build/pdf.min.mjs';
pdfjs.GlobalWorkerOptions.workerSrc = '/pdfjs/build/pdf.worker.min.mjs';
const PX = ${PX_PER_PT};
// The laid-out fields, read by the host after the layout. Names are SOM paths: each named subform, exclusion group
// and field adds name[i], i counting the same name under the same parent in document order; unnamed subforms are
// transparent, as in XFA. Boxes in points from the page's bottom-left.
window.__fields = () => {
  const SEL = '.xfaSubform[xfaname], .xfaExclgroup[xfaname], .xfaField[xfaname]';
  const paths = new Map(), counters = new Map();
  // A container split across pages appears once per page with the same node id: one path for all its parts.
  const byNode = new Map();
  const pathOf = (el) => {
    if (paths.has(el)) return paths.get(el);
    const node = el.getAttribute('data-element-id');
    if (node && byNode.has(node)) {
      paths.set(el, byNode.get(node));
      return byNode.get(node);
    }
    const parent = el.parentElement ? el.parentElement.closest(SEL) : null;
    const base = parent ? pathOf(parent) : '';
    const name = el.getAttribute('xfaname') || '';
    const key = base + '/' + name;
    const i = counters.get(key) || 0;
    counters.set(key, i + 1);
    const path = (base ? base + '.' : '') + name + '[' + i + ']';
    paths.set(el, path);
    if (node) byNode.set(node, path);
    return path;
  };
  for (const el of document.querySelectorAll(SEL)) pathOf(el);
  const fields = [];
  [...document.querySelectorAll('.qPage')].forEach((pageEl, p) => {
    const box = pageEl.getBoundingClientRect();
    const heightPt = box.height / PX;
    for (const control of pageEl.querySelectorAll('input, textarea, select')) {
      const fieldEl = control.closest('.xfaField[xfaname]');
      if (!fieldEl) continue;
      const r = control.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      const common = {
        page: p + 1,
        rect: { x: (r.left - box.left) / PX, y: heightPt - (r.bottom - box.top) / PX, width: r.width / PX, height: r.height / PX },
        readOnly: control.hasAttribute('readonly') || control.hasAttribute('disabled'),
        required: control.hasAttribute('required'),
        fontSize: parseFloat(getComputedStyle(control).fontSize) || 0,
      };
      if (control instanceof HTMLSelectElement) {
        fields.push({ ...common, name: pathOf(fieldEl), type: 'choice', value: [...control.selectedOptions].map((o) => o.value),
          options: [...control.options].map((o) => o.value), multiSelect: control.multiple, list: control.multiple || control.size > 1 });
      } else if (control instanceof HTMLTextAreaElement) {
        fields.push({ ...common, name: pathOf(fieldEl), type: 'text', value: [control.value], multiline: true });
      } else if (control.type === 'radio' || control.type === 'checkbox') {
        const group = control.type === 'radio' ? control.closest('.xfaExclgroup[xfaname]') : null;
        const on = control.getAttribute('xfaOn') || '';
        fields.push({ ...common, name: pathOf(group || fieldEl), type: control.type, on, value: control.checked ? [on] : [] });
      } else if (!['button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(control.type)) {
        fields.push({ ...common, name: pathOf(fieldEl), type: 'text', value: [control.value] });
      }
    }
  });
  return fields;
};
const maxPages = Number(new URLSearchParams(location.search).get('maxPages')) || Infinity;
try {
  const data = new Uint8Array(await (await fetch('/input.pdf')).arrayBuffer());
  const doc = await pdfjs.getDocument({ data, enableXfa: true, enableScripting: false, isEvalSupported: false,
    standardFontDataUrl: '/pdfjs/standard_fonts/', cMapUrl: '/pdfjs/cmaps/', wasmUrl: '/pdfjs/wasm/', iccUrl: '/pdfjs/iccs/', verbosity: 0 }).promise;
  const xfa = doc.isPureXfa ? doc.allXfaHtml : null;
  if (!xfa || !xfa.children?.length) throw new Error('pdf.js found no XFA form it can lay out');
  if (xfa.children.length > maxPages) {
    window.__xfa = { tooManyPages: xfa.children.length };
  } else {
    const sizes = new Map();
    const pages = [];
    const css = [];
    for (const xfaPage of xfa.children) {
      const w = parseFloat(xfaPage.attributes.style.width), h = parseFloat(xfaPage.attributes.style.height);
      if (!(w > 0 && h > 0)) throw new Error('an XFA page has no size');
      const key = 'p' + Math.round(w * 100) + 'x' + Math.round(h * 100);
      if (!sizes.has(key)) { sizes.set(key, 1); css.push('@page ' + key + ' { size: ' + w + 'pt ' + h + 'pt; margin: 0; }'); }
      const div = document.createElement('div');
      div.className = 'qPage';
      div.style.width = (w * ${PX_PER_PT}) + 'px';
      div.style.height = (h * ${PX_PER_PT}) + 'px';
      div.style.page = key;
      document.getElementById('pages').append(div);
      const layer = document.createElement('div');
      div.append(layer);
      pdfjs.XfaLayer.render({ div: layer, xfaHtml: xfaPage, annotationStorage: doc.annotationStorage, intent: 'print' });
      layer.style.transform = '';
      pages.push({ width: w, height: h });
    }
    const style = document.createElement('style');
    style.textContent = css.join('\\n');
    document.head.append(style);
    await document.fonts.ready;
    window.__xfa = { pages };
  }
} catch (err) {
  window.__xfa = { error: String(err && err.message || err).slice(0, 300) };
}
</script></body></html>`;

export interface XfaOutputs {
  /** The form as it looks, values drawn (for rendering, text and flattening). */
  flat: string;
  /** The same pages without the fields' controls (AcroForm widgets go on top). */
  bare: string;
}

const limitError = (limit: 'time' | 'pages' | 'bytes' | 'memory', message: string) => new EngineError('chromium', message, { limit });

/**
 * Lays out the XFA form of `pdf` with pdf.js and prints it to `out.flat` and `out.bare`; answers the pages and
 * the fields where they landed. A form pdf.js cannot lay out throws XfaLayoutError; the HTML limits (time, pages,
 * bytes of the input, renderer memory) throw an EngineError whose `details.limit` names the one passed.
 */
export async function layOutXfa(pdf: string, out: XfaOutputs, o: { limits?: Partial<HtmlLimits> }, ctx: EngineContext): Promise<XfaLayout> {
  return onceMoreOnFreshInstance(() => layOutOnce(pdf, out, o, ctx), ctx.signal);
}

async function layOutOnce(pdf: string, out: XfaOutputs, o: { limits?: Partial<HtmlLimits> }, ctx: EngineContext): Promise<XfaLayout> {
  if (!xfaLayoutAvailable()) throw new EngineError('chromium', 'pdf.js (pdfjs-dist) is not installed', { missing: true });
  const limits: HtmlLimits = { timeoutMs: Infinity, maxPages: Infinity, maxBytes: Infinity, maxMemoryBytes: Infinity, ...o.limits };
  const bytes = await readFile(pdf);
  if (bytes.length > limits.maxBytes) throw limitError('bytes', `the form is ${bytes.length} bytes`);
  const server = await startServer(bytes);
  let overMemory = false;
  try {
    const lease = await bounded(
      () => openLease({ proxyServer: `http://127.0.0.1:${server.port}` }),
      ctx,
      (l) => void closeLease(l),
    );
    let memoryExceeded!: () => void;
    const memorySpent = new Promise<never>(
      (_, reject) =>
        (memoryExceeded = () => ((overMemory = true), reject(limitError('memory', `the form's page used more than ${limits.maxMemoryBytes} bytes of memory`)))),
    );
    memorySpent.catch(() => undefined);
    const stopWatch = Number.isFinite(limits.maxMemoryBytes) ? watchMemory(lease, limits.maxMemoryBytes, memoryExceeded) : () => undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<never>((_, reject) => {
      if (Number.isFinite(limits.timeoutMs))
        timer = setTimeout(
          () => reject(limitError('time', `the form was still being laid out or printed after ${limits.timeoutMs} ms`)),
          Math.min(limits.timeoutMs, 2 ** 31 - 1),
        );
    });
    timeUp.catch(() => undefined);
    try {
      const work = usePage(
        lease,
        async (tab) => {
          const timeout = ctx.timeoutMs ?? 60_000;
          await tab.setJavaScriptEnabled(true);
          await tab.setViewport({ width: 1000, height: 1000 });
          const max = Number.isFinite(limits.maxPages) ? limits.maxPages : 0;
          await tab.goto(`${ORIGIN}/index.html?maxPages=${max}`, { waitUntil: 'load', timeout });
          await tab.waitForFunction('window.__xfa !== undefined', { timeout, polling: 50 });
          const state = (await tab.evaluate('window.__xfa')) as { pages?: XfaLayout['pages']; error?: string; tooManyPages?: number };
          if (state.tooManyPages) throw limitError('pages', `the form lays out ${state.tooManyPages} pages`);
          if (state.error || !state.pages) throw new XfaLayoutError(state.error ?? 'the XFA layout gave no pages');
          const fields = (await tab.evaluate('window.__fields()')) as XfaField[];
          const print = (path: string) => tab.pdf({ path, preferCSSPageSize: true, printBackground: true, tagged: false, timeout });
          await print(out.flat);
          await tab.evaluate(() => document.body.classList.add('qNoControls'));
          await print(out.bare);
          return { pages: state.pages, fields };
        },
        ctx,
      );
      const printed = work.catch(async (err) => {
        if (Number.isFinite(limits.maxMemoryBytes) && !overMemory) await new Promise((r) => setTimeout(r, 300));
        throw err;
      });
      printed.catch(() => undefined);
      const layout = await Promise.race([printed, timeUp, memorySpent]);
      await expectOutput('chromium', out.flat);
      await expectOutput('chromium', out.bare);
      return layout;
    } finally {
      clearTimeout(timer);
      stopWatch();
      await closeLease(lease);
    }
  } finally {
    await server.close();
  }
}

/** The page's only server: the page, the input and pdf.js's files on the virtual host; every other request refused. */
async function startServer(input: Buffer): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer(async (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.host !== ORIGIN_HOST || url.protocol !== 'http:' || req.method !== 'GET') {
      res.writeHead(403).end();
      return;
    }
    if (url.pathname === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    if (url.pathname === '/input.pdf') {
      res.writeHead(200, { 'content-type': 'application/pdf' }).end(input);
      return;
    }
    const file = assetPath(url.pathname);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    const body = await readFile(file).catch(() => null);
    if (!body) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream' }).end(body);
  });
  // No tunnels: https and websockets go nowhere.
  server.on('connect', (_req, client: net.Socket) => client.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
