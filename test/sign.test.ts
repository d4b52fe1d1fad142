import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, type FormValue, pdfText, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
let keys: string;
const PLAIN = corpus('pdf/text-minimal-pdflatex.pdf');
const ROTATED = corpus('pdf/rotation-2-pages.pdf');
const PASS = 'correct horse battery';
const k = (name: string) => join(keys, name);

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: keys, stdio: ['ignore', 'pipe', 'pipe'] });

test.before(async () => {
  // A throw-away CA and signer, made for this run: no private key is ever committed.
  keys = mkdtempSync(join(tmpdir(), 'quire-sign-keys-'));
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Quire Test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'signer.key', '-out', 'signer.csr', '-subj', '/C=DE/O=Quire Tests/CN=Quire Test Signer');
  openssl('x509', '-req', '-in', 'signer.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'signer.pem', '-days', '2');
  openssl('pkcs12', '-export', '-inkey', 'signer.key', '-in', 'signer.pem', '-certfile', 'ca.pem', '-out', 'signer.p12', '-passout', `pass:${PASS}`);
  openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'other.key');
  // An ECDSA P-256 signer, as modern PKIs issue, with its key in SEC1 DER.
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ec.key', '-out', 'ec.csr', '-subj', '/CN=Quire EC Signer');
  openssl('x509', '-req', '-in', 'ec.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'ec.pem', '-days', '2');
  openssl('ec', '-in', 'ec.key', '-outform', 'DER', '-out', 'ec.der');
  openssl('pkcs12', '-export', '-inkey', 'ec.key', '-in', 'ec.pem', '-certfile', 'ca.pem', '-out', 'ec.p12', '-passout', `pass:${PASS}`);
  writeFileSync(k('pass.txt'), `${PASS}\n`);
  writeFileSync(k('wrong.txt'), 'not the passphrase\n');
  await sharp({ create: { width: 60, height: 30, channels: 3, background: { r: 230, g: 0, b: 0 } } })
    .png()
    .toFile(k('logo.png'));
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(keys, { recursive: true, force: true });
});

const pfx = (pass = 'pass.txt'): Record<string, FormValue> => ({ pfx_credential_file: { file: k('signer.p12') }, pfx_passphrase_file: { file: k(pass) } });
const pem = (key = 'signer.key'): Record<string, FormValue> => ({ certificate_file: { file: k('signer.pem') }, private_key_file: { file: k(key) } });
const config = (c: unknown) => ({ signature_configuration: JSON.stringify(c) });

async function sign(fields: Record<string, FormValue | FormValue[]>): Promise<{ path: string; body: Record<string, any> }> {
  const res = await t.form('/signed-pdf', fields);
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  return { path: await t.download(body.outputUrl), body };
}
async function fails(fields: Record<string, FormValue | FormValue[]>, status: number, pattern: RegExp) {
  const res = await t.form('/signed-pdf', fields);
  const body = (await res.json()) as { error: string };
  assert.is(res.status, status, JSON.stringify(body));
  assert.match(body.error, pattern);
}

interface Sig {
  field: string;
  cn: string;
  type: string;
  valid: boolean;
  total: boolean;
}
/** Poppler's pdfsig, an independent verifier: one entry per signature. */
function signatures(path: string): Sig[] {
  const out = execFileSync('pdfsig', [path], { encoding: 'utf8' });
  return out
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .map((s) => ({
      field: /Signature Field Name: (.*)/.exec(s)?.[1] ?? '',
      cn: /Signer Certificate Common Name: (.*)/.exec(s)?.[1] ?? '',
      type: /Signature Type: (.*)/.exec(s)?.[1] ?? '',
      valid: /Signature Validation: Signature is Valid\./.test(s),
      total: /Total document signed/.test(s),
    }));
}
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const startsWith = (out: string, original: string) => readFileSync(out).subarray(0, readFileSync(original).length).equals(readFileSync(original));

test('PFX, invisible: pdfsig finds one valid signature by the signer over the whole file; the original bytes are untouched', async () => {
  const { path, body } = await sign({ file: { file: PLAIN }, ...pfx(), ...config({ type: 'new' }) });
  const sigs = signatures(path);
  assert.is(sigs.length, 1);
  assert.equal(sigs[0], { field: 'Signature1', cn: 'Quire Test Signer', type: 'adbe.pkcs7.detached', valid: true, total: true });
  assert.ok(startsWith(path, PLAIN), 'incremental update: the input is a prefix of the output');
  assert.is(squash(pdfText(path)), squash(pdfText(PLAIN)));
  assert.is(body.inputId.length, 3, 'inputId lists the PDF, the credential and the passphrase');
  const info = await (await t.request(`/resource/${body.outputId}?format=info`)).json();
  assert.is(info.name, 'text-minimal-pdflatex_service_signed_pdf.pdf');
});

test('PEM, visible with display options and a logo: appearance text and logo on the page, field named, signature valid', async () => {
  const cfg = {
    type: 'new',
    name: 'Approval',
    logo_opacity: '0.8',
    location: { bottom_left: { x: '300', y: '40' }, top_right: { x: '560', y: '130' }, page: '1' },
    display: {
      include_distinguished_name: 'true',
      include_datetime: 'true',
      reason: 'Approved for release',
      location: 'Berlin',
      contact: 'qa@example.com',
      name: 'Q. Tester',
    },
  };
  const { path, body } = await sign({ file: { file: PLAIN }, ...pem(), logo_file: { file: k('logo.png') }, ...config(cfg) });
  assert.equal(
    signatures(path).map((s) => [s.field, s.cn, s.valid, s.total]),
    [['Approval', 'Quire Test Signer', true, true]],
  );
  const text = squash(pdfText(path));
  for (const part of [
    'Digitally signed by Q. Tester',
    'CN=Quire Test Signer',
    'Reason: Approved for release',
    'Location: Berlin',
    'Contact: qa@example.com',
    'Date: 20',
  ]) {
    assert.ok(text.includes(part), `${part} in ${text}`);
  }
  assert.ok(text.includes(squash(pdfText(PLAIN)).slice(0, 40)), 'the page text is still there');
  assert.is(body.inputId.length, 4, 'PDF, certificate, key, logo');
  // The logo: red pixels inside the box (page rendered at 72 dpi, so 1 px = 1 pt; y measured from the top).
  const png = join(keys, 'page');
  execFileSync('pdftoppm', ['-png', '-r', '72', '-f', '1', '-l', '1', '-singlefile', path, png]);
  const meta = await sharp(`${png}.png`).metadata();
  const box = await sharp(`${png}.png`)
    .extract({ left: 310, top: meta.height! - 125, width: 240, height: 80 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const outside = await sharp(`${png}.png`)
    .extract({ left: 310, top: meta.height! - 30, width: 240, height: 20 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const reds = (b: { data: Buffer; info: { channels: number } }) => {
    let n = 0;
    for (let i = 0; i < b.data.length; i += b.info.channels) if (b.data[i] > 200 && b.data[i + 1] < 120 && b.data[i + 2] < 120) n++;
    return n;
  };
  assert.ok(reds(box) > 500, `logo pixels in the box: ${reds(box)}`);
  assert.is(reds(outside), 0);
});

test('appearance text beyond Latin-1 (Cyrillic, CJK) is drawn with embedded fonts and stays extractable', async () => {
  const cfg = {
    type: 'new',
    location: { bottom_left: { x: 40, y: 40 }, top_right: { x: 400, y: 120 }, page: 1 },
    display: { name: 'Jürgen Мюллер 山田太郎', reason: 'Согласовано', include_datetime: false },
  };
  const { path } = await sign({ file: { file: PLAIN }, ...pfx(), ...config(cfg) });
  assert.equal(
    signatures(path).map((s) => s.valid),
    [true],
  );
  const text = squash(pdfText(path));
  for (const part of ['Digitally signed by Jürgen Мюллер 山田太郎', 'Reason: Согласовано']) assert.ok(text.includes(part), `${part} in ${text}`);
  const fonts = tool('pdffonts', [path]);
  assert.match(fonts, /Liberation\S*\s.*yes/, 'Cyrillic from an embedded Liberation subset');
  assert.match(fonts, /NotoSansCJK\S*\s.*yes/, 'CJK from an embedded Noto CJK subset');
});

test('ECDSA credentials (PEM with a SEC1 DER key, and PKCS#12 with a Windows line end in the passphrase file) sign validly', async () => {
  const { path } = await sign({
    file: { file: PLAIN },
    certificate_file: { file: k('ec.pem') },
    private_key_file: { file: k('ec.der') },
    ...config({ type: 'new' }),
  });
  assert.equal(
    signatures(path).map((s) => [s.cn, s.valid, s.total]),
    [['Quire EC Signer', true, true]],
  );
  writeFileSync(k('pass-crlf.txt'), `${PASS}\r\n`);
  const { path: p12 } = await sign({
    file: { file: PLAIN },
    pfx_credential_file: { file: k('ec.p12') },
    pfx_passphrase_file: { file: k('pass-crlf.txt') },
    ...config({ type: 'new' }),
  });
  assert.equal(
    signatures(p12).map((s) => [s.cn, s.valid]),
    [['Quire EC Signer', true]],
  );
});

test('a PKCS#12 with a passphrase of 1,023 bytes, the longest OpenSSL reads from a file, signs validly', async () => {
  writeFileSync(k('long.txt'), `${'x'.repeat(1023)}\n`);
  openssl('pkcs12', '-export', '-inkey', 'signer.key', '-in', 'signer.pem', '-out', 'long.p12', '-passout', 'file:long.txt');
  const { path } = await sign({
    file: { file: PLAIN },
    pfx_credential_file: { file: k('long.p12') },
    pfx_passphrase_file: { file: k('long.txt') },
    ...config({ type: 'new' }),
  });
  assert.equal(
    signatures(path).map((s) => [s.cn, s.valid]),
    [['Quire Test Signer', true]],
  );
});

test('an already signed PDF: the new signature is added and both earlier ones stay valid', async () => {
  const input = corpus('signing/pyhanko-signed-twice-pades.pdf');
  const { path } = await sign({
    file: { file: input },
    ...pfx(),
    ...config({ type: 'new', location: { bottom_left: { x: 10, y: 10 }, top_right: { x: 150, y: 60 }, page: 1 } }),
  });
  const sigs = signatures(path);
  assert.is(sigs.length, 3);
  assert.ok(
    sigs.every((s) => s.valid),
    JSON.stringify(sigs),
  );
  assert.equal(
    sigs.map((s) => s.cn),
    ['Alice', 'Alice', 'Quire Test Signer'],
  );
  assert.ok(sigs[2].total);
  assert.ok(startsWith(path, input));
});

test('a /Rotate 90 page: valid, and the appearance reads upright on the displayed page', async () => {
  const { path } = await sign({
    file: { file: ROTATED },
    ...pem(),
    ...config({ type: 'new', location: { bottom_left: { x: 400, y: 100 }, top_right: { x: 500, y: 400 }, page: 2 } }),
  });
  assert.ok(signatures(path)[0].valid);
  const page2 = squash(tool('pdftotext', ['-f', '2', '-l', '2', path, '-']));
  assert.match(page2, /This is my second page/);
  assert.match(page2, /Digitally signed by Quire Test Signer/);
  // pdftotext lays words out as displayed: an upright word is wider than tall.
  const bbox = tool('pdftotext', ['-bbox', '-f', '2', '-l', '2', path, '-']);
  const m = /xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Digitally</.exec(bbox)!;
  assert.ok(m, 'word found');
  const [x0, y0, x1, y1] = m.slice(1).map(Number);
  assert.ok(x1 - x0 > y1 - y0, `Digitally is ${x1 - x0} wide, ${y1 - y0} tall`);
});

test('a legacy PKCS#12 (RC2-40, pyHanko) and a JSON body with ids and a real JSON configuration', async () => {
  const up = async (path: string) => ((await (await t.form('/upload', { file: { file: path } })).json()) as any).files[0].id as string;
  const passFile = join(keys, 'exportsecret.txt');
  writeFileSync(passFile, 'exportsecret');
  const [id, cred, pass] = [await up(PLAIN), await up(corpus('signing/pyhanko-selfsigned-password-exportsecret.pfx')), await up(passFile)];
  const res = await t.json('/signed-pdf', {
    id,
    pfx_credential_id: cred,
    pfx_passphrase_id: pass,
    signature_configuration: {
      type: 'new',
      location: { bottom_left: { x: 72, y: 72 }, top_right: { x: 272, y: 132 }, page: 1 },
      display: { include_datetime: false },
    },
    output: 'signed-by-lord',
  });
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  assert.equal(body.inputId, [id, cred, pass]);
  const path = await t.download(body.outputUrl);
  assert.equal(
    signatures(path).map((s) => [s.cn, s.valid]),
    [['Lord Testerino', true]],
  );
  const text = squash(pdfText(path));
  assert.match(text, /Digitally signed by Lord Testerino/);
  assert.not.match(text, /Date:/);
});

test('bad credentials and configurations are 400s that say what is wrong', async () => {
  const file = { file: { file: PLAIN } };
  await fails({ ...file, ...pfx('wrong.txt'), ...config({ type: 'new' }) }, 400, /passphrase/);
  await fails({ ...file, ...pem('other.key'), ...config({ type: 'new' }) }, 400, /does not match the private key/);
  await fails({ ...file, certificate_file: { file: PLAIN }, private_key_file: { file: k('signer.key') }, ...config({ type: 'new' }) }, 400, /certificate/);
  await fails({ ...file, ...config({ type: 'new' }) }, 400, /credentials are required/);
  await fails({ ...file, pfx_credential_file: { file: k('signer.p12') }, ...config({ type: 'new' }) }, 400, /pfx_passphrase_file/);
  await fails({ ...file, ...pfx(), signature_configuration: '{"type": "new",' }, 400, /JSON data provided is not properly formatted.*signature_configuration/);
  await fails({ ...file, ...pfx() }, 400, /signature_configuration is required/);
  await fails({ ...file, ...pfx(), ...config({ name: 'x' }) }, 400, /signature_configuration\.type/);
  await fails({ ...file, ...pfx(), ...config({ type: 'new', logo_opacity: '1.5' }) }, 400, /opacity/);
  const loc = (page: unknown, tr = { x: 200, y: 200 }) => config({ type: 'new', location: { bottom_left: { x: 100, y: 100 }, top_right: tr, page } });
  await fails({ ...file, ...pfx(), ...loc('2') }, 400, /page/);
  await fails({ ...file, ...pfx(), ...loc('0') }, 400, /page/);
  await fails({ ...file, ...pfx(), ...loc(1, { x: 50, y: 50 }) }, 400, /location/);
  await fails(
    { ...file, ...pfx(), ...config({ type: 'new', location: { bottom_left: { x: 5000, y: 5000 }, top_right: { x: 5100, y: 5100 }, page: 1 } }) },
    400,
    /outside page 1/,
  );
  await fails({ ...file, ...pfx(), logo_file: { file: k('pass.txt') }, ...loc(1) }, 400, /logo/);
});

test('inputs that cannot be signed: encrypted (401), certified with no changes allowed (400), not a PDF (400)', async () => {
  await fails({ file: { file: corpus('encrypted/rc4-128-user-view-owner-master.pdf') }, ...pfx(), ...config({ type: 'new' }) }, 401, /password protected/);
  await fails(
    { file: { file: corpus('signing/pyhanko-certified-signature.pdf') }, ...pfx(), ...config({ type: 'new' }) },
    400,
    /certified with no changes allowed/,
  );
  await fails({ file: { file: k('pass.txt'), name: 'x.pdf' }, ...pfx(), ...config({ type: 'new' }) }, 400, /not valid input/);
});

test.run();
