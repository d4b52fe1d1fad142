import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROWSER_ARGS } from '../engines/chromium/browser.js';
import { CHROMIUM, chooseOperation, finished, focused, listen, open, type Served, tabTo, upload } from './browser.js';
import { corpus, tool } from './helpers.js';

const PDF = corpus('pdf/multicolumn-3-pages.pdf');
const pngSize = (b: Buffer) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

let browser: Browser;
let served: Served;

test.before(async () => {
  browser = await puppeteer.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS, headless: true });
  served = await listen();
});

test.after(async () => {
  await browser?.close();
  await served?.close();
});

test('page: public HTML with a self-only CSP, hashed assets cached for good, correct types', async () => {
  const s = await listen({ API_KEYS: 'page-test-key-0001' });
  try {
    const page = await fetch(`${s.base}/`);
    assert.is(page.status, 200);
    assert.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.is(page.headers.get('cache-control'), 'no-cache');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.not.match(csp, /unsafe|https?:|\*/);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/web\/[0-9a-f]{12}\/[\w.]+)"/g)].map((m) => m[1]);
    assert.equal(assets.map((a) => a.split('/').pop()).sort(), ['app.css', 'app.js', 'icon.svg']);
    assert.not.match(html, /https?:\/\//, 'nothing from another host');
    const types: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8', 'icon.svg': 'image/svg+xml' };
    for (const a of assets) {
      const res = await fetch(`${s.base}${a}`);
      assert.is(res.status, 200, a);
      assert.is(res.headers.get('content-type'), types[a.split('/').pop()!]);
      assert.match(res.headers.get('cache-control') ?? '', /immutable/);
      assert.ok((await res.text()).length > 100);
    }
    // The page is public; the API behind it still wants the key.
    assert.is((await fetch(`${s.base}/upload`, { method: 'POST' })).status, 401);
  } finally {
    await s.close();
  }
});

test('what the page relies on: x-input on id fields, inline disposition only for PDFs and raster images', async () => {
  const doc = await (await fetch(`${served.base}/openapi.json`)).json();
  const props = (path: string) => doc.paths[path].post.requestBody.content['application/json'].schema.properties;
  assert.equal(props('/png').id['x-input'], { field: 'file', required: true, extensions: ['pdf'] });
  // Declared as a field as well as an input: still marked, still an array.
  assert.equal(props('/merged-pdf').id['x-input'], { field: 'file', required: true, extensions: ['pdf'] });
  assert.is(props('/merged-pdf').id.type, 'array');
  assert.is(props('/png').resolution['x-input'], undefined);

  const fd = new FormData();
  fd.append('file', new Blob([readFileSync(PDF)]), 'a.pdf');
  fd.append('file', new Blob(['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>']), 'b.svg');
  fd.append('file', new Blob(['<script>alert(1)</script>']), 'c.html');
  const { files } = await (await fetch(`${served.base}/upload`, { method: 'POST', body: fd })).json();
  const disposition = async (id: string, q = '') => (await fetch(`${served.base}/resource/${id}${q}`)).headers.get('content-disposition') ?? '';
  assert.match(await disposition(files[0].id, '?disposition=inline'), /^inline; filename="a.pdf"/);
  assert.match(await disposition(files[0].id), /^attachment/);
  assert.match(await disposition(files[1].id, '?disposition=inline'), /^attachment/);
  assert.match(await disposition(files[2].id, '?disposition=inline'), /^attachment/);
});

test('upload, /pdf-info by keyboard only, /png thumbnails and download, chain the PNG into /pdf', async () => {
  const { page, problems } = await open(browser, `${served.base}/`);
  try {
    await upload(page, PDF);
    assert.is(await page.$eval('#error', (e) => e.textContent), '');
    assert.match(await page.$eval('#stored', (e) => e.textContent ?? ''), 'multicolumn-3-pages.pdf');

    // Keyboard only: search, pick with Space, fill the required field, submit with Enter.
    await page.focus('body');
    await tabTo(page, '#op-search');
    await page.keyboard.type('pdf-info');
    assert.match(await page.$eval('#op-count', (e) => e.textContent ?? ''), /^1 of \d+ operations match$/);
    await tabTo(page, '#op-pdf-info');
    await page.keyboard.press('Space');
    await page.waitForFunction(() => document.querySelector('#form-h')!.textContent!.includes('(/pdf-info)'));
    assert.match(await page.$eval('label[for=f-queries]', (e) => e.textContent ?? ''), /required/);
    await tabTo(page, '#f-queries');
    await page.keyboard.type('page_count,title');
    await tabTo(page, '#run');
    await page.keyboard.press('Enter');
    assert.is(await finished(page), '');
    assert.ok(await focused(page, '#result-h'), 'focus moves to the result');
    const info = JSON.parse(await page.$eval('#result-json', (e) => e.textContent ?? ''));
    const pages = Number(/Pages:\s+(\d+)/.exec(tool('pdfinfo', [PDF]))![1]);
    assert.is(info.page_count, pages);

    // /png: the form shows the schema's bounds; the thumbnails load; the download link gives the PNG.
    await page.evaluate(
      () => (((document.querySelector('#op-search') as HTMLInputElement).value = ''), document.querySelector('#op-search')!.dispatchEvent(new Event('input'))),
    );
    await chooseOperation(page, '/png');
    assert.is(await page.$eval('#f-resolution', (e) => [e.getAttribute('min'), e.getAttribute('max'), e.getAttribute('type')].join()), '12,2400,number');
    assert.is(await page.$eval('#f-color_model', (e) => e.tagName), 'SELECT');
    assert.match(await page.$eval('#f-pages-help', (e) => e.textContent ?? ''), /Comma-separated pages and ranges/);
    await page.type('#f-resolution', '36');
    await page.select('#f-color_model', 'gray');
    await page.click('#run');
    assert.is(await finished(page), '');
    const thumbs = await page.$$('#outputs img.thumb');
    assert.is(thumbs.length, pages);
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#outputs img.thumb')].every((i) => i.complete && i.naturalWidth > 0));
    const [w, hgt] = /Page size:\s+([\d.]+) x ([\d.]+)/
      .exec(tool('pdfinfo', [PDF]))!
      .slice(1)
      .map(Number);
    assert.is(await thumbs[0].evaluate((i) => (i as HTMLImageElement).naturalWidth), Math.round((w * 36) / 72));
    const link = await page.$eval('#outputs a[download]', (a) => ({ href: (a as HTMLAnchorElement).href, name: a.getAttribute('download') }));
    assert.match(link.name!, /\.png$/);
    const download = await fetch(link.href);
    assert.match(download.headers.get('content-disposition') ?? '', /^attachment/);
    const png = Buffer.from(await download.arrayBuffer());
    assert.equal(png.subarray(0, 8), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    assert.equal(pngSize(png), { width: Math.round((w * 36) / 72), height: Math.round((hgt * 36) / 72) });
    assert.is(png[25], 0, 'colour type 0: grey, as chosen in the form');

    // Chain: the first PNG becomes the input of /pdf.
    const firstId = /\/resource\/([^/?]+)/.exec(link.href)![1];
    await page.click('#outputs li:first-child button');
    assert.ok(await focused(page, '#op-search'), 'focus goes back to the operations');
    await chooseOperation(page, '/pdf');
    assert.is(await page.$eval('#in-id', (s) => (s as HTMLSelectElement).value), firstId);
    await page.click('#run');
    assert.is(await finished(page), '');
    const frame = await page.$eval('#outputs iframe.pdf', (f) => (f as HTMLIFrameElement).src);
    assert.match(frame, /\?disposition=inline$/);
    const inline = await fetch(frame);
    assert.is(inline.headers.get('content-type'), 'application/pdf');
    assert.match(inline.headers.get('content-disposition') ?? '', /^inline/);
    const dir = mkdtempSync(join(tmpdir(), 'quire-web-'));
    try {
      writeFileSync(join(dir, 'out.pdf'), Buffer.from(await inline.arrayBuffer()));
      assert.match(tool('pdfinfo', [join(dir, 'out.pdf')]), /Pages:\s+1\n/);
      assert.equal(JSON.parse(await page.$eval('#result-json', (e) => e.textContent ?? '')).inputId, firstId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (process.env.WEB_UI_SCREENSHOT) await page.screenshot({ path: process.env.WEB_UI_SCREENSHOT, fullPage: true });
    assert.equal(problems, []);
  } finally {
    await page.close();
  }
});

test('a dropped file, a switch turned on by keyboard, and a bad value worded by the server in the alert region', async () => {
  const { page, problems } = await open(browser, `${served.base}/#/extracted-text`);
  try {
    await page.waitForFunction(() => document.querySelector('#form-h')!.textContent!.includes('(/extracted-text)'));
    const before = await page.$$eval('#stored li', (l) => l.length);
    await page.evaluate((b64: string) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], 'dropped.pdf', { type: 'application/pdf' }));
      document.querySelector('#drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, readFileSync(PDF).toString('base64'));
    await page.waitForFunction((n) => document.querySelectorAll('#stored li').length > n, {}, before);
    assert.match(await page.$eval('#in-id option:checked', (o) => o.textContent ?? ''), 'dropped.pdf');

    assert.is(await page.$eval('#f-word_coordinates', (e) => [e.getAttribute('role'), (e as HTMLInputElement).checked].join()), 'switch,false');
    await tabTo(page, '#f-word_coordinates');
    await page.keyboard.press('Space');
    await page.select('#f-full_text', 'off');
    await page.type('#f-pages', '2');
    await page.click('#run');
    assert.is(await finished(page), '');
    const result = JSON.parse(await page.$eval('#result-json', (e) => e.textContent ?? ''));
    assert.is(result.fullText, undefined);
    assert.ok(result.words.length > 50);
    assert.ok(result.words.every((w: { page: number; coordinates?: unknown; style?: unknown }) => w.page === 2 && w.coordinates && !w.style));

    await page.click('#f-pages', { count: 3 });
    await page.keyboard.type('9-12');
    await page.click('#run');
    assert.match(await finished(page), /9/);
    assert.is(await page.$eval('#error', (e) => e.getAttribute('role')), 'alert');
    assert.ok(await page.$eval('#result', (e) => e.hidden), 'no stale result next to the error');
    assert.equal(problems, []);
  } finally {
    await page.close();
  }
});

test('several inputs: two uploads checked for /merged-pdf, one page range per line', async () => {
  const { page, problems } = await open(browser, `${served.base}/#/merged-pdf`);
  try {
    const two = corpus('pdf/rotation-2-pages.pdf');
    await (await page.$('#file-pick'))!.uploadFile(PDF, two);
    await page.waitForFunction(() => document.querySelectorAll('#op-inputs input[type=checkbox]:checked').length === 2);
    assert.is(await page.$('#f-type'), null, 'type[] is not asked: the page sends ids only');
    await page.type('#f-pages', '2-3\n2');
    await page.click('#run');
    assert.is(await finished(page), '');
    const href = await page.$eval('#outputs a[download]', (a) => (a as HTMLAnchorElement).href);
    const dir = mkdtempSync(join(tmpdir(), 'quire-web-'));
    try {
      writeFileSync(join(dir, 'out.pdf'), Buffer.from(await (await fetch(href)).arrayBuffer()));
      assert.match(tool('pdfinfo', [join(dir, 'out.pdf')]), /Pages:\s+3\n/);
      const text = tool('pdftotext', ['-f', '3', '-l', '3', join(dir, 'out.pdf'), '-']);
      assert.is(text.replace(/\s+/g, ' ').trim(), tool('pdftotext', ['-f', '2', '-l', '2', two, '-']).replace(/\s+/g, ' ').trim());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(problems, []);
  } finally {
    await page.close();
  }
});

test('API_KEYS: the page loads without a key, a wrong key shows the error, the right one works', async () => {
  const s = await listen({ API_KEYS: 'right-key-0123456789' });
  const { page, problems } = await open(browser, `${s.base}/`);
  try {
    assert.ok(await page.$eval('.key', (e) => !e.hidden), 'the key field is shown');
    await tabTo(page, '#api-key');
    await page.keyboard.type('wrong-key');
    await upload(page, PDF);
    assert.is(await page.$eval('#error', (e) => e.textContent), 'The provided key is not valid.');
    assert.is(await page.$$eval('#stored li', (l) => l.length), 0);
    assert.ok(problems.length && problems.every((p) => /\b401\b/.test(p)), problems.join('\n'));
    problems.length = 0;

    await page.click('#api-key', { count: 3 });
    await page.keyboard.type('right-key-0123456789');
    assert.is(await page.evaluate(() => sessionStorage.getItem('quire.apiKey')), 'right-key-0123456789');
    await upload(page, PDF);
    assert.is(await page.$eval('#error', (e) => e.textContent), '');
    // The workbench's own calls (/pdf-info, /png) carry the key too: the thumbnails appear.
    await page.waitForFunction(() => document.querySelectorAll('details.doc ol.pages li').length === 3);
    await page.$eval('details.doc', (e) => e.scrollIntoView());
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('details.doc ol.pages img')].every((i) => i.naturalWidth > 0));
    await chooseOperation(page, '/pdf-info');
    await page.type('#f-queries', 'page_count');
    await page.click('#run');
    assert.is(await finished(page), '');
    assert.match(await page.$eval('#result-json', (e) => e.textContent ?? ''), /"page_count": 3/);
    // A reload keeps the key for this tab.
    await page.reload();
    assert.is(await page.$eval('#api-key', (e) => (e as HTMLInputElement).value), 'right-key-0123456789');
    assert.equal(problems, []);
  } finally {
    await page.close();
    await s.close();
  }
});

test.run();
