import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { businessRulesOfFile, checkEn16931, decimal as D } from '../app/invoice/index.js';
import { edit, en16931Findings, fatalIds, invoiceXml } from './zugferd-fixtures.js';

/**
 * The EN 16931 rules against what CEN's validation artefacts for CII (ConnectingEurope eInvoicing-EN16931, release
 * 1.3.16) decide: an official example (test/en16931-official/, see its README), and one probe for each point where
 * Quire's earlier rules and the artefacts disagreed (issue 31): BR-CO-09's country list, BR-CO-15's one VAT total,
 * rounding of negative amounts, rules that no other rule's failure silences, the buyer's address, and the CII syntax
 * binding (CII-SR warnings keep their flag, CII-DT are fatal).
 */

const BASE = invoiceXml();
const ids = async (xml: string) => fatalIds(await en16931Findings(xml));
const warnings = async (xml: string) =>
  (await en16931Findings(xml))
    .filter((f) => f.severity === 'warning')
    .map((f) => f.id)
    .sort();
const edits = (xml: string, ...pairs: [string, string][]) => pairs.reduce((x, [from, to]) => edit(x, from, to), xml);

test('official example CII-BR-CO-10-RoundingIssue.xml: valid (the artefacts report no fatal finding)', async () => {
  const xml = readFileSync(new URL('./en16931-official/CII-BR-CO-10-RoundingIssue.xml', import.meta.url), 'utf8');
  assert.equal(await ids(xml), []);
  // A cent off on one line breaks the sum (BR-CO-10); the Z breakdown is still within BR-Z-08's 1.00.
  assert.equal(await ids(edit(xml, '<ram:LineTotalAmount>-0.01</ram:LineTotalAmount>', '<ram:LineTotalAmount>-0.02</ram:LineTotalAmount>')), ['BR-CO-10']);
});

test('official example CII_business_example_Z.xml (zero rated, a negative line): valid; its Z rules still bite', async () => {
  const xml = readFileSync(new URL('./en16931-official/CII_business_example_Z.xml', import.meta.url), 'utf8');
  assert.equal(await en16931Findings(xml), []);
  // Z taxable amount 2.00 off (more than BR-Z-08's 1.00), and a line at 5 % (BR-Z-05).
  assert.equal(await ids(edit(xml, '<ram:BasisAmount>11693.87</ram:BasisAmount>', '<ram:BasisAmount>11695.87</ram:BasisAmount>')), ['BR-Z-08']);
  assert.equal(
    await ids(edit(xml, '<ram:RateApplicablePercent>0.00</ram:RateApplicablePercent>', '<ram:RateApplicablePercent>5</ram:RateApplicablePercent>')),
    ['BR-Z-05'],
  );
});

test('official example XRechnung-O.xml (not subject to VAT, line charges): valid; an S line beside the O breakdown is not', async () => {
  const xml = readFileSync(new URL('./en16931-official/XRechnung-O.xml', import.meta.url), 'utf8');
  assert.equal(await en16931Findings(xml), []);
  const sLine = edit(
    xml,
    '<ram:CategoryCode>O</ram:CategoryCode>\n        </ram:ApplicableTradeTax>',
    '<ram:CategoryCode>S</ram:CategoryCode>\n          <ram:RateApplicablePercent>19</ram:RateApplicablePercent>\n        </ram:ApplicableTradeTax>',
  );
  // BR-O-12 is BR-O-11's test in the artefacts; one S line and no S breakdown count 1 < 2 for BR-S-01.
  assert.equal(await ids(sLine), ['BR-O-08', 'BR-O-11', 'BR-O-12', 'BR-S-01']);
});

test('official examples CII_example1/2/3/9.xml: fatal ids as the artefacts give them (example 2 carries three tax point dates)', async () => {
  // Release 1.3.16: CII-SR-461 is count(ram:ApplicableTradeTax/ram:TaxPointDate) <= 1 in the header settlement.
  const expected: Record<string, string[]> = { 'CII_example1.xml': [], 'CII_example2.xml': ['CII-SR-461'], 'CII_example3.xml': [], 'CII_example9.xml': [] };
  for (const [file, fatal] of Object.entries(expected)) {
    const xml = readFileSync(new URL(`./en16931-official/${file}`, import.meta.url), 'utf8');
    assert.equal(await ids(xml), fatal, file);
  }
});

test('BR-CO-09: the VAT identifier prefix is an ISO 3166-1 alpha-2 code (or EL), not just two capitals', async () => {
  const vat = (id: string) => ids(edit(BASE, '<ram:ID schemeID="VA">DE123456789</ram:ID>', `<ram:ID schemeID="VA">${id}</ram:ID>`));
  for (const ok of ['DE123456789', 'EL123456789', 'GR123456789', 'XI123456789', '1A123456789']) assert.equal(await vat(ok), [], ok);
  for (const bad of ['QQ123456789', 'XX123456789', 'de123456789', ' DE123456789', 'D']) assert.equal(await vat(bad), ['BR-CO-09'], bad);
});

test('BR-CO-15: exactly one VAT total in the invoice currency (two fail, even when both are right)', async () => {
  const total = '<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>';
  assert.equal(await ids(edit(BASE, total, total + total)), ['BR-CO-15']);
  // Without a VAT total, a grand total equal to the taxable amount is accepted; otherwise it is not.
  assert.equal(await ids(edit(BASE, total, '')), ['BR-CO-15']);
});

test('decimal arithmetic: no binary float surprises, XPath rounding (halves up), absolute values where the rules take them', () => {
  const r2 = (s: string) => D.format(D.round2(D.dec(s) as D.Dec));
  assert.is(r2('1.005'), '1.01'); // 1.005 * 100 is 100.49999999999999 in binary floating point
  assert.is(r2('13.775'), '13.78');
  assert.is(r2('-13.775'), '-13.77'); // XPath round(): halves toward positive infinity
  assert.is(D.format(D.round2(D.abs(D.dec('-13.775') as D.Dec))), '13.78'); // as BR-CO-17 and BR-S-09 round: abs first
  assert.is(D.format(D.add(D.dec('0.1') as D.Dec, D.dec('0.2') as D.Dec)), '0.30');
  assert.ok(D.eq(D.dec('275.500'), D.dec('275.5')));
  assert.is(D.dec('1e3'), null);
});

test('negative breakdowns (credit notes): BR-CO-17 and BR-S-09 compare absolute values, rounded after abs', async () => {
  // One line of -72.50 at 19 %: 13.775 of VAT, 13.78 when rounded as the artefacts do.
  const credit = (vat: string) =>
    edits(
      invoiceXml(),
      ['<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>-322.50</ram:LineTotalAmount>'],
      ['<ram:ChargeAmount>120.00</ram:ChargeAmount>', '<ram:ChargeAmount>32.25</ram:ChargeAmount>'],
      ['unitCode="HUR">10<', 'unitCode="HUR">-10<'],
      ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', `<ram:CalculatedAmount>${vat}</ram:CalculatedAmount>`],
      ['<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>-72.50</ram:BasisAmount>'],
      ['<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>-72.50</ram:LineTotalAmount>'],
      ['<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>', '<ram:TaxBasisTotalAmount>-72.50</ram:TaxBasisTotalAmount>'],
      ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', `<ram:TaxTotalAmount currencyID="EUR">${vat}</ram:TaxTotalAmount>`],
      [
        '<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>',
        `<ram:GrandTotalAmount>${D.format(D.add(D.dec('-72.50') as D.Dec, D.dec(vat) as D.Dec))}</ram:GrandTotalAmount>`,
      ],
      [
        '<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>',
        `<ram:DuePayableAmount>${D.format(D.add(D.dec('-72.50') as D.Dec, D.dec(vat) as D.Dec))}</ram:DuePayableAmount>`,
      ],
    );
  assert.equal(await ids(credit('-13.78')), []);
  assert.equal(await ids(credit('-13.77')), []); // within 1, as the artefacts allow
  assert.equal(await ids(credit('13.78')), []); // the sign is not compared (abs on both sides)
  assert.equal(await ids(credit('-15.00')), ['BR-CO-17', 'BR-S-09']);
});

test('no rule is silenced by another one failing', async () => {
  // BR-S-09 with BR-S-08: a wrong taxable amount is checked against the tax too.
  assert.equal(await ids(edit(BASE, '<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>1550.00</ram:BasisAmount>')), [
    'BR-CO-17',
    'BR-S-08',
    'BR-S-09',
  ]);
  // BR-CO-10 and BR-CO-13 when a line has no net amount (the header still sums what there is).
  assert.equal(await ids(edit(BASE, '<ram:LineTotalAmount>250.00</ram:LineTotalAmount>', '')), ['BR-24', 'BR-CO-10', 'BR-S-08']);
  assert.equal(await ids(edits(BASE, ['<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', ''])), ['BR-12', 'BR-CO-10', 'BR-CO-13']);
  // BR-27 when the net price is missing (with BR-26 and CII-SR-439).
  assert.equal(await ids(edit(BASE, '<ram:ChargeAmount>250.00</ram:ChargeAmount>', '')), ['BR-26', 'BR-27', 'CII-SR-439']);
});

test('BR-10 and BR-11 are reported when the buyer or its address is removed, as BR-09 is for the seller', async () => {
  const buyer = BASE.slice(BASE.indexOf('<ram:BuyerTradeParty>'), BASE.indexOf('</ram:BuyerTradeParty>') + '</ram:BuyerTradeParty>'.length);
  assert.equal(await ids(edit(BASE, buyer, '')), ['BR-07', 'BR-10', 'BR-11']);
  const seller =
    '<ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode><ram:LineOne>Musterstrasse 1</ram:LineOne><ram:CityName>Berlin</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>';
  assert.equal(await ids(edit(BASE, seller, '')), ['BR-08', 'BR-09']);
});

test('the CII syntax binding: CII-DT fatal, CII-SR with their flags (most are warnings)', async () => {
  // A date under format 102 must be YYYYMMDD with a real month and day.
  for (const bad of ['2016-04-04', '20161304', '20160432', '2016044']) {
    assert.equal(
      await ids(edit(BASE, '<udt:DateTimeString format="102">20261123</udt:DateTimeString>', `<udt:DateTimeString format="102">${bad}</udt:DateTimeString>`)),
      ['CII-DT-097'],
      bad,
    );
  }
  // Elements the EN 16931 subset of CII leaves out: warnings only, the invoice stays valid.
  const withTest = edit(
    BASE,
    '<ram:GuidelineSpecifiedDocumentContextParameter>',
    '<ram:TestIndicator><udt:Indicator>true</udt:Indicator></ram:TestIndicator><ram:GuidelineSpecifiedDocumentContextParameter>',
  );
  assert.equal(await ids(withTest), []);
  assert.equal(await warnings(withTest), ['CII-SR-002']);
  // ... and the ones that are fatal: a building number in an address, a second net price, an amount with a currency.
  assert.equal(await ids(edit(BASE, '<ram:CityName>Berlin</ram:CityName>', '<ram:CityName>Berlin</ram:CityName><ram:BuildingNumber>1</ram:BuildingNumber>')), [
    'CII-DT-094',
  ]);
  assert.equal(
    await ids(
      edit(BASE, '<ram:ChargeAmount>120.00</ram:ChargeAmount>', '<ram:ChargeAmount>120.00</ram:ChargeAmount><ram:ChargeAmount>120.00</ram:ChargeAmount>'),
    ),
    ['CII-SR-439', 'CII-SR-441'],
  );
  assert.equal(
    await ids(edit(BASE, '<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', '<ram:LineTotalAmount currencyID="EUR">1200.00</ram:LineTotalAmount>')),
    ['CII-DT-031'],
  );
  // The guideline must exist exactly once (CII-SR-009/010), and no language on the root (CII-DT-013).
  assert.equal(await ids(edit(BASE, '<rsm:CrossIndustryInvoice ', '<rsm:CrossIndustryInvoice languageID="de" ')), ['CII-DT-013']);
});

test('departures from the artefacts, from the rule text: BR-AF-08 reads the breakdown rate; BR-CO-25 is a warning', async () => {
  // An IGIC (L) breakdown whose taxable amount is not its lines': the artefacts read a rate from the settlement (none:
  // the rule always holds); the rule text wants the amount of the lines at that rate.
  const igic = edits(
    BASE,
    [
      '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent>',
      '<ram:CategoryCode>L</ram:CategoryCode><ram:RateApplicablePercent>7</ram:RateApplicablePercent>',
    ],
    [
      '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent>',
      '<ram:CategoryCode>L</ram:CategoryCode><ram:RateApplicablePercent>7</ram:RateApplicablePercent>',
    ],
    ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', '<ram:CalculatedAmount>101.50</ram:CalculatedAmount>'],
    [
      '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent>',
      '<ram:CategoryCode>L</ram:CategoryCode><ram:RateApplicablePercent>7</ram:RateApplicablePercent>',
    ],
    ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">101.50</ram:TaxTotalAmount>'],
    ['<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', '<ram:GrandTotalAmount>1551.50</ram:GrandTotalAmount>'],
    ['<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>1551.50</ram:DuePayableAmount>'],
  );
  assert.equal(await ids(igic), []);
  assert.equal(await ids(edit(igic, '<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>1400.00</ram:BasisAmount>')), ['BR-AF-08', 'BR-AF-09']);
  const noTerms = edit(
    BASE,
    '<ram:SpecifiedTradePaymentTerms><ram:DueDateDateTime><udt:DateTimeString format="102">20261223</udt:DateTimeString></ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>',
    '',
  );
  assert.equal(await ids(noTerms), []);
  assert.equal(await warnings(noTerms), ['BR-CO-25']);
});

test('a large invoice (over 1 MB) is checked in a worker thread, with the same findings as in-process', async () => {
  const xml = BASE;
  const first = xml.indexOf('<ram:IncludedSupplyChainTradeLineItem>');
  const end = xml.indexOf('</ram:IncludedSupplyChainTradeLineItem>') + '</ram:IncludedSupplyChainTradeLineItem>'.length;
  const lines = Array.from({ length: 1500 }, () => xml.slice(first, end)).join('\n');
  const big = xml.slice(0, first) + lines + xml.slice(end);
  assert.ok(big.length > 1024 * 1024, String(big.length));
  const dir = mkdtempSync(join(tmpdir(), 'quire-en16931-big-'));
  try {
    const file = join(dir, 'big.xml');
    writeFileSync(file, big);
    const threaded = await businessRulesOfFile(file, {});
    const inline = checkEn16931(big);
    assert.ok(threaded.length > 0 && threaded.some((f) => f.id === 'BR-CO-10'));
    assert.equal(
      threaded.map((f) => [f.id, f.location]),
      inline.map((f) => [f.id, f.location]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
