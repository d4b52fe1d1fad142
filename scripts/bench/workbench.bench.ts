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
    await page.close();
  }
} finally {
  await browser.close();
  await served.close();
  rmSync(dir, { recursive: true, force: true });
}
