import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, pdfText, startApp, type TestApp, tool } from './helpers.js';
import { en16931Findings, invoiceXml, MINIMUM } from './zugferd-fixtures.js';

/**
 * /zugferd-pdf and /validated-zugferd on invoices built here (EN 16931 CII), read back with pdfdetach (the
 * embedded XML, byte for byte), pdfinfo -meta (XMP), qpdf --json (file specification, /AF) and pdftotext.
 */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-zugferd-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const xmlFile = (name: string, xml: string) => {
  const p = join(work, name);
  writeFileSync(p, xml);
  return p;
};
const ids = (findings: { id: string }[]) => findings.map((f) => f.id);

async function makeHybrid(xml: string, fields: Record<string, string> = {}, name = 'invoice.xml'): Promise<string> {
  const body = await expectOk(await t.form('/zugferd-pdf', { file: { file: xmlFile(name, xml) }, ...fields }));
  return t.download(body.outputUrl);
}

test('business rules: a correct invoice has no finding; a wrong total is BR-CO-15, missing seller name BR-06', async () => {
  assert.equal(await en16931Findings(invoiceXml()), []);
  assert.equal(ids(await en16931Findings(invoiceXml({ grandTotal: '1725.00' }))).sort(), ['BR-CO-15', 'BR-CO-16']);
  assert.equal(ids(await en16931Findings(invoiceXml({ sellerName: null }))), ['BR-06']);
});

test('VAT category rules: an exempt line needs an E breakdown with a reason; a wrong S taxable amount is BR-S-08 (and -09, BR-CO-17, which read it)', async () => {
  const exempt = invoiceXml().replace(
    '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>\n        <ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>250.00',
    '<ram:CategoryCode>E</ram:CategoryCode><ram:RateApplicablePercent>0</ram:RateApplicablePercent></ram:ApplicableTradeTax>\n        <ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>250.00',
  );
  assert.ok(exempt.includes('<ram:CategoryCode>E</ram:CategoryCode>'));
  assert.equal(ids(await en16931Findings(exempt)).sort(), ['BR-E-01', 'BR-S-08']);
  const basis = invoiceXml().replace('<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>1400.00</ram:BasisAmount>');
  assert.equal(ids(await en16931Findings(basis)).sort(), ['BR-CO-17', 'BR-S-08', 'BR-S-09']);
  // MINIMUM has no lines and no breakdown: those rules do not apply.
  assert.equal(await en16931Findings(MINIMUM), []);
});

let hybrid = '';
const good = invoiceXml();

test('/zugferd-pdf: PDF/A-3b with factur-x.xml embedded byte for byte, Factur-X XMP, readable invoice text', async () => {
  hybrid = await makeHybrid(good);
  const list = tool('pdfdetach', ['-list', hybrid]);
  assert.match(list, /1 embedded files/);
  assert.match(list, /1: factur-x\.xml/);
  const saved = join(work, 'extracted.xml');
  tool('pdfdetach', ['-save', '1', '-o', saved, hybrid]);
  assert.ok(readFileSync(saved).equals(Buffer.from(good)), 'the embedded XML is the input XML');

  const xmp = tool('pdfinfo', ['-meta', hybrid]);
  assert.match(xmp, /pdfaid:part(>|=['"])3/);
  assert.match(xmp, /pdfaid:conformance(>|=['"])B/);
  assert.match(xmp, '<fx:DocumentType>INVOICE</fx:DocumentType>');
  assert.match(xmp, '<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>');
  assert.match(xmp, '<fx:Version>1.0</fx:Version>');
  assert.match(xmp, '<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>');
  assert.match(xmp, '<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>');

  // The file specification is an associated file of the catalog with AFRelationship Alternative, Subtype text/xml.
  const json = JSON.parse(tool('qpdf', ['--json=2', '--json-key=qpdf', hybrid])).qpdf[1] as Record<
    string,
    { value?: Record<string, unknown>; stream?: { dict: Record<string, unknown> } }
  >;
  const root = Object.values(json).find((o) => o.value?.['/Type'] === '/Catalog')!.value!;
  const af = root['/AF'] as string[];
  assert.is(af.length, 1);
  const spec = json[`obj:${af[0]}`].value!;
  assert.is(spec['/AFRelationship'], '/Alternative');
  assert.is(spec['/F'], 'u:factur-x.xml');
  const ef = json[`obj:${(spec['/EF'] as Record<string, string>)['/F']}`].stream!.dict;
  assert.is(ef['/Subtype'], '/text/xml');
  assert.is((ef['/Params'] as Record<string, number>)['/Size'], Buffer.byteLength(good));
  assert.ok(String((ef['/Params'] as Record<string, string>)['/ModDate']).startsWith('u:D:'));

  const text = pdfText(hybrid);
  assert.match(text, 'INV-2026-0042');
  assert.match(text, 'Quire Test Seller GmbH');
  assert.match(text, 'Example Buyer SARL');
  assert.match(text, 'Consulting services');
  assert.match(text, '€1,725.50');
  assert.match(text, '€275.50');
  // Every font is embedded (PDF/A).
  assert.not.match(tool('pdffonts', [hybrid]).split('\n').slice(2).join('\n'), / no +(yes|no) +(yes|no) +\d+ +\d+\s*$/m);
});

test('/validated-zugferd: the generated PDF and its XML are VALID', async () => {
  const pdf = await expectOk(await t.form('/validated-zugferd', { file: { file: hybrid, name: 'hybrid.pdf' } }));
  assert.is(pdf.status, 'VALID', JSON.stringify(pdf.findings));
  assert.is(pdf.valid, true);
  assert.is(pdf.profile, 'EN16931');
  assert.is(pdf.file_type, 'pdf');
  assert.is(pdf.embedded_file, 'factur-x.xml');
  assert.equal(pdf.pdf, {
    pdfaPart: 3,
    conformanceLevel: 'EN 16931',
    documentFileName: 'factur-x.xml',
    documentType: 'INVOICE',
    afRelationship: 'Alternative',
  });
  assert.equal(pdf.findings, []);
  const xml = await expectOk(await t.form('/validated-zugferd', { file: { file: xmlFile('good.xml', good) } }));
  assert.is(xml.status, 'VALID');
  assert.is(xml.invoice_number, 'INV-2026-0042');
});

test('/validated-zugferd: XRechnung CII, by the identifiers of XRechnung 3.0 and of 1.2 / 2.0, is read as XRECHNUNG', async () => {
  for (const version of ['urn:xeinkauf.de:kosit:xrechnung_3.0', 'urn:xoev-de:kosit:standard:xrechnung_2.0', 'urn:xoev-de:kosit:standard:xrechnung_1.2']) {
    const report = await expectOk(
      await t.form('/validated-zugferd', { file: { file: xmlFile('xr.xml', invoiceXml({ guideline: `urn:cen.eu:en16931:2017#compliant#${version}` })) } }),
    );
    assert.is(report.profile, 'XRECHNUNG', version);
    assert.is(report.status, 'VALID', `${version}: ${JSON.stringify(report.findings)}`);
  }
});

test('/validated-zugferd: a specification identifier that names no Factur-X profile (ZUGFeRD 1 comfort, as in CEN examples) is a warning, not a failure', async () => {
  const comfort = invoiceXml({ guideline: 'urn:ferd:CrossIndustryDocument:invoice:1p0:comfort' });
  const report = await expectOk(await t.form('/validated-zugferd', { file: { file: xmlFile('comfort.xml', comfort) } }));
  assert.is(report.status, 'VALID', JSON.stringify(report.findings));
  assert.is(report.profile, null);
  const f = report.findings.find((x: { id: string }) => x.id === 'FX-PROFILE');
  assert.is(f?.severity, 'warning');
  // Its rules still apply: a wrong total fails it as any other.
  const wrong = await expectOk(
    await t.form('/validated-zugferd', {
      file: { file: xmlFile('comfort-wrong.xml', invoiceXml({ guideline: 'urn:ferd:CrossIndustryDocument:invoice:1p0:comfort', grandTotal: '1725.00' })) },
    }),
  );
  assert.is(wrong.status, 'INVALID');
  assert.ok(ids(wrong.findings).includes('BR-CO-15'));
});

test('/validated-zugferd: a wrong total fails with BR-CO-15 (XML); a missing seller name BR-06; an unknown element the XSD', async () => {
  const wrong = await expectOk(await t.form('/validated-zugferd', { file: { file: xmlFile('wrong.xml', invoiceXml({ grandTotal: '1725.00' })) } }));
  assert.is(wrong.status, 'INVALID');
  assert.ok(ids(wrong.findings).includes('BR-CO-15'), JSON.stringify(wrong.findings));
  const f = wrong.findings.find((x: { id: string }) => x.id === 'BR-CO-15');
  assert.is(f.severity, 'fatal');
  // The artefacts check BR-CO-15 on the invoice as a whole.
  assert.is(f.location, '/rsm:CrossIndustryInvoice');
  assert.match(f.message, '1725.00 given, 1725.50 computed, 1 VAT total(s) in EUR');

  const missing = await expectOk(await t.form('/validated-zugferd', { file: { file: xmlFile('missing.xml', invoiceXml({ sellerName: null })) } }));
  assert.is(missing.status, 'INVALID');
  assert.equal(ids(missing.findings), ['BR-06']);

  const unknown = await expectOk(
    await t.form('/validated-zugferd', { file: { file: xmlFile('unknown.xml', invoiceXml({ extra: '<ram:Unexpected>1</ram:Unexpected>' })) } }),
  );
  assert.is(unknown.status, 'INVALID');
  assert.equal(ids(unknown.findings), ['XSD']);
  assert.match(unknown.findings[0].location, /^line \d+$/);
  assert.match(unknown.findings[0].message, /Unexpected.*not expected/);
});

test('/validated-zugferd: XML that breaks after its header is 400 not well-formed, naming the line', async () => {
  const broken = invoiceXml().replace('<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>1450.00</ram:LineTotal>');
  assert.ok(broken.includes('</ram:LineTotal>'));
  await expectError(await t.form('/validated-zugferd', { file: { file: xmlFile('broken.xml', broken) } }), 400, /not well-formed.*\(line \d+\)/);
});

test('/validated-zugferd: a hybrid PDF whose embedded XML has a wrong total is INVALID with BR-CO-15', async () => {
  // Built from a valid invoice, then its embedded file replaced by a broken one with qpdf (as a faulty tool would).
  const broken = xmlFile('factur-x.xml', invoiceXml({ grandTotal: '1800.00' }));
  const bad = join(work, 'bad-hybrid.pdf');
  const json = JSON.parse(tool('qpdf', ['--json=2', '--json-key=attachments', hybrid])).attachments['factur-x.xml'];
  const update = join(work, 'update.json');
  const num = json.preferredcontents.replace(/ R$/, '');
  writeFileSync(
    update,
    JSON.stringify({
      qpdf: [
        { jsonversion: 2 },
        { [`obj:${num} R`]: { stream: { dict: { '/Type': '/EmbeddedFile', '/Subtype': '/text/xml' }, data: readFileSync(broken).toString('base64') } } },
      ],
    }),
  );
  tool('qpdf', [hybrid, `--update-from-json=${update}`, bad]);
  const res = await expectOk(await t.form('/validated-zugferd', { file: { file: bad, name: 'bad.pdf' } }));
  assert.is(res.status, 'INVALID');
  assert.ok(ids(res.findings).includes('BR-CO-15'), JSON.stringify(res.findings));
});

test('/validated-zugferd: a plain PDF has no embedded invoice and no PDF/A-3 claim', async () => {
  const res = await expectOk(await t.form('/validated-zugferd', { file: { file: corpus('pdf/tagged-libreoffice.pdf') } }));
  assert.is(res.status, 'INVALID');
  assert.ok(ids(res.findings).includes('FX-XML'));
});

test('/zugferd-pdf by JSON id: a MINIMUM invoice is embedded as Data with fx:ConformanceLevel MINIMUM, and validates', async () => {
  const up = await expectOk(await t.form('/upload', { file: { file: xmlFile('minimum.xml', MINIMUM) } }));
  const body = await expectOk(await t.json('/zugferd-pdf', { id: up.files[0].id, output: 'minimum_invoice' }));
  assert.is(body.inputId, up.files[0].id);
  const out = await t.download(body.outputUrl);
  assert.match(tool('pdfdetach', ['-list', out]), /1: factur-x\.xml/);
  assert.match(tool('pdfinfo', ['-meta', out]), '<fx:ConformanceLevel>MINIMUM</fx:ConformanceLevel>');
  assert.match(pdfText(out), 'MIN-2026-7');
  const res = await expectOk(await t.form('/validated-zugferd', { file: { file: out, name: 'min.pdf' } }));
  assert.is(res.status, 'VALID', JSON.stringify(res.findings));
  assert.is(res.profile, 'MINIMUM');
  assert.is(res.pdf.afRelationship, 'Data');
});

test('/zugferd-pdf: an invalid invoice is 400 naming the rule; DOCTYPE input is refused 400', async () => {
  await expectError(await t.form('/zugferd-pdf', { file: { file: xmlFile('bad.xml', invoiceXml({ grandTotal: '1725.00' })) } }), 400, /BR-CO-15/);
  const doctype = invoiceXml().replace('<rsm:CrossIndustryInvoice', '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n<rsm:CrossIndustryInvoice');
  await expectError(await t.form('/zugferd-pdf', { file: { file: xmlFile('doctype.xml', doctype) } }), 400, /DOCTYPE/);
  await expectError(await t.form('/validated-zugferd', { file: { file: xmlFile('doctype2.xml', doctype) } }), 400, /DOCTYPE/);
  await expectError(
    await t.form('/zugferd-pdf', {
      file: { file: xmlFile('other.xml', '<?xml version="1.0"?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>') },
    }),
    400,
    /CrossIndustryInvoice/,
  );
  await expectError(
    await t.form('/zugferd-pdf', { file: { file: xmlFile('r.xml', good) }, regenerate_pdf: 'true' }),
    400,
    /regenerate_pdf requires a source PDF/,
  );
});

test('/zugferd-pdf: render options (German labels and number format) and a kept source PDF', async () => {
  const de = await makeHybrid(good, {
    render_options: JSON.stringify({ locale: 'de-DE', date_format: 'dd.MM.yyyy', accent_color_rgb: [0, 92, 171], footer_message: 'Vielen Dank' }),
  });
  const text = pdfText(de);
  assert.match(text, 'Rechnung');
  assert.match(text, '1.725,50');
  assert.match(text, '23.11.2026');
  assert.match(text, 'Vielen Dank');
  // A source PDF is kept as the visual part (its text, not a rendering), still with the XML embedded.
  const src = corpus('pdf/tagged-libreoffice.pdf');
  const body = await expectOk(await t.form('/zugferd-pdf', { file: { file: xmlFile('k.xml', good) }, pdf_file: { file: src } }));
  const kept = await t.download(body.outputUrl);
  assert.match(pdfText(kept), 'Page 2 Heading');
  assert.not.match(pdfText(kept), 'INV-2026-0042');
  assert.match(tool('pdfdetach', ['-list', kept]), /factur-x\.xml/);
  // With regenerate_pdf a source that does not show the invoice is replaced by a rendering.
  const body2 = await expectOk(await t.form('/zugferd-pdf', { file: { file: xmlFile('k2.xml', good) }, pdf_file: { file: src }, regenerate_pdf: 'true' }));
  assert.match(pdfText(await t.download(body2.outputUrl)), 'INV-2026-0042');
  // ...and a source that shows the invoice number and total is kept: English labels stay although German ones are asked for.
  const body3 = await expectOk(
    await t.form('/zugferd-pdf', {
      file: { file: xmlFile('k3.xml', good) },
      pdf_file: { file: hybrid, name: 'en.pdf' },
      regenerate_pdf: 'true',
      render_options: '{"label_language":"de"}',
    }),
  );
  const keptEn = pdfText(await t.download(body3.outputUrl));
  assert.match(keptEn, 'Sum of line net amounts');
  assert.not.match(keptEn, 'Rechnung');
});

test.run();
