import { businessRules, type Finding } from '../app/invoice/index.js';

/** Invoices for the e-invoice tests (test/zugferd.test.ts, test/en16931-*.test.ts, and the endpoint tables of mime and robustness). */

/** The EN 16931 rules' findings on `xml` (app/invoice/en16931.ts). */
export const en16931Findings = (xml: string): Promise<Finding[]> => businessRules(xml, {});

/**
 * `xml` with `from` replaced by `to` (the first occurrence, or every one): a replacement that misses throws, so a
 * test never checks the unchanged invoice by mistake.
 */
export function edit(xml: string, from: string, to: string, all = false): string {
  if (!xml.includes(from)) throw new Error(`not in the invoice: ${from}`);
  return all ? xml.split(from).join(to) : xml.replace(from, () => to);
}

/** The ids of the fatal findings, sorted (what a rule test asserts on). */
export const fatalIds = (findings: Finding[]) =>
  findings
    .filter((f) => f.severity === 'fatal')
    .map((f) => f.id)
    .sort();

export interface InvoiceOpts {
  guideline?: string;
  grandTotal?: string;
  sellerName?: string | null;
  extra?: string;
}

/** The start of a CII invoice, up to its issue date (issued 2026-11-23); the caller closes rsm:ExchangedDocument. */
export const ciiHead = (guideline: string, id: string, typeCode: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocumentContext>
    <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>${guideline}</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>
  </rsm:ExchangedDocumentContext>
  <rsm:ExchangedDocument>
    <ram:ID>${id}</ram:ID>
    <ram:TypeCode>${typeCode}</ram:TypeCode>
    <ram:IssueDateTime><udt:DateTimeString format="102">20261123</udt:DateTimeString></ram:IssueDateTime>`;

/** An EN 16931 invoice: two lines (10 h x 120.00 + 1 x 250.00), 19 % VAT, 1725.50 due. */
export function invoiceXml(o: InvoiceOpts = {}): string {
  const line = (id: string, name: string, qty: string, unit: string, price: string, amount: string) => `
    <ram:IncludedSupplyChainTradeLineItem>
      <ram:AssociatedDocumentLineDocument><ram:LineID>${id}</ram:LineID></ram:AssociatedDocumentLineDocument>
      <ram:SpecifiedTradeProduct><ram:Name>${name}</ram:Name></ram:SpecifiedTradeProduct>
      <ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice><ram:ChargeAmount>${price}</ram:ChargeAmount></ram:NetPriceProductTradePrice></ram:SpecifiedLineTradeAgreement>
      <ram:SpecifiedLineTradeDelivery><ram:BilledQuantity unitCode="${unit}">${qty}</ram:BilledQuantity></ram:SpecifiedLineTradeDelivery>
      <ram:SpecifiedLineTradeSettlement>
        <ram:ApplicableTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>
        <ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>${amount}</ram:LineTotalAmount></ram:SpecifiedTradeSettlementLineMonetarySummation>
      </ram:SpecifiedLineTradeSettlement>
    </ram:IncludedSupplyChainTradeLineItem>`;
  return `${ciiHead(o.guideline ?? 'urn:cen.eu:en16931:2017', 'INV-2026-0042', '380')}
    <ram:IncludedNote><ram:Content>Thank you for your order &amp; your trust.</ram:Content></ram:IncludedNote>
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>${line('1', 'Consulting services', '10', 'HUR', '120.00', '1200.00')}${line('2', 'Travel expenses', '1', 'C62', '250.00', '250.00')}
    <ram:ApplicableHeaderTradeAgreement>
      <ram:BuyerReference>PO-7781</ram:BuyerReference>
      <ram:SellerTradeParty>
        ${o.sellerName === null ? '' : `<ram:Name>${o.sellerName ?? 'Quire Test Seller GmbH'}</ram:Name>`}
        <ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode><ram:LineOne>Musterstrasse 1</ram:LineOne><ram:CityName>Berlin</ram:CityName><ram:CountryID>DE</ram:CountryID></ram:PostalTradeAddress>
        <ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID></ram:SpecifiedTaxRegistration>
      </ram:SellerTradeParty>
      <ram:BuyerTradeParty>
        <ram:Name>Example Buyer SARL</ram:Name>
        <ram:PostalTradeAddress><ram:PostcodeCode>75001</ram:PostcodeCode><ram:LineOne>1 rue de Rivoli</ram:LineOne><ram:CityName>Paris</ram:CityName><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress>
      </ram:BuyerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeDelivery/>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementPaymentMeans><ram:TypeCode>58</ram:TypeCode><ram:PayeePartyCreditorFinancialAccount><ram:IBANID>DE02120300000000202051</ram:IBANID></ram:PayeePartyCreditorFinancialAccount></ram:SpecifiedTradeSettlementPaymentMeans>
      <ram:ApplicableTradeTax><ram:CalculatedAmount>275.50</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode><ram:BasisAmount>1450.00</ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>
      <ram:SpecifiedTradePaymentTerms><ram:DueDateDateTime><udt:DateTimeString format="102">20261223</udt:DateTimeString></ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:LineTotalAmount>1450.00</ram:LineTotalAmount>
        <ram:TaxBasisTotalAmount>1450.00</ram:TaxBasisTotalAmount>
        <ram:TaxTotalAmount currencyID="EUR">275.50</ram:TaxTotalAmount>
        <ram:GrandTotalAmount>${o.grandTotal ?? '1725.50'}</ram:GrandTotalAmount>
        <ram:DuePayableAmount>1725.50</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>${o.extra ?? ''}
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>
`;
}

/** A MINIMUM profile invoice (no lines, no breakdown): not a complete EN 16931 invoice. */
export const MINIMUM = `${ciiHead('urn:factur-x.eu:1p0:minimum', 'MIN-2026-7', '380')}
  </rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    <ram:ApplicableHeaderTradeAgreement>
      <ram:SellerTradeParty>
        <ram:Name>Vendeur Minimum SAS</ram:Name>
        <ram:PostalTradeAddress><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress>
        <ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">FR11123456782</ram:ID></ram:SpecifiedTaxRegistration>
      </ram:SellerTradeParty>
      <ram:BuyerTradeParty><ram:Name>Acheteur SARL</ram:Name></ram:BuyerTradeParty>
    </ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeDelivery/>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
        <ram:TaxBasisTotalAmount>100.00</ram:TaxBasisTotalAmount>
        <ram:TaxTotalAmount currencyID="EUR">20.00</ram:TaxTotalAmount>
        <ram:GrandTotalAmount>120.00</ram:GrandTotalAmount>
        <ram:DuePayableAmount>120.00</ram:DuePayableAmount>
      </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>
`;
