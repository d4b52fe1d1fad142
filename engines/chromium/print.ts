import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import type { EngineContext } from '../context.js';
import { expectOutput, run } from '../run.js';

/**
 * HTML to PDF with headless Chromium, one process per job (`--print-to-pdf`). The page is never opened from
 * file:// (a file:// page may frame /etc/passwd): it is served from a virtual host by a one-job HTTP proxy
 * that Chromium must use for every request, loopback included. The proxy serves the page itself and asks
 * `resolveHost` for anything else: that callback answers the address to connect to, or null to refuse
 * (loopback, private and metadata addresses unless allowed), so sub-resources can never reach the private
 * network, and the address checked is the address connected to.
 */

/** The page's name inside Chromium; `.invalid` never resolves anywhere real. */
export const PAGE_ORIGIN = 'http://quire-page.invalid';

export interface PrintOptions {
  /** CSS viewport width the page is laid out at. */
  viewportWidth: number;
  /** Longest wait for the network to go idle (virtual time budget). */
  settleMs: number;
  /** Answers the address to connect to for a host, or null to refuse it. */
  resolveHost: (host: string) => Promise<string | null>;
}

export function chromiumArgs(output: string, proxyPort: number, userDataDir: string, o: Pick<PrintOptions, 'viewportWidth' | 'settleMs'>): string[] {
  return [
    '--headless',
    '--no-sandbox', // we run as root in a container; the job dir, proxy and timeout are the fence
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-extensions',
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--mute-audio',
    `--user-data-dir=${userDataDir}`,
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>', // without this Chromium connects to localhost directly
    `--window-size=${o.viewportWidth},1000`,
    `--virtual-time-budget=${o.settleMs}`,
    '--run-all-compositor-stages-before-draw',
    '--no-pdf-header-footer',
    `--print-to-pdf=${output}`,
    `${PAGE_ORIGIN}/index.html`,
  ];
}

/** Prints `html` (already prepared: page CSS injected) to `output`. */
export async function printHtml(htmlFile: string, output: string, o: PrintOptions, ctx: EngineContext): Promise<void> {
  const page = await readFile(htmlFile);
  const proxy = await startProxy(page, o.resolveHost);
  // Chromium puts its singleton socket in TMPDIR, and a socket path may not exceed 107 bytes: job dirs are deeper.
  const shortTmp = await mkdtemp(join(tmpdir(), 'qc-'));
  try {
    const args = chromiumArgs(output, proxy.port, join(ctx.cwd, 'chromium-profile'), o);
    await run('chromium', args, { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: ctx.timeoutMs, env: { TMPDIR: shortTmp } });
    await expectOutput('chromium', output);
  } finally {
    await proxy.close();
    await rm(shortTmp, { recursive: true, force: true });
  }
}

interface Proxy {
  port: number;
  close: () => Promise<void>;
  /** Hosts refused, for the log and tests. */
  refused: string[];
}

const PAGE_HOST = new URL(PAGE_ORIGIN).host;

async function startProxy(page: Buffer, resolveHost: (host: string) => Promise<string | null>): Promise<Proxy> {
  const refused: string[] = [];
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
      if (url.pathname === '/index.html') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
