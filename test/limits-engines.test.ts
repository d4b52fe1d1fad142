import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pdfFromObjects, zerosZlib } from './fixtures.js';
import { corpus, type FormValue, pdfText, startApp, type TestApp, tool, until } from './helpers.js';
import { invoiceXml } from './zugferd-fixtures.js';

/**
 * Hostile input for Ghostscript, LibreOffice and the in-process PDF readers cannot hold a job: an endless
 * PostScript loop, a program or an office document with too many pages, a content stream that inflates to 2 GB
 * and a PDF with too many objects each end in a 422 naming the setting (/pdf-info: a partial answer whose
 * warning names it), soon after the limit, with no engine process of the job left, its temp dir gone, and the
 * server's memory barely moved.
 */
const test = suite('limits-engines');
/** Small page, object, stream and line limits, and time limits that ordinary work comes nowhere near on any machine. */
let t: TestApp;
/** PS_TIMEOUT_SECONDS=2 and OFFICE_TIMEOUT_SECONDS=1, only for work that never ends (the office pool is shared with `t`). */
let brief: TestApp;
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

/**
 * A spreadsheet of rows x columns formulas with no stored values, each summing a column's million row numbers (plus
 * its own row's): LibreOffice computes every one before printing. A million of them are some 10^12 additions, far
 * past a second of work on any machine.
 */
async function sumsSheet(rows: number, columns: number): Promise<Buffer> {
  const row = `<table:table-row><table:table-cell table:formula="of:=SUMPRODUCT(ROW([.$A$1:.$A$1048576])+ROW())" table:number-columns-repeated="${columns}"/></table:table-row>`;
  const zip = new JSZip();
  zip.file('mimetype', 'application/vnd.oasis.opendocument.spreadsheet', { compression: 'STORE' });
  zip.file(
    'META-INF/manifest.xml',
    '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">' +
      '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>' +
      '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>',
  );
  zip.file(
    'content.xml',
    '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2">' +
      `<office:body><office:spreadsheet><table:table table:name="Sums">${row.repeat(rows)}</table:table></office:spreadsheet></office:body></office:document-content>`,
  );
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

test.before(async () => {
  t = await startApp({
    PS_TIMEOUT_SECONDS: '120',
    PS_MAX_PAGES: '5',
    OFFICE_TIMEOUT_SECONDS: '300',
    OFFICE_MAX_PAGES: '2',
    MAX_STREAM_MB: '32',
    MAX_OBJECTS: '1000',
    INVOICE_MAX_LINES: '3',
  });
  brief = await startApp({ PS_TIMEOUT_SECONDS: '2', OFFICE_TIMEOUT_SECONDS: '1' });
});

test.after(async () => {
  await Promise.all([t.close(), brief.close()]);
  rmSync(work, { recursive: true, force: true });
});

/** POST a form; the status, the JSON body and the time it took. */
async function post(app: TestApp, path: string, fields: Record<string, FormValue>): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  const res = await app.form(path, fields);
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body, ms: Date.now() - started };
}

/** A 422 naming `setting` ("NAME", or "NAME=value" for that value). */
function assertLimit(r: { status: number; body: Record<string, unknown> }, setting: string) {
  assert.is(r.status, 422, JSON.stringify(r.body));
  assert.match(String(r.body.error), new RegExp(setting.includes('=') ? `\\b${setting}\\b` : `\\b${setting}=\\d+`));
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
  // A killed group may take a moment to be reaped; the assertion below names what is left.
  await until('the engine processes to end', () => processesMentioning(app.dataDir).length === 0, 30_000).catch(() => undefined);
  assert.equal(processesMentioning(app.dataDir), [], 'engine processes left');
}

/** How long qpdf takes here, now, to decode BOMB's stream whole into /dev/null: the least an uncut read of it costs. */
let wholeDecode: Promise<number> | undefined;
const decodeWholeMs = (path: string) =>
  (wholeDecode ??= new Promise((resolve, reject) => {
    const started = Date.now();
    spawn('qpdf', ['--show-object=4', '--filtered-stream-data', '--', path], { stdio: 'ignore' })
      .on('error', reject)
      .on('close', (code) => (code === 0 ? resolve(Date.now() - started) : reject(new Error(`qpdf exited ${code}`))));
  }));

test('an endless PostScript loop is cut at PS_TIMEOUT_SECONDS, Ghostscript killed', async () => {
  const r = await post(brief, '/pdf', { file: { file: file('loop.ps', '%!PS\n{} loop\n') } });
  assertLimit(r, 'PS_TIMEOUT_SECONDS=2');
  assert.ok(r.ms >= 2000, `cut after ${r.ms} ms, before the limit`);
  await assertNothingLeft(brief);
});

// Pages without end: only the page guard's early stop answers with the page limit; without it (-dLastPage only
// drops the pages after the limit) Ghostscript would run on until PS_TIMEOUT_SECONDS, which the 422 would name.
test('an endless run of pages is stopped at PS_MAX_PAGES + 1, well before PS_TIMEOUT_SECONDS', async () => {
  const r = await post(t, '/pdf', { file: { file: file('pages.ps', '%!PS\n{ showpage } loop\n') } });
  assertLimit(r, 'PS_MAX_PAGES');
  await assertNothingLeft(t);
});

test('the page guard survives save/restore, setpagedevice and a redefined quit; five pages still convert', async () => {
  const sneaky = '%!PS\n/quit {} def /print {pop} def { save << /PageSize [300 400] >> setpagedevice showpage restore } loop\n';
  assertLimit(await post(t, '/pdf', { file: { file: file('sneaky.ps', sneaky) } }), 'PS_MAX_PAGES');
  const ok = await post(t, '/pdf', { file: { file: file('five.ps', '%!PS\n1 1 5 { pop showpage } for\n') } });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  const eps = await post(t, '/pdf', { file: { file: corpus('postscript/pillow-sample-cmyk.eps') } });
  assert.is(eps.status, 200, JSON.stringify(eps.body));
});

test('/pdf-info on a content stream that inflates to 2 GB: a partial answer naming MAX_STREAM_MB, cut early, memory flat', async () => {
  const path = file('bomb.pdf', BOMB);
  const whole = await decodeWholeMs(path);
  let peak = process.memoryUsage().rss;
  const before = peak;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const r = await post(t, '/pdf-info', { file: { file: path }, queries: 'all' }).finally(() => clearInterval(sampler));
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.allQueriesProcessed, false);
  assert.match(String(r.body.warning), /MAX_STREAM_MB=32\b/);
  // What needs the stream is unanswered; the rest is answered.
  assert.is(r.body.image_only, null);
  assert.is(r.body.pdfa, null);
  assert.is(r.body.page_count, 1);
  assert.is(r.body.title, '');
  // Uncut, the stream is decoded whole at least twice (its size, the XMP) and pdfimages parses it; cut, each read
  // stops after 32 MB of the 2048, so the whole answer costs less than one uncut decode measured just before.
  assert.ok(r.ms < whole, `answered after ${r.ms} ms; qpdf decodes the stream whole in ${whole} ms`);
  // Uncut, the XMP read held 512 MB in this process.
  assert.ok(peak - before < 150 * 1024 * 1024, `RSS grew by ${Math.round((peak - before) / 1024 / 1024)} MB`);
  await assertNothingLeft(t);

  // Queries that do not need the stream are answered in full.
  const cheap = await post(t, '/pdf-info', { file: { file: path }, queries: 'page_count,title' });
  assert.equal(cheap.body.allQueriesProcessed, true);
});

test('elsewhere the 2 GB stream is a 422 naming MAX_STREAM_MB (XMP read before attaching), cut early', async () => {
  const path = file('bomb.pdf', BOMB);
  const whole = await decodeWholeMs(path);
  const r = await post(t, '/pdf-with-added-attachment', { file: { file: path }, file_to_attach: { file: corpus('images/hopper.jpg') } });
  assertLimit(r, 'MAX_STREAM_MB=32');
  // Uncut, the XMP is decoded whole twice (counted, then held).
  assert.ok(r.ms < whole, `cut after ${r.ms} ms; qpdf decodes the stream whole in ${whole} ms`);
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
  // A warm instance (the pool is shared between the two apps), and its processes; one formula is computed:
  // 1048576 * 1048577 / 2 + 1048576.
  const one = await post(t, '/pdf', { file: { bytes: await sumsSheet(1, 1), name: 'sum.ods' } });
  assert.is(one.status, 200, JSON.stringify(one.body));
  assert.match(pdfText(await t.download(String(one.body.outputUrl))), /5\.49757E\+11/);
  const soffice = () => processesMentioning(`quire-lo-${process.pid}`).filter((l) => /soffice/.test(l));
  const warm = soffice();
  assert.ok(warm.length > 0, 'no pool instance found');
  const r = await post(brief, '/pdf', { file: { bytes: await sumsSheet(25_000, 40), name: 'sums.ods' } });
  assertLimit(r, 'OFFICE_TIMEOUT_SECONDS=1');
  assert.ok(r.ms >= 1000, `cut after ${r.ms} ms, before the limit`);
  const hung = () => soffice().filter((l) => warm.includes(l));
  await until('the hung instance to end', () => hung().length === 0, 30_000).catch(() => undefined);
  assert.equal(hung(), [], 'the hung instance is still running');
  await assertNothingLeft(brief);
  // The pool serves the next conversion (on `t`, whose time limit ordinary work is nowhere near).
  const next = await post(t, '/pdf', { file: { file: corpus('office/gotenberg-sheet.csv') } });
  assert.is(next.status, 200, JSON.stringify(next.body));
});

test.run();
