import { readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import type { EngineContext } from '../context.js';
import { expectOutput } from '../run.js';
import { beforeBrowserShutdown, bounded, closeLease, leaseUsable, openLease, usePage, type Lease } from './browser.js';

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
  /** Paper and margins, in points. */
  paper: { width: number; height: number; margin: number };
  /** Print scale: the printable width divided by the viewport width, so the layout keeps the viewport's width. */
  scale: number;
  /** Longest wait for the network to go idle after the document is parsed. */
  settleMs: number;
  /** Answers the address to connect to for a host, or null to refuse it. */
  resolveHost: (host: string) => Promise<string | null>;
  /** Scripts on (web pages) or off (e-mail). */
  javascript?: boolean;
}

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
      ? await bounded(() => openLease({ proxyServer: `http://127.0.0.1:${proxy.port}` }), ctx, (l) => void closeLease(l))
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
  const page = await readFile(htmlFile);
  // A station half made is nearer than a new one.
  if (!spare && preparing) await bounded(() => preparing!, ctx);
  let st = spare;
  spare = null;
  if (st && !leaseUsable(st.lease)) {
    await closeStation(st);
    st = null;
  }
  st ??= await openStation(ctx);
  st.proxy.serve(page, o.resolveHost);
  try {
    await usePage(
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
        const scripted = (o.javascript ?? true) && (await tab.evaluate(() => document.scripts.length > 0 || document.querySelector('iframe, frame, object, embed') !== null));
        if (scripted) await tab.waitForNetworkIdle({ idleTime: 200, timeout: o.settleMs }).catch(() => undefined);
        const m = inches(o.paper.margin);
        await tab.pdf({
          path: output,
          width: inches(o.paper.width),
          height: inches(o.paper.height),
          margin: { top: m, right: m, bottom: m, left: m },
          scale: Math.min(2, Math.max(0.1, o.scale)),
          printBackground: true,
          timeout,
        });
      },
      ctx,
    );
    await expectOutput('chromium', output);
  } finally {
    await closeStation(st);
    prepareSpare();
  }
}

interface Proxy {
  port: number;
  /** The job: its page, and which hosts it may reach. Before this, everything is refused. */
  serve: (page: Buffer, resolveHost: (host: string) => Promise<string | null>) => void;
  close: () => Promise<void>;
  /** Hosts refused, for the log and tests. */
  refused: string[];
}

const PAGE_HOST = new URL(PAGE_ORIGIN).host;

async function startProxy(): Promise<Proxy> {
  const refused: string[] = [];
  let page: Buffer | null = null;
  let resolveHost: (host: string) => Promise<string | null> = async () => null;
  const sockets = new Set<net.Socket>();
  const server = http.createServer(async (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.host === PAGE_HOST) {
      if (url.pathname === '/index.html' && page) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
      else res.writeHead(404).end(); // the upload is one file: its relative assets do not exist
      return;
    }
    const address = url.protocol === 'http:' ? await resolveHost(url.hostname).catch(() => null) : null;
    if (!address) {
      refused.push(url.hostname);
      res.writeHead(403).end();
      return;
    }
    const upstream = http.request(
      { host: address, port: url.port || 80, path: url.pathname + url.search, method: req.method, headers: { ...req.headers, host: url.host }, timeout: 30_000 },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end());
    upstream.on('timeout', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.on('connect', async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
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
    serve: (p, resolve) => {
      page = p;
      resolveHost = resolve;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
