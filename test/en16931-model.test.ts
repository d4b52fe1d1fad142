import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, en16931Findings, fatalIds, invoiceXml, MINIMUM } from './zugferd-fixtures.js';

/**
 * The core EN 16931 rules (app/invoice/en16931.ts: BR-01..BR-65, BR-CO-*, BR-DEC-* as CEN's CII artefacts 1.3.16
 * test them), run with all the rules: each rule fires on an invoice crafted to break it (the exact fatal ids of that
 * invoice, whichever pattern they come from, as the artefacts give them), and valid variants (every optional group, BT-111 beside BT-110,
 * half-cent rounding, a credit note, MINIMUM and BASIC WL) have no finding at all.
 */

/** Several replacements in turn (each must find its text). */
const edits = (xml: string, ...pairs: [string, string][]) => pairs.reduce((x, [from, to]) => edit(x, from, to), xml);

const BASE = invoiceXml();
/** What follows the header VAT breakdown of BASE (the line breakdowns are followed by the line totals). */
const HEADER_TAX_END = '\n      <ram:SpecifiedTradePaymentTerms>';

const LINE_ALLOWANCE =
  '<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>false</udt:Indicator></ram:ChargeIndicator><ram:CalculationPercent>1</ram:CalculationPercent><ram:BasisAmount>1000.00</ram:BasisAmount><ram:ActualAmount>10.00</ram:ActualAmount><ram:ReasonCode>100</ram:ReasonCode><ram:Reason>Rebate</ram:Reason></ram:SpecifiedTradeAllowanceCharge>';
const LINE_CHARGE =
  '<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>true</udt:Indicator></ram:ChargeIndicator><ram:CalculationPercent>1</ram:CalculationPercent><ram:BasisAmount>500.00</ram:BasisAmount><ram:ActualAmount>5.00</ram:ActualAmount><ram:ReasonCode>ABL</ram:ReasonCode><ram:Reason>Packaging</ram:Reason></ram:SpecifiedTradeAllowanceCharge>';
const DOC_ALLOWANCE =
  '<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>false</udt:Indicator></ram:ChargeIndicator><ram:CalculationPercent>10</ram:CalculationPercent><ram:BasisAmount>200.00</ram:BasisAmount><ram:ActualAmount>20.00</ram:ActualAmount><ram:ReasonCode>95</ram:ReasonCode><ram:Reason>Loyalty discount</ram:Reason><ram:CategoryTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:CategoryTradeTax></ram:SpecifiedTradeAllowanceCharge>';
const DOC_CHARGE =
  '<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>true</udt:Indicator></ram:ChargeIndicator><ram:CalculationPercent>5</ram:CalculationPercent><ram:BasisAmount>500.00</ram:BasisAmount><ram:ActualAmount>25.00</ram:ActualAmount><ram:ReasonCode>FC</ram:ReasonCode><ram:Reason>Freight</ram:Reason><ram:CategoryTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:CategoryTradeTax></ram:SpecifiedTradeAllowanceCharge>';
const PERIOD =
  '<ram:BillingSpecifiedPeriod><ram:StartDateTime><udt:DateTimeString format="102">20261101</udt:DateTimeString></ram:StartDateTime><ram:EndDateTime><udt:DateTimeString format="102">20261130</udt:DateTimeString></ram:EndDateTime></ram:BillingSpecifiedPeriod>';
const TAX_REP =
  '<ram:SellerTaxRepresentativeTradeParty><ram:Name>Steuervertreter GmbH</ram:Name><ram:PostalTradeAddress><ram:PostcodeCode>80331</ram:PostcodeCode><ram:CityName>Muenchen</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE987654321</ram:ID></ram:SpecifiedTaxRegistration></ram:SellerTaxRepresentativeTradeParty>';
const SUPPORTING =
  '<ram:AdditionalReferencedDocument><ram:IssuerAssignedID>TS-2026-11</ram:IssuerAssignedID><ram:TypeCode>916</ram:TypeCode><ram:Name>Timesheet</ram:Name></ram:AdditionalReferencedDocument>';
const CARD =
  '<ram:SpecifiedTradeSettlementPaymentMeans><ram:TypeCode>48</ram:TypeCode><ram:ApplicableTradeSettlementFinancialCard><ram:ID>4242</ram:ID><ram:CardholderName>A. Buyer</ram:CardholderName></ram:ApplicableTradeSettlementFinancialCard></ram:SpecifiedTradeSettlementPaymentMeans>';
const PAYEE = '<ram:PayeeTradeParty><ram:Name>Factoring AG</ram:Name></ram:PayeeTradeParty>';
const PRECEDING = '<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>INV-2026-0001</ram:IssuerAssignedID></ram:InvoiceReferencedDocument>';
const SHIP_TO =
  '<ram:ApplicableHeaderTradeDelivery><ram:ShipToTradeParty><ram:Name>Warehouse</ram:Name><ram:PostalTradeAddress><ram:PostcodeCode>69001</ram:PostcodeCode><ram:CityName>Lyon</ram:CityName><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress></ram:ShipToTradeParty></ram:ApplicableHeaderTradeDelivery>';
// BT-111 (VAT in the accounting currency, USD) stands BEFORE BT-110: BR-CO-14/15 must pick the invoice currency's one.
const TOTALS = `<ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:LineTotalAmount>1445.00</ram:LineTotalAmount>
        <ram:ChargeTotalAmount>25.00</ram:ChargeTotalAmount>
        <ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>
        <ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>
        <ram:TaxTotalAmount currencyID="USD">300.00</ram:TaxTotalAmount>
        <ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>
        <ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>
        <ram:TotalPrepaidAmount>100.00</ram:TotalPrepaidAmount>
        <ram:RoundingAmount>0.00</ram:RoundingAmount>
        <ram:DuePayableAmount>1625.50</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>`;

/**
 * Every optional group the model rules look at, consistent: line 1 is 10 x 120.00 - 10.00 + 5.00 = 1195.00, the
 * document has a 20.00 allowance and a 25.00 charge (1445.00 - 20.00 + 25.00 = 1450.00 taxable, 275.50 VAT),
 * 100.00 prepaid, 1625.50 due, VAT accounting currency USD.
 */
const RICH = edits(
  BASE,
  [
    '<ram:SpecifiedTradeProduct><ram:Name>Consulting services</ram:Name></ram:SpecifiedTradeProduct>',
    '<ram:SpecifiedTradeProduct><ram:GlobalID schemeID="0160">4000001000005</ram:GlobalID><ram:Name>Consulting services</ram:Name><ram:ApplicableProductCharacteristic><ram:Description>Level</ram:Description><ram:Value>Senior</ram:Value></ram:ApplicableProductCharacteristic><ram:DesignatedProductClassification><ram:ClassCode listID="HS">998311</ram:ClassCode></ram:DesignatedProductClassification></ram:SpecifiedTradeProduct>',
  ],
  [
    '<ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice>',
    '<ram:SpecifiedLineTradeAgreement><ram:GrossPriceProductTradePrice><ram:ChargeAmount>120.00</ram:ChargeAmount></ram:GrossPriceProductTradePrice><ram:NetPriceProductTradePrice>',
  ],
  [
    '<ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>1200.00</ram:LineTotalAmount>',
    `${PERIOD}${LINE_ALLOWANCE}${LINE_CHARGE}<ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>1195.00</ram:LineTotalAmount>`,
  ],
  [
    '<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID>',
    '<ram:URIUniversalCommunication><ram:URIID schemeID="EM">billing@seller.example</ram:URIID></ram:URIUniversalCommunication><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID>',
  ],
  [
    '<ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress>',
    '<ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress><ram:URIUniversalCommunication><ram:URIID schemeID="EM">ap@buyer.example</ram:URIID></ram:URIUniversalCommunication>',
  ],
  ['</ram:BuyerTradeParty>', `</ram:BuyerTradeParty>${TAX_REP}${SUPPORTING}`],
  ['<ram:ApplicableHeaderTradeDelivery/>', SHIP_TO],
  [
    '<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>',
    `<ram:TaxCurrencyCode>USD</ram:TaxCurrencyCode><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>${PAYEE}`,
  ],
  ['</ram:SpecifiedTradeSettlementPaymentMeans>', `</ram:SpecifiedTradeSettlementPaymentMeans>${CARD}`],
  ['<ram:SpecifiedTradePaymentTerms>', `${PERIOD}${DOC_ALLOWANCE}${DOC_CHARGE}<ram:SpecifiedTradePaymentTerms>`],
  [
    BASE.slice(
      BASE.indexOf('<ram:SpecifiedTradeSettlementHeaderMonetarySummation>'),
      BASE.indexOf('</ram:SpecifiedTradeSettlementHeaderMonetarySummation>') + '</ram:SpecifiedTradeSettlementHeaderMonetarySummation>'.length,
    ),
    `${TOTALS}${PRECEDING}`,
  ],
);

/** `xml` with `from` cut out. */
const drop = (xml: string, ...cut: string[]) => edits(xml, ...cut.map((c): [string, string] => [c, '']));

const BASIC_WL = edits(
  BASE,
  ['urn:cen.eu:en16931:2017', 'urn:factur-x.eu:1p0:basicwl'],
  [BASE.slice(BASE.indexOf('<ram:IncludedSupplyChainTradeLineItem>'), BASE.indexOf('<ram:ApplicableHeaderTradeAgreement>')), ''],
);

// A credit note: negative quantities, line amounts and totals; nothing is due, so no due date or terms (BR-CO-25).
const CREDIT_NOTE = edits(
  BASE,
  ['<ram:TypeCode>380</ram:TypeCode>', '<ram:TypeCode>381</ram:TypeCode>'],
  ['unitCode="HUR">10<', 'unitCode="HUR">-10<'],
  ['unitCode="C62">1<', 'unitCode="C62">-1<'],
  ['<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>-1200.00</ram:LineTotalAmount>'],
  ['<ram:LineTotalAmount>250.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>-250.00</ram:LineTotalAmount>'],
  ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', '<ram:CalculatedAmount>-275.50</ram:CalculatedAmount>'],
  ['<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>-1450.00</ram:BasisAmount>'],
  ['<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>-1450.00</ram:LineTotalAmount>'],
  ['<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>', '<ram:TaxBasisTotalAmount>-1450.00</ram:TaxBasisTotalAmount>'],
  ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">-275.50</ram:TaxTotalAmount>'],
  ['<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', '<ram:GrandTotalAmount>-1725.50</ram:GrandTotalAmount>'],
  ['<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>-1725.50</ram:DuePayableAmount>'],
  [BASE.slice(BASE.indexOf('<ram:SpecifiedTradePaymentTerms>'), BASE.indexOf('<ram:SpecifiedTradeSettlementHeaderMonetarySummation>')), ''],
);

/** Line 1 at 1 x `price`, the other amounts `lines` (sum of lines = taxable amount), `vat` and `grand` (= due). */
const amounts = (price: string, lines: string, vat: string, grand: string, breakdownVat = vat) =>
  edits(
    BASE,
    ['unitCode="HUR">10<', 'unitCode="HUR">1<'],
    ['<ram:ChargeAmount>120.00</ram:ChargeAmount>', `<ram:ChargeAmount>${price}</ram:ChargeAmount>`],
    ['<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', `<ram:LineTotalAmount>${price}</ram:LineTotalAmount>`],
    ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', `<ram:CalculatedAmount>${breakdownVat}</ram:CalculatedAmount>`],
    ['<ram:BasisAmount>1450.00</ram:BasisAmount>', `<ram:BasisAmount>${lines}</ram:BasisAmount>`],
    ['<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', `<ram:LineTotalAmount>${lines}</ram:LineTotalAmount>`],
    ['<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>', `<ram:TaxBasisTotalAmount>${lines}</ram:TaxBasisTotalAmount>`],
    ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', `<ram:TaxTotalAmount currencyID="EUR">${vat}</ram:TaxTotalAmount>`],
    ['<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', `<ram:GrandTotalAmount>${grand}</ram:GrandTotalAmount>`],
    ['<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>', `<ram:DuePayableAmount>${grand}</ram:DuePayableAmount>`],
  );

const VALID: [string, string][] = [
  ['every optional group (tax representative, payee, deliver-to, periods, allowances, charges, card, BT-111 first)', RICH],
  ['a credit note with negative amounts and nothing due', CREDIT_NOTE],
  ['half a cent rounds up: 250.50 x 19 % = 47.595 -> 47.60', amounts('0.50', '250.50', '47.60', '298.10')],
  ['binary fractions sum to cents: 0.10 + 250.00 at 19 % = 47.519 -> 47.52', amounts('0.10', '250.10', '47.52', '297.62')],
  // CEN's tolerance (BR-CO-17 within 1.00, BR-S-09 less than 1.00): CEN's own HUF example is 0.40 off (18679.00 for 18678.60).
  ['a VAT amount rounded elsewhere: 250.50 at 19 % given as 47.59, 0.01 below 47.60', amounts('0.50', '250.50', '47.59', '298.09')],
  ['a VAT amount 0.99 above the product', amounts('0.50', '250.50', '48.59', '299.09')],
  [
    'payment terms text instead of a due date',
    edits(BASE, [
      BASE.slice(BASE.indexOf('<ram:DueDateDateTime>'), BASE.indexOf('</ram:DueDateDateTime>') + '</ram:DueDateDateTime>'.length),
      '<ram:Description>30 days net</ram:Description>',
    ]),
  ],
  [
    'seller identified by its legal registration and a tax number',
    edits(
      BASE,
      [
        '<ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode>',
        '<ram:SpecifiedLegalOrganization><ram:ID>HRB 12345</ram:ID></ram:SpecifiedLegalOrganization><ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode>',
      ],
      ['<ram:ID schemeID="VA">DE123456789</ram:ID>', '<ram:ID schemeID="FC">201/113/40209</ram:ID>'],
    ),
  ],
  [
    'an invoicing period with only an end date; a one-day period',
    edits(
      RICH,
      ['<ram:StartDateTime><udt:DateTimeString format="102">20261101</udt:DateTimeString></ram:StartDateTime>', ''],
      ['<udt:DateTimeString format="102">20261101</udt:DateTimeString>', '<udt:DateTimeString format="102">20261130</udt:DateTimeString>'],
    ),
  ],
  [
    'an IBAN and a proprietary id for a payment that is no credit transfer (BR-CO-27 is about 30 and 58)',
    edits(
      BASE,
      ['<ram:TypeCode>58</ram:TypeCode>', '<ram:TypeCode>42</ram:TypeCode>'],
      ['<ram:IBANID>DE02120300000000202051</ram:IBANID>', '<ram:IBANID>DE02120300000000202051</ram:IBANID><ram:ProprietaryID>202051</ram:ProprietaryID>'],
    ),
  ],
  [
    'a proprietary account id instead of an IBAN',
    edits(BASE, ['<ram:IBANID>DE02120300000000202051</ram:IBANID>', '<ram:ProprietaryID>123456789</ram:ProprietaryID>']),
  ],
  ['a Greek VAT identifier with EL', edits(BASE, ['<ram:ID schemeID="VA">DE123456789</ram:ID>', '<ram:ID schemeID="VA">EL123456789</ram:ID>'])],
  ['MINIMUM', MINIMUM],
  [
    'MINIMUM: no lines, no breakdown, no buyer address, no seller address',
    drop(MINIMUM, '<ram:PostalTradeAddress><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress>'),
  ],
  ['BASIC WL: no lines', BASIC_WL],
];

for (const [name, xml] of VALID) {
  test(`valid: ${name}`, async () => {
    assert.equal(await en16931Findings(xml), []);
  });
}

const RULES: [string, string, string[]][] = [
  ['no specification identifier', edits(BASE, ['<ram:ID>urn:cen.eu:en16931:2017</ram:ID>', '<ram:ID></ram:ID>']), ['BR-01']],
  ['no invoice number', drop(BASE, '<ram:ID>INV-2026-0042</ram:ID>'), ['BR-02']],
  [
    'no issue date',
    edits(BASE, ['<udt:DateTimeString format="102">20261123</udt:DateTimeString>', '<udt:DateTimeString format="102"></udt:DateTimeString>']),
    ['BR-03', 'CII-DT-097'],
  ],
  ['no type code', drop(BASE, '<ram:TypeCode>380</ram:TypeCode>'), ['BR-04', 'CII-SR-014']],
  ['no invoice currency', drop(BASE, '<ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>'), ['BR-05']],
  ['no seller name', invoiceXml({ sellerName: null }), ['BR-06']],
  ['no buyer name', drop(BASE, '<ram:Name>Example Buyer SARL</ram:Name>'), ['BR-07']],
  [
    'no seller address',
    drop(
      BASE,
      '<ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode><ram:LineOne>Musterstrasse 1</ram:LineOne><ram:CityName>Berlin</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>',
    ),
    ['BR-08', 'BR-09'],
  ],
  ['no seller country', drop(BASE, '<ram:CountryID>DE</ram:CountryID>'), ['BR-09']],
  ['MINIMUM: a seller address without a country', drop(MINIMUM, '<ram:CountryID>FR</ram:CountryID>'), ['BR-09']],
  [
    'no buyer address',
    drop(
      BASE,
      '<ram:PostalTradeAddress><ram:PostcodeCode>75001</ram:PostcodeCode><ram:LineOne>1 rue de Rivoli</ram:LineOne><ram:CityName>Paris</ram:CityName><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress>',
    ),
    ['BR-10', 'BR-11'],
  ],
  ['no buyer country', drop(BASE, '<ram:CountryID>FR</ram:CountryID>'), ['BR-11']],
  ['no sum of line net amounts', drop(BASE, '<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>'), ['BR-12', 'BR-CO-10', 'BR-CO-13']],
  ['no total without VAT', drop(BASE, '<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>'), ['BR-13', 'BR-CO-13', 'BR-CO-15']],
  ['no total with VAT', drop(BASE, '<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>'), ['BR-14', 'BR-CO-15', 'BR-CO-16']],
  ['no amount due', drop(BASE, '<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>'), ['BR-15', 'BR-CO-16']],
  [
    'no line (the S breakdown then has no lines either)',
    edits(BASE, [BASE.slice(BASE.indexOf('<ram:IncludedSupplyChainTradeLineItem>'), BASE.indexOf('<ram:ApplicableHeaderTradeAgreement>')), '']),
    ['BR-16', 'BR-CO-10', 'BR-S-08'],
  ],
  ['a payee without a name', edits(RICH, [PAYEE, '<ram:PayeeTradeParty><ram:ID>PAYEE-1</ram:ID></ram:PayeeTradeParty>']), ['BR-17']],
  ['a tax representative without a name', drop(RICH, '<ram:Name>Steuervertreter GmbH</ram:Name>'), ['BR-18']],
  [
    'a tax representative without an address',
    drop(
      RICH,
      '<ram:PostalTradeAddress><ram:PostcodeCode>80331</ram:PostcodeCode><ram:CityName>Muenchen</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>',
    ),
    ['BR-19', 'BR-20'],
  ],
  ['a tax representative address without a country', drop(RICH, '<ram:CityName>Muenchen</ram:CityName><ram:CountryID>DE</ram:CountryID>'), ['BR-20']],
  ['a line without an identifier', drop(BASE, '<ram:LineID>1</ram:LineID>'), ['BR-21']],
  // An empty BilledQuantity is a quantity to the artefacts' test (it exists): BR-22 is about the element.
  ['a line without a quantity', drop(BASE, '<ram:BilledQuantity unitCode="HUR">10</ram:BilledQuantity>'), ['BR-22', 'BR-23']],
  ['a line with an empty quantity (the element is there)', edits(BASE, ['unitCode="HUR">10<', 'unitCode="HUR"><']), []],
  ['a line quantity without a unit', drop(BASE, ' unitCode="HUR"'), ['BR-23']],
  ['a line without a net amount', drop(BASE, '<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>'), ['BR-24', 'BR-CO-10', 'BR-S-08']],
  ['a line without an item name', drop(BASE, '<ram:Name>Consulting services</ram:Name>'), ['BR-25']],
  // BR-27 (net price >= 0) fails too without a net price, and CII-SR-439 wants exactly one.
  ['a line without a net price', drop(BASE, '<ram:ChargeAmount>120.00</ram:ChargeAmount>'), ['BR-26', 'BR-27', 'CII-SR-439']],
  ['a negative net price', edits(BASE, ['<ram:ChargeAmount>120.00</ram:ChargeAmount>', '<ram:ChargeAmount>-120.00</ram:ChargeAmount>']), ['BR-27']],
  [
    'a negative gross price',
    edits(RICH, [
      '<ram:GrossPriceProductTradePrice><ram:ChargeAmount>120.00</ram:ChargeAmount>',
      '<ram:GrossPriceProductTradePrice><ram:ChargeAmount>-120.00</ram:ChargeAmount>',
    ]),
    ['BR-28'],
  ],
  [
    'an invoicing period ending before it starts',
    edits(RICH, [`${PERIOD}${DOC_ALLOWANCE}`, `${PERIOD.replace('20261130', '20261031')}${DOC_ALLOWANCE}`]),
    ['BR-29'],
  ],
  [
    'a line period ending before it starts',
    edits(RICH, [`${PERIOD}${LINE_ALLOWANCE}`, `${PERIOD.replace('20261101', '20261201')}${LINE_ALLOWANCE}`]),
    ['BR-30'],
  ],
  ['an invoicing period without dates', edits(RICH, [`${PERIOD}${DOC_ALLOWANCE}`, `<ram:BillingSpecifiedPeriod/>${DOC_ALLOWANCE}`]), ['BR-CO-19']],
  ['a line period without dates', edits(RICH, [`${PERIOD}${LINE_ALLOWANCE}`, `<ram:BillingSpecifiedPeriod/>${LINE_ALLOWANCE}`]), ['BR-CO-20']],
  ['a document allowance without an amount', drop(RICH, '<ram:ActualAmount>20.00</ram:ActualAmount>'), ['BR-31', 'BR-CO-11', 'BR-S-08']],
  [
    'a document allowance without a VAT category',
    edits(RICH, [DOC_ALLOWANCE, DOC_ALLOWANCE.replace('<ram:CategoryCode>S</ram:CategoryCode>', '')]),
    ['BR-32', 'BR-S-08'],
  ],
  ['a document allowance without a reason', drop(RICH, '<ram:ReasonCode>95</ram:ReasonCode><ram:Reason>Loyalty discount</ram:Reason>'), ['BR-33', 'BR-CO-21']],
  ['a document charge without an amount', drop(RICH, '<ram:ActualAmount>25.00</ram:ActualAmount>'), ['BR-36', 'BR-CO-12', 'BR-S-08']],
  [
    'a document charge without a VAT category',
    edits(RICH, [DOC_CHARGE, DOC_CHARGE.replace('<ram:CategoryCode>S</ram:CategoryCode>', '')]),
    ['BR-37', 'BR-S-08'],
  ],
  ['a document charge without a reason', drop(RICH, '<ram:ReasonCode>FC</ram:ReasonCode><ram:Reason>Freight</ram:Reason>'), ['BR-38', 'BR-CO-22']],
  ['a line allowance without an amount', drop(RICH, '<ram:ActualAmount>10.00</ram:ActualAmount>'), ['BR-41']],
  ['a line allowance without a reason', drop(RICH, '<ram:ReasonCode>100</ram:ReasonCode><ram:Reason>Rebate</ram:Reason>'), ['BR-42', 'BR-CO-23']],
  ['a line charge without an amount', drop(RICH, '<ram:ActualAmount>5.00</ram:ActualAmount>'), ['BR-43']],
  ['a line charge without a reason', drop(RICH, '<ram:ReasonCode>ABL</ram:ReasonCode><ram:Reason>Packaging</ram:Reason>'), ['BR-44', 'BR-CO-24']],
  ['a breakdown without a taxable amount', drop(BASE, '<ram:BasisAmount>1450.00</ram:BasisAmount>'), ['BR-45', 'BR-CO-17', 'BR-S-08', 'BR-S-09']],
  ['a breakdown without a tax amount', drop(BASE, '<ram:CalculatedAmount>275.50</ram:CalculatedAmount>'), ['BR-46', 'BR-CO-14', 'BR-CO-17', 'BR-S-09']],
  [
    'a breakdown without a category',
    edits(BASE, ['<ram:BasisAmount>1450.00</ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode>', '<ram:BasisAmount>1450.00</ram:BasisAmount>']),
    // Two S lines and no S breakdown pass BR-S-01 as the artefacts count (lines + breakdowns >= 2).
    ['BR-47'],
  ],
  [
    'a breakdown without a rate',
    edits(BASE, [
      `<ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>${HEADER_TAX_END}`,
      `</ram:ApplicableTradeTax>${HEADER_TAX_END}`,
    ]),
    ['BR-48', 'BR-CO-17', 'BR-S-09'],
  ],
  ['a payment instruction without a type code', drop(BASE, '<ram:TypeCode>58</ram:TypeCode>'), ['BR-49']],
  [
    'a credit transfer account without an identifier (payment to a bank account)',
    edits(
      BASE,
      ['<ram:TypeCode>58</ram:TypeCode>', '<ram:TypeCode>42</ram:TypeCode>'],
      ['<ram:IBANID>DE02120300000000202051</ram:IBANID>', '<ram:AccountName>Seller</ram:AccountName>'],
    ),
    [] /* the artefacts check BR-50 for credit transfers (30, 58) only */,
  ],
  [
    'a SEPA credit transfer without an account',
    drop(BASE, '<ram:PayeePartyCreditorFinancialAccount><ram:IBANID>DE02120300000000202051</ram:IBANID></ram:PayeePartyCreditorFinancialAccount>'),
    [] /* the artefacts' context is the account: without one there is nothing to check */,
  ],
  [
    'a SEPA credit transfer whose account has neither IBAN nor proprietary id',
    edits(BASE, ['<ram:IBANID>DE02120300000000202051</ram:IBANID>', '<ram:AccountName>Seller</ram:AccountName>']),
    ['BR-50', 'BR-61'],
  ],
  [
    'an account with both an IBAN and a proprietary id',
    edits(BASE, [
      '<ram:IBANID>DE02120300000000202051</ram:IBANID>',
      '<ram:IBANID>DE02120300000000202051</ram:IBANID><ram:ProprietaryID>202051</ram:ProprietaryID>',
    ]),
    ['BR-CO-27'],
  ],
  ['a supporting document without a reference', drop(RICH, '<ram:IssuerAssignedID>TS-2026-11</ram:IssuerAssignedID>'), ['BR-52']],
  [
    'a VAT accounting currency without the VAT total in it',
    drop(RICH, '<ram:TaxTotalAmount currencyID="USD">300.00</ram:TaxTotalAmount>'),
    ['BR-53', 'BR-DEC-15'],
  ],
  ['an item attribute without a value', drop(RICH, '<ram:Value>Senior</ram:Value>'), ['BR-54', 'CII-SR-072']],
  [
    'a preceding invoice reference without its number',
    edits(RICH, [
      PRECEDING,
      '<ram:InvoiceReferencedDocument><ram:FormattedIssueDateTime><qdt:DateTimeString format="102">20261001</qdt:DateTimeString></ram:FormattedIssueDateTime></ram:InvoiceReferencedDocument>',
    ]),
    ['BR-55'],
  ],
  [
    'a tax representative without a VAT identifier',
    drop(RICH, '<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE987654321</ram:ID></ram:SpecifiedTaxRegistration>'),
    ['BR-56'],
  ],
  ['a deliver-to address without a country', drop(RICH, '<ram:CityName>Lyon</ram:CityName><ram:CountryID>FR</ram:CountryID>'), ['BR-57']],
  ['a seller electronic address without a scheme', edits(RICH, ['<ram:URIID schemeID="EM">billing', '<ram:URIID>billing']), ['BR-62']],
  ['a buyer electronic address without a scheme', edits(RICH, ['<ram:URIID schemeID="EM">ap@', '<ram:URIID>ap@']), ['BR-63']],
  ['an item standard identifier without a scheme', drop(RICH, ' schemeID="0160"'), ['BR-64', 'CII-SR-046']],
  ['an item classification without a scheme', drop(RICH, ' listID="HS"'), ['BR-65']],
  [
    'a tax point date and a tax point date code',
    edits(BASE, [
      `<ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>${HEADER_TAX_END}`,
      `<ram:TaxPointDate><udt:DateString format="102">20261115</udt:DateString></ram:TaxPointDate><ram:DueDateTypeCode>5</ram:DueDateTypeCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>${HEADER_TAX_END}`,
    ]),
    ['BR-CO-03'],
  ],
  ['a line without a VAT category', drop(BASE, '<ram:CategoryCode>S</ram:CategoryCode>'), ['BR-CO-04', 'BR-S-08']],
  [
    'a lowercase seller VAT identifier',
    edits(BASE, ['<ram:ID schemeID="VA">DE123456789</ram:ID>', '<ram:ID schemeID="VA">de123456789</ram:ID>']),
    ['BR-CO-09'],
  ],
  [
    'a buyer VAT identifier without a country prefix',
    edits(BASE, [
      '</ram:PostalTradeAddress>\n      </ram:BuyerTradeParty>',
      '</ram:PostalTradeAddress><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">123456789</ram:ID></ram:SpecifiedTaxRegistration>\n      </ram:BuyerTradeParty>',
    ]),
    ['BR-CO-09'],
  ],
  ['a tax representative VAT identifier without a country prefix', edits(RICH, ['DE987654321', '9876543210']), ['BR-CO-09']],
  [
    'a sum of line net amounts one cent off',
    edits(BASE, ['<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>1449.99</ram:LineTotalAmount>']),
    ['BR-CO-10', 'BR-CO-13'],
  ],
  [
    'a sum of allowances one cent off',
    edits(RICH, ['<ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>', '<ram:AllowanceTotalAmount>20.01</ram:AllowanceTotalAmount>']),
    ['BR-CO-11', 'BR-CO-13'],
  ],
  ['allowances without their sum', drop(RICH, '<ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>'), ['BR-CO-11', 'BR-CO-13']],
  [
    'a sum of charges one cent off',
    edits(RICH, ['<ram:ChargeTotalAmount>25.00</ram:ChargeTotalAmount>', '<ram:ChargeTotalAmount>24.99</ram:ChargeTotalAmount>']),
    ['BR-CO-12', 'BR-CO-13'],
  ],
  [
    'a total without VAT one cent off',
    edits(BASE, ['<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>', '<ram:TaxBasisTotalAmount>1450.01</ram:TaxBasisTotalAmount>']),
    ['BR-CO-13', 'BR-CO-15'],
  ],
  [
    'a VAT total one cent off',
    edits(BASE, ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">275.51</ram:TaxTotalAmount>']),
    ['BR-CO-14', 'BR-CO-15'],
  ],
  [
    'a total with VAT that adds the accounting-currency VAT (BT-111)',
    edits(
      RICH,
      ['<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', '<ram:GrandTotalAmount>1750.00</ram:GrandTotalAmount>'],
      ['<ram:DuePayableAmount>1625.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>1650.00</ram:DuePayableAmount>'],
    ),
    ['BR-CO-15'],
  ],
  [
    'an amount due that ignores the prepaid amount',
    edits(RICH, ['<ram:DuePayableAmount>1625.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>1725.50</ram:DuePayableAmount>']),
    ['BR-CO-16'],
  ],
  [
    'an amount due that ignores the rounding amount',
    edits(RICH, ['<ram:RoundingAmount>0.00</ram:RoundingAmount>', '<ram:RoundingAmount>0.50</ram:RoundingAmount>']),
    ['BR-CO-16'],
  ],
  [
    'a VAT amount 1.00 above the product: within BR-CO-17 (at most 1.00), not BR-S-09 (less than 1.00)',
    amounts('0.50', '250.50', '48.60', '299.10'),
    ['BR-S-09'],
  ],
  ['a VAT amount 1.01 below the product', amounts('0.50', '250.50', '46.59', '297.09'), ['BR-CO-17', 'BR-S-09']],
  [
    'no VAT breakdown',
    drop(BASE, BASE.slice(BASE.indexOf('<ram:ApplicableTradeTax><ram:CalculatedAmount>'), BASE.indexOf('<ram:SpecifiedTradePaymentTerms>'))),
    // The artefacts check BR-CO-18 on each line: once per line.
    ['BR-CO-14', 'BR-CO-18', 'BR-CO-18'],
  ],
  [
    'a seller with only a tax number (no BT-29, BT-30, BT-31)',
    edits(BASE, ['<ram:ID schemeID="VA">DE123456789</ram:ID>', '<ram:ID schemeID="FC">201/113/40209</ram:ID>']),
    ['BR-CO-26'],
  ],
  [
    'a document allowance amount with 3 decimals',
    edits(RICH, ['<ram:ActualAmount>20.00</ram:ActualAmount>', '<ram:ActualAmount>20.000</ram:ActualAmount>']),
    ['BR-DEC-01'],
  ],
  [
    'a document allowance base amount with 3 decimals',
    edits(RICH, ['<ram:BasisAmount>200.00</ram:BasisAmount>', '<ram:BasisAmount>200.000</ram:BasisAmount>']),
    ['BR-DEC-02'],
  ],
  [
    'a document charge amount with 3 decimals',
    edits(RICH, ['<ram:ActualAmount>25.00</ram:ActualAmount>', '<ram:ActualAmount>25.000</ram:ActualAmount>']),
    ['BR-DEC-05'],
  ],
  [
    'a document charge base amount with 3 decimals',
    edits(RICH, [DOC_CHARGE, DOC_CHARGE.replace('<ram:BasisAmount>500.00</ram:BasisAmount>', '<ram:BasisAmount>500.000</ram:BasisAmount>')]),
    ['BR-DEC-06'],
  ],
  [
    'BT-106 with 3 decimals',
    edits(RICH, ['<ram:LineTotalAmount>1445.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>1445.000</ram:LineTotalAmount>']),
    ['BR-DEC-09'],
  ],
  [
    'BT-107 with 3 decimals',
    edits(RICH, ['<ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>', '<ram:AllowanceTotalAmount>20.000</ram:AllowanceTotalAmount>']),
    ['BR-DEC-10'],
  ],
  [
    'BT-108 with 3 decimals',
    edits(RICH, ['<ram:ChargeTotalAmount>25.00</ram:ChargeTotalAmount>', '<ram:ChargeTotalAmount>25.000</ram:ChargeTotalAmount>']),
    ['BR-DEC-11'],
  ],
  [
    'BT-109 with 3 decimals',
    edits(RICH, ['<ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>', '<ram:TaxBasisTotalAmount>1450.000</ram:TaxBasisTotalAmount>']),
    ['BR-DEC-12'],
  ],
  [
    'BT-110 with 3 decimals',
    edits(BASE, ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">275.505</ram:TaxTotalAmount>']),
    ['BR-CO-14', 'BR-CO-15', 'BR-DEC-13'],
  ],
  [
    'BT-110 with 3 decimals beside a BT-111 (the artefacts pass BR-DEC-13 when any VAT total is in another currency)',
    edits(RICH, ['<ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="EUR">275.505</ram:TaxTotalAmount>']),
    ['BR-CO-14', 'BR-CO-15'],
  ],
  [
    'BT-112 with 3 decimals',
    edits(RICH, ['<ram:GrandTotalAmount>1725.50</ram:GrandTotalAmount>', '<ram:GrandTotalAmount>1725.500</ram:GrandTotalAmount>']),
    ['BR-DEC-14'],
  ],
  [
    'BT-111 with 3 decimals',
    edits(RICH, ['<ram:TaxTotalAmount currencyID="USD">300.00</ram:TaxTotalAmount>', '<ram:TaxTotalAmount currencyID="USD">300.005</ram:TaxTotalAmount>']),
    ['BR-DEC-15'],
  ],
  [
    'BT-113 with 3 decimals',
    edits(RICH, ['<ram:TotalPrepaidAmount>100.00</ram:TotalPrepaidAmount>', '<ram:TotalPrepaidAmount>100.000</ram:TotalPrepaidAmount>']),
    ['BR-DEC-16'],
  ],
  ['BT-114 with 3 decimals', edits(RICH, ['<ram:RoundingAmount>0.00</ram:RoundingAmount>', '<ram:RoundingAmount>0.000</ram:RoundingAmount>']), ['BR-DEC-17']],
  [
    'BT-115 with 3 decimals',
    edits(RICH, ['<ram:DuePayableAmount>1625.50</ram:DuePayableAmount>', '<ram:DuePayableAmount>1625.500</ram:DuePayableAmount>']),
    ['BR-DEC-18'],
  ],
  ['BT-116 with 3 decimals', edits(BASE, ['<ram:BasisAmount>1450.00</ram:BasisAmount>', '<ram:BasisAmount>1450.000</ram:BasisAmount>']), ['BR-DEC-19']],
  [
    'BT-117 with 3 decimals',
    edits(BASE, ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', '<ram:CalculatedAmount>275.500</ram:CalculatedAmount>']),
    ['BR-DEC-20'],
  ],
  [
    'BT-131 with 3 decimals',
    edits(BASE, ['<ram:LineTotalAmount>1200.00</ram:LineTotalAmount>', '<ram:LineTotalAmount>1200.000</ram:LineTotalAmount>']),
    ['BR-DEC-23'],
  ],
  ['BT-136 with 3 decimals', edits(RICH, ['<ram:ActualAmount>10.00</ram:ActualAmount>', '<ram:ActualAmount>10.000</ram:ActualAmount>']), ['BR-DEC-24']],
  ['BT-137 with 3 decimals', edits(RICH, ['<ram:BasisAmount>1000.00</ram:BasisAmount>', '<ram:BasisAmount>1000.000</ram:BasisAmount>']), ['BR-DEC-25']],
  ['BT-141 with 3 decimals', edits(RICH, ['<ram:ActualAmount>5.00</ram:ActualAmount>', '<ram:ActualAmount>5.000</ram:ActualAmount>']), ['BR-DEC-27']],
  [
    'BT-142 with 3 decimals',
    edits(RICH, [LINE_CHARGE, LINE_CHARGE.replace('<ram:BasisAmount>500.00</ram:BasisAmount>', '<ram:BasisAmount>500.000</ram:BasisAmount>')]),
    ['BR-DEC-28'],
  ],
  [
    'BASIC WL: a document allowance without a reason still fires',
    edits(
      BASIC_WL,
      [
        '<ram:SpecifiedTradePaymentTerms>',
        `${DOC_ALLOWANCE.replace('<ram:ReasonCode>95</ram:ReasonCode><ram:Reason>Loyalty discount</ram:Reason>', '')}<ram:SpecifiedTradePaymentTerms>`,
      ],
      [
        '<ram:LineTotalAmount>1450.00</ram:LineTotalAmount>',
        '<ram:LineTotalAmount>1470.00</ram:LineTotalAmount><ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>',
      ],
    ),
    ['BR-33', 'BR-CO-21'],
  ],
];

for (const [name, xml, ids] of RULES) {
  test(`${ids.join(' + ') || 'nothing'}: ${name}`, async () => {
    assert.equal(fatalIds(await en16931Findings(xml)), ids);
  });
}

test('BR-CO-25 (a positive amount due without a due date or terms) is a warning: CEN no longer checks it', async () => {
  const found = (
    await en16931Findings(
      drop(BASE, BASE.slice(BASE.indexOf('<ram:SpecifiedTradePaymentTerms>'), BASE.indexOf('<ram:SpecifiedTradeSettlementHeaderMonetarySummation>'))),
    )
  ).map((f) => [f.id, f.severity]);
  assert.equal(found, [['BR-CO-25', 'warning']]);
});

test('BR-51: a payment card number longer than 10 characters is fatal, as the artefacts count characters', async () => {
  const card = (pan: string) => en16931Findings(edits(RICH, ['<ram:ID>4242</ram:ID>', `<ram:ID>${pan}</ram:ID>`]));
  const full = await card('4242 4242 4242 4242');
  assert.equal(
    full.map((f) => [f.id, f.severity]),
    [['BR-51', 'fatal']],
  );
  assert.match(full[0].location, /ApplicableTradeSettlementFinancialCard/);
  assert.equal(await card('4242XX4242'), []);
  assert.equal(
    (await card('42424242424')).map((f) => f.id),
    ['BR-51'],
  );
});

test('messages name the rule and show given and computed values; locations are the rule contexts', async () => {
  const f = await en16931Findings(
    edits(RICH, ['<ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>', '<ram:AllowanceTotalAmount>20.01</ram:AllowanceTotalAmount>']),
  );
  const co11 = f.find((x) => x.id === 'BR-CO-11');
  assert.ok(co11, JSON.stringify(f));
  assert.is(co11.message, '[BR-CO-11] Sum of allowances on document level (BT-107) = Σ Document level allowance amount (BT-92): 20.01 given, 20.00 computed.');
  assert.is(
    co11.location,
    '/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeSettlementHeaderMonetarySummation',
  );
  const missing = (await en16931Findings(drop(RICH, '<ram:AllowanceTotalAmount>20.00</ram:AllowanceTotalAmount>'))).find((x) => x.id === 'BR-CO-11');
  assert.match(missing?.message ?? '', /: none given, 20\.00 computed\.$/);
  const line = (await en16931Findings(drop(BASE, '<ram:Name>Travel expenses</ram:Name>'))).find((x) => x.id === 'BR-25');
  assert.is(line?.location, '/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:IncludedSupplyChainTradeLineItem[2]');
  const dec = (
    await en16931Findings(edits(BASE, ['<ram:CalculatedAmount>275.50</ram:CalculatedAmount>', '<ram:CalculatedAmount>275.500</ram:CalculatedAmount>']))
  ).find((x) => x.id === 'BR-DEC-20');
  assert.is(dec?.message, '[BR-DEC-20] The allowed maximum number of decimals for the VAT category tax amount (BT-117) is 2: 275.500.');
});

test.run();
