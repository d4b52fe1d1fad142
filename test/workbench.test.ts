import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROWSER_ARGS } from '../engines/chromium/browser.js';
import { CHROMIUM, chooseOperation, finished, focused, listen, onPage, type Served, upload } from './browser.js';
import { corpus, tool } from './helpers.js';

const FOUR = corpus('pdf/text-4-pages-pdflatex.pdf');
const THREE = corpus('pdf/multicolumn-3-pages.pdf');
const TURNED = corpus('pdf/rotation-2-pages.pdf');
const SHOTS = process.env.WORKBENCH_SCREENSHOTS;

let browser: Browser;
let served: Served;
let dir: string;

test.before(async () => {
  browser = await puppeteer.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS, headless: true, defaultViewport: { width: 1280, height: 900 } });
  served = await listen();
  dir = mkdtempSync(join(tmpdir(), 'quire-workbench-'));
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
});

test.after(async () => {
  await browser?.close();
  await served?.close();
  rmSync(dir, { recursive: true, force: true });
});

const shot = async (page: Page, name: string) => SHOTS && (await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }));
const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
/** A page's words, sorted: a page turned by a quarter is read in another order. */
const pageText = (pdf: string, p: number) =>
  norm(tool('pdftotext', ['-f', String(p), '-l', String(p), pdf, '-']))
    .split(' ')
    .sort()
    .join(' ');
const rotations = (pdf: string) => [...tool('pdfinfo', ['-f', '1', '-l', '999', pdf]).matchAll(/Page\s+\d+ rot:\s+(\d+)/g)].map((m) => Number(m[1]));
const sizes = (pdf: string) =>
  [...tool('pdfinfo', ['-f', '1', '-l', '999', pdf]).matchAll(/Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)/g)].map((m) => [
    Math.round(Number(m[1])),
    Math.round(Number(m[2])),
  ]);

/** The stored id of a file the page lists, by name. */
const storedId = (page: Page, name: string) =>
  page.evaluate(
    (n) =>
      JSON.parse(sessionStorage.getItem('quire.files') ?? '[]')
        .filter((f: { name: string }) => f.name === n)
        .pop()?.id as string,
    name,
  );

/** Waits for the document view of a stored file and for all its thumbnails shown, scrolling each into view. */
async function thumbnails(page: Page, id: string): Promise<{ width: number; height: number }[]> {
  await page.waitForFunction((i) => document.querySelector(`details.doc[data-id="${i}"] ol.pages li`), {}, id);
  const count = await page.$$eval(`details.doc[data-id="${id}"] ol.pages img`, (l) => l.length);
  for (let i = 0; i < count; i++) {
    await page.$eval(`details.doc[data-id="${id}"] ol.pages li:nth-child(${i + 1})`, (e) => e.scrollIntoView({ block: 'center' }));
    await page.waitForFunction(
      (sel) => {
        const img = document.querySelector<HTMLImageElement>(sel);
        return img?.complete && img.naturalWidth > 0;
      },
      {},
      `details.doc[data-id="${id}"] ol.pages li:nth-child(${i + 1}) img`,
    );
  }
  return page.$$eval(`details.doc[data-id="${id}"] ol.pages img`, (l) =>
    l.map((i) => ({ width: (i as HTMLImageElement).naturalWidth, height: (i as HTMLImageElement).naturalHeight })),
  );
}

/** The output of the last run, downloaded through its link into a file. */
async function resultFile(page: Page, name: string): Promise<string> {
  const href = await page.$eval('#outputs a[download]', (a) => (a as HTMLAnchorElement).href);
  const file = join(dir, name);
  writeFileSync(file, Buffer.from(await (await fetch(href)).arrayBuffer()));
  return file;
}

test('thumbnails: every page of a stored PDF, lazily, shaped like its pages; a 100-page file is shown in chunks', async () => {
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, TURNED);
    const id = await storedId(page, 'rotation-2-pages.pdf');
    const thumbs = await thumbnails(page, id);
    assert.is(thumbs.length, 2);
    // Page 2 has /Rotate 90: its thumbnail is landscape, as the page is seen.
    assert.ok(thumbs[0].height > thumbs[0].width && thumbs[1].width > thumbs[1].height, JSON.stringify(thumbs));
    assert.match(await page.$eval(`details.doc[data-id="${id}"] summary`, (e) => e.textContent ?? ''), /2 pages/);
    assert.is(
      await page.$eval(`details.doc[data-id="${id}"] ol.pages button`, (e) => e.getAttribute('aria-label')),
      'Page 1 of rotation-2-pages.pdf: place things on it',
    );
    // One tab stop per document's pages; the arrow keys go from page to page.
    assert.equal(await page.$$eval(`details.doc[data-id="${id}"] ol.pages button`, (l) => l.map((b) => b.getAttribute('tabindex'))), ['0', '-1']);
    await page.focus(`details.doc[data-id="${id}"] ol.pages button`);
    await page.keyboard.press('ArrowRight');
    assert.ok(await focused(page, `details.doc[data-id="${id}"] ol.pages li:nth-child(2) button[tabindex="0"]`));

    // 100 pages made with qpdf from a corpus file: the first 60 tiles, the rest on demand; far tiles are not rendered.
    const big = join(dir, 'hundred.pdf');
    tool('qpdf', ['--empty', '--pages', ...Array(7).fill(corpus('pdf/federal-register-15-pages.pdf')), '--', join(dir, 'many.pdf')]);
    tool('qpdf', ['--empty', '--pages', join(dir, 'many.pdf'), '1-100', '--', big]);
    await upload(page, big);
    const bigId = await storedId(page, 'hundred.pdf');
    await page.waitForFunction((i) => document.querySelectorAll(`details.doc[data-id="${i}"] ol.pages li`).length === 60, {}, bigId);
    await page.$eval(`details.doc[data-id="${bigId}"] ol.pages li`, (e) => e.scrollIntoView());
    await page.waitForFunction((i) => document.querySelector<HTMLImageElement>(`details.doc[data-id="${i}"] ol.pages img`)!.naturalWidth > 0, {}, bigId);
    assert.is(
      await page.$eval(`details.doc[data-id="${bigId}"] ol.pages li:nth-child(60) img`, (i) => i.getAttribute('src')),
      null,
      'a far page waits until it is scrolled to',
    );
    const more = await page.$(`details.doc[data-id="${bigId}"] > button`);
    assert.is(await more!.evaluate((b) => b.textContent), 'Show pages 61 to 100 of 100');
    await more!.click();
    assert.is((await thumbnails(page, bigId)).length, 100);
    assert.ok(await focused(page, `details.doc[data-id="${bigId}"] ol.pages li:nth-child(61) button`), 'focus goes to the first new page');
    await shot(page, 'thumbnails');
  });
});

test('page editor: drag with the mouse, move and turn by keyboard, delete, pages of a second file and a blank page', async () => {
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, FOUR, THREE);
    const four = await storedId(page, 'text-4-pages-pdflatex.pdf');
    const three = await storedId(page, 'multicolumn-3-pages.pdf');
    await page.waitForSelector(`details.doc[data-id="${four}"] ol.pages li`);
    await page.click(`details.doc[data-id="${four}"] .actions button:first-child`);
    await page.waitForFunction(() => document.querySelectorAll('#sheet li').length === 4);
    assert.ok(await focused(page, '#editor-h'));
    const order = () => page.$$eval('#sheet li', (l) => l.map((li) => li.getAttribute('aria-label')));

    // Mouse: page 4 dragged onto page 1 takes its place.
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#sheet img')].every((i) => i.naturalWidth > 0));
    await page.$eval('#sheet', (e) => e.scrollIntoView({ block: 'center' }));
    const box = async (n: number) => (await (await page.$(`#sheet li:nth-child(${n}) .frame`))!.boundingBox())!;
    const from = await box(4);
    const to = await box(1);
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2 - 20, from.y + from.height / 2, { steps: 3 });
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 10 });
    await shot(page, 'editor-dragging');
    await page.mouse.up();
    assert.is(await page.$$eval('#sheet li.drop-before, #sheet li.drop-after, #sheet li.dragging', (l) => l.length), 0, 'no drop mark left');
    assert.equal(await order(), [
      '1: page 4 of text-4-pages-pdflatex.pdf',
      '2: page 1 of text-4-pages-pdflatex.pdf',
      '3: page 2 of text-4-pages-pdflatex.pdf',
      '4: page 3 of text-4-pages-pdflatex.pdf',
    ]);

    // Keyboard: to the third tile with the arrow keys, Alt+Right moves it, R turns it, Delete removes another.
    await page.focus('#sheet li:nth-child(1)');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.down('Alt');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.up('Alt');
    assert.ok(await focused(page, '#sheet li:nth-child(4)'), 'the moved page keeps the focus');
    await page.keyboard.press('r');
    assert.match(await page.$eval('#bench-status', (e) => e.textContent ?? ''), /page 2 of text-4-pages-pdflatex.pdf turned to 90°/);
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Delete');
    assert.equal(await order(), [
      '1: page 4 of text-4-pages-pdflatex.pdf',
      '2: page 1 of text-4-pages-pdflatex.pdf',
      '3: page 2 of text-4-pages-pdflatex.pdf, turned 90°',
    ]);
    // The buttons do the same: the first page turned counter-clockwise by its button.
    await page.click('#sheet li:nth-child(1) button[title="Turn counter-clockwise:"]');

    // Pages of a second file, then a blank page after the first of them (focus on it, then the button).
    await page.click(`details.doc[data-id="${three}"] .actions button:nth-child(2)`);
    await page.waitForFunction(() => document.querySelectorAll('#sheet li').length === 6);
    await page.click('#sheet li:nth-child(6) button[title="Delete"]');
    await page.click('#sheet li:nth-child(5) button[title="Delete"]');
    await page.focus('#sheet li:nth-child(4)');
    await page.click('#blank-add');
    await page.waitForFunction(() => document.querySelectorAll('#sheet li').length === 5);
    assert.equal(await order(), [
      '1: page 4 of text-4-pages-pdflatex.pdf, turned 270°',
      '2: page 1 of text-4-pages-pdflatex.pdf',
      '3: page 2 of text-4-pages-pdflatex.pdf, turned 90°',
      '4: page 1 of multicolumn-3-pages.pdf',
      '5: blank page',
    ]);
    await shot(page, 'editor');

    await page.click('#sheet-build');
    assert.is(await finished(page), '');
    const out = await resultFile(page, 'edited.pdf');
    assert.match(tool('pdfinfo', [out]), /Pages:\s+5\n/);
    assert.equal(rotations(out), [270, 0, 90, 0, 0]);
    assert.is(pageText(out, 1), pageText(FOUR, 4));
    assert.is(pageText(out, 2), pageText(FOUR, 1));
    assert.is(pageText(out, 3), pageText(FOUR, 2));
    assert.is(pageText(out, 4), pageText(THREE, 1));
    assert.is(pageText(out, 5), '');
    assert.equal(sizes(out)[4], [595, 842], 'the blank page has the size of the page before it');

    // Before and after, side by side: the merged output has no single input, so a one-input result is compared.
    await chooseOperation(page, '/rotated-pdf');
    await page.select('#in-id', four);
    await page.select('#f-rotation', '180');
    await page.click('#run');
    assert.is(await finished(page), '');
    await page.click('#outputs li:first-child .actions button:last-child');
    await page.waitForFunction(() => document.querySelectorAll('#compare-body ol.pages').length === 2);
    assert.ok(await focused(page, '#compare-h'));
    await page.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#compare-body img')].slice(0, 2).every((i) => i.naturalWidth > 0));
    assert.equal(await page.$$eval('#compare-body h3', (l) => l.map((e) => e.textContent)), [
      'Before: text-4-pages-pdflatex.pdf (4 pages)',
      'After: text-4-pages-pdflatex_service_rotated-pdf.pdf (4 pages)',
    ]);
  });
});

test('page editor on 100 pages: 60 tiles first, the arrow keys go on past them, moves and turns across the chunk', async () => {
  const big = join(dir, 'hundred-editor.pdf');
  tool('qpdf', ['--empty', '--pages', ...Array(7).fill(corpus('pdf/federal-register-15-pages.pdf')), '--', join(dir, 'many-editor.pdf')]);
  tool('qpdf', ['--empty', '--pages', join(dir, 'many-editor.pdf'), '1-100', '--', big]);
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, big);
    const id = await storedId(page, 'hundred-editor.pdf');
    await (await page.waitForSelector(`details.doc[data-id="${id}"] .actions button`))!.click();
    await page.waitForFunction(() => document.querySelectorAll('#sheet li').length === 60);
    const more = () => page.$eval('#sheet + button', (b) => ((b as HTMLButtonElement).hidden ? '' : b.textContent));
    assert.is(await more(), 'Show pages 61 to 100 of 100');
    // Pictures only for the tiles near the viewport.
    await page.$eval('#sheet', (e) => e.scrollIntoView());
    await page.waitForFunction(() => document.querySelector<HTMLImageElement>('#sheet img')?.naturalWidth);
    assert.is(await page.$eval('#sheet li:nth-child(60) img', (i) => i.getAttribute('src')), null, 'a far tile waits until it is scrolled to');

    // The last tile shown, then Right: the next pages appear and the focus goes on to page 61.
    await page.focus('#sheet li:nth-child(60)');
    await page.keyboard.press('ArrowRight');
    assert.is(await page.$$eval('#sheet li', (l) => l.length), 100);
    assert.is(await more(), '');
    assert.ok(await focused(page, '#sheet li:nth-child(61)'));
    // Page 61 turned and moved before page 60; page 1 deleted.
    await page.keyboard.press('r');
    await page.keyboard.down('Alt');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.up('Alt');
    assert.ok(await focused(page, '#sheet li:nth-child(60)'), 'the moved page keeps the focus');
    await page.focus('#sheet li:nth-child(1)');
    await page.keyboard.press('Delete');
    const labels = await page.$$eval('#sheet li', (l) => l.map((li) => li.getAttribute('aria-label')));
    assert.is(labels.length, 99);
    assert.equal(labels.slice(57, 61), [
      '58: page 59 of hundred-editor.pdf',
      '59: page 61 of hundred-editor.pdf, turned 90°',
      '60: page 60 of hundred-editor.pdf',
      '61: page 62 of hundred-editor.pdf',
    ]);
    await page.click('#sheet-build');
    assert.is(await finished(page), '');
    const out = await resultFile(page, 'hundred-edited.pdf');
    assert.match(tool('pdfinfo', [out]), /Pages:\s+99\n/);
    const rot = rotations(out);
    assert.equal([rot[58], rot.filter((r) => r).length], [90, 1]);
    assert.is(pageText(out, 59), pageText(big, 61));
    assert.is(pageText(out, 60), pageText(big, 60));
    assert.is(pageText(out, 1), pageText(big, 2));
  });
});

/** The bounding box of the red ink of a rendered page: the stamps are drawn in rgb(200,0,0). */
async function redInk(pdf: string, p: number): Promise<{ left: number; right: number; top: number; bottom: number; width: number; height: number }> {
  const png = execFileSync('pdftoppm', ['-png', '-r', '72', '-f', String(p), '-l', String(p), pdf]);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const ink = { left: Infinity, right: -1, top: Infinity, bottom: -1, width: info.width, height: info.height };
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      const o = (y * info.width + x) * 3;
      if (data[o] > 150 && data[o + 1] < 90 && data[o + 2] < 90)
        Object.assign(ink, { left: Math.min(ink.left, x), right: Math.max(ink.right, x), top: Math.min(ink.top, y), bottom: Math.max(ink.bottom, y) });
    }
  }
  return ink;
}

test('a text stamp placed by clicking lands where clicked, on an upright and on a turned page; a box by keyboard', async () => {
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, TURNED);
    const id = await storedId(page, 'rotation-2-pages.pdf');
    await page.waitForSelector(`details.doc[data-id="${id}"] ol.pages li:nth-child(2) button`);
    const clicks: Record<number, [number, number]> = { 1: [0.3, 0.5], 2: [0.55, 0.7] };
    for (const p of [1, 2]) {
      await page.click(`details.doc[data-id="${id}"] ol.pages li:nth-child(${p}) button`);
      await page.waitForFunction((n) => document.querySelector('#page-label')!.textContent!.startsWith(`Page ${n} of 2`), {}, p);
      assert.ok(await focused(page, '#placer-h'));
      await page.waitForFunction(() => document.querySelector<HTMLImageElement>('#stage-img')!.naturalWidth > 0);
      await page.click('#place-text', { count: 3 });
      await page.keyboard.type(`XHX${p}`);
      await page.click('#place-size', { count: 3 });
      await page.keyboard.type('30');
      await page.$eval('#stage', (e) => e.scrollIntoView({ block: 'center' }));
      const r = (await (await page.$('#stage-img'))!.boundingBox())!;
      await page.mouse.click(r.x + r.width * clicks[p][0], r.y + r.height * clicks[p][1]);
      assert.match(await page.$eval('#bench-status', (e) => e.textContent ?? ''), new RegExp(`Text stamp “XHX${p}” on page ${p} placed`));
    }
    // A rectangle by keyboard: the cross moved with the arrows, Enter at each corner.
    await page.click('#tools input[value=rectangle]');
    await page.focus('#stage');
    for (let i = 0; i < 2; i++) await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await page.keyboard.down('Shift');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.up('Shift');
    await page.keyboard.press('Enter');
    assert.equal(await page.$$eval('#placed li', (l) => l.map((e) => e.firstChild?.textContent)), [
      'Text stamp “XHX1” on page 1',
      'Text stamp “XHX2” on page 2',
      'Rectangle on page 2',
    ]);
    await shot(page, 'placer');
    await page.click('#place-apply');
    assert.is(await finished(page), '');
    const out = await resultFile(page, 'stamped.pdf');
    assert.equal(rotations(out), [0, 90]);
    for (const p of [1, 2]) {
      const ink = await redInk(out, p);
      const [fx, fy] = clicks[p];
      // The first line starts at the click: the ink's left edge at its x, the baseline (bottom of X and H) at its y.
      assert.ok(Math.abs(ink.left - fx * ink.width) <= 4, `page ${p}: ink from x=${ink.left}, clicked ${fx * ink.width}`);
      assert.ok(Math.abs(ink.bottom - fy * ink.height) <= 4, `page ${p}: ink down to y=${ink.bottom}, clicked ${fy * ink.height}`);
      assert.ok(ink.bottom - ink.top > 15 && ink.bottom - ink.top < 30, `page ${p}: 30 pt capitals, ${ink.bottom - ink.top} px tall`);
      assert.match(norm(tool('pdftotext', ['-f', String(p), '-l', String(p), out, '-'])), `XHX${p}`);
    }
  });
});

/** Pixels that differ between two renderings of the same page, as a bounding box and a count. */
async function changed(a: string, b: string, p: number) {
  const raw = async (pdf: string) =>
    sharp(execFileSync('pdftoppm', ['-png', '-r', '72', '-f', String(p), '-l', String(p), pdf]))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
  const [x, y] = await Promise.all([raw(a), raw(b)]);
  const box = { left: Infinity, right: -1, top: Infinity, bottom: -1, count: 0, width: x.info.width, height: x.info.height };
  for (let i = 0; i < x.data.length; i += 3) {
    if (Math.abs(x.data[i] - y.data[i]) + Math.abs(x.data[i + 1] - y.data[i + 1]) + Math.abs(x.data[i + 2] - y.data[i + 2]) < 60) continue;
    const px = (i / 3) % x.info.width;
    const py = Math.floor(i / 3 / x.info.width);
    Object.assign(box, {
      left: Math.min(box.left, px),
      right: Math.max(box.right, px),
      top: Math.min(box.top, py),
      bottom: Math.max(box.bottom, py),
      count: box.count + 1,
    });
  }
  return box;
}

test('a signature box dragged on a turned page: the signing form is filled, the signature is drawn inside the box', async () => {
  const keys = mkdtempSync(join(dir, 'keys-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(keys, 'signer.key'),
      '-out',
      join(keys, 'signer.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=Workbench Signer',
    ],
    { stdio: 'ignore' },
  );
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, TURNED, join(keys, 'signer.pem'), join(keys, 'signer.key'));
    const id = await storedId(page, 'rotation-2-pages.pdf');
    await (await page.waitForSelector(`details.doc[data-id="${id}"] ol.pages li:nth-child(2) button`))!.click();
    await page.waitForFunction(() => document.querySelector<HTMLImageElement>('#stage-img')!.naturalWidth > 0);
    await page.click('#tools input[value=signature]');
    await page.$eval('#stage', (e) => e.scrollIntoView({ block: 'center' }));
    const r = (await (await page.$('#stage-img'))!.boundingBox())!;
    const [a, b] = [
      [0.5, 0.6],
      [0.9, 0.85],
    ];
    await page.mouse.move(r.x + r.width * a[0], r.y + r.height * a[1]);
    await page.mouse.down();
    await page.mouse.move(r.x + r.width * b[0], r.y + r.height * b[1], { steps: 8 });
    await page.mouse.up();
    await page.click('#place-apply');
    await page.waitForFunction(() => document.querySelector('#form-h')!.textContent!.includes('(/signed-pdf)'));
    assert.ok(await focused(page, '#form-h'));
    assert.is(await page.$eval('#in-id', (e) => (e as HTMLSelectElement).value), id, 'the page signed is the input');
    await page.select('#in-certificate_id', await storedId(page, 'signer.pem'));
    await page.select('#in-private_key_id', await storedId(page, 'signer.key'));
    await page.click('#run');
    assert.is(await finished(page), '');
    const out = await resultFile(page, 'signed.pdf');
    const ink = await changed(TURNED, out, 2);
    // The appearance lies inside the box dragged on the page as seen (a landscape page: /Rotate 90).
    assert.ok(ink.count > 100, `${ink.count} pixels changed`);
    const [left, top, right, bottom] = [a[0] * ink.width, a[1] * ink.height, b[0] * ink.width, b[1] * ink.height];
    assert.ok(
      ink.left >= left - 2 && ink.right <= right + 2 && ink.top >= top - 2 && ink.bottom <= bottom + 2,
      JSON.stringify({ ink, box: { left, top, right, bottom } }),
    );
    assert.ok(ink.right - ink.left > (right - left) / 2, 'the appearance fills the box, not a corner of it');
  });
});

test('a redaction box dragged on the preview removes what is under it, and only there', async () => {
  const GDOCS = corpus('pdf/google-docs-export.pdf'); // A4, 596 x 842: "Beautiful is better than ugly." first
  const words = [...tool('pdftotext', ['-bbox', GDOCS, '-']).matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</g)];
  const at = (w: string) =>
    words
      .find((m) => m[5] === w)!
      .slice(1, 5)
      .map(Number);
  const [x0, y0] = at('Beautiful');
  const [, , x1, y1] = at('ugly.');
  const count = (text: string, w: string) =>
    norm(text)
      .split(' ')
      .filter((x) => x === w).length;
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, GDOCS);
    const id = await storedId(page, 'google-docs-export.pdf');
    await (await page.waitForSelector(`details.doc[data-id="${id}"] ol.pages li:nth-child(1) button`))!.click();
    await page.waitForFunction(() => document.querySelector<HTMLImageElement>('#stage-img')!.naturalWidth > 0);
    await page.click('#tools input[value=redaction]');
    await page.$eval('#stage', (e) => e.scrollIntoView({ block: 'center' }));
    const r = (await (await page.$('#stage-img'))!.boundingBox())!;
    // From a point above-left of the first word to one below-right of the last, dragged with the mouse.
    const a = [(x0 - 2) / 596, (y0 - 1) / 842];
    const b = [(x1 + 2) / 596, (y1 + 1) / 842];
    await page.mouse.move(r.x + r.width * a[0], r.y + r.height * a[1]);
    await page.mouse.down();
    await page.mouse.move(r.x + r.width * b[0], r.y + r.height * b[1], { steps: 8 });
    await page.mouse.up();
    assert.equal(await page.$$eval('#placed li', (l) => l.map((e) => e.firstChild?.textContent)), ['Redaction box on page 1']);
    assert.is(await page.$$eval('#marks .mark.redaction', (l) => l.length), 1);
    await shot(page, 'redaction-box');
    await page.click('#place-apply');
    assert.is(await finished(page), '');
    // No warning: the box meets no letter outside it (one would be read out with the result).
    assert.is(await page.$eval('#status', (e) => e.textContent), 'placing on the page finished.');
    const out = await resultFile(page, 'redacted.pdf');
    const before = tool('pdftotext', [GDOCS, '-']);
    const after = tool('pdftotext', [out, '-']);
    assert.not.match(after, /Beautiful|ugly/);
    // "better" is on many lines: only the one in the box is gone.
    assert.is(count(after, 'better'), count(before, 'better') - 1);
    assert.match(norm(after), /Explicit is better than implicit\. Simple is better than complex\./);
    // The box is filled black where it was drawn.
    const png = execFileSync('pdftoppm', ['-png', '-r', '72', '-f', '1', '-l', '1', out]);
    const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [
      ...data.subarray((Math.round(y) * info.width + Math.round(x)) * 3, (Math.round(y) * info.width + Math.round(x)) * 3 + 3),
    ];
    assert.equal(px((x0 + x1) / 2, (y0 + y1) / 2), [0, 0, 0]);
    assert.equal(px(x1 + 30, (y0 + y1) / 2), [255, 255, 255], 'the box ends where it was drawn');
  });
});

test('batch: one operation on three files with progress per file, a pipeline saved by name and run, all as one ZIP', async () => {
  await onPage(browser, `${served.base}/`, async (page) => {
    await upload(page, FOUR, THREE, TURNED);
    await chooseOperation(page, '/rotated-pdf');
    await page.select('#f-rotation', '180');
    for (const label of await page.$$('#batch-files label')) await label.click();
    await page.select('#batch-what', 'op');
    await page.click('#batch-run');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#batch-rows li').length === 3 && [...document.querySelectorAll('#batch-rows li')].every((li) => /ok|bad/.test(li.className)),
    );
    const rows = await page.$$eval('#batch-rows li', (l) =>
      l.map((li) => ({
        name: li.querySelector('.name')!.textContent,
        value: (li.querySelector('progress') as HTMLProgressElement).value,
        state: li.querySelector('.meta')!.textContent,
        ok: li.classList.contains('ok'),
      })),
    );
    assert.equal(
      rows.map((r) => [r.name, r.value, r.ok]),
      [
        ['text-4-pages-pdflatex.pdf', 1, true],
        ['multicolumn-3-pages.pdf', 1, true],
        ['rotation-2-pages.pdf', 1, true],
      ],
    );
    assert.match(await page.$eval('#bench-status', (e) => e.textContent ?? ''), /Batch finished: 3 of 3 files done/);
    const links = await page.$$eval('#batch-rows a[download]', (l) => l.map((a) => (a as HTMLAnchorElement).href));
    assert.is(links.length, 3);
    const expected = [
      [180, 180, 180, 180],
      [180, 180, 180],
      [180, 270],
    ];
    for (const [i, href] of links.entries()) {
      const file = join(dir, `batch-${i}.pdf`);
      writeFileSync(file, Buffer.from(await (await fetch(href)).arrayBuffer()));
      assert.equal(rotations(file), expected[i]);
    }
    // Download all: /zip holds the three outputs.
    const zipped = page.waitForResponse((r) => new URL(r.url()).pathname === '/zip' && r.request().method() === 'POST');
    await page.click('#batch-done button');
    const zip = join(dir, 'all.zip');
    writeFileSync(zip, Buffer.from(await (await fetch((await (await zipped).json()).outputUrl)).arrayBuffer()));
    assert.equal(tool('unzip', ['-Z1', zip]).trim().split('\n').sort(), [
      'multicolumn-3-pages_service_rotated-pdf.pdf',
      'rotation-2-pages_service_rotated-pdf.pdf',
      'text-4-pages-pdflatex_service_rotated-pdf.pdf',
    ]);
    await page.waitForFunction(() => /ZIP is being downloaded/.test(document.querySelector('#bench-status')!.textContent ?? ''));
    await shot(page, 'batch');

    // A pipeline built from two forms, saved under a name, still there after a reload, run on one file.
    await page.click('#batch details summary');
    await page.click('#step-add');
    await chooseOperation(page, '/reordered-pdf');
    await page.type('#f-pages', 'last-1');
    await page.click('#step-add');
    assert.equal(await page.$$eval('#steps li code', (l) => l.map((e) => e.textContent)), ['/rotated-pdf', '/reordered-pdf']);
    await page.type('#pipe-name', 'turn and reverse');
    await page.click('#pipe-save');
    await page.reload();
    await page.waitForSelector('#op-list input[type=radio]');
    assert.ok(await page.$('#batch-what option[value="mine:turn and reverse"]'));
    await page.click('#batch-files label:first-child');
    await page.select('#batch-what', 'mine:turn and reverse');
    await page.click('#batch-run');
    await page.waitForFunction(() => document.querySelector('#batch-rows li')?.className.match(/ok|bad/));
    const href = await page.$eval('#batch-rows a[download]', (a) => (a as HTMLAnchorElement).href);
    const file = join(dir, 'pipeline.pdf');
    writeFileSync(file, Buffer.from(await (await fetch(href)).arrayBuffer()));
    assert.equal(rotations(file), [180, 180, 180, 180]);
    assert.is(pageText(file, 1), pageText(FOUR, 4));
  });
});

test.run();
