import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pdfFromObjects, zerosZlib } from './fixtures.js';
import { corpus, type FormValue, sleep, startApp, type TestApp, tool } from './helpers.js';
import { invoiceXml } from './zugferd-fixtures.js';

/**
 * Hostile input for Ghostscript, LibreOffice and the in-process PDF readers cannot hold a job: an endless
 * PostScript loop, a program or an office document with too many pages, a content stream that inflates to 2 GB
 * and a PDF with too many objects each end in a 422 naming the setting (/pdf-info: a partial answer whose
 * warning names it), soon after the limit, with no engine process of the job left, its temp dir gone, and the
 * server's memory barely moved.
 */
const test = suite('limits-engines');
let t: TestApp;
/** OFFICE_TIMEOUT_SECONDS=1 (the office pool is shared with `t`). */
let slow: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-limits-'));
const file = (name: string, content: string | Buffer) => {
  const path = join(work, name);
  writeFileSync(path, content);
  return path;
};

/** One page whose content stream (also the catalog's XMP metadata) inflates to 2 GiB of zeros. */
const BOMB = pdfFromObjects([
  '<< /Type /Catalog /Pages 2 0 R /Metadata 4 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
  ['<< /Filter /FlateDecode >>', zerosZlib(2 * 1024 ** 3)],
]);

/** A one-page PDF with 1500 more objects than it needs (MAX_OBJECTS=1000 in `t`). */
const CROWDED = pdfFromObjects([
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
  ...Array.from({ length: 1500 }, (_, i) => `<< /N ${i} >>`),
]);

/** A spreadsheet of 500 rows: about ten printed pages (OFFICE_MAX_PAGES=2 in `t`). */
const rows = (n: number) => `${Array.from({ length: n }, (_, i) => `${i},row ${i},${i * 3.5},some text in a cell`).join('\n')}\n`;

test.before(async () => {
  t = await startApp({ PS_TIMEOUT_SECONDS: '2', PS_MAX_PAGES: '5', OFFICE_MAX_PAGES: '2', MAX_OBJECTS: '1000', INVOICE_MAX_LINES: '3' });
  slow = await startApp({ OFFICE_TIMEOUT_SECONDS: '1' });
});

test.after(async () => {
  await Promise.all([t.close(), slow.close()]);
  rmSync(work, { recursive: true, force: true });
});

/** POST a form; the status, the JSON body and the time it took. */
async function post(app: TestApp, path: string, fields: Record<string, FormValue>): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  const res = await app.form(path, fields);
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, ms: Date.now() - started };
}

function assertLimit(r: { status: number; body: Record<string, unknown> }, setting: string) {
  assert.is(r.status, 422, JSON.stringify(r.body));
  assert.match(String(r.body.error), new RegExp(`\\b${setting}=\\d+`));
}

/** Live processes (not zombies) whose command line mentions `text`, as `ps` lists them. */
function processesMentioning(text: string): string[] {
  return tool('ps', ['-eo', 'stat=,args='])
    .split('\n')
    .filter((l) => l.includes(text) && !l.trim().startsWith('Z'));
}

/** Nothing of the app's jobs is left: no job dir under DATA_DIR/work, no process working on a file in DATA_DIR. */
async function assertNothingLeft(app: TestApp) {
  const workDir = join(app.dataDir, 'work');
  assert.equal(existsSync(workDir) ? readdirSync(workDir) : [], [], 'job dirs left in DATA_DIR/work');
  // A killed group may take a moment to be reaped.
  for (let i = 0; i < 20 && processesMentioning(app.dataDir).length; i++) await sleep(100);
  assert.equal(processesMentioning(app.dataDir), [], 'engine processes left');
}

test('an endless PostScript loop is cut at PS_TIMEOUT_SECONDS, Ghostscript killed', async () => {
  const r = await post(t, '/pdf', { file: { file: file('loop.ps', '%!PS\n{} loop\n') } });
  assertLimit(r, 'PS_TIMEOUT_SECONDS');
  assert.ok(r.ms >= 2000 && r.ms < 10_000, `cut after ${r.ms} ms`);
  await assertNothingLeft(t);
});

test('a PostScript program with 100000 pages is stopped after PS_MAX_PAGES + 1', async () => {
  const r = await post(t, '/pdf', { file: { file: file('pages.ps', '%!PS\n1 1 100000 { pop showpage } for\n') } });
  assertLimit(r, 'PS_MAX_PAGES');
  // Running all 100000 pages takes Ghostscript ~6 s here; the guard quits at page 6.
  assert.ok(r.ms < 3000, `stopped after ${r.ms} ms`);
  await assertNothingLeft(t);
});

test('the page guard survives save/restore, setpagedevice and a redefined quit; five pages still convert', async () => {
  const sneaky = '%!PS\n/quit {} def /print {pop} def 1 1 100000 { pop save << /PageSize [300 400] >> setpagedevice showpage restore } for\n';
  assertLimit(await post(t, '/pdf', { file: { file: file('sneaky.ps', sneaky) } }), 'PS_MAX_PAGES');
  const ok = await post(t, '/pdf', { file: { file: file('five.ps', '%!PS\n1 1 5 { pop showpage } for\n') } });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  const eps = await post(t, '/pdf', { file: { file: corpus('postscript/pillow-sample-cmyk.eps') } });
  assert.is(eps.status, 200, JSON.stringify(eps.body));
});

test('/pdf-info on a content stream that inflates to 2 GB: a partial answer naming MAX_STREAM_MB, fast, memory flat', async () => {
  const path = file('bomb.pdf', BOMB);
  let peak = process.memoryUsage().rss;
  const before = peak;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const r = await post(t, '/pdf-info', { file: { file: path }, queries: 'all' }).finally(() => clearInterval(sampler));
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.allQueriesProcessed, false);
  assert.match(String(r.body.warning), /MAX_STREAM_MB=256\b/);
  // What needs the stream is unanswered; the rest is answered.
  assert.is(r.body.image_only, null);
  assert.is(r.body.pdfa, null);
  assert.is(r.body.page_count, 1);
  assert.is(r.body.title, '');
  // Uncut, pdfimages alone parsed the 2 GB for ~21 s and the XMP read held 512 MB in this process.
  assert.ok(r.ms < 10_000, `answered after ${r.ms} ms`);
  assert.ok(peak - before < 150 * 1024 * 1024, `RSS grew by ${Math.round((peak - before) / 1024 / 1024)} MB`);
  await assertNothingLeft(t);

  // Queries that do not need the stream are answered in full.
  const cheap = await post(t, '/pdf-info', { file: { file: path }, queries: 'page_count,title' });
  assert.equal(cheap.body.allQueriesProcessed, true);
});

test('elsewhere the 2 GB stream is a 422 naming MAX_STREAM_MB (XMP read before attaching)', async () => {
  const r = await post(t, '/pdf-with-added-attachment', { file: { file: file('bomb.pdf', BOMB) }, file_to_attach: { file: corpus('images/hopper.jpg') } });
  assertLimit(r, 'MAX_STREAM_MB');
  assert.ok(r.ms < 10_000, `cut after ${r.ms} ms`);
  await assertNothingLeft(t);
});

test('a PDF with more objects than MAX_OBJECTS: /pdf-info answers filename and file_size, other reads are 422', async () => {
  const path = file('crowded.pdf', CROWDED);
  const info = await post(t, '/pdf-info', { file: { file: path }, queries: 'page_count,file_size' });
  assert.is(info.status, 200, JSON.stringify(info.body));
  assert.is(info.body.allQueriesProcessed, false);
  assert.match(String(info.body.warning), /MAX_OBJECTS=1000\b/);
  assert.is(info.body.file_size, CROWDED.length);
  assert.is(info.body.page_count, undefined);
  const boxes = await post(t, '/pdf-with-page-boxes-set', {
    file: { file: path },
    boxes: '{"boxes":[{"box":"crop","pages":[{"range":"1","left":10,"top":10,"bottom":10,"right":10}]}]}',
  });
  assertLimit(boxes, 'MAX_OBJECTS');
  await assertNothingLeft(t);
});

test('an invoice with more lines than INVOICE_MAX_LINES is 422 before the rules run; two lines still validate', async () => {
  const xml = invoiceXml();
  const line = /<ram:IncludedSupplyChainTradeLineItem>[\s\S]*?<\/ram:IncludedSupplyChainTradeLineItem>/.exec(xml)![0];
  // Empty lines fail several rules each: the costly case the limit is for.
  const many = xml.replace(line, line + '<ram:IncludedSupplyChainTradeLineItem/>'.repeat(5000));
  assertLimit(await post(t, '/validated-zugferd', { file: { file: file('many-lines.xml', many) } }), 'INVOICE_MAX_LINES');
  assertLimit(await post(t, '/zugferd-pdf', { file: { file: file('many-lines.xml', many) } }), 'INVOICE_MAX_LINES');
  const ok = await post(t, '/validated-zugferd', { file: { file: file('two-lines.xml', xml) } });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body.status, 'VALID', JSON.stringify(ok.body));
  await assertNothingLeft(t);
});

test('an office document over OFFICE_MAX_PAGES is refused; /powerpoint refuses a PDF over it before importing', async () => {
  const r = await post(t, '/pdf', { file: { file: file('rows.csv', rows(500)) } });
  assertLimit(r, 'OFFICE_MAX_PAGES');
  await assertNothingLeft(t);
  const ok = await post(t, '/pdf', { file: { file: corpus('office/poi-SampleDoc.docx') } });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  const deck = await post(t, '/powerpoint', { file: { file: corpus('pdf/federal-register-15-pages.pdf') } });
  assertLimit(deck, 'OFFICE_MAX_PAGES');
});

test('an office conversion past OFFICE_TIMEOUT_SECONDS is cut, its LibreOffice killed and replaced', async () => {
  // A warm instance (the pool is shared between the two apps), and its processes.
  assert.is((await post(t, '/pdf', { file: { file: corpus('office/gotenberg-sheet.csv') } })).status, 200);
  const soffice = () => processesMentioning(`quire-lo-${process.pid}`).filter((l) => /soffice/.test(l));
  const warm = soffice();
  assert.ok(warm.length > 0, 'no pool instance found');
  const r = await post(slow, '/pdf', { file: { file: file('big.csv', rows(400_000)) } });
  assertLimit(r, 'OFFICE_TIMEOUT_SECONDS');
  assert.ok(r.ms < 8000, `cut after ${r.ms} ms`);
  for (let i = 0; i < 30 && soffice().some((l) => warm.includes(l)); i++) await sleep(100);
  assert.equal(
    soffice().filter((l) => warm.includes(l)),
    [],
    'the hung instance is still running',
  );
  await assertNothingLeft(slow);
  const next = await post(slow, '/pdf', { file: { file: corpus('office/gotenberg-sheet.csv') } });
  assert.is(next.status, 200, JSON.stringify(next.body));
});

test.run();
