import type { Invoice } from './cii.js';

/**
 * A subset of the EN 16931 business rules (CEN/TS 16931-3-3 binding to CII), with their official ids: the
 * mandatory business terms (BR-01..BR-16, BR-21..BR-27, BR-45..BR-48), the calculation and consistency rules
 * (BR-CO-04, BR-CO-09..BR-CO-18, BR-CO-25, BR-CO-26), the decimals of the totals (BR-DEC-09..BR-DEC-18) and the
 * VAT category rules -01, -05, -08, -09, -10 (BR-S, BR-Z, BR-E, BR-AE, BR-IC, BR-G, BR-O, BR-IG, BR-IP).
 * Written here because the official schematron (ConnectingEurope/eInvoicing-EN16931) is not packaged by npm or
 * Debian; code lists and the remaining rules are not checked. MINIMUM and BASIC WL are not complete invoices:
 * rules on lines and line totals are skipped for them, as the Factur-X schematrons of those profiles do.
 */

export interface Finding {
  /** The rule: `BR-CO-15`, `XSD` (schema), `FX-*` (Factur-X PDF checks). */
  id: string;
  severity: 'fatal' | 'warning';
  /** XPath of the element checked (the schematron's context), or `line N` for schema errors. */
  location: string;
  message: string;
}

const ROOT = '/rsm:CrossIndustryInvoice';
const TX = `${ROOT}/rsm:SupplyChainTradeTransaction`;
const AGR = `${TX}/ram:ApplicableHeaderTradeAgreement`;
const SET = `${TX}/ram:ApplicableHeaderTradeSettlement`;
const SUM = `${SET}/ram:SpecifiedTradeSettlementHeaderMonetarySummation`;

/** An amount in ten-thousandths (exact sums), or null when the text is not a decimal number. */
const units = (s: string | undefined): number | null => (s !== undefined && /^[-+]?(\d+(\.\d*)?|\.\d+)$/.test(s) ? Math.round(Number(s) * 1e4) : null);
/** Rounded to cents as XPath round() does (half towards positive infinity), still in ten-thousandths. */
const cents = (u: number) => Math.round(u / 100) * 100;
const decimals = (s: string | undefined) => (s?.includes('.') ? s.split('.')[1].length : 0);
const show = (u: number) => (u / 1e4).toFixed(2);

export function businessRules(inv: Invoice): Finding[] {
  const out: Finding[] = [];
  const need = (ok: unknown, id: string, location: string, message: string) => {
    if (!ok) out.push({ id, severity: 'fatal', location, message: `[${id}] ${message}` });
  };
  const full = inv.profile?.full ?? true;
  const basicWl = inv.profile?.name === 'BASIC WL';
  const t = inv.totals;

  need(inv.guideline, 'BR-01', ROOT, 'An Invoice shall have a Specification identifier (BT-24).');
  need(inv.number, 'BR-02', ROOT, 'An Invoice shall have an Invoice number (BT-1).');
  need(inv.issueDate && inv.issueDateFormat === '102', 'BR-03', ROOT, 'An Invoice shall have an Invoice issue date (BT-2) in format 102 (YYYYMMDD).');
  need(inv.typeCode, 'BR-04', ROOT, 'An Invoice shall have an Invoice type code (BT-3).');
  need(inv.currency, 'BR-05', ROOT, 'An Invoice shall have an Invoice currency code (BT-5).');
  need(inv.seller.name, 'BR-06', ROOT, 'An Invoice shall contain the Seller name (BT-27).');
  need(inv.buyer.name, 'BR-07', ROOT, 'An Invoice shall contain the Buyer name (BT-44).');
  if (full || basicWl) {
    need(inv.seller.hasAddress, 'BR-08', `${AGR}/ram:SellerTradeParty`, 'An Invoice shall contain the Seller postal address (BG-5).');
    need(inv.buyer.hasAddress, 'BR-10', `${AGR}/ram:BuyerTradeParty`, 'An Invoice shall contain the Buyer postal address (BG-8).');
    if (inv.buyer.hasAddress) need(inv.buyer.country, 'BR-11', `${AGR}/ram:BuyerTradeParty/ram:PostalTradeAddress`, 'The Buyer postal address shall contain a Buyer country code (BT-55).');
  }
  if (inv.seller.hasAddress || full || basicWl) need(inv.seller.country, 'BR-09', `${AGR}/ram:SellerTradeParty/ram:PostalTradeAddress`, 'The Seller postal address (BG-5) shall contain a Seller country code (BT-40).');

  if (full || basicWl) need(t.lineTotal, 'BR-12', SUM, 'An Invoice shall have the Sum of Invoice line net amount (BT-106).');
  need(t.taxBasis, 'BR-13', SUM, 'An Invoice shall have the Invoice total amount without VAT (BT-109).');
  need(t.grandTotal, 'BR-14', SUM, 'An Invoice shall have the Invoice total amount with VAT (BT-112).');
  need(t.due, 'BR-15', SUM, 'An Invoice shall have the Amount due for payment (BT-115).');

  const amounts: [string | undefined, string, string, string][] = [
    [t.lineTotal, 'BR-DEC-09', 'LineTotalAmount', 'Sum of Invoice line net amount (BT-106)'],
    [t.allowanceTotal, 'BR-DEC-10', 'AllowanceTotalAmount', 'Sum of allowances on document level (BT-107)'],
    [t.chargeTotal, 'BR-DEC-11', 'ChargeTotalAmount', 'Sum of charges on document level (BT-108)'],
    [t.taxBasis, 'BR-DEC-12', 'TaxBasisTotalAmount', 'Invoice total amount without VAT (BT-109)'],
    [t.taxTotal, 'BR-DEC-13', 'TaxTotalAmount', 'Invoice total VAT amount (BT-110)'],
    [t.grandTotal, 'BR-DEC-14', 'GrandTotalAmount', 'Invoice total amount with VAT (BT-112)'],
    [t.prepaid, 'BR-DEC-16', 'TotalPrepaidAmount', 'Paid amount (BT-113)'],
    [t.rounding, 'BR-DEC-17', 'RoundingAmount', 'Rounding amount (BT-114)'],
    [t.due, 'BR-DEC-18', 'DuePayableAmount', 'Amount due for payment (BT-115)'],
  ];
  for (const [v, id, el, name] of amounts) {
    if (v === undefined) continue;
    if (units(v) === null) out.push({ id: 'XSD', severity: 'fatal', location: `${SUM}/ram:${el}`, message: `${name} is not a decimal number: ${v}` });
    else need(decimals(v) <= 2, id, `${SUM}/ram:${el}`, `The allowed maximum number of decimals for the ${name} is 2.`);
  }

  const u = (s: string | undefined) => units(s) ?? 0;
  const allowances = inv.charges.filter((c) => !c.charge).reduce((a, c) => a + u(c.amount), 0);
  const charges = inv.charges.filter((c) => c.charge).reduce((a, c) => a + u(c.amount), 0);
  if (full) {
    need(inv.lines.length > 0, 'BR-16', TX, 'An Invoice shall have at least one Invoice line (BG-25).');
    inv.lines.forEach((l, i) => {
      const loc = `${TX}/ram:IncludedSupplyChainTradeLineItem[${i + 1}]`;
      need(l.id, 'BR-21', loc, 'Each Invoice line (BG-25) shall have an Invoice line identifier (BT-126).');
      need(l.quantity, 'BR-22', loc, 'Each Invoice line (BG-25) shall have an Invoiced quantity (BT-129).');
      need(l.unit, 'BR-23', loc, 'An Invoice line (BG-25) shall have an Invoiced quantity unit of measure code (BT-130).');
      need(l.netAmount, 'BR-24', loc, 'Each Invoice line (BG-25) shall have an Invoice line net amount (BT-131).');
      need(l.name, 'BR-25', loc, 'Each Invoice line (BG-25) shall contain the Item name (BT-153).');
      need(l.netPrice, 'BR-26', loc, 'Each Invoice line (BG-25) shall contain the Item net price (BT-146).');
      need(l.netPrice === undefined || u(l.netPrice) >= 0, 'BR-27', loc, 'The Item net price (BT-146) shall NOT be negative.');
      need(l.vatCategory, 'BR-CO-04', loc, 'Each Invoice line (BG-25) shall be categorized with an Invoiced item VAT category code (BT-151).');
    });
    if (t.lineTotal !== undefined) {
      const lines = cents(inv.lines.reduce((a, l) => a + u(l.netAmount), 0));
      need(u(t.lineTotal) === lines, 'BR-CO-10', SUM, `Sum of Invoice line net amount (BT-106) = Σ Invoice line net amount (BT-131): ${t.lineTotal} given, ${show(lines)} computed.`);
    }
  }
  if (full || basicWl) {
    if (t.allowanceTotal !== undefined || allowances) need(u(t.allowanceTotal) === cents(allowances), 'BR-CO-11', SUM, `Sum of allowances on document level (BT-107) = Σ Document level allowance amount (BT-92): ${t.allowanceTotal ?? 'none'} given, ${show(cents(allowances))} computed.`);
    if (t.chargeTotal !== undefined || charges) need(u(t.chargeTotal) === cents(charges), 'BR-CO-12', SUM, `Sum of charges on document level (BT-108) = Σ Document level charge amount (BT-99): ${t.chargeTotal ?? 'none'} given, ${show(cents(charges))} computed.`);
    if (t.lineTotal !== undefined && t.taxBasis !== undefined) {
      const basis = cents(u(t.lineTotal) - u(t.allowanceTotal) + u(t.chargeTotal));
      need(u(t.taxBasis) === basis, 'BR-CO-13', SUM, `Invoice total amount without VAT (BT-109) = Σ Invoice line net amount (BT-131) - Sum of allowances on document level (BT-107) + Sum of charges on document level (BT-108): ${t.taxBasis} given, ${show(basis)} computed.`);
    }
    need(inv.taxes.length > 0, 'BR-CO-18', SET, 'An Invoice shall at least have one VAT breakdown group (BG-23).');
    inv.taxes.forEach((x, i) => {
      const loc = `${SET}/ram:ApplicableTradeTax[${i + 1}]`;
      need(x.basis, 'BR-45', loc, 'Each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116).');
      need(x.amount, 'BR-46', loc, 'Each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117).');
      need(x.category, 'BR-47', loc, 'Each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118).');
      need(x.rate !== undefined || x.category === 'O', 'BR-48', loc, 'Each VAT breakdown (BG-23) shall have a VAT category rate (BT-119), except if the Invoice is not subject to VAT.');
      if (x.basis !== undefined && x.amount !== undefined && x.rate !== undefined) {
        const expected = cents((u(x.basis) * Number(x.rate)) / 100);
        need(cents(u(x.amount)) === expected, 'BR-CO-17', loc, `VAT category tax amount (BT-117) = VAT category taxable amount (BT-116) x (VAT category rate (BT-119) / 100), rounded to two decimals: ${x.amount} given, ${show(expected)} computed.`);
      }
    });
    if (inv.taxes.length && t.taxTotal !== undefined) {
      const vat = cents(inv.taxes.reduce((a, x) => a + u(x.amount), 0));
      need(u(t.taxTotal) === vat, 'BR-CO-14', SUM, `Invoice total VAT amount (BT-110) = Σ VAT category tax amount (BT-117): ${t.taxTotal} given, ${show(vat)} computed.`);
    }
  }
  if (t.taxBasis !== undefined && t.grandTotal !== undefined) {
    const grand = u(t.taxBasis) + u(t.taxTotal);
    need(u(t.grandTotal) === grand, 'BR-CO-15', SUM, `Invoice total amount with VAT (BT-112) = Invoice total amount without VAT (BT-109) + Invoice total VAT amount (BT-110): ${t.grandTotal} given, ${show(grand)} computed.`);
  }
  if (t.grandTotal !== undefined && t.due !== undefined) {
    const due = u(t.grandTotal) - u(t.prepaid) + u(t.rounding);
    need(u(t.due) === due, 'BR-CO-16', SUM, `Amount due for payment (BT-115) = Invoice total amount with VAT (BT-112) - Paid amount (BT-113) + Rounding amount (BT-114): ${t.due} given, ${show(due)} computed.`);
  }
  if (full) out.push(...vatCategoryRules(inv));
  if (full) {
    need(inv.seller.identified || inv.seller.vatId, 'BR-CO-26', `${AGR}/ram:SellerTradeParty`, 'In order for the buyer to automatically identify a supplier, the Seller identifier (BT-29), the Seller legal registration identifier (BT-30) and/or the Seller VAT identifier (BT-31) shall be present.');
  }
  for (const [p, who] of [[inv.seller, 'SellerTradeParty'], [inv.buyer, 'BuyerTradeParty']] as const) {
    if (p.vatId) need(/^[A-Z]{2}/.test(p.vatId), 'BR-CO-09', `${AGR}/ram:${who}/ram:SpecifiedTaxRegistration`, `The VAT identifier (BT-31, BT-48, BT-63) shall have a prefix in accordance with ISO code ISO 3166-1 alpha-2: ${p.vatId}.`);
  }
  if (full && u(t.due) > 0) {
    need(inv.dueDate || inv.paymentTerms, 'BR-CO-25', SET, 'In case the Amount due for payment (BT-115) is positive, either the Payment due date (BT-9) or the Payment terms (BT-20) shall be present.');
  }
  return out;
}

/** The rule prefix of each VAT category (UNTDID 5305 subset of EN 16931). */
const CATEGORIES: Record<string, { prefix: string; name: string; zero: boolean; reason: boolean }> = {
  S: { prefix: 'BR-S', name: 'Standard rated', zero: false, reason: false },
  Z: { prefix: 'BR-Z', name: 'Zero rated', zero: true, reason: false },
  E: { prefix: 'BR-E', name: 'Exempt from VAT', zero: true, reason: true },
  AE: { prefix: 'BR-AE', name: 'Reverse charge', zero: true, reason: true },
  K: { prefix: 'BR-IC', name: 'Intra-community supply', zero: true, reason: true },
  G: { prefix: 'BR-G', name: 'Export outside the EU', zero: true, reason: true },
  O: { prefix: 'BR-O', name: 'Not subject to VAT', zero: true, reason: true },
  L: { prefix: 'BR-IG', name: 'IGIC', zero: false, reason: false },
  M: { prefix: 'BR-IP', name: 'IPSI', zero: false, reason: false },
};

/** BR-x-01 (breakdown present), -05 (line rate), -08 (taxable amount), -09 (no tax), -10 (exemption reason) per VAT category. */
function vatCategoryRules(inv: Invoice): Finding[] {
  const out: Finding[] = [];
  const need = (ok: unknown, id: string, location: string, message: string) => {
    if (!ok) out.push({ id, severity: 'fatal', location, message: `[${id}] ${message}` });
  };
  const u = (s: string | undefined) => units(s) ?? 0;
  const rate = (s: string | undefined) => (s === undefined ? 0 : Number(s));
  const used = new Set([...inv.lines.map((l) => l.vatCategory), ...inv.charges.map((c) => c.category)]);
  for (const [code, c] of Object.entries(CATEGORIES)) {
    if (used.has(code)) need(inv.taxes.some((x) => x.category === code), `${c.prefix}-01`, SET, `An Invoice with an Invoice line, allowance or charge of VAT category "${c.name}" (${code}) shall contain that category in the VAT breakdown (BG-23).`);
  }
  inv.lines.forEach((l, i) => {
    const c = CATEGORIES[l.vatCategory ?? ''];
    if (!c) return;
    const loc = `${TX}/ram:IncludedSupplyChainTradeLineItem[${i + 1}]/ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax`;
    if (l.vatCategory === 'O') need(l.vatRate === undefined, 'BR-O-05', loc, 'An Invoice line where the VAT category code is "Not subject to VAT" shall not contain an Invoiced item VAT rate (BT-152).');
    else if (c.zero) need(l.vatRate !== undefined && rate(l.vatRate) === 0, `${c.prefix}-05`, loc, `In an Invoice line where the VAT category code is "${c.name}" the Invoiced item VAT rate (BT-152) shall be 0.`);
    else if (l.vatCategory === 'S') need(rate(l.vatRate) > 0, 'BR-S-05', loc, 'In an Invoice line where the VAT category code is "Standard rated" the Invoiced item VAT rate (BT-152) shall be greater than zero.');
  });
  inv.taxes.forEach((x, i) => {
    const c = CATEGORIES[x.category ?? ''];
    if (!c || x.basis === undefined) return;
    const loc = `${SET}/ram:ApplicableTradeTax[${i + 1}]`;
    // Zero-rate categories have one breakdown each; rated ones one per rate.
    const same = (cat: string | undefined, r: string | undefined) => cat === x.category && (c.zero || rate(r) === rate(x.rate));
    const lines = inv.lines.filter((l) => same(l.vatCategory, l.vatRate)).reduce((a, l) => a + u(l.netAmount), 0);
    const charges = inv.charges.filter((ch) => same(ch.category, ch.rate)).reduce((a, ch) => a + (ch.charge ? u(ch.amount) : -u(ch.amount)), 0);
    const expected = cents(lines + charges);
    need(cents(u(x.basis)) === expected, `${c.prefix}-08`, loc, `The VAT category taxable amount (BT-116) of VAT category "${c.name}"${c.zero ? '' : ` at ${x.rate ?? 0} %`} shall equal the sum of its Invoice line net amounts plus document level charges minus document level allowances: ${x.basis} given, ${show(expected)} computed.`);
    if (c.zero) need(u(x.amount) === 0, `${c.prefix}-09`, loc, `The VAT category tax amount (BT-117) in a VAT breakdown where the VAT category code is "${c.name}" shall equal 0.`);
    if (c.reason) need(x.exemption || x.exemptionCode, `${c.prefix}-10`, loc, `A VAT breakdown with VAT category code "${c.name}" shall have a VAT exemption reason code (BT-121) or a VAT exemption reason text (BT-120).`);
  });
  return out;
}
