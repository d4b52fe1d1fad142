import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, type FormValue, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const FORM = corpus('forms/acroform-basic-fields-all-types.pdf');
const TWO_EMPTY = corpus('signing/pyhanko-two-empty-signature-fields-unsigned.pdf');
// The corpus' public test credentials (signing/ in MANIFEST.md): a self-signed localhost certificate and its key.
const pem: Record<string, FormValue> = {
  certificate_file: { file: corpus('signing/gotenberg-localhost-selfsigned-cert.pem') },
  private_key_file: { file: corpus('signing/gotenberg-localhost-selfsigned-key.pem') },
};
const config = (c: unknown) => ({ signature_configuration: JSON.stringify(c) });

async function call(fields: Record<string, FormValue | FormValue[]>, status = 200): Promise<Record<string, any>> {
  const res = await t.form('/signed-pdf', fields);
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, status, JSON.stringify(body));
  return body;
}

/** pdfsig (Poppler): field name and whether each signature is intact, i.e. its digest matches. */
function signatures(path: string): { field: string; intact: boolean; total: boolean }[] {
  let out: string;
  try {
    out = execFileSync('pdfsig', [path], { encoding: 'utf8' });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  return out
    .split(/^Signature #\d+:$/m)
    .slice(1)
    .map((s) => ({
      field: /Signature Field Name: (.*)/.exec(s)?.[1] ?? '',
      // A self-signed certificate is not trusted, so poppler says "Certificate issuer isn't Trusted"; the
      // signature itself (digest and CMS) is what "Signature is Valid" reports.
      intact: /Signature Validation: Signature is Valid\./.test(s),
      total: /Total document signed/.test(s),
    }));
}

/** The signature fields as qpdf reads them: name -> whether it holds a value. */
function sigFields(path: string): Record<string, boolean> {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', path]));
  const out: Record<string, boolean> = {};
  for (const f of json.acroform.fields as { fullname: string; fieldtype: string; value: unknown }[])
    if (f.fieldtype === '/Sig') out[f.fullname] = f.value !== null;
  return out;
}

test('existing: the form\'s unsigned "Signature" field is signed in place; one intact signature in that field, in its widget box', async () => {
  assert.equal(sigFields(FORM), { Signature: false });
  const body = await call({ file: { file: FORM }, ...pem, ...config({ type: 'existing', name: 'Signature', display: { name: 'Field Signer' } }) });
  const out = await t.download(body.outputUrl);
  assert.equal(signatures(out), [{ field: 'Signature', intact: true, total: true }]);
  assert.equal(sigFields(out), { Signature: true }, 'no new field was added');
  // Incremental update: the original bytes are a prefix of the output.
  assert.ok(readFileSync(out).subarray(0, readFileSync(FORM).length).equals(readFileSync(FORM)));
  // The appearance is drawn in the widget's box [48 496 144 528] on page 1.
  const text = tool('pdftotext', ['-f', '1', '-l', '1', '-x', '48', '-y', `${792 - 528}`, '-W', '96', '-H', '32', out, '-']);
  assert.match(text.replace(/\s+/g, ' '), /Digitally signed by Field Signer/);
});

test('existing: re-sign a field by name on an earlier output (second empty field), both signatures intact', async () => {
  const first = await call({ file: { file: TWO_EMPTY }, ...pem, ...config({ type: 'existing', name: 'Sig1' }) });
  const second = await call({ id: first.outputId, ...pem, ...config({ type: 'existing', name: 'Sig2' }) });
  const out = await t.download(second.outputUrl);
  const sigs = signatures(out);
  assert.equal(
    sigs.map((s) => [s.field, s.intact]),
    [
      ['Sig1', true],
      ['Sig2', true],
    ],
  );
  assert.ok(sigs[1].total);
  assert.equal(sigFields(out), { Sig1: true, Sig2: true });
  // Signing the first field again: it is already signed.
  const again = await call({ id: second.outputId, ...pem, ...config({ type: 'existing', name: 'Sig1' }) }, 400);
  assert.match(again.error, /Sig1.*already signed/);
});

test('existing: unknown name -> 400 naming it and the field names; not a signature field -> 400; name missing -> 400', async () => {
  const unknown = await call({ file: { file: FORM }, ...pem, ...config({ type: 'existing', name: 'NoSuchField' }) }, 400);
  assert.match(unknown.error, /NoSuchField/);
  assert.match(unknown.error, /signature_configuration\.name/);
  assert.match(unknown.error, /Signature/);
  const text = await call({ file: { file: FORM }, ...pem, ...config({ type: 'existing', name: 'TextField' }) }, 400);
  assert.match(text.error, /TextField.*not a signature field/);
  const missing = await call({ file: { file: FORM }, ...pem, ...config({ type: 'existing' }) }, 400);
  assert.match(missing.error, /signature_configuration\.name is required/);
  const signed = await call({ file: { file: corpus('signing/qpdf-digitally-signed.pdf') }, ...pem, ...config({ type: 'existing', name: 'Signature2' }) }, 400);
  assert.match(signed.error, /already signed/);
  const bad = await call({ file: { file: FORM }, ...pem, ...config({ type: 'old', name: 'Signature' }) }, 400);
  assert.match(bad.error, /signature_configuration\.type/);
});

test("new (today's behaviour) still adds a field beside the empty one", async () => {
  const body = await call({ file: { file: FORM }, ...pem, ...config({ type: 'new', name: 'Added' }) });
  const out = await t.download(body.outputUrl);
  // pdfsig also lists the empty field, with nothing to validate.
  assert.equal(
    signatures(out).map((s) => [s.field, s.intact]),
    [
      ['Signature', false],
      ['Added', true],
    ],
  );
  assert.equal(sigFields(out), { Signature: false, Added: true });
});

test.run();
