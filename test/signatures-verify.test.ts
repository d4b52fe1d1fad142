import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, type FormValue, startApp, type TestApp } from './helpers.js';

/**
 * /pdf-signatures against Poppler's pdfsig, an independent verifier: on every signed file of the corpus, on Quire's
 * own /signed-pdf outputs (signed once, twice, then changed after signing with MuPDF: an annotation, a form fill),
 * and on a copy with one signed byte changed. They must agree on integrity and on whether the signature covers the
 * whole document. The chain is checked against a trust folder (SIGNATURE_TRUST_DIR) holding this run's CA.
 */

let t: TestApp;
let trustedApp: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-verify-'));
const w = (name: string) => join(work, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
const PASS = 'verify pass';

test.before(async () => {
  // A throw-away CA and signer, made for this run; a second CA that trusts nobody here.
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Quire Verify CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'signer.key', '-out', 'signer.csr', '-subj', '/O=Quire Tests/CN=Quire Verify Signer');
  openssl('x509', '-req', '-in', 'signer.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'signer.pem', '-days', '2');
  openssl('pkcs12', '-export', '-inkey', 'signer.key', '-in', 'signer.pem', '-certfile', 'ca.pem', '-out', 'signer.p12', '-passout', `pass:${PASS}`);
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=Unrelated CA');
  writeFileSync(w('pass.txt'), `${PASS}\n`);
  mkdirSync(w('trusted'));
  copyFileSync(w('ca.pem'), w('trusted/ca.pem'));
  mkdirSync(w('other'));
  copyFileSync(w('other.pem'), w('other/other.pem'));
  t = await startApp();
  trustedApp = await startApp({ SIGNATURE_TRUST_DIR: w('trusted') });
});
test.after(async () => {
  await t.close();
  await trustedApp.close();
  rmSync(work, { recursive: true, force: true });
});

interface Popplers {
  field: string;
  cn: string;
  valid: boolean;
  total: boolean;
}
/** pdfsig's verdicts, one per signed field. */
function pdfsig(path: string): Popplers[] {
  let out: string;
  try {
    out = execFileSync('pdfsig', [path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? ''); // pdfsig exits 1 when a signature does not verify
  }
  return out
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .filter((s) => !/not signed/.test(s))
    .map((s) => ({
      field: /Signature Field Name: (.*)/.exec(s)?.[1] ?? '',
      cn: /Signer Certificate Common Name: (.*)/.exec(s)?.[1] ?? '',
      valid: /Signature Validation: Signature is Valid\./.test(s),
      total: /Total document signed/.test(s),
    }));
}

async function verify(path: string, app = t): Promise<Record<string, any>> {
  return expectOk(await app.form('/pdf-signatures', { file: { file: path } }));
}

/** Ours and pdfsig's, field by field: the same fields, signers, integrity and whole-document answers. */
async function agree(path: string, app = t): Promise<Record<string, any>[]> {
  const ours = (await verify(path, app)).signatures as Record<string, any>[];
  const theirs = pdfsig(path);
  assert.ok(theirs.length > 0, `pdfsig finds signatures in ${path}`);
  assert.equal(ours.map((s) => s.field).sort(), theirs.map((s) => s.field).sort(), 'fields');
  for (const p of theirs) {
    const s = ours.find((o) => o.field === p.field)!;
    assert.is(s.integrity.intact, p.valid, `${path} ${p.field}: intact ${s.integrity.intact} (${s.integrity.problem}), pdfsig valid ${p.valid}`);
    assert.is(s.coversWholeDocument, p.total, `${path} ${p.field}: whole document`);
    assert.is(s.modifiedAfterSigning, !p.total, `${path} ${p.field}: modified after signing`);
    assert.is(s.signer.commonName, p.cn, `${path} ${p.field}: signer`);
  }
  return ours;
}

const SIGNED = [
  'signing/pyhanko-certified-signature.pdf',
  'signing/pyhanko-signed-twice-pades.pdf',
  'signing/pyhanko-two-fields-signed-twice.pdf',
  'signing/qpdf-digitally-signed.pdf',
  'pdf/federal-register-15-pages.pdf',
];

for (const rel of SIGNED) {
  test(`agrees with pdfsig on ${rel}`, async () => {
    const ours = await agree(corpus(rel));
    for (const s of ours) {
      assert.ok(s.integrity.digestMatches && s.integrity.signatureVerifies, rel);
      assert.match(s.signingTime, /^20\d\d-/);
      assert.is(s.chain.trusted, false);
      assert.match(s.chain.problem, /SIGNATURE_TRUST_DIR/);
    }
  });
}

test('the corpus facts: certification, later revisions and what they changed, timestamps, embedded CRLs', async () => {
  const certified = (await verify(corpus('signing/pyhanko-certified-signature.pdf'))).signatures[0];
  assert.is(certified.type, 'certification');
  assert.equal(certified.certification, { permission: 1, changesAllowed: true });
  const twice = (await verify(corpus('signing/pyhanko-signed-twice-pades.pdf'))).signatures as Record<string, any>[];
  const first = twice.find((s) => s.field === 'Sig1')!;
  assert.is(first.subFilter, 'ETSI.CAdES.detached');
  assert.is(first.digestAlgorithm, 'sha384');
  assert.is(first.revisionsAfter, 1);
  // The later revision is the second signature (its field, widget, appearance): no annotation, form fill or other change.
  assert.ok(first.changesAfter.some((c: { kind: string }) => c.kind === 'signature'));
  assert.not.ok(
    first.changesAfter.some((c: { kind: string }) => ['annotation', 'form_fill', 'other'].includes(c.kind)),
    JSON.stringify(first.changesAfter),
  );
  // pyHanko's visible signatures carry RFC 3161 timestamps from GlobalSign's TSA, each stamping its signature.
  for (const s of (await verify(corpus('signing/pyhanko-two-fields-signed-twice.pdf'))).signatures as Record<string, any>[]) {
    assert.ok(s.timestamp, s.field);
    assert.ok(s.timestamp.imprintMatches && s.timestamp.signatureVerifies, JSON.stringify(s.timestamp));
    assert.match(s.timestamp.authority.commonName, /TSA/);
  }
  // The GPO signature embeds its CRLs (Adobe's revocation archival attribute): validation data, LTV.
  const gpo = (await verify(corpus('pdf/federal-register-15-pages.pdf'))).signatures[0];
  assert.ok(gpo.revocation.crls > 0);
  assert.is(gpo.ltv, true);
  assert.is(certified.ltv, false);
});

test('no signature: an empty list; empty signature fields are named', async () => {
  const plain = await verify(corpus('pdf/text-minimal-pdflatex.pdf'));
  assert.equal(plain.signatures, []);
  const empty = await verify(corpus('signing/pyhanko-two-empty-signature-fields-unsigned.pdf'));
  assert.equal(empty.signatures, []);
  assert.equal(empty.unsignedFields, ['Sig1', 'Sig2']);
});

const pfx: Record<string, FormValue> = { pfx_credential_file: { file: w('signer.p12') }, pfx_passphrase_file: { file: w('pass.txt') } };
async function sign(path: string, name: string): Promise<string> {
  const body = await expectOk(await t.form('/signed-pdf', { file: { file: path }, ...pfx, signature_configuration: JSON.stringify({ type: 'new', name }) }));
  const out = w(`${name}.pdf`);
  copyFileSync(await t.download(body.outputUrl), out);
  return out;
}

/** MuPDF's incremental save of a change, made by a script (not Quire's code). */
function mutoolIncremental(input: string, output: string, body: string) {
  const script = w(`edit-${Math.random().toString(36).slice(2)}.js`);
  writeFileSync(script, `var doc = new PDFDocument(scriptArgs[0]);\nvar page = doc.loadPage(0);\n${body}\ndoc.save(scriptArgs[1], "incremental");\n`);
  execFileSync('mutool', ['run', script, input, output], { stdio: ['ignore', 'pipe', 'pipe'] });
}

test("Quire's own signatures: once, twice, then changed after signing (an annotation, a form fill) and tampered with", async () => {
  const once = await sign(corpus('forms/simple-form-2-fields.pdf'), 'First');
  const [s1] = await agree(once);
  assert.is(s1.signer.commonName, 'Quire Verify Signer');
  assert.is(s1.subFilter, 'adbe.pkcs7.detached');
  assert.is(s1.coversWholeDocument, true);
  assert.equal(s1.changesAfter, []);

  const twice = await sign(once, 'Second');
  const both = await agree(twice);
  const earlier = both.find((s) => s.field === 'First')!;
  assert.equal(
    earlier.changesAfter.map((c: { kind: string }) => c.kind),
    ['signature'],
  );

  const annotated = w('annotated.pdf');
  mutoolIncremental(
    once,
    annotated,
    'var a = page.createAnnotation("Text");\na.setRect([20, 20, 40, 40]);\na.setContents("added after signing");\na.update();',
  );
  const [a] = await agree(annotated);
  assert.is(a.integrity.intact, true);
  assert.equal(
    a.changesAfter.map((c: { kind: string }) => c.kind),
    ['annotation'],
  );

  const filled = w('filled.pdf');
  mutoolIncremental(
    once,
    filled,
    'var ws = page.getWidgets();\nfor (var i = 0; i < ws.length; i++) if (ws[i].getFieldType() === "text") { ws[i].setTextValue("filled after signing"); ws[i].update(); }',
  );
  const [f] = await agree(filled);
  assert.ok(
    f.changesAfter.some((c: { kind: string }) => c.kind === 'form_fill'),
    JSON.stringify(f.changesAfter),
  );
  assert.not.ok(f.changesAfter.some((c: { kind: string }) => c.kind === 'annotation'));

  // One byte of the signed range changed (in the page content's text): both say the signature no longer holds.
  const bytes = readFileSync(once);
  const at = bytes.indexOf('Field1');
  assert.ok(at > 0);
  bytes[at] = 'G'.charCodeAt(0);
  const tampered = w('tampered.pdf');
  writeFileSync(tampered, bytes);
  const [x] = await agree(tampered);
  assert.is(x.integrity.intact, false);
  assert.is(x.integrity.digestMatches, false);
  assert.match(x.integrity.problem, /changed/);
});

test('the chain: trusted with the CA in SIGNATURE_TRUST_DIR, not with an unrelated one or none', async () => {
  const signed = await sign(corpus('pdf/text-minimal-pdflatex.pdf'), 'Chained');
  const [trusted] = (await verify(signed, trustedApp)).signatures;
  assert.is(trusted.chain.trusted, true, JSON.stringify(trusted.chain));
  assert.is(trusted.chain.problem, null);
  const otherApp = await startApp({ SIGNATURE_TRUST_DIR: w('other') });
  try {
    const [untrusted] = (await verify(signed, otherApp)).signatures;
    assert.is(untrusted.chain.trusted, false);
    assert.match(untrusted.chain.problem, /self-signed certificate in certificate chain|issuer/);
  } finally {
    await otherApp.close();
  }
  // pyHanko's expired test certificate, against a trust folder without its CA: not trusted.
  const [expired] = (await verify(corpus('signing/qpdf-digitally-signed.pdf'), trustedApp)).signatures;
  assert.is(expired.chain.trusted, false);
});

test('bad input: not a PDF 400, password 401, damaged 400 without repair', async () => {
  await expectError(await t.form('/pdf-signatures', { file: { file: corpus('images/hopper.jpg') } }), 400, /not valid input/);
  await expectError(await t.form('/pdf-signatures', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') } }), 401, /password/);
  const res = await t.form('/pdf-signatures', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') } });
  const body = (await res.json()) as { error: string; warning?: string };
  assert.is(res.status, 400, JSON.stringify(body));
});

test('the setting: SIGNATURE_TRUST_DIR must name an existing folder', async () => {
  const { loadConfig } = await import('../app/config.js');
  assert.throws(() => loadConfig({ SIGNATURE_TRUST_DIR: w('missing') }), /SIGNATURE_TRUST_DIR/);
  assert.is(loadConfig({ SIGNATURE_TRUST_DIR: w('trusted') }).signatureTrustDir, w('trusted'));
});

test.run();
