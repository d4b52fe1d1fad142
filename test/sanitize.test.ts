import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, type FormValue, pdfPages, startApp, type TestApp, tool } from './helpers.js';

/**
 * /sanitized-pdf, read back with independent tools: qpdf's JSON of every object (no JavaScript, launch, submit,
 * import or remote actions, no additional actions, no embedded files...), MuPDF's `mutool show` of the catalog,
 * Poppler's pdfinfo and pdfdetach, qpdf --check, and the same page count and text as the input.
 */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-sanitize-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

async function sanitize(path: string, fields: Record<string, FormValue> = {}): Promise<{ out: string; body: Record<string, any> }> {
  const body = await expectOk(await t.form('/sanitized-pdf', { file: { file: path }, ...fields }));
  return { out: await t.download(body.outputUrl), body };
}

const removed = (body: Record<string, any>, kind: string) => (body.removed as { kind: string; count: number }[]).find((r) => r.kind === kind)?.count ?? 0;

/** Every object of the file as qpdf lists it (stream dictionaries included), as one JSON text. */
const objectsOf = (path: string) => JSON.stringify(JSON.parse(tool('qpdf', ['--json', '--json-stream-data=none', path])).qpdf[1]);
/** The file with its streams decoded (qpdf's QDF form), as text: hidden words would show here. */
const decoded = (path: string) => execFileSync('qpdf', ['--qdf', '--object-streams=disable', path, '-'], { maxBuffer: 64 * 1024 * 1024 }).toString('latin1');
const words = (path: string) => tool('pdftotext', [path, '-']).replace(/\s+/g, ' ').trim();
const check = (path: string) => execFileSync('qpdf', ['--check', path], { encoding: 'utf8' });

/** Nothing a reader runs by itself is left: what qpdf's JSON lists, and what pdfinfo, pdfdetach and mutool say. */
function assertClean(path: string) {
  const objects = objectsOf(path);
  for (const key of [
    '/JS',
    '/AA',
    '/JavaScript',
    '/Launch',
    '/SubmitForm',
    '/ImportData',
    '/GoToR',
    '/GoToE',
    '/EmbeddedFiles',
    '/EmbeddedFile',
    '/XFA',
    '/Thumb',
    '/FileAttachment',
    '/RichMedia',
  ])
    assert.not.ok(objects.includes(`"${key}"`), `${key} left in ${path}`);
  assert.match(tool('pdfinfo', [path]), /JavaScript:\s+no/);
  assert.match(tool('pdfdetach', ['-list', path]), /^0 embedded files/);
  const catalog = tool('mutool', ['show', path, 'trailer/Root']);
  assert.not.match(catalog, /\/OpenAction\s*<<[^>]*\/S\s*\/(JavaScript|Launch)/);
  assert.not.match(catalog, /\/AA\b/);
}

const CORPUS = [
  'javascript/doc-actions-3-pages.pdf',
  'javascript/js-buttons.pdf',
  'attachments/embedded-file-pypdf.pdf',
  'attachments/embedded-files-multi-format.pdf',
  'attachments/file-attachment-libreoffice.pdf',
  'forms/acroform-basic-fields-all-types.pdf',
  'forms/libreoffice-form.pdf',
  'forms/pdflatex-forms.pdf',
  'forms/qpdf-form-filled-by-acrobat.pdf',
  'forms/simple-form-2-fields.pdf',
  'forms/xfa-pdfium-dynamic-email-submit.pdf',
  'forms/xfa-pdfium-simple.pdf',
];

for (const rel of CORPUS) {
  test(`${rel}: nothing active left, valid, same pages and text`, async () => {
    const input = corpus(rel);
    const { out, body } = await sanitize(input);
    assertClean(out);
    check(out); // throws on errors (exit 2)
    assert.is(pdfPages(out), pdfPages(input));
    assert.is(words(out), words(input));
    // What the input held is reported as removed, by kind.
    if (/JavaScript:\s+yes/.test(tool('pdfinfo', [input]))) assert.ok(removed(body, 'javascript') > 0, JSON.stringify(body.removed));
    const files = Number(/^(\d+) embedded files/.exec(tool('pdfdetach', ['-list', input]))?.[1] ?? 0);
    if (files) assert.ok(removed(body, 'embedded_file') + removed(body, 'file_attachment_annotation') >= files, JSON.stringify(body.removed));
  });
}

test('what each corpus file held, by kind and count', async () => {
  const actions = (await sanitize(corpus('javascript/doc-actions-3-pages.pdf'))).body;
  // 5 document actions (WC, WS, DS, WP, DP) and an open and a close action on each of the 3 pages (its document
  // script tree is empty: nothing counted there).
  assert.is(removed(actions, 'javascript'), 11, JSON.stringify(actions.removed));
  assert.is(removed((await sanitize(corpus('forms/pdflatex-forms.pdf'))).body, 'submit_form_action'), 1);
  assert.is(removed((await sanitize(corpus('forms/xfa-pdfium-dynamic-email-submit.pdf'))).body, 'xfa_form'), 1);
  const clean = (await sanitize(corpus('pdf/text-minimal-pdflatex.pdf'))).body;
  assert.equal(clean.removed, []);
});

/** A hand-made PDF with one of each: what the corpus lacks (hidden layers, thumbnails, launch, media, links). */
function crafted(): string {
  const content = [
    'BT /F1 20 Tf 72 700 Td (Visible words) Tj ET',
    '/OC /Hid BDC BT /F1 20 Tf 72 650 Td (Hidden secret) Tj ET EMC',
    '/OC /Shown BDC BT /F1 20 Tf 72 600 Td (Shown layer) Tj ET EMC',
    'q 10 0 0 10 72 500 cm /HiddenImage Do Q',
  ].join('\n');
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R /OpenAction << /S /JavaScript /JS (app.alert\\(1\\)) >> /AA << /WC << /S /Launch /F (calc.exe) >> >> /Metadata 13 0 R /OCProperties << /OCGs [5 0 R 6 0 R] /D << /OFF [5 0 R] /Order [5 0 R 6 0 R] >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Thumb 12 0 R /AA << /O << /S /JavaScript /JS (1) >> >> /Annots [8 0 R 9 0 R 10 0 R 11 0 R 15 0 R] /Resources << /Font << /F1 7 0 R >> /Properties << /Hid 5 0 R /Shown 6 0 R >> /XObject << /HiddenImage 14 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /OCG /Name (Hidden layer) >>',
    '<< /Type /OCG /Name (Shown layer) >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Annot /Subtype /Link /Rect [72 690 200 720] /A << /S /URI /URI (https://example.com/) >> >>',
    '<< /Type /Annot /Subtype /Link /Rect [72 640 200 670] /A << /S /Launch /F (cmd.exe) /Next << /S /Named /N /Print >> >> >>',
    '<< /Type /Annot /Subtype /FileAttachment /Rect [300 700 320 720] /FS << /Type /Filespec /F (a.txt) /EF << /F 16 0 R >> >> >>',
    '<< /Type /Annot /Subtype /Link /Rect [72 590 200 620] /A << /S /GoToR /F (other.pdf) /D [0 /Fit] >> >>',
    '<< /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream',
    '<< /Type /Metadata /Subtype /XML /Length 23 >>\nstream\n<x:xmpmeta></x:xmpmeta>\nendstream',
    '<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /OC 5 0 R /Length 1 >>\nstream\n\x00\nendstream',
    '<< /Type /Annot /Subtype /Screen /Rect [400 700 420 720] /A << /S /Rendition /JS (1) >> >>',
    '<< /Type /EmbeddedFile /Length 5 >>\nstream\nhello\nendstream',
  ];
  let pdf = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info << /Author (Someone) /Title (Crafted) >> >>\nstartxref\n${xref}\n%%EOF\n`;
  const path = join(work, 'crafted.pdf');
  writeFileSync(path, Buffer.from(pdf, 'latin1'));
  return path;
}

test('a crafted PDF: hidden layers, thumbnails, launch, media, attachments and actions go; links and metadata stay unless asked', async () => {
  const input = crafted();
  check(input);
  assert.match(decoded(input), /Hidden secret/);
  const { out, body } = await sanitize(input);
  assertClean(out);
  check(out);
  const text = decoded(out);
  assert.not.match(text, /Hidden secret/);
  assert.match(text, /Visible words/);
  assert.match(text, /Shown layer/);
  assert.not.match(text, /\/Name \(Hidden layer\)/);
  assert.not.match(text, /\/Print/);
  assert.match(text, /https:\/\/example\.com/);
  assert.match(text, /\/Author \(Someone\)/);
  assert.match(text, /xmpmeta/);
  assert.is(words(out), words(input));
  const kinds = Object.fromEntries((body.removed as { kind: string; count: number }[]).map((r) => [r.kind, r.count]));
  assert.equal(kinds, {
    javascript: 2, // the open action and the page's open action
    launch_action: 2, // the document's close action and the link's
    named_action: 1,
    remote_goto_action: 1,
    file_attachment_annotation: 1,
    rich_media: 1,
    thumbnail: 1,
    hidden_content: 2, // the marked-content sequence and the image
  });

  const strict = await sanitize(input, { remove_links: 'on', remove_metadata: 'on' });
  const stripped = decoded(strict.out);
  assert.not.match(stripped, /example\.com/);
  assert.not.match(stripped, /Someone|xmpmeta/);
  assert.ok(removed(strict.body, 'uri_action') === 1 && removed(strict.body, 'document_info') === 1 && removed(strict.body, 'xmp_metadata') === 1);
  assert.not.ok('/Info' in JSON.parse(tool('qpdf', ['--json', '--json-key=qpdf', strict.out])).qpdf[1].trailer.value);
});

test('signed PDFs: refused unless remove_signatures=on, which removes the signatures (pdfsig finds none)', async () => {
  for (const rel of ['signing/qpdf-digitally-signed.pdf', 'signing/pyhanko-certified-signature.pdf', 'signing/pyhanko-signed-twice-pades.pdf']) {
    await expectError(await t.form('/sanitized-pdf', { file: { file: corpus(rel) } }), 400, /signed.*remove_signatures=on/);
    const { out, body } = await sanitize(corpus(rel), { remove_signatures: 'on' });
    assertClean(out);
    check(out);
    assert.ok(removed(body, 'signature') >= 1);
    assert.match(body.warning, /signature/);
    let sig = '';
    try {
      sig = execFileSync('pdfsig', [out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      sig = String((err as { stdout?: string }).stdout ?? '');
    }
    assert.not.match(sig, /Signature Validation/, rel);
    assert.is(words(out), words(corpus(rel)));
  }
});

test('bad input: not a PDF 400, password 401', async () => {
  await expectError(await t.form('/sanitized-pdf', { file: { file: corpus('images/hopper.jpg') } }), 400, /not valid input/);
  await expectError(await t.form('/sanitized-pdf', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') } }), 401, /password/);
  assert.ok(readFileSync(corpus('encrypted/aes-256-user-view-owner-master.pdf')).length > 0);
});

test.run();
