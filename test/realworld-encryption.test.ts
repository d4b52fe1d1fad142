import { execFileSync, spawnSync } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENCRYPTED_ATTACHMENTS_WARNING, readableWithoutPassword, withoutEncryption } from '../app/document/index.js';
import { encryptionOf } from '../engines/qpdf.js';
import { effOnlyEncrypted } from './fixtures.js';
import { corpus, expectError, expectOk, startApp, type TestApp } from './helpers.js';

/**
 * Encryption that opens without a password (issue 24): a file whose only encryption is of its embedded files
 * (/EFF, /StmF and /StrF /Identity) is no "password protected" file; one with an empty user password opens too;
 * a file that needs a password to open still does.
 */

let t: TestApp;
let dir: string;
const PASSWORD = 'attach-pw';
const PAGE_TEXT = 'Quarterly figures attached';
const ATTACHMENT = Buffer.from('the attached figures: 42, 17, 3.5\n');
const VARIANTS = {
  // /EFF alone, as the spec has it; a cross-reference table.
  eff: { cryptFilter: false, xrefStream: false },
  // The attachment also names the crypt filter itself: qpdf decrypts it with the password that way.
  crypt: { cryptFilter: true, xrefStream: false },
  // /Encrypt in a cross-reference stream's dictionary instead of a trailer.
  xrefStream: { cryptFilter: true, xrefStream: true },
};
const files: Record<string, string> = {};
const NEEDS_PASSWORD = corpus('encrypted/aes-256-user-view-owner-master.pdf');

test.before(async () => {
  t = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'quire-eff-'));
  for (const [name, v] of Object.entries(VARIANTS)) {
    files[name] = join(dir, `${name}.pdf`);
    writeFileSync(files[name], effOnlyEncrypted({ password: PASSWORD, text: PAGE_TEXT, attachment: ATTACHMENT, ...v }));
  }
});
test.after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const qpdf = (args: string[]) => spawnSync('qpdf', args, { encoding: 'utf8' });
const qpdfBytes = (args: string[]) => execFileSync('qpdf', args, { stdio: ['ignore', 'pipe', 'ignore'] });
const pdftotext = (path: string) => execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' });

test('the generated files: qpdf reads the handler with the password, pdftotext the page without one', () => {
  for (const [name, path] of Object.entries(files)) {
    const shown = qpdf(['--show-encryption', `--password=${PASSWORD}`, path]);
    assert.is(shown.status, 0, `${name}: ${shown.stderr}`);
    assert.match(shown.stdout, /^R = 6$/m);
    assert.match(shown.stdout, /Supplied password is user password/);
    assert.match(shown.stdout, /^stream encryption method: none$/m);
    assert.match(shown.stdout, /^string encryption method: none$/m);
    assert.match(shown.stdout, /^file encryption method: AESv3$/m);
    assert.is(qpdf(['--check', `--password=${PASSWORD}`, path]).status, 0, name);
    // qpdf asks for the password all the same: what the fix is about.
    assert.is(qpdf(['--requires-password', path]).status, 0, name);
    assert.match(pdftotext(path), PAGE_TEXT, name);
  }
});

test('the generated files: the password recovers the attachment', () => {
  // Through qpdf's own key derivation (R6): the key it finds from the password decrypts the stored bytes.
  const key = /^Encryption key = ([0-9a-f]{64})$/m.exec(qpdf(['--show-encryption-key', '--show-encryption', `--password=${PASSWORD}`, files.eff]).stdout)?.[1];
  assert.ok(key);
  const stored = qpdfBytes(['--show-object=7', '--raw-stream-data', `--password=${PASSWORD}`, files.eff]);
  // qpdf 11.3 does not apply /EFF to a stream without its own crypt filter, so the bytes come out as stored.
  const aes = createDecipheriv('aes-256-cbc', Buffer.from(key, 'hex'), stored.subarray(0, 16));
  assert.equal(Buffer.concat([aes.update(stored.subarray(16)), aes.final()]), ATTACHMENT);
  for (const name of ['crypt', 'xrefStream']) {
    const plain = join(dir, `${name}-decrypted.pdf`);
    assert.is(qpdf([`--password=${PASSWORD}`, '--decrypt', files[name], plain]).status, 0);
    assert.equal(qpdfBytes(['--show-attachment=attachment.txt', plain]), ATTACHMENT, name);
  }
});

test('encryptionOf: only a file that needs a password to open is needs-password', async () => {
  const ctx = { cwd: dir };
  for (const path of Object.values(files)) assert.is(await encryptionOf(path, ctx), 'attachments', path);
  assert.is(await encryptionOf(NEEDS_PASSWORD, ctx), 'needs-password');
  assert.is(await encryptionOf(corpus('encrypted/rc4-40-user-view-owner-master.pdf'), ctx), 'needs-password');
  // Embedded files encrypted with the rest of the file: the password opens the document too.
  assert.is(await encryptionOf(corpus('encrypted/aes-256-user-view-attachments-cleartext-metadata.pdf'), ctx), 'needs-password');
  // An empty user password: encrypted, opens without one (qpdf exit 3).
  assert.is(await encryptionOf(corpus('encrypted/aes-256-owner-only-acrobat.pdf'), ctx), 'open');
  assert.is(await encryptionOf(corpus('encrypted/rc4-128-owner-master-no-user-password.pdf'), ctx), 'open');
  assert.is(await encryptionOf(corpus('pdf/text-minimal-pdflatex.pdf'), ctx), 'none');
});

test('readableWithoutPassword: a job-local copy qpdf, MuPDF and Poppler open without a password; the attachment keeps its bytes', async () => {
  const ctx = { cwd: join(dir, 'job') };
  execFileSync('mkdir', ['-p', ctx.cwd]);
  for (const [name, path] of Object.entries(files)) {
    const before = readFileSync(path);
    const readable = await readableWithoutPassword(path, ctx);
    assert.ok(readable, name);
    assert.is(dirname(readable.path), ctx.cwd);
    assert.is(readable.warning, ENCRYPTED_ATTACHMENTS_WARNING);
    assert.equal(readFileSync(path), before, `${name}: the input is left as it is`);
    const check = qpdf(['--check', readable.path]);
    assert.is(check.status, 0, `${name}: ${check.stderr}`);
    assert.match(check.stdout, /File is not encrypted/);
    assert.match(execFileSync('mutool', ['draw', '-F', 'txt', '-o', '-', readable.path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }), PAGE_TEXT);
    assert.match(pdftotext(readable.path), PAGE_TEXT);
    // Every byte in place but the /Encrypt entry, now spaces: the xref's offsets hold, the attachment is untouched.
    const copy = readFileSync(readable.path);
    assert.is(copy.length, before.length);
    const changed = [...copy.keys()].filter((i) => copy[i] !== before[i]);
    assert.is(before.toString('latin1', changed[0], changed[changed.length - 1] + 1), '/Encrypt 8 0 R');
    assert.ok(changed.every((i) => copy[i] === 0x20));
  }
  assert.is(await readableWithoutPassword(NEEDS_PASSWORD, ctx), null);
  assert.is(await readableWithoutPassword(corpus('encrypted/aes-256-owner-only-acrobat.pdf'), ctx), null);
});

test('withoutEncryption: a "/Encrypt" outside a trailer or cross-reference stream stays; a hostile trailer costs no stack', () => {
  const pdf = readFileSync(files.eff);
  // The encryption dictionary itself (object 8) keeps its bytes; only the trailer's entry goes.
  const copy = withoutEncryption(pdf);
  assert.ok(copy.includes('/Filter /Standard /V 5 /R 6'));
  assert.not.ok(copy.includes('/Encrypt 8 0 R'));
  const deep = Buffer.from(`%PDF-1.7\ntrailer\n<< /Size 3 /Encrypt ${'['.repeat(100_000)} >>\n`, 'latin1');
  assert.equal(withoutEncryption(deep), deep);
});

test('a file that needs a password to open is still refused: 401, and /pdf-info says it needs one', async () => {
  await expectError(await t.form('/png', { file: { file: NEEDS_PASSWORD }, pages: '1', resolution: '36' }), 401, /password protected/);
  await expectError(await t.form('/extracted-text', { file: { file: NEEDS_PASSWORD } }), 401, /password protected/);
  const info = await expectOk(await t.form('/pdf-info', { file: { file: NEEDS_PASSWORD }, queries: 'requires_password_to_open,page_count' }));
  assert.is(info.requires_password_to_open, true);
});

test('changing the security of a file whose attachments alone are encrypted needs their password, and says so', async () => {
  await expectError(
    await t.form('/decrypted-pdf', { file: { file: files.crypt } }),
    401,
    /password protected.*embedded files \(attachments\) are encrypted.*current_open_password/,
  );
  const body = await expectOk(await t.form('/decrypted-pdf', { file: { file: files.crypt }, current_open_password: PASSWORD }));
  const out = await t.download(body.outputUrl as string);
  assert.match(qpdf(['--show-encryption', out]).stdout, /File is not encrypted/);
  assert.equal(qpdfBytes(['--show-attachment=attachment.txt', out]), ATTACHMENT);
  await expectError(await t.form('/decrypted-pdf', { file: { file: files.crypt }, current_open_password: 'not-it' }), 401, /does not open/);
});

test('a file whose attachments alone are encrypted is read without a password; a new PDF from it is refused, the attachments being lost', async () => {
  const text = await expectOk(await t.form('/extracted-text', { file: { file: files.eff } }));
  assert.is(text.fullText, PAGE_TEXT);
  assert.match(text.warning, /Only the embedded files \(attachments\) of this PDF are encrypted/);
  await expectOk(await t.form('/png', { file: { file: files.xrefStream }, resolution: '36' }));
  const info = await expectOk(await t.form('/pdf-info', { file: { file: files.eff }, queries: 'requires_password_to_open,page_count,contains_embedded_file' }));
  assert.equal([info.requires_password_to_open, info.page_count, info.allQueriesProcessed], [false, 1, true]);
  assert.match(info.warning, /attachments/);
  await expectError(
    await t.form('/compressed-pdf', { file: { file: files.eff }, compression_level: 'low' }),
    401,
    /embedded files \(attachments\) are encrypted.*\/decrypted-pdf/,
  );
});

test.run();
