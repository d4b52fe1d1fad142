import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, PDFHexString, PDFName } from '@cantoo/pdf-lib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PDF_INFO_QUERIES as QUERIES } from '../app/document/index.js';
import { corpus, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
let tmp: string;
test.before(async () => {
  t = await startApp();
  tmp = mkdtempSync(join(tmpdir(), 'quire-info-'));
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const info = async (file: string, queries: string) => {
  const res = await t.form('/pdf-info', { file: { file }, queries });
  assert.is(res.status, 200, file);
  return res.json();
};

test('queries=all answers all 31 spec queries plus page_boxes and pdfvt_claim, with the right types', async () => {
  const r = await info(corpus('pdf/text-minimal-pdflatex.pdf'), 'all');
  assert.is(QUERIES.length, 33);
  for (const q of QUERIES) assert.ok(q in r, q);
  assert.is(r.allQueriesProcessed, true);
  for (const q of [
    'tagged',
    'image_only',
    'contains_annotations',
    'contains_signature',
    'restrict_permissions_set',
    'contains_xfa',
    'contains_acroforms',
    'contains_javascript',
    'contains_transparency',
    'contains_embedded_file',
    'uses_embedded_fonts',
    'uses_nonembedded_fonts',
    'pdfa',
    'pdfua_claim',
    'pdfe_claim',
    'pdfx_claim',
    'requires_password_to_open',
    'pdfvt_claim',
  ]) {
    assert.type(r[q], 'boolean', q);
  }
  for (const q of [
    'title',
    'subject',
    'author',
    'producer',
    'creator',
    'creation_date',
    'modified_date',
    'keywords',
    'doc_language',
    'filename',
    'pdf_version',
  ])
    assert.type(r[q], 'string', q);
  assert.type(r.custom_metadata, 'object');
  assert.not.ok(Array.isArray(r.custom_metadata));
});

test('text-minimal-pdflatex: page count, size, version, producer, dates and fonts as pdfinfo/pdffonts see them', async () => {
  const file = corpus('pdf/text-minimal-pdflatex.pdf');
  const r = await info(
    file,
    'page_count,file_size,filename,pdf_version,producer,creator,creation_date,title,uses_embedded_fonts,uses_nonembedded_fonts,tagged,image_only,custom_metadata,doc_language',
  );
  const pi = tool('pdfinfo', ['-isodates', file]);
  assert.is(r.page_count, Number(/Pages:\s+(\d+)/.exec(pi)![1]));
  assert.is(r.file_size, statSync(file).size);
  assert.is(r.filename, 'text-minimal-pdflatex.pdf');
  assert.is(r.pdf_version, `${/PDF version:\s+(\S+)/.exec(pi)![1]}.0`);
  assert.is(r.producer, /Producer:\s+(.+)/.exec(pi)![1].trim());
  assert.is(r.creator, 'TeX');
  assert.is(new Date(r.creation_date).getTime(), new Date(/CreationDate:\s+(\S+)/.exec(pi)![1].replace(/([+-]\d\d)$/, '$1:00')).getTime());
  assert.is(r.title, '');
  assert.is(r.doc_language, '');
  assert.is(r.uses_embedded_fonts, true);
  assert.is(r.uses_nonembedded_fonts, false);
  assert.is(r.tagged, false);
  assert.is(r.image_only, false);
  assert.match(r.custom_metadata['PTEX.Fullbanner'], /pdfTeX/);
});

test('structure queries on the corpus files that exercise them', async () => {
  const facts: [string, Record<string, unknown>][] = [
    ['pdf/tagged-word365.pdf', { tagged: true, doc_language: 'fr', pdf_version: '1.7.0' }],
    ['pdf/tagged-libreoffice.pdf', { tagged: true, page_count: 2 }],
    ['pdf/annotations-text-highlight-ink.pdf', { contains_annotations: true }],
    ['pdf/text-4-pages-pdflatex.pdf', { contains_annotations: false, page_count: 4, contains_javascript: false, contains_embedded_file: false }],
    ['signing/qpdf-digitally-signed.pdf', { contains_signature: true, contains_acroforms: true }],
    ['signing/pyhanko-two-empty-signature-fields-unsigned.pdf', { contains_signature: false, contains_acroforms: true }],
    ['forms/libreoffice-form.pdf', { contains_acroforms: true, contains_xfa: false }],
    ['forms/xfa-pdfium-simple.pdf', { contains_xfa: true }],
    ['javascript/js-buttons.pdf', { contains_javascript: true }],
    ['javascript/doc-actions-3-pages.pdf', { contains_javascript: true, page_count: 3 }],
    ['pdf/google-docs-export.pdf', { contains_transparency: true, uses_embedded_fonts: true }],
    ['pdf/standard-14-fonts-14-pages.pdf', { contains_transparency: false, uses_nonembedded_fonts: true, uses_embedded_fonts: false, page_count: 14 }],
    ['attachments/embedded-file-pypdf.pdf', { contains_embedded_file: true }],
    ['attachments/file-attachment-libreoffice.pdf', { contains_embedded_file: true }],
    ['scans/linn-scan-ccitt.pdf', { image_only: true, uses_embedded_fonts: false }],
    ['pdf/image-jbig2-scan.pdf', { image_only: true }],
    ['scans/huckleberry-finn-p22-scan.pdf', { image_only: true }],
    ['pdf/vector-art-no-fonts.pdf', { image_only: false }],
    ['pdfa/verapdf-pdfa1b-6-2-2-t01-pass-a.pdf', { pdfa: true }],
    ['pdfa/crazyones-pdfa-1b-ghostscript.pdf', { pdfa: true, pdfua_claim: false }],
    ['pdf/text-minimal-pdflatex.pdf', { pdfa: false, pdfx_claim: false, pdfe_claim: false, pdfvt_claim: false }],
  ];
  for (const [file, expected] of facts) {
    const r = await info(corpus(file), Object.keys(expected).join(','));
    for (const [k, v] of Object.entries(expected)) assert.equal(r[k], v, `${file} ${k}`);
    assert.is(r.allQueriesProcessed, true, file);
  }
});

test('encryption: owner-only files open and report their restrictions; a user password blocks the rest with a warning', async () => {
  const open = await info(corpus('encrypted/rc4-128-owner-master-no-user-password.pdf'), 'requires_password_to_open,restrict_permissions_set,page_count');
  assert.equal([open.requires_password_to_open, open.restrict_permissions_set, open.page_count], [false, true, 30]);
  const allowed = await info(corpus('encrypted/rc4-128-user-and-owner-test.pdf'), 'requires_password_to_open');
  assert.is(allowed.requires_password_to_open, true);
  for (const f of ['encrypted/aes-256-user-view-owner-master.pdf', 'encrypted/rc4-40-user-view-owner-master.pdf']) {
    const r = await info(corpus(f), 'requires_password_to_open,page_count,filename');
    assert.is(r.requires_password_to_open, true);
    assert.is(r.allQueriesProcessed, false);
    assert.match(r.warning, /password/);
    assert.not.ok('page_count' in r);
    assert.ok(r.filename);
  }
  const plain = await info(corpus('pdf/text-minimal-pdflatex.pdf'), 'restrict_permissions_set,requires_password_to_open');
  assert.equal([plain.restrict_permissions_set, plain.requires_password_to_open], [false, false]);
});

test('broken and non-PDF input: 200, allQueriesProcessed false with a warning, never 5xx', async () => {
  for (const f of [
    'malformed/empty-zero-bytes.pdf',
    'malformed/invalid-header-then-eof.pdf',
    'malformed/truncated-no-xref-pdfjs-bug1020226.pdf',
    'images/hopper.jpg',
    'office/poi-SampleDoc.docx',
  ]) {
    const r = await info(corpus(f), 'all');
    assert.is(r.allQueriesProcessed, false, f);
    assert.type(r.warning, 'string');
  }
  const recovered = await info(corpus('malformed/helloworld-bad.pdf'), 'page_count');
  assert.is(recovered.page_count, 1);
  assert.is(recovered.allQueriesProcessed, true);
});

test('page_boxes: per page, with inheritance and rotation, matching pdfinfo -box', async () => {
  const file = corpus('pdf/rotation-2-pages.pdf');
  const r = await info(file, 'page_boxes');
  assert.is(r.page_boxes.length, 2);
  assert.is(r.page_boxes[1].rotation, 90);
  const box = tool('pdfinfo', ['-box', '-f', '1', '-l', '1', file]);
  const media = /Page\s+1 MediaBox:\s+([\d.\s]+)/.exec(box)![1].trim().split(/\s+/).map(Number);
  assert.equal(
    r.page_boxes[0].mediaBox.map((n: number) => Math.round(n * 100) / 100),
    media,
  );
});

test('claims and custom metadata from a generated PDF: pdfua, pdfx, pdfe, pdfvt, Info entries', async () => {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  const xmp = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/" xmlns:pdfxid="http://www.npes.org/pdfx/ns/id/" xmlns:pdfe="http://www.aiim.org/pdfe/ns/id/" xmlns:pdfvtid="http://www.npes.org/pdfvt/ns/id/" pdfuaid:part="1" pdfxid:GTS_PDFXVersion="PDF/X-4" pdfe:ISO_PDFEVersion="PDF/E-1" pdfvtid:GTS_PDFVTVersion="PDF/VT-1"/>
</rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const meta = doc.context.register(doc.context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' }));
  doc.catalog.set(PDFName.of('Metadata'), meta);
  doc.setTitle('Quarterly report');
  doc.setAuthor('Ada');
  doc.setKeywords(['alpha', 'beta']);
  doc.getInfoDict().set(PDFName.of('Department'), PDFHexString.fromText('Légal'));
  const file = join(tmp, 'claims.pdf');
  writeFileSync(file, await doc.save());
  const r = await info(file, 'pdfua_claim,pdfx_claim,pdfe_claim,pdfvt_claim,pdfa,title,author,keywords,custom_metadata');
  assert.equal([r.pdfua_claim, r.pdfx_claim, r.pdfe_claim, r.pdfvt_claim, r.pdfa], [true, true, true, true, false]);
  assert.is(r.title, 'Quarterly report');
  assert.is(r.author, 'Ada');
  assert.match(r.keywords, /alpha/);
  assert.equal(r.custom_metadata, { Department: 'Légal' });
  const blank = await (await t.json('/blank-pdf', { page_size: 'A4', page_count: 1, page_orientation: 'portrait' })).json();
  const empty = await (await t.json('/pdf-info', { id: blank.outputId, queries: 'custom_metadata' })).json();
  assert.equal(empty.custom_metadata, {});
});

test.run();
