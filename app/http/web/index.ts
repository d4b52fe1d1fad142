/**
 * The web page at `/`: pick an operation, give it files, fill a form generated from /openapi.json, follow the
 * request through /request-status, preview, download and chain the results. An HTTP surface only: the page
 * calls the public API like any client (with the Api-Key the user typed) and holds no logic of its own.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';
import type { Deps, Env } from '../../requests/context.js';
import { ICON_SVG, PAGE_CSS, pageHtml } from './page.js';

// The script is plain JavaScript (`// @ts-check`, type-checked by tsc through allowJs), so the browser gets the very
// file tsc checks: under tsx it is read beside this module's source, in production beside the compiled one in dist/.
// tsc appends a source map reference; the map is not served, so it is dropped.
const script = (name: string) => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
// app.js imports its siblings by relative URL, so the modules share one directory, versioned by all of them.
const SCRIPTS = ['app.js', 'lib.js', 'workbench.js'].map((name) => ({ name, body: script(name) }));

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY = { 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

const version = (body: string) => createHash('sha256').update(body).digest('hex').slice(0, 12);

export function mountWebPage(app: Hono<Env>, deps: Deps): void {
  // Assets are addressed by their content hash, so they can be cached for good and a new build is fetched at once.
  const scripts = version(SCRIPTS.map((s) => s.body).join('\0'));
  const assets = [
    ...SCRIPTS.map((s) => ({ ...s, type: 'text/javascript; charset=utf-8', path: `/web/${scripts}/${s.name}` })),
    ...[
      { name: 'app.css', body: PAGE_CSS, type: 'text/css; charset=utf-8' },
      { name: 'icon.svg', body: ICON_SVG, type: 'image/svg+xml' },
    ].map((a) => ({ ...a, path: `/web/${version(a.body)}/${a.name}` })),
  ];
  const url = Object.fromEntries(assets.map((a) => [a.name, a.path]));
  const html = pageHtml({ script: url['app.js'], css: url['app.css'], icon: url['icon.svg'], product: deps.meta.product, keys: deps.config.apiKeys !== null });

  app.get('/', (c) => c.body(html, 200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', ...SECURITY }));
  for (const a of assets) {
    app.get(a.path, (c) => c.body(a.body, 200, { 'Content-Type': a.type, 'Cache-Control': 'public, max-age=31536000, immutable', ...SECURITY }));
  }
}
