// The web page's thumbnails: a 100-page PDF (made with qpdf from the corpus's Federal Register issue) chosen in the
// file picker of headless Chromium; time until every thumbnail in the viewport is drawn (the documents list
// scrolled into view as soon as it appears, as a user would), and until all 100 are drawn scrolling through them.
// Goal (issue 28): the visible thumbnails within 3 s of choosing the file. Run: npx tsx scripts/bench/workbench.bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { BROWSER_ARGS } from '../../engines/chromium/browser.js';
import { CHROMIUM, listen } from '../../test/browser.js';
import { corpus } from '../../test/helpers.js';

const RUNS = Number(process.env.RUNS ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-workbench-'));
const big = join(dir, 'hundred-pages.pdf');
execFileSync('qpdf', ['--empty', '--pages', ...Array(7).fill(corpus('pdf/federal-register-15-pages.pdf')), '--', join(dir, 'many.pdf')]);
execFileSync('qpdf', ['--empty', '--pages', join(dir, 'many.pdf'), '1-100', '--', big]);

const served = await listen();
const browser = await puppeteer.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS, headless: true, defaultViewport: { width: 1280, height: 900 } });
try {
  for (let run = 1; run <= RUNS; run++) {
    const page = await browser.newPage();
    await page.goto(`${served.base}/`);
    await page.waitForSelector('#op-list input[type=radio]');
    const input = await page.$('#file-pick');
    // Where the time goes: when each API answer arrived, from the moment the file was chosen.
    const answers: string[] = [];
    page.on('response', (r) => {
      const path = new URL(r.url()).pathname;
      if (['/upload', '/pdf-info', '/png'].includes(path)) answers.push(`${path.slice(1)} ${Date.now() - t0}`);
    });
    const t0 = Date.now();
    await input!.uploadFile(big);
    await page.waitForSelector('details.doc ol.pages li');
    await page.$eval('details.doc', (e) => e.scrollIntoView());
    await page.waitForFunction(
      () => {
        const inView = [...document.querySelectorAll<HTMLImageElement>('details.doc ol.pages img')].filter((i) => {
          const r = i.getBoundingClientRect();
          return r.bottom > 0 && r.top < innerHeight;
        });
        return inView.length > 0 && inView.every((i) => i.complete && i.naturalWidth > 0);
      },
      { polling: 20 },
    );
    const visible = Date.now() - t0;
    const shown = await page.$$eval('details.doc ol.pages img', (l) => l.filter((i) => (i as HTMLImageElement).naturalWidth > 0).length);
    const timeline = answers.join(', ');
    await page.click('details.doc > button');
    for (let i = 1; i <= 100; i += 10) {
      await page.$eval(`details.doc ol.pages li:nth-child(${i})`, (e) => e.scrollIntoView());
      await page.waitForFunction(
        (n) => [...document.querySelectorAll<HTMLImageElement>('details.doc ol.pages img')].slice(0, n).every((img) => img.naturalWidth > 0),
        { polling: 20 },
        Math.min(100, i + 9),
      );
    }
    const all = Date.now() - t0;
    console.log(`run ${run}: thumbnails in view ${visible} ms (${shown} drawn by then), all 100 (scrolling through) ${all} ms`);
    console.log(`  answers until then (ms): ${timeline}`);

    // The page editor on the same 100 pages: time until its tiles in view are drawn, how many tiles and pictures it
    // made, and what one keyboard move (Alt+Right: the sheet re-laid) and one turn cost in the page's main thread.
    const e0 = Date.now();
    await page.click('details.doc .actions button');
    await page.waitForSelector('#sheet li');
    await page.waitForFunction(
      () => {
        const inView = [...document.querySelectorAll<HTMLImageElement>('#sheet img')].filter((i) => {
          const r = i.getBoundingClientRect();
          return r.bottom > 0 && r.top < innerHeight && r.width > 0;
        });
        return inView.length > 0 && inView.every((i) => i.complete && i.naturalWidth > 0);
      },
      { polling: 20 },
    );
    const editorVisible = Date.now() - e0;
    const tiles = await page.$$eval('#sheet li', (l) => l.length);
    const pictures = await page.$$eval('#sheet img', (l) => l.length);
    const cost = (key: string, alt: boolean) =>
      page.evaluate(
        (k, a) => {
          const li = document.querySelector<HTMLElement>('#sheet li')!;
          li.focus();
          document.body.getBoundingClientRect();
          const t = performance.now();
          li.dispatchEvent(new KeyboardEvent('keydown', { key: k, altKey: a, bubbles: true }));
          const script = performance.now() - t;
          document.body.getBoundingClientRect(); // the style and layout the change caused
          return [script, performance.now() - t];
        },
        key,
        alt,
      );
    const moves = [];
    for (let i = 0; i < 5; i++) moves.push(await cost('ArrowRight', true));
    const turns = [];
    for (let i = 0; i < 5; i++) turns.push(await cost('r', false));
    const ms = (l: number[][]) => l.map(([a, b]) => `${a.toFixed(1)}+${(b - a).toFixed(1)}`).join(', ');
    console.log(
      `run ${run}: editor: tiles in view ${editorVisible} ms after "Edit pages" (${tiles} tiles, ${pictures} pictures); a move ${ms(moves)} ms, a turn ${ms(turns)} ms (script + style and layout)`,
    );
    await page.close();
  }
} finally {
  await browser.close();
  await served.close();
  rmSync(dir, { recursive: true, force: true });
}
