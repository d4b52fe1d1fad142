import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, startApp, type TestApp, tool } from './helpers.js';
import { descendants } from './processes.js';
import { until } from './waiting.js';

/**
 * A job whose JavaScript memory grows with the document runs in a thread with a capped heap (JOB_MAX_MEMORY_MB):
 * past the cap it ends with a 422 naming the setting, and the process, other jobs and other clients carry on.
 */
const test = suite('job-memory');
let t: TestApp;
let scratch: string;
let big: string;

test.before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'quire-memory-'));
  // 300 pages of text (the 15-page register 20 times): a Word document of the 15 pages alone needs more than
  // 64 MB of heap, of these 300 pages many times 128 MB; one short page needs a few.
  big = join(scratch, 'register-300.pdf');
  const register = corpus('pdf/federal-register-15-pages.pdf');
  tool('qpdf', ['--empty', '--pages', ...Array(20).fill(register), '--', big]);
  t = await startApp({ JOB_MAX_MEMORY_MB: '128' });
});
test.after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('a document past JOB_MAX_MEMORY_MB ends its own job with a 422; a concurrent small job, the process and /health carry on', async () => {
  const pid = process.pid;
  const [heavy, small] = await Promise.all([
    t.form('/word', { file: { file: big } }),
    t.form('/extracted-text', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }),
  ]);
  await expectError(heavy, 422, /exceeded the limit JOB_MAX_MEMORY_MB=128/);
  assert.match(String((await expectOk(small)).fullText), /^Lorem ipsum dolor sit amet/);
  // The same process, answering: the thread died, not the server.
  assert.is(process.pid, pid);
  assert.is((await t.request('/health')).status, 200);
  // The other operations of the same kind go on in fresh threads.
  const after = await expectOk(await t.form('/markdown', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } }));
  assert.match(String(after.outputUrl ?? after.markdown ?? JSON.stringify(after)), /.+/);
});

test('/excel writes its workbook sheet by sheet: 300 pages within a 256 MB heap (whole, the workbook needed ~360 MB)', async () => {
  const app = await startApp({ JOB_MAX_MEMORY_MB: '256' });
  try {
    const xlsx = await app.download((await expectOk(await app.form('/excel', { file: { file: big } }))).outputUrl);
    const sheets = tool('unzip', ['-Z1', xlsx])
      .split('\n')
      .filter((e) => /^xl\/worksheets\/sheet\d+\.xml$/.test(e));
    assert.is(sheets.length, 300);
    assert.match(tool('unzip', ['-p', xlsx, 'xl/worksheets/sheet300.xml']), /Federal Register/);
  } finally {
    await app.close();
  }
});

test('/word writes its document a few pages at a time: 300 pages within a 256 MB heap (whole, 600 pages needed ~2 GB)', async () => {
  const app = await startApp({ JOB_MAX_MEMORY_MB: '256' });
  try {
    const docx = await app.download((await expectOk(await app.form('/word', { file: { file: big } }))).outputUrl);
    const xml = tool('unzip', ['-p', docx, 'word/document.xml']);
    assert.is((xml.match(/<w:type w:val="nextPage"\/>/g) ?? []).length, 300);
    // Every header a part of its own, named in the package's relationships and content types.
    const headers = tool('unzip', ['-Z1', docx])
      .split('\n')
      .filter((e) => /^word\/header\d+\.xml$/.test(e));
    assert.is(headers.length, 300);
    const rels = tool('unzip', ['-p', docx, 'word/_rels/document.xml.rels']);
    const types = tool('unzip', ['-p', docx, '[[]Content_Types].xml']);
    for (const h of headers) assert.ok(rels.includes(`Target="${h.slice(5)}"`) && types.includes(`PartName="/${h}"`), h);
    // The last page's words (body, header and footer), 30 batches on.
    const last = tool('pdftotext', ['-f', '300', '-l', '300', big, '-'])
      .split(/\s+/)
      .filter((w) => /^[A-Za-z]{8,}$/.test(w));
    const text = tool('unzip', ['-p', docx, 'word/*.xml']).replace(/<[^>]+>/g, ' ');
    assert.ok(last.length > 20 && last.every((w) => text.includes(w)), last.filter((w) => !text.includes(w)).join(' '));
  } finally {
    await app.close();
  }
});

/** The job processes below this one (the apps run in the test's process), by pid. */
const jobProcesses = () =>
  descendants(process.pid)
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e.pid}/cmdline`, 'latin1').includes('operation-worker');
      } catch {
        return false; // gone meanwhile
      }
    })
    .map((e) => e.pid);

test('a job process left holding more than half its heap cap is let go after its job; one that is not stays warm for the next', async () => {
  const small = corpus('pdf/text-minimal-pdflatex.pdf');
  // Any Node process with the operation's modules loaded holds more than 64 MB: under a 128 MB cap none stays.
  await expectOk(await t.form('/extracted-text', { file: { file: small } }));
  await until('the job process let go', () => jobProcesses().length === 0, 10_000);
  const app = await startApp();
  try {
    await expectOk(await app.form('/extracted-text', { file: { file: small } }));
    const warm = jobProcesses();
    assert.is(warm.length, 1);
    await expectOk(await app.form('/markdown', { file: { file: small } }));
    assert.equal(jobProcesses(), warm);
  } finally {
    await app.close();
  }
});

test('the same document is read within the default cap', async () => {
  const app = await startApp();
  try {
    const text = await expectOk(await app.form('/extracted-text', { file: { file: big }, full_text: 'by_page' }));
    const pages = text.fullText.pages as { page: number; text: string }[];
    assert.is(pages.length, 300);
    assert.match(pages[299].text, /Federal Register/);
  } finally {
    await app.close();
  }
});

test.run();
