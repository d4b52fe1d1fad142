import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { AppError } from '../errors.js';
import { type Profile, profileOf } from './profiles.js';

/**
 * The UN/CEFACT Cross Industry Invoice (D16B, the syntax of Factur-X / ZUGFeRD) read into the few business terms
 * the rules and the rendering need. Amounts stay the strings the XML holds: rules check their decimals too.
 */

/** Invoices are a few kilobytes to a few megabytes; a larger "invoice" is refused before it is parsed. */
export const MAX_INVOICE_BYTES = 20 * 1024 * 1024;

export interface Party {
  name?: string;
  address: string[];
  postcode?: string;
  city?: string;
  country?: string;
  vatId?: string;
  taxId?: string;
  email?: string;
  hasAddress: boolean;
  /** BT-29 / BT-30 present (an identifier, a global identifier or a legal registration). */
  identified: boolean;
}

export interface Line {
  id?: string;
  name?: string;
  description?: string;
  quantity?: string;
  unit?: string;
  netPrice?: string;
  netAmount?: string;
  vatCategory?: string;
  vatRate?: string;
}

export interface TaxRow {
  basis?: string;
  amount?: string;
  category?: string;
  rate?: string;
  exemption?: string;
  exemptionCode?: string;
}

export interface Charge {
  charge: boolean;
  amount?: string;
  reason?: string;
  category?: string;
  rate?: string;
}

export interface Invoice {
  guideline?: string;
  profile: Profile | null;
  number?: string;
  typeCode?: string;
  /** YYYYMMDD (format 102). */
  issueDate?: string;
  issueDateFormat?: string;
  currency?: string;
  notes: string[];
  buyerReference?: string;
  orderReference?: string;
  deliveryDate?: string;
  seller: Party;
  buyer: Party;
  lines: Line[];
  taxes: TaxRow[];
  charges: Charge[];
  totals: {
    present: boolean;
    lineTotal?: string;
    chargeTotal?: string;
    allowanceTotal?: string;
    taxBasis?: string;
    /** BT-110: the TaxTotalAmount in the invoice currency (or without currencyID). */
    taxTotal?: string;
    grandTotal?: string;
    prepaid?: string;
    rounding?: string;
    due?: string;
  };
  dueDate?: string;
  paymentTerms?: string;
  payment: { typeCode?: string; iban?: string; bic?: string; accountName?: string; info?: string }[];
}

/** A DOCTYPE could declare entities (XXE, expansion bombs): invoices never need one. */
export function refuseDoctype(xml: string): void {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) {
    throw new AppError('invalid_input', 'The invoice XML declares a DOCTYPE (a DTD or entity declarations), which is not allowed in invoice XML.');
  }
}

const REPEATED = new Set([
  'IncludedSupplyChainTradeLineItem',
  'ApplicableTradeTax',
  'SpecifiedTradeAllowanceCharge',
  'IncludedNote',
  'SpecifiedTradeSettlementPaymentMeans',
  'SpecifiedTradePaymentTerms',
  'LineOne',
  'TaxTotalAmount',
  'SpecifiedTaxRegistration',
  'Content',
]);
const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => REPEATED.has(name),
});

type Node = Record<string, unknown> | undefined;
const at = (n: unknown, ...path: string[]): Node => {
  let cur: unknown = n;
  for (const k of path) {
    if (Array.isArray(cur)) cur = cur[0];
    cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
  }
  return (Array.isArray(cur) ? cur[0] : cur) as Node;
};
const all = (n: unknown, ...path: string[]): Node[] => {
  const parent = path.length > 1 ? at(n, ...path.slice(0, -1)) : (n as Node);
  const v = parent?.[path[path.length - 1]];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]) as Node[];
};
const text = (n: unknown): string | undefined => {
  const v = n && typeof n === 'object' ? (n as Record<string, unknown>)['#text'] : n;
  if (v === undefined || v === null || typeof v === 'object') return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
};
const val = (n: unknown, ...path: string[]) => text(at(n, ...path));

function party(p: Node): Party {
  const a = at(p, 'PostalTradeAddress');
  const regs = all(p, 'SpecifiedTaxRegistration');
  const reg = (scheme: string) =>
    text(
      at(
        regs.find((r) => at(r, 'ID')?.['@schemeID'] === scheme),
        'ID',
      ),
    );
  return {
    name: val(p, 'Name'),
    address: [val(a, 'LineOne'), val(a, 'LineTwo'), val(a, 'LineThree')].filter((x): x is string => !!x),
    postcode: val(a, 'PostcodeCode'),
    city: val(a, 'CityName'),
    country: val(a, 'CountryID'),
    vatId: reg('VA'),
    taxId: reg('FC'),
    email: val(p, 'URIUniversalCommunication', 'URIID'),
    hasAddress: !!a,
    identified: !!(val(p, 'ID') || val(p, 'GlobalID') || val(p, 'SpecifiedLegalOrganization', 'ID')),
  };
}

const rootOf = (doc: Record<string, unknown>): Node => {
  const root = doc.CrossIndustryInvoice as Node;
  if (!root || typeof root !== 'object') {
    throw new AppError(
      'invalid_input',
      'The invoice XML is not a UN/CEFACT Cross Industry Invoice (Factur-X / ZUGFeRD CII): its root element must be rsm:CrossIndustryInvoice.',
    );
  }
  return root;
};

/** What a validation report names: the specification identifier (BT-24), its profile, the invoice number (BT-1). */
export type InvoiceHeader = Pick<Invoice, 'guideline' | 'profile' | 'number'>;

// The trade transaction (lines, parties, totals: nearly all of a large invoice) is skipped, not built into objects.
const headerParser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  processEntities: true,
  htmlEntities: false,
  stopNodes: ['*.SupplyChainTradeTransaction'],
});

/**
 * The header of a CII invoice, read without building its lines (a 20 MB invoice in ~70 ms): 400 when the root is
 * not a CrossIndustryInvoice. It does not check well-formedness; the schema validation beside it does.
 */
export function readInvoiceHeader(xml: string): InvoiceHeader {
  refuseDoctype(xml);
  let doc: Record<string, unknown>;
  try {
    doc = headerParser.parse(xml) as Record<string, unknown>;
  } catch (err) {
    // Its message quotes the bytes around the error, which may be anything (binary): only the reason is kept.
    throw new AppError('invalid_input', `The invoice XML is not well-formed: ${String((err as Error).message).split('. Context')[0]}`);
  }
  const root = rootOf(doc);
  const guideline = val(root, 'ExchangedDocumentContext', 'GuidelineSpecifiedDocumentContextParameter', 'ID');
  return { guideline, profile: profileOf(guideline), number: val(root, 'ExchangedDocument', 'ID') };
}

/** Invoice lines (BG-25) by their start tags, whatever the prefix: a scan, not a parse (20 MB in ~30 ms). */
export const countLines = (xml: string) => xml.match(/<(?:[\w.-]+:)?IncludedSupplyChainTradeLineItem[\s/>]/g)?.length ?? 0;

/** Parses a CII invoice: 400 when it is not well-formed XML or not a CrossIndustryInvoice. */
export function readInvoice(xml: string): Invoice {
  refuseDoctype(xml);
  const ok = XMLValidator.validate(xml);
  if (ok !== true) throw new AppError('invalid_input', `The invoice XML is not well-formed: ${ok.err.msg} (line ${ok.err.line})`);
  const root = rootOf(parser.parse(xml) as Record<string, unknown>);
  const guideline = val(root, 'ExchangedDocumentContext', 'GuidelineSpecifiedDocumentContextParameter', 'ID');
  const tx = at(root, 'SupplyChainTradeTransaction');
  const agreement = at(tx, 'ApplicableHeaderTradeAgreement');
  const settlement = at(tx, 'ApplicableHeaderTradeSettlement');
  const currency = val(settlement, 'InvoiceCurrencyCode');
  const sum = at(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation');
  const taxTotals = all(sum, 'TaxTotalAmount');
  // BT-111 (the same total in the VAT accounting currency) may stand beside it.
  const taxTotal = taxTotals.find((t) => typeof t !== 'object' || !t['@currencyID'] || t['@currencyID'] === currency);
  const issue = at(root, 'ExchangedDocument', 'IssueDateTime', 'DateTimeString');
  return {
    guideline,
    profile: profileOf(guideline),
    number: val(root, 'ExchangedDocument', 'ID'),
    typeCode: val(root, 'ExchangedDocument', 'TypeCode'),
    issueDate: text(issue),
    issueDateFormat: issue?.['@format'] as string | undefined,
    currency,
    notes: all(at(root, 'ExchangedDocument'), 'IncludedNote')
      .flatMap((n) => all(n, 'Content').map(text))
      .filter((x): x is string => !!x),
    buyerReference: val(agreement, 'BuyerReference'),
    orderReference: val(agreement, 'BuyerOrderReferencedDocument', 'IssuerAssignedID'),
    deliveryDate: val(tx, 'ApplicableHeaderTradeDelivery', 'ActualDeliverySupplyChainEvent', 'OccurrenceDateTime', 'DateTimeString'),
    seller: party(at(agreement, 'SellerTradeParty')),
    buyer: party(at(agreement, 'BuyerTradeParty')),
    lines: all(tx, 'IncludedSupplyChainTradeLineItem').map((l) => {
      const ls = at(l, 'SpecifiedLineTradeSettlement');
      return {
        id: val(l, 'AssociatedDocumentLineDocument', 'LineID'),
        name: val(l, 'SpecifiedTradeProduct', 'Name'),
        description: val(l, 'SpecifiedTradeProduct', 'Description'),
        quantity: val(l, 'SpecifiedLineTradeDelivery', 'BilledQuantity'),
        unit: at(l, 'SpecifiedLineTradeDelivery', 'BilledQuantity')?.['@unitCode'] as string | undefined,
        netPrice: val(l, 'SpecifiedLineTradeAgreement', 'NetPriceProductTradePrice', 'ChargeAmount'),
        netAmount: val(ls, 'SpecifiedTradeSettlementLineMonetarySummation', 'LineTotalAmount'),
        vatCategory: val(ls, 'ApplicableTradeTax', 'CategoryCode'),
        vatRate: val(ls, 'ApplicableTradeTax', 'RateApplicablePercent'),
      };
    }),
    taxes: all(settlement, 'ApplicableTradeTax').map((t) => ({
      basis: val(t, 'BasisAmount'),
      amount: val(t, 'CalculatedAmount'),
      category: val(t, 'CategoryCode'),
      rate: val(t, 'RateApplicablePercent'),
      exemption: val(t, 'ExemptionReason'),
      exemptionCode: val(t, 'ExemptionReasonCode'),
    })),
    charges: all(settlement, 'SpecifiedTradeAllowanceCharge').map((c) => ({
      charge: val(c, 'ChargeIndicator', 'Indicator') === 'true',
      amount: val(c, 'ActualAmount'),
      reason: val(c, 'Reason') ?? val(c, 'ReasonCode'),
      category: val(c, 'CategoryTradeTax', 'CategoryCode'),
      rate: val(c, 'CategoryTradeTax', 'RateApplicablePercent'),
    })),
    totals: {
      present: !!sum,
      lineTotal: val(sum, 'LineTotalAmount'),
      chargeTotal: val(sum, 'ChargeTotalAmount'),
      allowanceTotal: val(sum, 'AllowanceTotalAmount'),
      taxBasis: val(sum, 'TaxBasisTotalAmount'),
      taxTotal: text(taxTotal),
      grandTotal: val(sum, 'GrandTotalAmount'),
      prepaid: val(sum, 'TotalPrepaidAmount'),
      rounding: val(sum, 'RoundingAmount'),
      due: val(sum, 'DuePayableAmount'),
    },
    dueDate: val(settlement, 'SpecifiedTradePaymentTerms', 'DueDateDateTime', 'DateTimeString'),
    paymentTerms: val(settlement, 'SpecifiedTradePaymentTerms', 'Description'),
    payment: all(settlement, 'SpecifiedTradeSettlementPaymentMeans').map((m) => ({
      typeCode: val(m, 'TypeCode'),
      info: val(m, 'Information'),
      iban: val(m, 'PayeePartyCreditorFinancialAccount', 'IBANID'),
      accountName: val(m, 'PayeePartyCreditorFinancialAccount', 'AccountName'),
      bic: val(m, 'PayeeSpecifiedCreditorFinancialInstitution', 'BICID'),
    })),
  };
}
