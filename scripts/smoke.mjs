// A short check of one runtime: starts the built server (dist/) on the Node binary given (default: this one), on a
// free loopback port with a scratch DATA_DIR, then asks /health and runs one conversion per lane (light: /pdf-info,
// cpu: /png, and /extracted-text in a job thread, office: a .docx to PDF, browser: an HTML page to PDF), each output checked by its magic bytes and, for
// PDFs, its page count read back with qpdf. CI runs the whole suite on the Node the image ships and this on the
// other supported majors. Usage: node scripts/smoke.mjs [path/to/node]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const node = process.argv[2] || process.execPath;
const corpus = process.env.QUIRE_CORPUS ?? resolve('../shared/corpus');
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();

const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

const port = await freePort();
const dataDir = mkdtempSync(join(tmpdir(), 'quire-smoke-'));
const base = `http://127.0.0.1:${port}`;
const server = spawn(node, ['dist/app/main.js'], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
let exited = false;
server.on('exit', () => {
  exited = true;
});

const failures = [];
const check = (what, ok, detail = '') => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${version} ${what}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures.push(what);
};

async function convert(path, file, fields = {}) {
  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(file)]), basename(file));
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  const res = await fetch(`${base}${path}`, { method: 'POST', body: fd });
  const body = await res.json();
  if (res.status !== 200) return { status: res.status, body };
  const url = [body.outputUrl].flat()[0];
  const bytes = url ? Buffer.from(await (await fetch(url.replace(/^https?:\/\/[^/]+/, base))).arrayBuffer()) : undefined;
  return { status: 200, body, bytes };
}

function pdfPages(bytes) {
  const file = join(dataDir, 'check.pdf');
  writeFileSync(file, bytes);
  return Number(execFileSync('qpdf', ['--show-npages', file], { encoding: 'utf8' }).trim());
}

try {
  // The server's first start may build caches (fonts); minutes, not seconds, on a slow machine.
  const deadline = Date.now() + 180_000;
  let health;
  while (!exited && Date.now() < deadline) {
    health = await fetch(`${base}/health`).catch(() => undefined);
    if (health) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  check('/health', health?.status === 200, health ? `${health.status}` : 'no answer');
  const info = await convert('/pdf-info', join(corpus, 'pdf/federal-register-15-pages.pdf'), { queries: 'page_count' });
  check('light lane: /pdf-info', info.status === 200 && info.body.page_count === 15, JSON.stringify(info.body).slice(0, 200));
  const png = await convert('/png', join(corpus, 'pdf/federal-register-15-pages.pdf'), { pages: '1', resolution: '36' });
  check('cpu lane: /png', png.status === 200 && png.bytes?.subarray(1, 4).toString() === 'PNG', JSON.stringify(png.body).slice(0, 200));
  const text = await convert('/extracted-text', join(corpus, 'pdf/federal-register-15-pages.pdf'));
  check(
    'cpu lane in a job thread: /extracted-text',
    text.status === 200 && /Federal Register/.test(text.body.fullText),
    JSON.stringify(text.body).slice(0, 200),
  );
  const docx = await convert('/pdf', join(corpus, 'office/gotenberg-pages_3.docx'));
  check('office lane: .docx to /pdf', docx.status === 200 && pdfPages(docx.bytes) === 3, JSON.stringify(docx.body).slice(0, 200));
  const html = await convert('/pdf', join(corpus, 'web/gotenberg-pages-3.html'));
  check('browser lane: .html to /pdf', html.status === 200 && pdfPages(html.bytes) >= 1, JSON.stringify(html.body).slice(0, 200));
} catch (err) {
  check('smoke run', false, err.message);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => (exited ? r() : server.once('exit', r)));
  rmSync(dataDir, { recursive: true, force: true });
}
if (failures.length) {
  console.log(`smoke on ${version}: ${failures.length} failed`);
  process.exit(1);
}
console.log(`smoke on ${version}: all passed`);
