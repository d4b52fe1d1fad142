import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, type FormValue, startApp, type TestApp } from './helpers.js';

/**
 * Every processing endpoint, given otherwise valid fields, answers a broken PDF, a non-PDF and a PDF that needs a
 * password with a JSON client error (400 / 401), never a 5xx: clients retry 5xx, and a crash must not hide behind one.
 */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-robust-'));
const passphrase = join(work, 'pass.txt');
writeFileSync(passphrase, 'exportsecret');
test.before(async () => {
  // A model that is never reached: the AI endpoints must refuse the input before they would call it.
  t = await startApp({ LLM_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'none' });
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const image = { file: corpus('images/hopper.jpg') };
const box = { bottom_left: { x: 10, y: 10 }, top_right: { x: 100, y: 50 }, page: 1 };

/** Minimal valid fields besides the PDF, per endpoint. */
const ENDPOINTS: Record<string, Record<string, FormValue>> = {
  '/pdf-info': { queries: 'page_count' },
  '/extracted-images': {},
  '/extracted-text': {},
  '/markdown': {},
  '/pdf-with-ocr-text': {},
  '/linearized-pdf': {},
  '/encrypted-pdf': { new_open_password: 'secret' },
  '/decrypted-pdf': { current_open_password: 'secret' },
  '/restricted-pdf': { new_permissions_password: 'secret', restrictions: '["print_low"]' },
  '/unrestricted-pdf': { current_permissions_password: 'secret' },
  '/merged-pdf': {},
  '/split-pdf': {},
  '/pdf-with-added-attachment': { file_to_attach: image },
  '/pdf-with-page-boxes-set': { boxes: '{"boxes":[{"box":"crop","pages":[{"range":"1","left":10,"top":10,"bottom":10,"right":10}]}]}' },
  '/word': {},
  '/excel': {},
  '/powerpoint': {},
  '/bmp': { resolution: '20' },
  '/jpg': { resolution: '20' },
  '/png': { resolution: '20' },
  '/gif': { resolution: '20' },
  '/tif': { resolution: '20' },
  '/pdfa': { output_type: 'PDF/A-2b' },
  '/pdfx': { output_type: 'PDF/X-4' },
  '/compressed-pdf': { compression_level: 'medium' },
  '/rasterized-pdf': {},
  '/pdf-with-converted-colors': { color_profile: 'srgb' },
  '/pdf-with-redacted-text-preview': { redactions: '[{"type":"literal","value":"a"}]' },
  '/pdf-with-redacted-text-applied': {},
  '/pdf-with-imported-form-data': { data_file: { file: corpus('forms/simple-form-2-fields.fdf') } },
  '/signed-pdf': {
    pfx_credential_file: { file: corpus('signing/pyhanko-selfsigned-password-exportsecret.pfx') },
    pfx_passphrase_file: { file: passphrase },
    signature_configuration: JSON.stringify({ type: 'new', location: box }),
  },
  '/summarized-pdf-text': {},
  '/translated-pdf-text': { output_language: 'de' },
  '/watermarked-pdf': { watermark_text: 'DRAFT' },
  '/pdf-with-added-text': { text_objects: '[{"text":"Hi","page":"1","x":"20","y":"20","font":"Helvetica","text_size":"12","text_color_rgb":"0,0,0"}]' },
  '/pdf-with-added-image': { image_file: image, x: '10', y: '10', page: '1' },
  '/pdf-with-added-shapes': { shape_objects: '[{"type":"line","page":"1","x1":"10","y1":"10","x2":"100","y2":"100"}]' },
  '/pdf-with-added-tables': {
    table_objects: '[{"page":1,"x":50,"y":700,"width":200,"columns":[{"width":100},{"width":100}],"rows":[{"cells":[{"text":"a"},{"text":"b"}]}]}]',
  },
  '/unzip': {},
  '/flattened-forms-pdf': {},
  '/flattened-annotations-pdf': {},
  '/flattened-layers-pdf': {},
  '/flattened-transparencies-pdf': { quality: 'low' },
  '/tdm-reserved-pdf': { policy: 'https://example.com/policy' },
  '/sanitized-pdf': {},
  '/pdf-signatures': {},
  '/postscript': {},
  '/zugferd-pdf': {},
  '/validated-zugferd': {},
  '/exported-form-data': { data_format: 'xfdf' },
  '/pdf-with-acroforms': {},
  '/compared-pdf': { compare_file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } },
  '/rotated-pdf': { rotation: '90' },
  '/reordered-pdf': { pages: '1' },
  '/n-up-pdf': {},
  '/resized-pdf': { page_size: 'A4' },
  '/pdf-without-blank-pages': {},
  '/separated-pdf': {},
  '/deskewed-pdf': {},
  '/pdf-with-page-numbers': {},
};

const INPUTS: [string, string, number][] = [
  ['broken', 'malformed/truncated-no-xref-pdfjs-bug1020226.pdf', 400],
  ['empty', 'malformed/invalid-header-then-eof.pdf', 400],
  ['password', 'encrypted/aes-256-user-view-owner-master.pdf', 401],
];

test('the table covers every processing endpoint', () => {
  // /blank-pdf takes no input; /pdf and /zip take any file as it is.
  const served = t.deps.operations.map((op) => op.path).filter((p) => !['/blank-pdf', '/pdf', '/zip'].includes(p));
  assert.equal([...served].sort(), Object.keys(ENDPOINTS).sort());
});

/**
 * The owner password also opens a file, so the permissions password sent is tried as one and named when wrong;
 * /unzip reads any PDF as a broken zip (its password is the zip's); /zugferd-pdf takes invoice XML, so it refuses
 * any .pdf as its `file` (400) before reading it.
 */
const EXCEPT: Record<string, Record<string, number>> = {
  '/unrestricted-pdf': { password: 400 },
  '/unzip': { password: 400 },
  '/zugferd-pdf': { password: 400 },
};

for (const [kind, file, status] of INPUTS) {
  test(`${kind} input: a JSON client error from every endpoint, never a 5xx`, async () => {
    const wrong: string[] = [];
    for (const [path, fields] of Object.entries(ENDPOINTS)) {
      const expected = EXCEPT[path]?.[kind] ?? status;
      const res = await t.form(path, { file: { file: corpus(file), name: 'input.pdf' }, ...fields });
      const body = (await res.json().catch(() => null)) as { error?: string; allQueriesProcessed?: boolean } | null;
      // /pdf-info answers what it can about an unreadable file (spec: allQueriesProcessed false).
      const ok = path === '/pdf-info' ? res.status === 200 && body?.allQueriesProcessed === false : res.status === expected && typeof body?.error === 'string';
      if (!ok) wrong.push(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 160)}`);
    }
    assert.equal(wrong, []);
  });
}

test('a non-PDF named .pdf: 400 from every endpoint that takes a PDF', async () => {
  const wrong: string[] = [];
  for (const [path, fields] of Object.entries(ENDPOINTS)) {
    const res = await t.form(path, { file: { file: corpus('images/hopper.jpg'), name: 'photo.pdf' }, ...fields });
    const body = (await res.json().catch(() => null)) as { error?: string; allQueriesProcessed?: boolean } | null;
    const ok = path === '/pdf-info' ? res.status === 200 && body?.allQueriesProcessed === false : res.status === 400 && typeof body?.error === 'string';
    if (!ok) wrong.push(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 160)}`);
  }
  assert.equal(wrong, []);
});

test('a missing required field or second input: 400 naming it', async () => {
  const NEEDS: Record<string, RegExp> = {
    '/pdf-info': /queries/,
    '/encrypted-pdf': /new_open_password/,
    '/restricted-pdf': /new_permissions_password/,
    '/unrestricted-pdf': /current_permissions_password/,
    '/pdf-with-added-attachment': /file_to_attach|id_to_attach/,
    '/pdf-with-page-boxes-set': /boxes/,
    '/pdfa': /output_type/,
    '/pdfx': /output_type/,
    '/compressed-pdf': /compression_level/,
    '/pdf-with-converted-colors': /color_profile/,
    '/pdf-with-redacted-text-preview': /redactions/,
    '/pdf-with-imported-form-data': /data_file/,
    '/signed-pdf': /signature_configuration|credential/,
    '/translated-pdf-text': /output_language/,
    '/watermarked-pdf': /watermark/,
    '/pdf-with-added-text': /text_objects/,
    '/pdf-with-added-image': /image|x|y|page/,
    '/pdf-with-added-shapes': /shape_objects/,
    '/pdf-with-added-tables': /table_objects/,
    '/compared-pdf': /compare_file|compare_id/,
    '/rotated-pdf': /rotation/,
    '/reordered-pdf': /pages/,
  };
  const wrong: string[] = [];
  for (const [path, names] of Object.entries(NEEDS)) {
    const res = await t.form(path, { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } });
    const body = (await res.json().catch(() => null)) as { error?: string } | null;
    if (res.status !== 400 || !names.test(body?.error ?? '')) wrong.push(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 160)}`);
  }
  assert.equal(wrong, []);
});

test.run();
