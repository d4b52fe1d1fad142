import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, en16931Findings, fatalIds, invoiceXml } from './zugferd-fixtures.js';

/**
 * The fatal rules of the CII syntax binding (CII-SR-*, CII-DT-* in app/invoice/en16931-cii.ts), one failing invoice
 * each, made from the valid fixture (which passes them all): what the EN 16931 subset of CII D16B leaves out and how
 * often an element may occur, as CEN's artefacts 1.3.16 check it. Each case lists every fatal id it gives.
 */

const BASE = invoiceXml();
const GUIDE = '<ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:cen.eu:en16931:2017</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>';
const DOC_ID = '<ram:ID>INV-2026-0042</ram:ID>';
const TYPE = '<ram:TypeCode>380</ram:TypeCode>';
const PRODUCT = '<ram:SpecifiedTradeProduct><ram:Name>Consulting services</ram:Name>';
const NET = '<ram:NetPriceProductTradePrice><ram:ChargeAmount>120.00</ram:ChargeAmount>';
const SELLER = '<ram:Name>Quire Test Seller GmbH</ram:Name>';
const BUYER = '<ram:Name>Example Buyer SARL</ram:Name>';
const SELLER_CITY = '<ram:CityName>Berlin</ram:CityName>';
const BUYER_END = '</ram:BuyerTradeParty>';
const HEADER_TAX = '<ram:BasisAmount>1450.00</ram:BasisAmount>';
const TERMS = '<ram:SpecifiedTradePaymentTerms>';

const ins = (anchor: string, extra: string) => edit(BASE, anchor, anchor + extra);
const period = (inner: string) =>
  ins('<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>', `<ram:BillingSpecifiedPeriod>${inner}</ram:BillingSpecifiedPeriod>`);
const start = '<ram:StartDateTime><udt:DateTimeString format="102">20261101</udt:DateTimeString></ram:StartDateTime>';
const referenced = (inner: string) =>
  ins(BUYER_END, `<ram:BuyerOrderReferencedDocument><ram:IssuerAssignedID>PO-1</ram:IssuerAssignedID>${inner}</ram:BuyerOrderReferencedDocument>`);

const CASES: [string, string, string[]?][] = [
  ['CII-SR-009', edit(BASE, GUIDE, ''), ['BR-01', 'CII-SR-009', 'CII-SR-010']],
  ['CII-SR-010', edit(BASE, GUIDE, GUIDE.replace('</ram:ID>', '</ram:ID><ram:ID>urn:cen.eu:en16931:2017</ram:ID>'))],
  ['CII-SR-014', ins(TYPE, TYPE)],
  ['CII-SR-046', ins(PRODUCT, '<ram:GlobalID>4012345678901</ram:GlobalID>'), ['BR-64', 'CII-SR-046']],
  [
    'CII-SR-069',
    ins(
      PRODUCT,
      '<ram:ApplicableProductCharacteristic><ram:Description>Level</ram:Description><ram:Description>Grade</ram:Description><ram:Value>Senior</ram:Value></ram:ApplicableProductCharacteristic>',
    ),
  ],
  [
    'CII-SR-072',
    ins(
      PRODUCT,
      '<ram:ApplicableProductCharacteristic><ram:Description>Level</ram:Description><ram:Value>Senior</ram:Value><ram:Value>Junior</ram:Value></ram:ApplicableProductCharacteristic>',
    ),
  ],
  ['CII-SR-090', ins(PRODUCT, '<ram:OriginTradeCountry></ram:OriginTradeCountry>')],
  [
    'CII-SR-440',
    edit(
      BASE,
      NET,
      `<ram:GrossPriceProductTradePrice><ram:ChargeAmount>130.00</ram:ChargeAmount><ram:AppliedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>false</udt:Indicator></ram:ChargeIndicator><ram:ActualAmount>10.00</ram:ActualAmount><ram:ActualAmount>10.00</ram:ActualAmount></ram:AppliedTradeAllowanceCharge></ram:GrossPriceProductTradePrice>${NET}`,
    ),
  ],
  [
    'CII-SR-455',
    ins(
      SELLER,
      '<ram:DefinedTradeContact><ram:PersonName>A</ram:PersonName></ram:DefinedTradeContact><ram:DefinedTradeContact><ram:PersonName>B</ram:PersonName></ram:DefinedTradeContact>',
    ),
  ],
  [
    'CII-SR-456',
    ins(
      BUYER,
      '<ram:DefinedTradeContact><ram:PersonName>A</ram:PersonName></ram:DefinedTradeContact><ram:DefinedTradeContact><ram:PersonName>B</ram:PersonName></ram:DefinedTradeContact>',
    ),
  ],
  [
    'CII-SR-459',
    edit(
      BASE,
      '<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID>',
      '<ram:URIUniversalCommunication><ram:URIID schemeID="EM">a@example.com</ram:URIID></ram:URIUniversalCommunication><ram:URIUniversalCommunication><ram:URIID schemeID="EM">b@example.com</ram:URIID></ram:URIUniversalCommunication><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID>',
    ),
  ],
  [
    'CII-SR-460',
    ins(
      BUYER,
      '<ram:URIUniversalCommunication><ram:URIID schemeID="EM">a@example.com</ram:URIID></ram:URIUniversalCommunication><ram:URIUniversalCommunication><ram:URIID schemeID="EM">b@example.com</ram:URIID></ram:URIUniversalCommunication>',
    ),
  ],
  [
    'CII-SR-461',
    ins(
      HEADER_TAX,
      '<ram:TaxPointDate><udt:DateString format="102">20261123</udt:DateString></ram:TaxPointDate><ram:TaxPointDate><udt:DateString format="102">20261124</udt:DateString></ram:TaxPointDate>',
    ),
  ],
  ['CII-SR-462', ins(HEADER_TAX, '<ram:DueDateTypeCode>5</ram:DueDateTypeCode><ram:DueDateTypeCode>29</ram:DueDateTypeCode>')],
  [
    'CII-SR-463',
    edit(
      BASE,
      TERMS,
      `<ram:SpecifiedTradeAllowanceCharge><ram:ActualAmount>0.00</ram:ActualAmount><ram:Reason>None</ram:Reason></ram:SpecifiedTradeAllowanceCharge>${TERMS}`,
    ),
  ],
  ...(['schemeName', 'schemeAgencyName', 'schemeDataURI', 'schemeURI'] as const).map((a, i): [string, string] => [
    `CII-DT-00${i + 1}`,
    edit(BASE, DOC_ID, `<ram:ID ${a}="x">INV-2026-0042</ram:ID>`),
  ]),
  ['CII-DT-005', edit(BASE, DOC_ID, '<ram:ID schemeID="0088">INV-2026-0042</ram:ID>')],
  ['CII-DT-006', edit(BASE, DOC_ID, '<ram:ID schemeAgencyID="x">INV-2026-0042</ram:ID>')],
  ['CII-DT-007', edit(BASE, DOC_ID, '<ram:ID schemeVersionID="1">INV-2026-0042</ram:ID>')],
  ['CII-DT-008', edit(BASE, TYPE, '<ram:TypeCode name="Invoice">380</ram:TypeCode>')],
  ['CII-DT-009', edit(BASE, TYPE, '<ram:TypeCode listURI="x">380</ram:TypeCode>')],
  ['CII-DT-014', edit(BASE, '<rsm:CrossIndustryInvoice ', '<rsm:CrossIndustryInvoice languageLocaleID="de-DE" ')],
  ['CII-DT-015', referenced('<ram:URIID>https://example.com/po</ram:URIID>')],
  ['CII-DT-016', referenced('<ram:StatusCode>1</ram:StatusCode>')],
  ['CII-DT-017', referenced('<ram:CopyIndicator><udt:Indicator>true</udt:Indicator></ram:CopyIndicator>')],
  ['CII-DT-018', referenced('<ram:TypeCode>220</ram:TypeCode>')],
  ['CII-DT-019', referenced('<ram:GlobalID schemeID="0088">1</ram:GlobalID>')],
  ['CII-DT-020', referenced('<ram:RevisionID>2</ram:RevisionID>')],
  ['CII-DT-021', referenced('<ram:Name>Order</ram:Name>')],
  ['CII-DT-022', referenced('<ram:AttachmentBinaryObject>AA==</ram:AttachmentBinaryObject>')],
  ['CII-DT-023', referenced('<ram:Information>x</ram:Information>')],
  ['CII-DT-024', referenced('<ram:ReferenceTypeCode>AAG</ram:ReferenceTypeCode>')],
  ['CII-DT-025', referenced('<ram:SectionName>x</ram:SectionName>')],
  ['CII-DT-026', referenced('<ram:PreviousRevisionID>1</ram:PreviousRevisionID>')],
  ['CII-DT-027', referenced('<ram:FormattedIssueDateTime><qdt:DateTimeString format="102">20261101</qdt:DateTimeString></ram:FormattedIssueDateTime>')],
  ['CII-DT-028', referenced('<ram:EffectiveSpecifiedPeriod></ram:EffectiveSpecifiedPeriod>')],
  ['CII-DT-029', referenced('<ram:IssuerTradeParty><ram:Name>x</ram:Name></ram:IssuerTradeParty>')],
  ['CII-DT-030', referenced('<ram:AttachedSpecifiedBinaryFile></ram:AttachedSpecifiedBinaryFile>')],
  [
    'CII-DT-032',
    edit(BASE, '<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', '<ram:LineTotalAmount currencyCodeListVersionID="1">1200.00</ram:LineTotalAmount>'),
  ],
  [
    'CII-DT-033',
    edit(
      edit(edit(BASE, ' unitCode="HUR"', ''), ' unitCode="C62"', ''),
      '<ram:ChargeAmount>120.00</ram:ChargeAmount>',
      '<ram:ChargeAmount>120.00</ram:ChargeAmount><ram:BasisQuantity unitCode="C62">1</ram:BasisQuantity>',
    ),
    ['BR-23', 'BR-23', 'CII-DT-033'],
  ],
  ...(['unitCodeListID', 'unitCodeListAgencyID', 'unitCodeListAgencyName'] as const).map((a, i): [string, string] => [
    `CII-DT-03${i + 4}`,
    edit(BASE, 'unitCode="HUR"', `unitCode="HUR" ${a}="x"`),
  ]),
  [
    'CII-DT-037',
    edit(
      BASE,
      '<ram:CalculatedAmount>275.50</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode>',
      '<ram:CalculatedAmount>275.50</ram:CalculatedAmount><ram:TypeCode>vat</ram:TypeCode>',
    ),
  ],
  ['CII-DT-068', period('<ram:StartDateTime><udt:DateTime>2026-11-01T00:00:00</udt:DateTime></ram:StartDateTime>')],
  ['CII-DT-072', period('<ram:EndDateTime><udt:DateTime>2026-11-30T00:00:00</udt:DateTime></ram:EndDateTime>')],
  ...(
    [
      ['069', '<ram:DurationMeasure>30</ram:DurationMeasure>'],
      ['070', '<ram:InclusiveIndicator><udt:Indicator>true</udt:Indicator></ram:InclusiveIndicator>'],
      ['071', '<ram:Description>November</ram:Description>'],
      ['073', '<ram:CompleteDateTime><udt:DateTimeString format="102">20261130</udt:DateTimeString></ram:CompleteDateTime>'],
      ['074', '<ram:OpenIndicator><udt:Indicator>false</udt:Indicator></ram:OpenIndicator>'],
      ['075', '<ram:SeasonCode>1</ram:SeasonCode>'],
      ['076', '<ram:ID>P1</ram:ID>'],
      ['077', '<ram:Name>November</ram:Name>'],
      ['078', '<ram:SequenceNumeric>1</ram:SequenceNumeric>'],
      ['079', '<ram:StartDateFlexibilityCode>1</ram:StartDateFlexibilityCode>'],
      ['080', '<ram:ContinuousIndicator><udt:Indicator>true</udt:Indicator></ram:ContinuousIndicator>'],
      ['081', '<ram:PurposeCode>1</ram:PurposeCode>'],
    ] as const
  ).map(([n, x]): [string, string] => [`CII-DT-${n}`, period(start + x)]),
  ...(
    [
      ['082', '<ram:ID>A1</ram:ID>'],
      ['083', '<ram:PostOfficeBox>12</ram:PostOfficeBox>'],
      ['084', '<ram:BuildingName>Tower</ram:BuildingName>'],
      ['086', '<ram:LineFour>x</ram:LineFour>'],
      ['087', '<ram:LineFive>x</ram:LineFive>'],
      ['088', '<ram:StreetName>Musterstrasse</ram:StreetName>'],
      ['089', '<ram:CitySubDivisionName>Mitte</ram:CitySubDivisionName>'],
      ['090', '<ram:CountryName>Germany</ram:CountryName>'],
      ['091', '<ram:CountrySubDivisionID>BE</ram:CountrySubDivisionID>'],
      ['092', '<ram:AttentionOf>A. Person</ram:AttentionOf>'],
      ['093', '<ram:CareOf>B. Person</ram:CareOf>'],
      ['095', '<ram:DepartmentName>Sales</ram:DepartmentName>'],
      ['096', '<ram:AdditionalStreetName>Hinterhof</ram:AdditionalStreetName>'],
    ] as const
  ).map(([n, x]): [string, string] => [`CII-DT-${n}`, ins(SELLER_CITY, x)]),
  ...(['schemeName', 'schemeAgencyName', 'schemeDataURI', 'schemeURI'] as const).map((a, i): [string, string] => [
    `CII-DT-10${i + 1}`,
    edit(BASE, '<ram:CountryID>DE</ram:CountryID>', `<ram:CountryID ${a}="x">DE</ram:CountryID>`),
  ]),
];

test('the fixture passes every syntax rule', async () => {
  assert.equal(fatalIds(await en16931Findings(BASE)), []);
});

for (const [id, xml, expected] of CASES) {
  test(`${id} fails`, async () => {
    assert.equal(fatalIds(await en16931Findings(xml)), expected ?? [id]);
  });
}

test('every fatal CII-SR / CII-DT rule has its case', async () => {
  const covered = new Set(CASES.map(([id]) => id));
  for (const id of ['CII-SR-439', 'CII-SR-441', 'CII-DT-013', 'CII-DT-031', 'CII-DT-094', 'CII-DT-097']) covered.add(id); // en16931-official.test.ts
  const fatal = [
    ...['009', '010', '014', '046', '069', '072', '090', '439', '440', '441', '455', '456', '459', '460', '461', '462', '463'].map((n) => `CII-SR-${n}`),
    ...Array.from({ length: 37 }, (_, i) => `CII-DT-${String(i + 1).padStart(3, '0')}`).filter(
      (id) => !['CII-DT-010', 'CII-DT-011', 'CII-DT-012'].includes(id),
    ),
    ...Array.from({ length: 30 }, (_, i) => `CII-DT-${String(i + 68).padStart(3, '0')}`).filter((id) => id !== 'CII-DT-085'),
    ...['101', '102', '103', '104'].map((n) => `CII-DT-${n}`),
  ];
  assert.equal(
    fatal.filter((id) => !covered.has(id)),
    [],
  );
});

test.run();
