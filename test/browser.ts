/** The web page's tests: the app on a loopback port, Chromium driven by puppeteer-core, and what a page ran into. */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Browser, Page } from 'puppeteer-core';
import * as assert from 'uvu/assert';
import { startApp, type TestApp } from './helpers.js';

export const CHROMIUM = ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p)) ?? 'chromium';

export interface Served {
  t: TestApp;
  base: string;
  close: () => Promise<void>;
}

/** The app on a real loopback port: the page's fetches need a listening server. */
export async function listen(env: Record<string, string> = {}): Promise<Served> {
  const t = await startApp(env);
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return { t, base: `http://127.0.0.1:${port}`, close: async () => (server.close(), t.close()) };
}

/** A page that records every console error, script error, failed request and HTTP error it meets. */
export async function open(browser: Browser, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  // A hang guard only: a run that breaks fails instead of waiting forever.
  page.setDefaultTimeout(300_000);
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e instanceof Error ? e.message : String(e)}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => r.status() >= 400 && problems.push(`http ${r.status()}: ${r.url()}`));
  await page.goto(url);
  await page.waitForSelector('#op-list input[type=radio]');
  return { page, problems };
}

/** Runs `body` on a fresh page and, when it passes, checks that the page met no problem on the way. */
export async function onPage(browser: Browser, url: string, body: (page: Page) => Promise<void>): Promise<void> {
  const { page, problems } = await open(browser, url);
  try {
    await body(page);
    assert.equal(problems, []);
  } finally {
    await page.close();
  }
}

export const focused = (page: Page, selector: string) => page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);

/** Presses Tab until `selector` has the focus: proves it is reachable by keyboard. */
export async function tabTo(page: Page, selector: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await focused(page, selector)) return;
    await page.keyboard.press('Tab');
  }
  assert.unreachable(`Tab never reached ${selector}`);
}

/** Waits until the running request ends; returns the error shown, or '' when the result is shown. */
export async function finished(page: Page): Promise<string> {
  await page.waitForFunction(() => !document.querySelector('#progress-box')!.hasAttribute('hidden') || document.querySelector('#error')!.textContent);
  await page.waitForFunction(() => document.querySelector('#progress-box')!.hasAttribute('hidden'));
  return page.$eval('#error', (e) => e.textContent ?? '');
}

export async function chooseOperation(page: Page, path: string): Promise<void> {
  await page.click(`label:has(> #op-${path.slice(1)})`);
  await page.waitForFunction((p) => document.querySelector('#form-h')!.textContent!.includes(`(${p})`), {}, path);
}

/** Uploads through the file picker and waits until the files are listed as stored. */
export async function upload(page: Page, ...files: string[]): Promise<void> {
  const before = await page.$$eval('#stored li', (l) => l.length);
  const input = await page.$('#file-pick');
  await input!.uploadFile(...files);
  await page.waitForFunction((n) => document.querySelectorAll('#stored li').length > n || document.querySelector('#error')!.textContent, {}, before);
}
