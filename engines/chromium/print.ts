import { readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { EngineContext } from '../context.js';
import { EngineError, onceMoreOnFreshInstance } from '../errors.js';
import { pageCount } from '../qpdf.js';
import { expectOutput } from '../run.js';
import { beforeBrowserShutdown, bounded, closeLease, type Lease, leaseUsable, openLease, usePage, watchMemory } from './browser.js';

/**
 * HTML to PDF on the shared headless Chromium (browser.ts), one fresh incognito context per job. The page
 * is never opened from file:// (a file:// page may frame /etc/passwd): it is served from a virtual host by
 * a one-job HTTP proxy that the job's context must use for every request, loopback included. The proxy
 * serves the page itself and asks `resolveHost` for anything else: that callback answers the address to
 * connect to, or null to refuse (loopback, private and metadata addresses unless allowed), so navigation,
 * redirects, sub-resources and websockets can never reach the private network, and the address checked is
 * the address connected to. (Request interception over CDP could refuse requests too, but Chromium would
 * resolve the name again itself, so a DNS answer could change between check and connect: rebinding.)
 */

/** The page's name inside Chromium; `.invalid` never resolves anywhere real. */
export const PAGE_ORIGIN = 'http://quire-page.invalid';

export interface PrintOptions {
  /** CSS viewport width the page is laid out at (media queries see it). */
  viewportWidth: number;
  /** Paper and margins, in points (one margin for every side, or each side's). */
  paper: { width: number; height: number; margin: number | Margins };
  /** Print scale: the printable width divided by the viewport width, so the layout keeps the viewport's width. */
  scale: number;
  /** Longest wait for the network to go idle after the document is parsed. */
  settleMs: number;
  /** Answers the address to connect to for a host, or null to refuse it. */
  resolveHost: (host: string) => Promise<string | null>;
  /** Scripts on (web pages) or off (e-mail). */
  javascript?: boolean;
  /** Cuts for hostile pages (none when absent). */
  limits?: Partial<HtmlLimits>;
  /** A tagged (accessible) PDF: Chromium's default is on. */
  tagged?: boolean;
  /** Bookmarks from the headings (needs tagged). */
  outline?: boolean;
}

export interface Margins {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** Each one exceeded throws an EngineError whose `details.limit` says which (the caller names its setting). */
export interface HtmlLimits {
  /** The page's load, scripts and print together. */
  timeoutMs: number;
  /** Pages the print may have. */
  maxPages: number;
  /** Bytes the page may load: the document itself and every response the proxy passes it. */
  maxBytes: number;
  /** Resident bytes the page's renderer may use (sampled every 250 ms, see browser.ts watchMemory). */
  maxMemoryBytes: number;
}

const limitError = (limit: 'time' | 'pages' | 'bytes' | 'memory', message: string) => new EngineError('chromium', message, { limit });

const inches = (pt: number) => `${Number((pt / 72).toFixed(4))}in`;

/**
 * A proxy and a fresh context + page on it, made ready before a job needs them (a new page costs ~150-220 ms of
 * renderer start-up). Until a job takes it, its proxy has no page and refuses every request.
 */
interface Station {
  proxy: Proxy;
  lease: Lease;
}

let spare: Station | null = null;
let preparing: Promise<void> | null = null;
let closing = false;

async function openStation(ctx?: EngineContext): Promise<Station> {
  const proxy = await startProxy();
  try {
    const lease = ctx
      ? await bounded(
          () => openLease({ proxyServer: `http://127.0.0.1:${proxy.port}` }),
          ctx,
          (l) => void closeLease(l),
        )
      : await openLease({ proxyServer: `http://127.0.0.1:${proxy.port}` });
    return { proxy, lease };
  } catch (err) {
    await proxy.close();
    throw err;
  }
}

async function closeStation(st: Station): Promise<void> {
  await Promise.all([closeLease(st.lease), st.proxy.close()]);
}

/** Prepares the next job's station in the background (one at a time, none while shutting down). */
function prepareSpare(): void {
  if (spare || preparing || closing) return;
  preparing = openStation()
    .then((st) => {
      if (closing || spare) return closeStation(st);
      spare = st;
    })
    .catch(() => undefined)
    .finally(() => (preparing = null));
}

beforeBrowserShutdown(async () => {
  closing = true;
  try {
    await preparing;
    const st = spare;
    spare = null;
    if (st) await closeStation(st);
  } finally {
    closing = false;
  }
});

/** Prints `html` (already prepared: page CSS injected) to `output`. */
export async function printHtml(htmlFile: string, output: string, o: PrintOptions, ctx: EngineContext): Promise<void> {
  await onceMoreOnFreshInstance(() => printOnce(htmlFile, output, o, ctx), ctx.signal);
}

async function printOnce(htmlFile: string, output: string, o: PrintOptions, ctx: EngineContext): Promise<void> {
  const limits: HtmlLimits = { timeoutMs: Infinity, maxPages: Infinity, maxBytes: Infinity, maxMemoryBytes: Infinity, ...o.limits };
  const page = await readFile(htmlFile);
  if (page.length > limits.maxBytes) throw limitError('bytes', `the document alone is ${page.length} bytes`);
  // A station half made is nearer than a new one.
  if (!spare && preparing) await bounded(() => preparing!, ctx);
  let st = spare;
  spare = null;
  if (st && !leaseUsable(st.lease)) {
    await closeStation(st);
    st = null;
  }
  st ??= await openStation(ctx);
  let overBudget!: () => void;
  const budgetSpent = new Promise<never>((_, reject) => (overBudget = () => reject(limitError('bytes', `the page loaded more than ${limits.maxBytes} bytes`))));
  budgetSpent.catch(() => undefined); // spent after the print: nobody waits any more
  st.proxy.serve(page, o.resolveHost, { maxBytes: limits.maxBytes, onExceeded: overBudget });
  const scale = Math.min(2, Math.max(0.1, o.scale));
  const m = o.paper.margin;
  const margins: Margins = typeof m === 'number' ? { top: m, right: m, bottom: m, left: m } : m;
  // A page whose renderer passes its memory limit has that renderer killed (browser.ts watchMemory), which ends
  // it as closing its context would; the job is then cut like a timeout.
  let overMemory = false;
  let memoryExceeded!: () => void;
  const memorySpent = new Promise<never>(
    (_, reject) =>
      (memoryExceeded = () => ((overMemory = true), reject(limitError('memory', `the page used more than ${limits.maxMemoryBytes} bytes of memory`)))),
  );
  memorySpent.catch(() => undefined);
  const stopWatch = Number.isFinite(limits.maxMemoryBytes) ? watchMemory(st.lease, limits.maxMemoryBytes, memoryExceeded) : () => undefined;
  try {
    // The time limit is a timer outside the page: a page whose main thread spins answers no CDP call (evaluate,
    // printToPDF, close). Closing its context below kills its renderer; a context that cannot be closed takes
    // the browser with it (browser.ts), so nothing keeps spinning after the job.
    const printing = usePage(
      st.lease,
      async (tab) => {
        const timeout = ctx.timeoutMs ?? 60_000;
        await tab.setJavaScriptEnabled(o.javascript ?? true);
        await tab.setViewport({ width: o.viewportWidth, height: 1000 });
        // The load event (images, styles, fonts), then a short quiet spell for script-driven loads; each capped
        // at settleMs, after which the page is printed as it stands (a hanging sub-resource must not hang the job).
        await tab.goto(`${PAGE_ORIGIN}/index.html`, { waitUntil: 'load', timeout: o.settleMs }).catch((err: Error) => {
          if (err.name !== 'TimeoutError') throw err;
        });
        // Only a script can start loading after the load event: a page without one is printed at once (~220 ms saved).
        const scripted =
          (o.javascript ?? true) && (await tab.evaluate(() => document.scripts.length > 0 || document.querySelector('iframe, frame, object, embed') !== null));
        if (scripted) await tab.waitForNetworkIdle({ idleTime: 200, timeout: o.settleMs }).catch(() => undefined);
        if (Number.isFinite(limits.maxPages)) {
          // Refused before printing: the print layout's height (the viewport keeps the print's width) over one
          // page's printable height in CSS px. Whole pages only, so an estimate a little high refuses nothing.
          await tab.emulateMediaType('print');
          const height = await tab.evaluate(() => Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0));
          await tab.emulateMediaType();
          const pages = Math.floor(height / ((((o.paper.height - margins.top - margins.bottom) / 72) * 96) / scale));
          if (pages > limits.maxPages) throw limitError('pages', `the page would print about ${pages} pages`);
        }
        // Chromium scales a right-to-left page about the wrong edge: its text lands off the paper's left side (a
        // Hebrew page laid out at 1280 px lost half of each line). Such a page is zoomed to the paper instead,
        // which lays it out at the same width.
        const rtl =
          scale !== 1 && (await tab.evaluate(() => [document.documentElement, document.body].some((e) => e && getComputedStyle(e).direction === 'rtl')));
        if (rtl) await tab.evaluate((z) => void (document.documentElement.style.zoom = String(z)), scale);
        await tab.pdf({
          path: output,
          width: inches(o.paper.width),
          height: inches(o.paper.height),
          margin: { top: inches(margins.top), right: inches(margins.right), bottom: inches(margins.bottom), left: inches(margins.left) },
          scale: rtl ? 1 : scale,
          printBackground: true,
          tagged: o.tagged ?? true,
          outline: o.outline ?? false,
          // At most one page more than allowed (a later page range is clamped to the page count).
          pageRanges: Number.isFinite(limits.maxPages) ? `1-${limits.maxPages + 1}` : undefined,
          timeout,
        });
      },
      ctx,
    );
    // A killed renderer may fail the print (navigation or print aborted) before its crash is reported: wait a
    // moment for that report, so the job is cut with the memory limit rather than a bare browser error.
    const printed = printing.catch(async (err) => {
      if (Number.isFinite(limits.maxMemoryBytes) && !overMemory) await new Promise((r) => setTimeout(r, 300));
      throw err;
    });
    printed.catch(() => undefined);
    await limited(printed, limits.timeoutMs, Promise.race([budgetSpent, memorySpent]));
    await expectOutput('chromium', output);
    // Forced page breaks escape the estimate: the print stopped after maxPages + 1, so one more means too many.
    if (Number.isFinite(limits.maxPages) && (await pageCount(output, ctx)) > limits.maxPages)
      throw limitError('pages', `the page prints more than ${limits.maxPages} pages`);
  } finally {
    stopWatch();
    await closeStation(st);
    prepareSpare();
  }
}

/**
 * `printing`, unless the page's time runs out or its proxy passes more bytes than allowed first. (The printing
 * still running is ended by closing the page's context.)
 */
async function limited<T>(printing: Promise<T>, timeoutMs: number, budgetSpent: Promise<never>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<never>((_, reject) => {
    if (Number.isFinite(timeoutMs))
      timer = setTimeout(
        () => reject(limitError('time', `the page was still loading, running scripts or printing after ${timeoutMs} ms`)),
        Math.min(timeoutMs, 2 ** 31 - 1),
      );
  });
  try {
    return await Promise.race([printing, timeUp, budgetSpent]);
  } finally {
    clearTimeout(timer);
  }
}

/** Bytes a job's page may load through its proxy, and what to do when it has loaded more. */
interface Budget {
  maxBytes: number;
  onExceeded: () => void;
}

interface Proxy {
  port: number;
  /** The job: its page, which hosts it may reach, and how many bytes it may load. Before this, everything is refused. */
  serve: (page: Buffer, resolveHost: (host: string) => Promise<string | null>, budget?: Budget) => void;
  close: () => Promise<void>;
  /** Hosts refused, for the log and tests. */
  refused: string[];
}

const PAGE_HOST = new URL(PAGE_ORIGIN).host;

async function startProxy(): Promise<Proxy> {
  const refused: string[] = [];
  let page: Buffer | null = null;
  let resolveHost: (host: string) => Promise<string | null> = async () => null;
  let budget: Budget = { maxBytes: Infinity, onExceeded: () => undefined };
  let loaded = 0;
  let spent = false;
  const sockets = new Set<net.Socket>();
  /** Counts bytes coming in for the page; past the budget, every connection is cut and nothing more is served. */
  const take = (n: number) => {
    loaded += n;
    if (spent || loaded <= budget.maxBytes) return;
    spent = true;
    for (const s of sockets) s.destroy();
    budget.onExceeded();
  };
  const server = http.createServer(async (req, res) => {
    if (spent) {
      res.destroy();
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.host === PAGE_HOST) {
      if (url.pathname === '/index.html' && page) {
        take(page.length); // served again on every reload
        if (!spent) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      } else res.writeHead(404).end(); // the upload is one file: its relative assets do not exist
      return;
    }
    const address = url.protocol === 'http:' ? await resolveHost(url.hostname).catch(() => null) : null;
    if (!address) {
      refused.push(url.hostname);
      res.writeHead(403).end();
      return;
    }
    const upstream = http.request(
      {
        host: address,
        port: url.port || 80,
        path: url.pathname + url.search,
        method: req.method,
        headers: { ...req.headers, host: url.host },
        timeout: 30_000,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.on('data', (chunk: Buffer) => take(chunk.length));
        up.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    upstream.on('timeout', () => upstream.destroy());
    res.on('close', () => res.writableFinished || upstream.destroy()); // the page gave up on it, or its budget is spent
    req.pipe(upstream);
  });
  server.on('connect', async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (spent) {
      client.destroy();
      return;
    }
    const [host, portText] = (req.url ?? '').split(/:(?=\d+$)/);
    const name = host.replace(/^\[|\]$/g, '');
    const address = await resolveHost(name).catch(() => null);
    if (!address) {
      refused.push(name);
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(portText) || 443, address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.on('data', (chunk: Buffer) => take(chunk.length));
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    refused,
    serve: (p, resolve, b) => {
      page = p;
      resolveHost = resolve;
      if (b) budget = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
