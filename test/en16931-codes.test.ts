import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CODE_LISTS, checkCodeLists } from '../app/invoice/index.js';
import { edit, en16931Findings, fatalIds, invoiceXml, MINIMUM } from './zugferd-fixtures.js';

/**
 * The code-list rules BR-CL-* (app/invoice/en16931-cii.ts, lists in en16931-code-lists.ts as CEN's CII artefacts
 * 1.3.16 hold them): every list code passes and a foreign one fires exactly its rule (the pattern alone, in bulk),
 * and on real invoices through all the EN 16931 rules each rule stays silent on valid codes and fires on a wrong one.
 */

const NS = `xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100" xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100"`;

/** Which list each rule looks codes up in. */
const RULE_LISTS: Record<string, keyof typeof CODE_LISTS> = {
  'BR-CL-01': 'untdid1001',
  'BR-CL-03': 'iso4217',
  'BR-CL-04': 'iso4217',
  'BR-CL-05': 'iso4217',
  'BR-CL-06': 'untdid2005',
  'BR-CL-07': 'untdid1153',
  'BR-CL-08': 'untdid4451',
  'BR-CL-10': 'iso6523',
  'BR-CL-11': 'iso6523',
  'BR-CL-13': 'untdid7143',
  'BR-CL-14': 'iso3166',
  'BR-CL-15': 'iso3166',
  'BR-CL-16': 'untdid4461',
  'BR-CL-17': 'untdid5305',
  'BR-CL-18': 'untdid5305',
  'BR-CL-19': 'untdid5189',
  'BR-CL-20': 'untdid7161',
  'BR-CL-21': 'iso6523',
  'BR-CL-22': 'vatex',
  'BR-CL-23': 'rec20',
  'BR-CL-24': 'mime',
  'BR-CL-25': 'eas',
  'BR-CL-26': 'iso6523',
};
const codes = (id: string) => CODE_LISTS[RULE_LISTS[id]].split(' ');

test('the lists hold the usual codes and the EN 16931 additions, as the artefacts do', () => {
  const has = (id: string, list: string[]) => {
    for (const c of list) assert.ok(codes(id).includes(c), `${id} lacks ${c}`);
  };
  has('BR-CL-23', ['HUR', 'C62', 'H87', 'XPP', 'KGM', 'DAY', 'LTR', 'MTQ']);
  has('BR-CL-04', ['EUR', 'USD', 'GBP', 'CHF', 'JPY', 'CNH', 'SLE', 'VED', 'ZWG']);
  has('BR-CL-14', ['DE', 'FR', 'XI', '1A', 'GB', 'US']);
  has('BR-CL-01', ['380', '381', '384', '389', '751']);
  has('BR-CL-18', ['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M', 'B']);
  assert.equal(codes('BR-CL-06'), ['5', '29', '72']);
  // The artefacts' ICD list ends in "0244" with no space after it: 0244 is never found there.
  assert.not.ok(codes('BR-CL-10').includes('0244'));
  assert.ok(codes('BR-CL-25').includes('0244'));
});

// ---- The pattern alone, on probe documents. ----

/** Each rule's coded element, in a minimal surrounding that matches its context. */
const PROBE: Record<string, (c: string) => string> = {
  'BR-CL-01': (c) => `<ram:TypeCode>${c}</ram:TypeCode>`,
  'BR-CL-03': (c) => `<ram:TaxTotalAmount currencyID="${c}">1.00</ram:TaxTotalAmount>`,
  'BR-CL-04': (c) => `<ram:InvoiceCurrencyCode>${c}</ram:InvoiceCurrencyCode>`,
  'BR-CL-05': (c) => `<ram:TaxCurrencyCode>${c}</ram:TaxCurrencyCode>`,
  'BR-CL-06': (c) => `<ram:ApplicableTradeTax><ram:DueDateTypeCode>${c}</ram:DueDateTypeCode></ram:ApplicableTradeTax>`,
  'BR-CL-07': (c) =>
    `<ram:AdditionalReferencedDocument><ram:TypeCode>130</ram:TypeCode><ram:ReferenceTypeCode>${c}</ram:ReferenceTypeCode></ram:AdditionalReferencedDocument>`,
  'BR-CL-08': (c) => `<ram:IncludedNote><ram:SubjectCode>${c}</ram:SubjectCode></ram:IncludedNote>`,
  'BR-CL-10': (c) => `<ram:PayeeTradeParty><ram:GlobalID schemeID="${c}">1</ram:GlobalID></ram:PayeeTradeParty>`,
  'BR-CL-11': (c) => `<ram:SpecifiedLegalOrganization><ram:ID schemeID="${c}">1</ram:ID></ram:SpecifiedLegalOrganization>`,
  'BR-CL-13': (c) => `<ram:DesignatedProductClassification><ram:ClassCode listID="${c}">1</ram:ClassCode></ram:DesignatedProductClassification>`,
  'BR-CL-14': (c) => `<ram:PostalTradeAddress><ram:CountryID>${c}</ram:CountryID></ram:PostalTradeAddress>`,
  'BR-CL-15': (c) => `<ram:OriginTradeCountry><ram:ID>${c}</ram:ID></ram:OriginTradeCountry>`,
  'BR-CL-16': (c) => `<ram:SpecifiedTradeSettlementPaymentMeans><ram:TypeCode>${c}</ram:TypeCode></ram:SpecifiedTradeSettlementPaymentMeans>`,
  'BR-CL-17': (c) => `<ram:CategoryTradeTax><ram:CategoryCode>${c}</ram:CategoryCode></ram:CategoryTradeTax>`,
  'BR-CL-18': (c) => `<ram:ApplicableTradeTax><ram:CategoryCode>${c}</ram:CategoryCode></ram:ApplicableTradeTax>`,
  'BR-CL-19': (c) =>
    `<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>false</udt:Indicator></ram:ChargeIndicator><ram:ReasonCode>${c}</ram:ReasonCode></ram:SpecifiedTradeAllowanceCharge>`,
  'BR-CL-20': (c) =>
    `<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>true</udt:Indicator></ram:ChargeIndicator><ram:ReasonCode>${c}</ram:ReasonCode></ram:SpecifiedTradeAllowanceCharge>`,
  'BR-CL-21': (c) => `<ram:SpecifiedTradeProduct><ram:GlobalID schemeID="${c}">1</ram:GlobalID></ram:SpecifiedTradeProduct>`,
  'BR-CL-22': (c) => `<ram:ApplicableTradeTax><ram:ExemptionReasonCode>${c}</ram:ExemptionReasonCode></ram:ApplicableTradeTax>`,
  'BR-CL-23': (c) => `<ram:BilledQuantity unitCode="${c}">1</ram:BilledQuantity>`,
  'BR-CL-24': (c) => `<ram:AttachmentBinaryObject mimeCode="${c}" filename="a.bin">AA==</ram:AttachmentBinaryObject>`,
  'BR-CL-25': (c) => `<ram:URIUniversalCommunication><ram:URIID schemeID="${c}">x@example.com</ram:URIID></ram:URIUniversalCommunication>`,
  'BR-CL-26': (c) =>
    `<ram:ApplicableHeaderTradeDelivery><ram:ShipToTradeParty><ram:GlobalID schemeID="${c}">1</ram:GlobalID></ram:ShipToTradeParty></ram:ApplicableHeaderTradeDelivery>`,
};

/** Runs the code-list pattern alone on a probe with the given (rule, code) pairs; returns the fired ids, sorted. */
function probe(pairs: [string, string][]): { ids: string[]; texts: string[] } {
  // BR-CL-01's context is the document's type code; every other context matches anywhere.
  const header = pairs.filter(([id]) => id === 'BR-CL-01').map(([id, c]) => PROBE[id](c));
  const rest = pairs.filter(([id]) => id !== 'BR-CL-01').map(([id, c]) => PROBE[id](c));
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<rsm:CrossIndustryInvoice ${NS}><rsm:ExchangedDocument>${header.join('')}</rsm:ExchangedDocument>` +
    `<rsm:SupplyChainTradeTransaction><ram:ApplicableHeaderTradeSettlement>${rest.join('\n')}</ram:ApplicableHeaderTradeSettlement></rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>\n`;
  const found = checkCodeLists(xml);
  for (const f of found) assert.is(f.flag, 'fatal', f.id);
  return { ids: found.map((f) => f.id).sort(), texts: found.map((f) => f.message) };
}

test('every rule has a probe, and every rule number of BR-CL-01..26 but 02, 09 and 12 is implemented', () => {
  const ids = Object.keys(RULE_LISTS).sort();
  assert.equal(Object.keys(PROBE).sort(), ids);
  const expected = Array.from({ length: 26 }, (_, i) => `BR-CL-${String(i + 1).padStart(2, '0')}`).filter(
    (id) => !['BR-CL-02', 'BR-CL-09', 'BR-CL-12'].includes(id),
  );
  assert.equal(ids, expected);
});

test('the pattern alone: every code of every list passes (all the unit codes, reference qualifiers ...)', () => {
  const pairs = Object.keys(RULE_LISTS).flatMap((id) => codes(id).map((c): [string, string] => [id, c]));
  assert.ok(pairs.length > 5000, String(pairs.length));
  assert.equal(probe(pairs).ids, []);
});

test('the pattern alone: a foreign code fires exactly its rule, once per wrong element', () => {
  // Wrong case, a code of a neighbouring list, two codes in one value, an empty value, padding (which passes).
  const bad: [string, string][] = Object.keys(RULE_LISTS).map((id) => [id, 'QQ9']);
  bad.push(['BR-CL-04', 'eur'], ['BR-CL-03', 'EUR USD'], ['BR-CL-14', 'XK'], ['BR-CL-14', 'DEU'], ['BR-CL-17', 'A'], ['BR-CL-18', 'VAT']);
  bad.push(['BR-CL-19', 'FC'], ['BR-CL-20', '95'], ['BR-CL-23', ''], ['BR-CL-24', 'application/zip'], ['BR-CL-06', '3'], ['BR-CL-10', '0244']);
  const good: [string, string][] = [
    ['BR-CL-04', ' EUR '],
    ['BR-CL-23', '  HUR'],
    ['BR-CL-19', '95'],
    ['BR-CL-20', 'FC'],
    ['BR-CL-22', 'vatex-eu-ae'],
  ];
  const { ids, texts } = probe([...bad, ...good]);
  assert.equal(ids, bad.map(([id]) => id).sort());
  assert.ok(texts.includes("[BR-CL-03] currencyID MUST be coded using ISO code list 4217 alpha-3: 'EUR USD' is not in the list."), texts.join('\n'));
});

// ---- Real invoices through the whole EN 16931 schema (every pattern): valid codes are silent, a wrong one fires. ----

const base = invoiceXml();
const SELLER_NAME = '<ram:Name>Quire Test Seller GmbH</ram:Name>';
const SELLER_COUNTRY = '<ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>';
const PRODUCT = '<ram:SpecifiedTradeProduct><ram:Name>Consulting services</ram:Name></ram:SpecifiedTradeProduct>';
const BREAKDOWN = '<ram:BasisAmount>1450.00</ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode>';
const TERMS = '<ram:SpecifiedTradePaymentTerms>';
const AGREEMENT_END = '</ram:BuyerTradeParty>';

/** A document level allowance of 10.00 and a charge of 10.00 (both S 19 %), so that every total stays as it was. */
function allowanceAndCharge(o: { allowanceCode?: string; chargeCode?: string; category?: string }): string {
  const ac = (charge: boolean, code: string, reason: string) =>
    `<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>${charge}</udt:Indicator></ram:ChargeIndicator><ram:ActualAmount>10.00</ram:ActualAmount><ram:ReasonCode>${code}</ram:ReasonCode><ram:Reason>${reason}</ram:Reason><ram:CategoryTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>${o.category ?? 'S'}</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:CategoryTradeTax></ram:SpecifiedTradeAllowanceCharge>`;
  let xml = edit(base, TERMS, `${ac(false, o.allowanceCode ?? '95', 'Discount')}${ac(true, o.chargeCode ?? 'FC', 'Freight')}${TERMS}`);
  xml = edit(
    xml,
    '<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>',
    '<ram:LineTotalAmount>1450.00</ram:LineTotalAmount><ram:ChargeTotalAmount>10.00</ram:ChargeTotalAmount><ram:AllowanceTotalAmount>10.00</ram:AllowanceTotalAmount>',
  );
  return xml;
}

/** The fixture switched to exempt (E, 0 %) with an exemption reason text and code in its VAT breakdown. */
function exempt(code: string): string {
  let xml = edit(
    base,
    '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent>',
    '<ram:CategoryCode>E</ram:CategoryCode><ram:RateApplicablePercent>0</ram:RateApplicablePercent>',
    true,
  );
  xml = edit(
    xml,
    '<ram:CalculatedAmount>275.50</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode>',
    '<ram:CalculatedAmount>0.00</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode><ram:ExemptionReason>Exempt medical care</ram:ExemptionReason>',
  );
  xml = edit(
    xml,
    '<ram:CategoryCode>E</ram:CategoryCode><ram:RateApplicablePercent>0</ram:RateApplicablePercent></ram:ApplicableTradeTax>\n      <ram:SpecifiedTradePaymentTerms>',
    `<ram:CategoryCode>E</ram:CategoryCode><ram:ExemptionReasonCode>${code}</ram:ExemptionReasonCode><ram:RateApplicablePercent>0</ram:RateApplicablePercent></ram:ApplicableTradeTax>\n      <ram:SpecifiedTradePaymentTerms>`,
  );
  xml = edit(xml, '<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">0.00</ram:TaxTotalAmount>');
  xml = edit(xml, '<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', '<ram:GrandTotalAmount>1450.00</ram:GrandTotalAmount>');
  return edit(xml, '<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>1450.00</ram:DuePayableAmount>');
}

interface Case {
  id: string;
  build: (code: string) => string;
  valid: string[];
  invalid: string[];
  /** What a wrong code fires when it has to go into more than one element (default: [id]). */
  fires?: string[];
}

const CASES: Case[] = [
  {
    id: 'BR-CL-01',
    build: (c) => edit(base, '<ram:TypeCode>380</ram:TypeCode>', `<ram:TypeCode>${c}</ram:TypeCode>`),
    valid: ['380', '381', '384', '389', ' 380 '],
    invalid: ['999', '38O', 'invoice'],
  },
  // The artefacts check the currency of the VAT total only (no other amount may carry one: CII-DT-031); a VAT
  // total in no invoice currency leaves BR-CO-15 without its one total in the invoice currency.
  {
    id: 'BR-CL-03',
    build: (c) => edit(base, 'currencyID="EUR"', `currencyID="${c}"`),
    valid: ['EUR'],
    invalid: ['EURO', 'eur', '€'],
    fires: ['BR-CL-03', 'BR-CO-15'],
  },
  {
    id: 'BR-CL-04',
    build: (c) =>
      edit(
        edit(base, '<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>', `<ram:InvoiceCurrencyCode>${c}</ram:InvoiceCurrencyCode>`),
        'currencyID="EUR"',
        `currencyID="${c}"`,
      ),
    valid: ['EUR', 'USD', 'CHF', 'CNH'],
    invalid: ['EURO', 'US$', 'HRK'],
    fires: ['BR-CL-03', 'BR-CL-04'],
  },
  {
    id: 'BR-CL-05',
    build: (c) =>
      edit(
        edit(
          base,
          '<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>',
          `<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode><ram:TaxCurrencyCode>${c}</ram:TaxCurrencyCode>`,
        ),
        '<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>',
        `<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount><ram:TaxTotalAmount currencyID="${c}">300.00</ram:TaxTotalAmount>`,
      ),
    valid: ['USD', 'GBP', 'SEK'],
    invalid: ['DOLLAR'],
    fires: ['BR-CL-03', 'BR-CL-05'],
  },
  {
    id: 'BR-CL-06',
    build: (c) => edit(base, BREAKDOWN, `${BREAKDOWN}<ram:DueDateTypeCode>${c}</ram:DueDateTypeCode>`),
    valid: ['5', '29', '72'],
    invalid: ['3', '35', '432'],
  },
  {
    id: 'BR-CL-07',
    build: (c) =>
      edit(
        base,
        AGREEMENT_END,
        `${AGREEMENT_END}<ram:AdditionalReferencedDocument><ram:IssuerAssignedID>OBJ-77</ram:IssuerAssignedID><ram:TypeCode>130</ram:TypeCode><ram:ReferenceTypeCode>${c}</ram:ReferenceTypeCode></ram:AdditionalReferencedDocument>`,
      ),
    valid: ['AAG', 'ABZ', 'AVS'],
    invalid: ['XX', 'aag'],
  },
  {
    id: 'BR-CL-08',
    build: (c) => edit(base, 'your trust.</ram:Content>', `your trust.</ram:Content><ram:SubjectCode>${c}</ram:SubjectCode>`),
    valid: ['AAI', 'REG', 'ABL', 'SUR'],
    invalid: ['NOTE', 'aai'],
  },
  {
    id: 'BR-CL-10',
    build: (c) => edit(base, SELLER_NAME, `<ram:GlobalID schemeID="${c}">4000001123452</ram:GlobalID>${SELLER_NAME}`),
    valid: ['0088', '0060', '0204'],
    invalid: ['88', 'GLN'],
  },
  {
    id: 'BR-CL-11',
    build: (c) =>
      edit(base, SELLER_NAME, `${SELLER_NAME}<ram:SpecifiedLegalOrganization><ram:ID schemeID="${c}">HRB 12345</ram:ID></ram:SpecifiedLegalOrganization>`),
    valid: ['0002', '0208', '0009'],
    invalid: ['HRB', '0092'],
  },
  {
    id: 'BR-CL-13',
    build: (c) =>
      edit(
        base,
        PRODUCT,
        `<ram:SpecifiedTradeProduct><ram:Name>Consulting services</ram:Name><ram:DesignatedProductClassification><ram:ClassCode listID="${c}">72224000</ram:ClassCode></ram:DesignatedProductClassification></ram:SpecifiedTradeProduct>`,
      ),
    valid: ['STI', 'HS', 'ZZZ'],
    invalid: ['CPV', 'sti'],
  },
  {
    id: 'BR-CL-14',
    build: (c) => edit(base, '<ram:CountryID>FR</ram:CountryID>', `<ram:CountryID>${c}</ram:CountryID>`),
    valid: ['FR', 'DE', 'US', 'XI', '1A'],
    invalid: ['XK', 'FRA', 'fr'],
  },
  {
    id: 'BR-CL-15',
    build: (c) =>
      edit(
        base,
        PRODUCT,
        `<ram:SpecifiedTradeProduct><ram:Name>Consulting services</ram:Name><ram:OriginTradeCountry><ram:ID>${c}</ram:ID></ram:OriginTradeCountry></ram:SpecifiedTradeProduct>`,
      ),
    valid: ['DE', 'CN', 'XI'],
    invalid: ['DEU', 'EU'],
  },
  {
    id: 'BR-CL-16',
    build: (c) => edit(base, '<ram:TypeCode>58</ram:TypeCode>', `<ram:TypeCode>${c}</ram:TypeCode>`),
    valid: ['58', '30', '49', '10', 'ZZZ'],
    invalid: ['71', '99', 'SEPA'],
  },
  { id: 'BR-CL-17', build: (c) => allowanceAndCharge({ category: c }), valid: ['S'], invalid: ['A', 's'], fires: ['BR-CL-17', 'BR-CL-17'] },
  // All three VAT categories of the invoice (two lines, one breakdown), so that the VAT rules still agree.
  {
    id: 'BR-CL-18',
    build: (c) => edit(base, '<ram:CategoryCode>S</ram:CategoryCode>', `<ram:CategoryCode>${c}</ram:CategoryCode>`, true),
    valid: ['S'],
    invalid: ['A', 'VAT'],
    fires: ['BR-CL-18', 'BR-CL-18', 'BR-CL-18'],
  },
  { id: 'BR-CL-19', build: (c) => allowanceAndCharge({ allowanceCode: c }), valid: ['95', '100', '41', '104'], invalid: ['FC', '99', '1'] },
  { id: 'BR-CL-20', build: (c) => allowanceAndCharge({ chargeCode: c }), valid: ['FC', 'ABL', 'ZZZ', 'AA'], invalid: ['95', 'FREIGHT'] },
  {
    id: 'BR-CL-21',
    build: (c) =>
      edit(
        base,
        PRODUCT,
        `<ram:SpecifiedTradeProduct><ram:GlobalID schemeID="${c}">4012345678901</ram:GlobalID><ram:Name>Consulting services</ram:Name></ram:SpecifiedTradeProduct>`,
      ),
    valid: ['0160', '0088'],
    invalid: ['GTIN', 'EAN'],
  },
  {
    id: 'BR-CL-22',
    build: exempt,
    valid: ['VATEX-EU-132-1C', 'VATEX-EU-132', 'VATEX-FR-FRANCHISE', 'vatex-eu-132-1a', 'Vatex-Eu-O'],
    invalid: ['VATEX-EU-999', 'EU-132', 'vatex-eu-999'],
  },
  {
    id: 'BR-CL-23',
    build: (c) => edit(base, 'unitCode="C62"', `unitCode="${c}"`),
    valid: ['C62', 'H87', 'XPP', 'HUR', 'KGM', 'LS'],
    invalid: ['PCS', 'PIECE', 'c62', 'HUR C62'],
  },
  {
    id: 'BR-CL-24',
    build: (c) =>
      edit(
        base,
        AGREEMENT_END,
        `${AGREEMENT_END}<ram:AdditionalReferencedDocument><ram:IssuerAssignedID>TS-1</ram:IssuerAssignedID><ram:TypeCode>916</ram:TypeCode><ram:AttachmentBinaryObject mimeCode="${c}" filename="timesheet">JVBERi0xLjQK</ram:AttachmentBinaryObject></ram:AdditionalReferencedDocument>`,
      ),
    valid: [
      'application/pdf',
      'image/png',
      'image/jpeg',
      'text/csv',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.oasis.opendocument.spreadsheet',
    ],
    invalid: ['application/zip', 'image/gif', 'text/plain', 'PDF'],
  },
  {
    id: 'BR-CL-25',
    build: (c) =>
      edit(
        base,
        SELLER_COUNTRY,
        `${SELLER_COUNTRY}<ram:URIUniversalCommunication><ram:URIID schemeID="${c}">billing@seller.example</ram:URIID></ram:URIUniversalCommunication>`,
      ),
    valid: ['EM', '0088', '9930', '0204'],
    invalid: ['EMAIL', '9999', 'em'],
  },
  {
    id: 'BR-CL-26',
    build: (c) =>
      edit(
        base,
        '<ram:ApplicableHeaderTradeDelivery/>',
        `<ram:ApplicableHeaderTradeDelivery><ram:ShipToTradeParty><ram:GlobalID schemeID="${c}">4000001987658</ram:GlobalID><ram:Name>Warehouse 3</ram:Name></ram:ShipToTradeParty></ram:ApplicableHeaderTradeDelivery>`,
      ),
    valid: ['0088', '0060'],
    invalid: ['GLN', '88'],
  },
];

test('every rule has a real-invoice case', () => {
  assert.equal(CASES.map((c) => c.id).sort(), Object.keys(RULE_LISTS).sort());
});

for (const c of CASES) {
  test(`${c.id} on a real invoice: ${c.valid.join(', ')} pass; ${c.invalid.join(', ')} fire it`, async () => {
    for (const code of c.valid) {
      const findings = await en16931Findings(c.build(code));
      assert.equal(
        findings.map((f) => f.id),
        [],
        `${c.id} valid '${code}': ${findings.map((f) => f.message).join(' | ')}`,
      );
    }
    for (const code of c.invalid) {
      const findings = await en16931Findings(c.build(code));
      assert.equal(fatalIds(findings), c.fires ?? [c.id], `${c.id} invalid '${code}': ${findings.map((f) => f.message).join(' | ')}`);
      const mine = findings.find((f) => f.id === c.id)!;
      assert.ok(mine.message.includes(`'${code.trim()}' is not in the list`) || code.includes(' '), mine.message);
    }
  });
}

test('locations: a wrong unit on the second line and a wrong item scheme point at those elements', async () => {
  const unit = await en16931Findings(edit(base, 'unitCode="C62"', 'unitCode="PCS"'));
  assert.equal(
    unit.map((f) => f.location),
    ['/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:IncludedSupplyChainTradeLineItem[2]/ram:SpecifiedLineTradeDelivery/ram:BilledQuantity'],
  );
  const item = await en16931Findings(CASES.find((c) => c.id === 'BR-CL-21')!.build('GTIN'));
  assert.equal(
    item.map((f) => [f.id, f.location]),
    [['BR-CL-21', '/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:IncludedSupplyChainTradeLineItem[1]/ram:SpecifiedTradeProduct/ram:GlobalID']],
  );
});

test('a reference type code is checked against UNTDID 1153 wherever it is; outside an invoiced object (130) CII-DT-024 refuses it', async () => {
  const other = edit(
    base,
    AGREEMENT_END,
    `${AGREEMENT_END}<ram:AdditionalReferencedDocument><ram:IssuerAssignedID>TS-1</ram:IssuerAssignedID><ram:TypeCode>916</ram:TypeCode><ram:ReferenceTypeCode>whatever</ram:ReferenceTypeCode></ram:AdditionalReferencedDocument>`,
  );
  assert.equal(fatalIds(await en16931Findings(other)), ['BR-CL-07', 'CII-DT-024']);
  assert.equal(fatalIds(await en16931Findings(edit(other, 'whatever', 'AAG'))), ['CII-DT-024']);
});

test('codes are checked in every profile: MINIMUM with a wrong currency, and the untouched fixtures are silent', async () => {
  assert.equal(await en16931Findings(MINIMUM), []);
  assert.equal(await en16931Findings(base), []);
  const wrong = edit(
    edit(MINIMUM, '<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>', '<ram:InvoiceCurrencyCode>EURO</ram:InvoiceCurrencyCode>'),
    'currencyID="EUR"',
    'currencyID="EURO"',
  );
  assert.equal(fatalIds(await en16931Findings(wrong)), ['BR-CL-03', 'BR-CL-04']);
  const country = edit(MINIMUM, '<ram:CountryID>FR</ram:CountryID>', '<ram:CountryID>FRA</ram:CountryID>');
  assert.equal(fatalIds(await en16931Findings(country)), ['BR-CL-14']);
});

test.run();
