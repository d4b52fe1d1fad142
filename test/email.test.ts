import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { convertToPdf, corpus, type FormValue, fontsEmbedded, pdfImages, pdfPages, pdfText, startApp, type TestApp, tool } from './helpers.js';

const test = suite('email');
let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-email-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const convert = (fields: Record<string, FormValue | FormValue[]>, status = 200) => convertToPdf(t, fields, status);
const flat = (s: string) => s.replace(/\s+/g, ' ');
const images = (p: string) => pdfImages(p).filter((i) => i.type === 'image');

test('eml: decoded headers, HTML body with its cid: images, attachments listed', async () => {
  const { path } = await convert({ file: { file: corpus('email/nodemailer-html-inline-images-attachments.eml') } });
  const text = flat(pdfText(path));
  for (const s of [
    'From: "Andris Kreata" <andris@kreata.ee>',
    'To: "Andris Reinman" <andris+123@kreata.ee>, andris.reinman@gmail.com',
    'Date: Thu, 13 Oct 2016 11:39:48 +0000',
    'Subject: Nodemailer is unicode friendly ✔ (1476358788189)', // RFC 2047 encoded in the file
    'Hello to myself',
    "Here's a nyan cat for you as an embedded attachment",
    'Attachments (3)',
    'notes.txt (text/plain, 28 B)',
    'image.png (image/png, 126 B; shown in the message)',
    'nyan cat ✔.gif (image/gif, 28.7 KB; shown in the message)',
  ])
    assert.ok(text.includes(s), `${s} in ${text}`);
  // Both cid: images are drawn in the body (16x16 PNG, 500x350 GIF), not appended as pages.
  assert.is(pdfPages(path), 1);
  assert.equal(
    images(path)
      .map((i) => `${i.width}x${i.height}`)
      .sort(),
    ['16x16', '500x350'],
  );
  assert.ok(fontsEmbedded(path).every((e) => e === 'yes'));
});

test('eml without To/Subject: nested multipart bodies; msg: Outlook headers, body and attachments', async () => {
  const nested = flat(pdfText((await convert({ file: { file: corpus('email/nested-multipart.eml') } })).path));
  assert.ok(nested.includes('From: u@example.com') && !nested.includes('Subject:'), nested);
  for (const s of ['Dear Sir', 'Good evening.', 'The footer']) assert.ok(nested.includes(s), s);
  const { path } = await convert({ file: { file: corpus('email/poi-outlook-two-attachments.msg') } });
  const text = flat(pdfText(path));
  for (const s of [
    'Subject: test pièce jointe 1',
    'To: nicolas1.23456@free.fr',
    'contenu',
    'Attachments (2)',
    'test-unicode.doc (application/msword, 23.5 KB)',
    'pj1.txt (text/plain, 89 B)',
  ])
    assert.ok(text.includes(s), `${s} in ${text}`);
  assert.is(pdfPages(path), 1);
  await convert({ file: { bytes: Buffer.from('not an outlook file at all'), name: 'junk.msg' } }, 400);
});

/** A message built here: plain text body, an RFC 2047 subject, and the given attachments. */
function message(parts: { name: string; type: string; bytes: Buffer }[], body = 'Plain <b>text</b> & more'): Buffer {
  const b = 'quire-boundary';
  const lines = [
    'From: =?UTF-8?B?SsO8cmdlbiBNw7xsbGVy?= <j@example.com>',
    'To: a@example.com',
    'Cc: c@example.com',
    'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_M=C3=BCnchen?=',
    'Date: Mon, 1 Jan 2024 10:00:00 +0100',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${b}"`,
    '',
    `--${b}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
  ];
  for (const p of parts) {
    lines.push(
      `--${b}`,
      `Content-Type: ${p.type}; name="${p.name}"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="${p.name}"`,
      '',
      p.bytes.toString('base64').replace(/.{76}/g, '$&\r\n'),
    );
  }
  lines.push(`--${b}--`, '');
  return Buffer.from(lines.join('\r\n'));
}

test('image and PDF attachments are appended as pages; an encrypted PDF is only listed', async () => {
  const jpeg = readFileSync(corpus('images/hopper.jpg'));
  const eml = message([
    { name: 'photo.jpg', type: 'image/jpeg', bytes: jpeg },
    { name: 'paper.pdf', type: 'application/pdf', bytes: readFileSync(corpus('pdf/text-4-pages-pdflatex.pdf')) },
    { name: 'locked.pdf', type: 'application/pdf', bytes: readFileSync(corpus('encrypted/aes-256-user-view-owner-master.pdf')) },
  ]);
  const { path } = await convert({ file: { bytes: eml, name: 'mail.eml' } });
  assert.is(pdfPages(path), 1 + 1 + 4);
  const first = flat(tool('pdftotext', ['-f', '1', '-l', '1', path, '-']));
  for (const s of [
    'From: "Jürgen Müller" <j@example.com>',
    'Cc: c@example.com',
    'Subject: Grüße aus München',
    'Plain <b>text</b> & more',
    'photo.jpg (image/jpeg, 6.3 KB; appended after the message)',
    'paper.pdf (application/pdf, 24.0 KB; appended after the message)',
    'locked.pdf (application/pdf, 15.3 KB; not appended: password protected)',
  ])
    assert.ok(first.includes(s), `${s} in ${first}`);
  // Page 2 is the photo, its JPEG embedded as it is; pages 3-6 the attached PDF.
  const list = tool('pdfimages', ['-list', '-f', '2', '-l', '2', path]);
  assert.match(list, /128\s+128\s+rgb\s+3\s+8\s+jpeg/);
  assert.match(tool('pdftotext', ['-f', '3', '-l', '3', path, '-']), /Hello, here is some text without a meaning/);
});

test('attachment names and types never become paths', async () => {
  const tag = `quire-escape-${process.pid}-${Date.now()}`;
  const png = readFileSync(corpus('images/baiona-rgba-alpha.png'));
  const eml = message([
    { name: `../../../../../../tmp/${tag}-a.png`, type: 'image/png', bytes: png },
    { name: 'noext', type: `image/png/../../../../../../tmp/${tag}-b`, bytes: png },
  ]);
  const { path } = await convert({ file: { bytes: eml, name: 'mail.eml' } });
  assert.is(pdfPages(path), 3, 'both images appended');
  for (const f of [`/tmp/${tag}-a.png`, `/tmp/${tag}-b`, `/tmp/${tag}-b.png`]) assert.not.ok(existsSync(f), f);
});

test('e-mail loads nothing remote and runs no script, even from an allowed host', async () => {
  let hits = 0;
  const server = http.createServer((_q, r) => (hits++, r.end('x')));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const allowed = await startApp({ URL_ALLOW: '127.0.0.1' });
  try {
    const html = `<html><head><link rel="stylesheet" href="http://127.0.0.1:${port}/s.css"></head><body><p>Tracked mail</p><img src="http://127.0.0.1:${port}/pixel.gif"><script>document.write('SCRIPT RAN')</script></body></html>`;
    const eml = Buffer.from(`From: a@example.com\r\nSubject: pixel\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n`);
    const res = await allowed.form('/pdf', { file: { bytes: eml, name: 'pixel.eml' } });
    const body = (await res.json()) as Record<string, unknown>;
    assert.is(res.status, 200, JSON.stringify(body));
    const text = pdfText(await allowed.download(String(body.outputUrl)));
    assert.match(text, /Tracked mail/);
    assert.not.match(text, /SCRIPT RAN/);
    assert.is(hits, 0);
  } finally {
    await allowed.close();
    server.close();
  }
});

test.run();
