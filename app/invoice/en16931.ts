import * as D from './decimal.js';
import { type Dec, dec } from './decimal.js';
import { en16931Codes, en16931Syntax } from './en16931-cii.js';
import {
  type Check,
  Doc,
  decimals2,
  eq0,
  fatal,
  filled,
  ge,
  gt,
  indicator,
  num,
  type Pattern,
  type Rule,
  type RuleFinding,
  rule,
  runPattern,
  shown,
  some,
  str,
  sumOf,
  twoDecimals,
  vatType,
  warning,
  ZERO,
} from './en16931-rules.js';
import { at, atSteps, type El, find, first, has, NS, norm, parseTree, steps, text } from './xml-tree.js';

/**
 * The EN 16931 business rules bound to UN/CEFACT CII (Factur-X, ZUGFeRD, XRechnung CII), as CEN/TC 434's validation
 * artefacts word them (ConnectingEurope eInvoicing-EN16931, release 1.3.16): the model rules (BR-*, BR-CO-*,
 * BR-DEC-*, the VAT category families), the code lists (BR-CL-*) and the CII syntax binding (CII-SR-*, CII-DT-*,
 * in en16931-cii.ts), each under its official id and flag. Written for Quire in TypeScript from the rule texts;
 * the artefacts' Schematron semantics are kept where they decide a verdict:
 * - patterns: each element is checked by the first rule of a pattern whose context it matches, in the order the
 *   artefacts list them (so a VAT breakdown of category O, L or M gets that category's rules, not BR-45..48);
 * - XPath 2.0 comparisons: a missing value makes a comparison false (the rule fails), comparisons of a repeated
 *   element hold when one of them does;
 * - arithmetic in exact decimals (decimal.ts) with XPath's round() (halves toward positive infinity), applied to
 *   absolute values where the artefacts do (BR-CO-17, BR-S-09).
 * Departures, each from the rule's text: BR-AF-08 / BR-AG-08 read the breakdown's own rate and BR-AF-09 / BR-AG-09
 * check tax = taxable amount x rate (the artefacts read a rate where there is none, or test true()); BR-CO-25 is a
 * warning (1.3.16 no longer checks it); Factur-X MINIMUM and BASIC WL invoices, which are not complete EN 16931
 * invoices, are not held to the rules on content those profiles do not carry (profileExempt); BR-CO-27 (not both
 * an IBAN and a proprietary id) is kept for credit transfers although 1.3.16 dropped it.
 */

export type { RuleFinding };

// ---- The model pattern --------------------------------------------------------------------------------------------

const HEADER_TAX = 'ram:ApplicableHeaderTradeSettlement/ram:ApplicableTradeTax';
const LINE_TAX = 'ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax';

/** The official ISO 3166-1 list of BR-CO-09 (with 1A, AN, EL and XI). */
const VAT_PREFIXES = new Set(
  '1A AD AE AF AG AI AL AM AN AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BL BJ BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH EL ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XI YE YT ZA ZM ZW'.split(
    ' ',
  ),
);

type Category = { code: string; family: string; name: string };
const CATEGORIES: Record<string, Category> = {
  S: { code: 'S', family: 'S', name: 'Standard rated' },
  Z: { code: 'Z', family: 'Z', name: 'Zero rated' },
  E: { code: 'E', family: 'E', name: 'Exempt from VAT' },
  AE: { code: 'AE', family: 'AE', name: 'Reverse charge' },
  K: { code: 'K', family: 'IC', name: 'Intra-community supply' },
  G: { code: 'G', family: 'G', name: 'Export outside the EU' },
  O: { code: 'O', family: 'O', name: 'Not subject to VAT' },
  L: { code: 'L', family: 'AF', name: 'IGIC' },
  M: { code: 'M', family: 'AG', name: 'IPSI' },
};

// Whole-document facts the VAT rules share.
const catIs = (code: string) => (t: El) => find(t, 'ram:CategoryCode').some((c) => text(c) === code);
const headerTaxes = (d: Doc, code: string) => d.once(`hdr${code}`, () => d.any('ram:ApplicableTradeTax').filter((t) => at(t, HEADER_TAX) && catIs(code)(t)));
const lineTaxes = (d: Doc, code: string) =>
  d.once(`line${code}`, () =>
    d.any('ram:ApplicableTradeTax').filter((t) => at(t, 'ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax') && catIs(code)(t)),
  );
const acTaxes = (d: Doc, code: string) => d.once(`ac${code}`, () => d.any('ram:CategoryTradeTax').filter(catIs(code)));

const sellerParty = (d: Doc) => first(d.agreement, 'ram:SellerTradeParty');
const taxRep = (d: Doc) => first(d.agreement, 'ram:SellerTaxRepresentativeTradeParty');
const regIds = (party: El | undefined, schemes: string[]) =>
  find(party, 'ram:SpecifiedTaxRegistration/ram:ID').filter((i) => schemes.includes(i.attrs.get('schemeID') ?? '\u0000'));
/** Seller VAT or tax registration identifier, or tax representative VAT identifier (the S, Z, E, AF, AG rules). */
const sellerTaxId = (d: Doc) => d.once('sellerTaxId', () => regIds(sellerParty(d), ['VA', 'FC']).length > 0 || regIds(taxRep(d), ['VA']).length > 0);
const anyDescendantParty = (d: Doc, local: string) => d.any(`ram:${local}`);
const anySellerVaFc = (d: Doc) => anyDescendantParty(d, 'SellerTradeParty').some((p) => regIds(p, ['VA', 'FC']).length > 0);
const anySellerVa = (d: Doc) => anyDescendantParty(d, 'SellerTradeParty').some((p) => regIds(p, ['VA']).length > 0);
const anyRepVa = (d: Doc) => anyDescendantParty(d, 'SellerTaxRepresentativeTradeParty').some((p) => regIds(p, ['VA']).length > 0);
const anyBuyerVa = (d: Doc) => anyDescendantParty(d, 'BuyerTradeParty').some((p) => regIds(p, ['VA']).length > 0);
const anyBuyerLegal = (d: Doc) => anyDescendantParty(d, 'BuyerTradeParty').some((p) => has(p, 'ram:SpecifiedLegalOrganization/ram:ID'));

/** What an invoice with a line, allowance or charge of this category must contain (BR-x-02..04). */
function partiesOk(cat: Category, d: Doc): boolean {
  switch (cat.family) {
    case 'AE':
      return (anySellerVaFc(d) || anyRepVa(d)) && (anyBuyerVa(d) || anyBuyerLegal(d));
    case 'IC':
      return (anySellerVa(d) || anyRepVa(d)) && anyBuyerVa(d);
    case 'G':
      return anySellerVa(d) || anyRepVa(d);
    case 'O':
      return !regIds(sellerParty(d), ['VA']).length && !regIds(taxRep(d), ['VA']).length && !anyBuyerVa(d);
    default:
      return sellerTaxId(d);
  }
}

/** Header allowances (false) or charges (true) of a category (and rate), as BR-x-08 sums them. */
function docCharges(d: Doc, code: string, charge: boolean, rate?: Dec): El[] {
  return find(d.settlement, 'ram:SpecifiedTradeAllowanceCharge').filter(
    (ac) =>
      indicator(ac) === charge &&
      find(ac, 'ram:CategoryTradeTax/ram:CategoryCode').some((c) => text(c) === code) &&
      (rate === undefined || find(ac, 'ram:CategoryTradeTax/ram:RateApplicablePercent').some((r) => D.eq(dec(text(r)), rate))),
  );
}
/** round(sum(lines of the category [and rate])) + round(sum(charges)) - round(sum(allowances)), each to cents. */
function categoryBasis(d: Doc, code: string, rate?: Dec): Dec {
  const lines = find(d.tx, 'ram:IncludedSupplyChainTradeLineItem/ram:SpecifiedLineTradeSettlement').filter(
    (s) =>
      find(s, 'ram:ApplicableTradeTax/ram:CategoryCode').some((c) => text(c) === code) &&
      (rate === undefined || find(s, 'ram:ApplicableTradeTax/ram:RateApplicablePercent').some((r) => D.eq(dec(text(r)), rate))),
  );
  const net = D.round2(sumOf(lines.flatMap((s) => find(s, 'ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount'))));
  const charges = D.round2(sumOf(docCharges(d, code, true, rate).flatMap((ac) => find(ac, 'ram:ActualAmount'))));
  const allowances = D.round2(sumOf(docCharges(d, code, false, rate).flatMap((ac) => find(ac, 'ram:ActualAmount'))));
  return D.sub(D.add(net, charges), allowances);
}
const within1 = (given: Dec | null, computed: Dec): boolean =>
  given !== null && D.cmp(D.sub(given, D.fromInt(1)), computed) < 0 && D.cmp(D.add(given, D.fromInt(1)), computed) > 0;
/** |tax| within 1 of round(|basis| x rate) / 100: BR-S-09 as the artefacts test it. */
const taxOfRate = (basis: Dec | null, rate: Dec | null, tax: Dec | null): boolean => {
  if (basis === null || rate === null || tax === null) return false;
  const computed = D.shift(D.round(D.mul(D.abs(basis), rate)), 2);
  return within1(D.abs(tax), computed);
};

function vatFamily(cat: Category): Rule[] {
  const c = cat.code;
  const f = cat.family;
  const q = `"${cat.name}"`;
  const isO = c === 'O';
  const positive = c === 'S' || c === 'L';
  const rateOk = (e: El) =>
    isO
      ? !has(e, 'ram:RateApplicablePercent')
      : c === 'M' || c === 'L'
        ? some(e, 'ram:RateApplicablePercent', c === 'L' ? gt : ge, ZERO)
        : some(e, 'ram:RateApplicablePercent', positive ? gt : eq0, ZERO);
  const rateText = (what: string) =>
    isO
      ? `shall not contain ${what}.`
      : positive && c === 'S'
        ? `${what} shall be greater than zero.`
        : c === 'L' || c === 'M'
          ? `${what} shall be 0 (zero) or greater than zero.`
          : `${what} shall be 0 (zero).`;
  const partiesText =
    {
      AE: 'shall contain the Seller VAT Identifier (BT-31), the Seller tax registration identifier (BT-32) and/or the Seller tax representative VAT identifier (BT-63) and the Buyer VAT identifier (BT-48) and/or the Buyer legal registration identifier (BT-47).',
      IC: 'shall contain the Seller VAT Identifier (BT-31) or the Seller tax representative VAT identifier (BT-63) and the Buyer VAT identifier (BT-48).',
      G: 'shall contain the Seller VAT Identifier (BT-31) or the Seller tax representative VAT identifier (BT-63).',
      O: 'shall not contain the Seller VAT identifier (BT-31), the Seller tax representative VAT identifier (BT-63) or the Buyer VAT identifier (BT-48).',
    }[f] ??
    'shall contain the Seller VAT Identifier (BT-31), the Seller tax registration identifier (BT-32) and/or the Seller tax representative VAT identifier (BT-63).';
  const id = (n: string) => `BR-${f}-${n}`;
  const acRule = (charge: boolean, n1: string, n2: string) =>
    rule(
      'CategoryTradeTax',
      (e) => {
        const ac = e.parent;
        return !!ac && ac.local === 'SpecifiedTradeAllowanceCharge' && ac.ns === NS.ram && indicator(ac) === charge && catIs(c)(e) && vatType(e);
      },
      [
        fatal(
          id(n1),
          (_e, d) => partiesOk(cat, d),
          `An Invoice that contains a Document level ${charge ? 'charge (BG-21) where the Document level charge VAT category code (BT-102)' : 'allowance (BG-20) where the Document level allowance VAT category code (BT-95)'} is ${q} ${partiesText}`,
        ),
        fatal(
          id(n2),
          rateOk,
          `In a Document level ${charge ? 'charge (BG-21)' : 'allowance (BG-20)'} where the VAT category code is ${q}, ${rateText(charge ? 'the Document level charge VAT rate (BT-103)' : 'the Document level allowance VAT rate (BT-96)')}`,
        ),
      ],
    );
  const lineRule = rule(
    'ApplicableTradeTax',
    (e) =>
      at(e, 'rsm:SupplyChainTradeTransaction/ram:IncludedSupplyChainTradeLineItem/ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax') &&
      catIs(c)(e) &&
      vatType(e),
    [
      fatal(
        id('02'),
        (_e, d) => partiesOk(cat, d),
        `An Invoice that contains an Invoice line (BG-25) where the Invoiced item VAT category code (BT-151) is ${q} ${partiesText}`,
      ),
      fatal(
        id('05'),
        rateOk,
        `In an Invoice line (BG-25) where the Invoiced item VAT category code (BT-151) is ${q}, ${rateText('the Invoiced item VAT rate (BT-152)')}`,
      ),
    ],
  );
  // The breakdown: S and Z are matched on their CategoryCode element, E, AE, K, G on a CategoryCode of a VAT
  // breakdown, L, M and O on the breakdown itself; the tests read the breakdown either way.
  const onCode = c === 'S' || c === 'Z' || c === 'E' || c === 'AE' || c === 'K' || c === 'G';
  const tax = (e: El) => (onCode ? (e.parent as El) : e);
  const breakdownMatch = onCode
    ? (e: El) => e.local === 'CategoryCode' && text(e) === c && !!e.parent && at(e.parent, HEADER_TAX) && (c === 'S' || c === 'Z' || vatType(e.parent))
    : (e: El) => at(e, HEADER_TAX) && catIs(c)(e) && vatType(e);
  const noExemption = (e: El) => !has(tax(e), 'ram:ExemptionReason') && !has(tax(e), 'ram:ExemptionReasonCode');
  const exemption = (e: El) => has(tax(e), 'ram:ExemptionReason') || has(tax(e), 'ram:ExemptionReasonCode');
  const zeroTax = (e: El) => some(tax(e), 'ram:CalculatedAmount', eq0, ZERO);
  const breakdownChecks: Check[] = [];
  if (c === 'S' || c === 'L' || c === 'M') {
    breakdownChecks.push(
      fatal(
        id('08'),
        (e, d) =>
          find(tax(e), 'ram:RateApplicablePercent').every((r) => {
            const rate = dec(text(r));
            if (rate === null) return false;
            return some(tax(e), 'ram:BasisAmount', eq0, categoryBasis(d, c, rate));
          }),
        `For each different value of VAT category rate (BT-119) where the VAT category code (BT-118) is ${q}, the VAT category taxable amount (BT-116) in a VAT breakdown (BG-23) shall equal the sum of Invoice line net amounts (BT-131) plus the sum of document level charge amounts (BT-99) minus the sum of document level allowance amounts (BT-92) where the VAT category code (BT-151, BT-102, BT-95) is ${q} and the VAT rate (BT-152, BT-103, BT-96) equals the VAT category rate (BT-119).`,
        (e, d) => {
          const rate = num(tax(e), 'ram:RateApplicablePercent');
          return `at ${norm(str(tax(e), 'ram:RateApplicablePercent'))} %, ${shown(tax(e), 'ram:BasisAmount')} given, ${rate === null ? 'nothing' : D.format(categoryBasis(d, c, rate))} computed`;
        },
      ),
      fatal(
        id('09'),
        (e) => taxOfRate(num(tax(e), 'ram:BasisAmount'), num(tax(e), 'ram:RateApplicablePercent'), num(tax(e), 'ram:CalculatedAmount')),
        `The VAT category tax amount (BT-117) in a VAT breakdown (BG-23) where VAT category code (BT-118) is ${q} shall equal the VAT category taxable amount (BT-116) multiplied by the VAT category rate (BT-119).`,
        (e) => {
          const basis = num(tax(e), 'ram:BasisAmount');
          const rate = num(tax(e), 'ram:RateApplicablePercent');
          const computed = basis === null || rate === null ? 'nothing' : D.format(D.shift(D.round(D.mul(D.abs(basis), rate)), 2));
          return `${shown(tax(e), 'ram:CalculatedAmount')} given, ${computed} computed (within 1, signs aside)`;
        },
      ),
      fatal(
        id('10'),
        noExemption,
        `A VAT Breakdown (BG-23) with VAT Category code (BT-118) ${q} shall not have a VAT exemption reason code (BT-121) or VAT exemption reason text (BT-120).`,
      ),
    );
  } else {
    const basisShown = (e: El, d: Doc) => `${shown(tax(e), 'ram:BasisAmount')} given, ${D.format(categoryBasis(d, c))} computed`;
    const basisText = `In a VAT breakdown (BG-23) where the VAT category code (BT-118) is ${q} the VAT category taxable amount (BT-116) shall equal the sum of Invoice line net amounts (BT-131) minus the sum of Document level allowance amounts (BT-92) plus the sum of Document level charge amounts (BT-99) where the VAT category codes (BT-151, BT-95, BT-102) are ${q}.`;
    breakdownChecks.push(
      isO
        ? fatal(id('08'), (e, d) => some(tax(e), 'ram:BasisAmount', eq0, categoryBasis(d, c)), basisText, basisShown)
        : fatal(id('08'), (e, d) => within1(num(tax(e), 'ram:BasisAmount'), categoryBasis(d, c)), basisText, basisShown),
      fatal(
        id('09'),
        zeroTax,
        `The VAT category tax amount (BT-117) in a VAT breakdown (BG-23) where the VAT category code (BT-118) is ${q} shall be 0 (zero).`,
      ),
      c === 'Z'
        ? fatal(
            id('10'),
            noExemption,
            `A VAT Breakdown (BG-23) with VAT Category code (BT-118) ${q} shall not have a VAT exemption reason code (BT-121) or VAT exemption reason text (BT-120).`,
          )
        : fatal(
            id('10'),
            exemption,
            `A VAT Breakdown (BG-23) with VAT Category code (BT-118) ${q} shall have a VAT exemption reason code (BT-121) or a VAT exemption reason text (BT-120).`,
          ),
    );
  }
  if (c === 'K') {
    breakdownChecks.push(
      fatal(
        'BR-IC-11',
        (e, d) =>
          has(first(d.tx, 'ram:ApplicableHeaderTradeDelivery'), 'ram:ActualDeliverySupplyChainEvent/ram:OccurrenceDateTime/udt:DateTimeString') ||
          has((tax(e).parent as El) ?? null, 'ram:BillingSpecifiedPeriod/ram:StartDateTime') ||
          has((tax(e).parent as El) ?? null, 'ram:BillingSpecifiedPeriod/ram:EndDateTime'),
        'In an Invoice with a VAT breakdown (BG-23) where the VAT category code (BT-118) is "Intra-community supply" the Actual delivery date (BT-72) or the Invoicing period (BG-14) shall not be blank.',
      ),
      fatal(
        'BR-IC-12',
        (_e, d) => has(first(d.tx, 'ram:ApplicableHeaderTradeDelivery'), 'ram:ShipToTradeParty/ram:PostalTradeAddress/ram:CountryID'),
        'In an Invoice with a VAT breakdown (BG-23) where the VAT category code (BT-118) is "Intra-community supply" the Deliver to country code (BT-80) shall not be blank.',
      ),
    );
  }
  if (isO) {
    breakdownChecks.push(
      fatal(
        'BR-O-11',
        (_e, d) => !d.any('ram:ApplicableTradeTax').some((t) => find(t, 'ram:CategoryCode').some((x) => text(x) !== 'O')),
        'An Invoice that contains a VAT breakdown group (BG-23) with a VAT category code (BT-118) "Not subject to VAT" shall not contain other VAT breakdown groups (BG-23).',
      ),
      fatal(
        'BR-O-12',
        (_e, d) => !d.any('ram:ApplicableTradeTax').some((t) => find(t, 'ram:CategoryCode').some((x) => text(x) !== 'O')),
        'An Invoice that contains a VAT breakdown group (BG-23) with a VAT category code (BT-118) "Not subject to VAT" shall not contain an Invoice line (BG-25) where the Invoiced item VAT category code (BT-151) is not "Not subject to VAT".',
      ),
      fatal(
        'BR-O-13',
        (_e, d) => !d.any('ram:CategoryTradeTax').some((t) => find(t, 'ram:CategoryCode').some((x) => text(x) !== 'O')),
        'An Invoice that contains a VAT breakdown group (BG-23) with a VAT category code (BT-118) "Not subject to VAT" shall not contain Document level allowances (BG-20) where Document level allowance VAT category code (BT-95) is not "Not subject to VAT".',
      ),
      fatal(
        'BR-O-14',
        (_e, d) => !d.any('ram:CategoryTradeTax').some((t) => find(t, 'ram:CategoryCode').some((x) => text(x) !== 'O')),
        'An Invoice that contains a VAT breakdown group (BG-23) with a VAT category code (BT-118) "Not subject to VAT" shall not contain Document level charges (BG-21) where Document level charge VAT category code (BT-102) is not "Not subject to VAT".',
      ),
    );
  }
  const breakdown = rule(onCode ? 'CategoryCode' : 'ApplicableTradeTax', breakdownMatch, breakdownChecks);
  return [breakdown, lineRule, acRule(false, '03', '06'), acRule(true, '04', '07')];
}

/** BR-x-01 of each family: the breakdown a line, allowance or charge of the category calls for. */
function breakdownPresent(code: string, d: Doc): boolean {
  const hdr = headerTaxes(d, code).length;
  const line = lineTaxes(d, code).length;
  const ac = acTaxes(d, code).length;
  if (code === 'S' || code === 'L' || code === 'M') return (line + hdr >= 2 || line === 0) && (ac + hdr >= 2 || ac === 0);
  if (code === 'O') return hdr === 0 || (hdr === 1 && (line > 0 || ac > 0));
  return (hdr === 0 && line === 0 && ac === 0) || (hdr === 1 && (line > 0 || ac > 0));
}

const allowanceChargeChecks = (charge: boolean, line: boolean): Check[] => {
  const what = line
    ? charge
      ? 'Invoice line charge (BG-28)'
      : 'Invoice line allowance (BG-27)'
    : charge
      ? 'Document level charge (BG-21)'
      : 'Document level allowance (BG-20)';
  const p = (e: El) => e.parent as El;
  const reason = (e: El) => has(p(e), 'ram:Reason') || has(p(e), 'ram:ReasonCode');
  const ids = line
    ? charge
      ? ['BR-43', 'BR-44', 'BR-CO-08', 'BR-CO-24', 'BR-DEC-27', 'BR-DEC-28']
      : ['BR-41', 'BR-42', 'BR-CO-07', 'BR-CO-23', 'BR-DEC-24', 'BR-DEC-25']
    : charge
      ? ['BR-36', 'BR-38', 'BR-CO-06', 'BR-CO-22', 'BR-DEC-05', 'BR-DEC-06']
      : ['BR-31', 'BR-33', 'BR-CO-05', 'BR-CO-21', 'BR-DEC-01', 'BR-DEC-02'];
  const checks: Check[] = [
    fatal(ids[0], (e) => has(p(e), 'ram:ActualAmount'), `Each ${what} shall have an amount.`),
    fatal(ids[1], reason, `Each ${what} shall have a reason or a reason code.`),
    fatal(ids[2], () => true, `The reason code and the reason of each ${what} shall indicate the same type.`),
    fatal(ids[3], reason, `Each ${what} shall contain a reason or a reason code, or both.`),
    fatal(ids[4], (e) => twoDecimals(p(e), 'ram:ActualAmount'), `The allowed maximum number of decimals for the amount of a ${what} is 2.`),
    fatal(ids[5], (e) => twoDecimals(p(e), 'ram:BasisAmount'), `The allowed maximum number of decimals for the base amount of a ${what} is 2.`),
  ];
  if (!line)
    checks.splice(
      1,
      0,
      fatal(
        charge ? 'BR-37' : 'BR-32',
        (e) => find(p(e), 'ram:CategoryTradeTax').some((t) => vatType(t) && has(t, 'ram:CategoryCode')),
        `Each ${what} shall have a VAT category code (${charge ? 'BT-102' : 'BT-95'}).`,
      ),
    );
  return checks;
};
const indicatorIs = (value: string) => (e: El) => find(e, 'udt:Indicator').some((i) => text(i) === value);

function documentTotals(): Check[] {
  const icc = (d: Doc) => find(d.settlement, 'ram:InvoiceCurrencyCode').map(text);
  const tcc = (d: Doc) => find(d.settlement, 'ram:TaxCurrencyCode').map(text);
  const docAc = (d: Doc, charge: boolean) => find(d.settlement, 'ram:SpecifiedTradeAllowanceCharge').filter((ac) => indicator(ac) === charge);
  const sumEq = (e: El, path: string, computed: Dec) => some(e, path, eq0, computed);
  return [
    fatal('BR-12', (e) => has(e, 'ram:LineTotalAmount'), 'An Invoice shall have the Sum of Invoice line net amount (BT-106).'),
    fatal('BR-13', (e) => has(e, 'ram:TaxBasisTotalAmount'), 'An Invoice shall have the Invoice total amount without VAT (BT-109).'),
    fatal('BR-14', (e) => has(e, 'ram:GrandTotalAmount'), 'An Invoice shall have the Invoice total amount with VAT (BT-112).'),
    fatal('BR-15', (e) => has(e, 'ram:DuePayableAmount'), 'An Invoice shall have the Amount due for payment (BT-115).'),
    fatal(
      'BR-53',
      (e, d) => {
        const t = tcc(d);
        if (t.length === 0) return true;
        return find(e, 'ram:TaxTotalAmount').some((x) => t.includes(x.attrs.get('currencyID') ?? '\u0000')) && !t.some((c) => icc(d).includes(c));
      },
      'If the VAT accounting currency code (BT-6) is present, then the Invoice total VAT amount in accounting currency (BT-111) shall be provided.',
    ),
    fatal(
      'BR-CO-10',
      (e, d) =>
        D.eq(
          num(e, 'ram:LineTotalAmount'),
          D.round2(
            sumOf(
              find(
                d.tx,
                'ram:IncludedSupplyChainTradeLineItem/ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount',
              ),
            ),
          ),
        ),
      'Sum of Invoice line net amount (BT-106) = Σ Invoice line net amount (BT-131).',
      (e, d) =>
        `${shown(e, 'ram:LineTotalAmount')} given, ${D.format(D.round2(sumOf(find(d.tx, 'ram:IncludedSupplyChainTradeLineItem/ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount'))))} computed`,
    ),
    fatal(
      'BR-CO-11',
      (e, d) => {
        const acs = docAc(d, false);
        return (
          (acs.length === 0 && !has(e, 'ram:AllowanceTotalAmount')) ||
          sumEq(e, 'ram:AllowanceTotalAmount', D.round2(sumOf(acs.flatMap((a) => find(a, 'ram:ActualAmount')))))
        );
      },
      'Sum of allowances on document level (BT-107) = Σ Document level allowance amount (BT-92).',
      (e, d) =>
        `${shown(e, 'ram:AllowanceTotalAmount')} given, ${D.format(D.round2(sumOf(docAc(d, false).flatMap((a) => find(a, 'ram:ActualAmount')))))} computed`,
    ),
    fatal(
      'BR-CO-12',
      (e, d) => {
        const acs = docAc(d, true);
        return (
          (acs.length === 0 && !has(e, 'ram:ChargeTotalAmount')) ||
          sumEq(e, 'ram:ChargeTotalAmount', D.round2(sumOf(acs.flatMap((a) => find(a, 'ram:ActualAmount')))))
        );
      },
      'Sum of charges on document level (BT-108) = Σ Document level charge amount (BT-99).',
      (e, d) => `${shown(e, 'ram:ChargeTotalAmount')} given, ${D.format(D.round2(sumOf(docAc(d, true).flatMap((a) => find(a, 'ram:ActualAmount')))))} computed`,
    ),
    fatal(
      'BR-CO-13',
      (e) => {
        const B = num(e, 'ram:TaxBasisTotalAmount');
        const L = num(e, 'ram:LineTotalAmount');
        const A = num(e, 'ram:AllowanceTotalAmount');
        const C = num(e, 'ram:ChargeTotalAmount');
        const noA = !has(e, 'ram:AllowanceTotalAmount');
        const noC = !has(e, 'ram:ChargeTotalAmount');
        if (B === null || L === null) return false;
        return (
          (A !== null && C !== null && D.eq(B, D.round2(D.add(D.sub(L, A), C)))) ||
          (A !== null && noC && D.eq(B, D.round2(D.sub(L, A)))) ||
          (C !== null && noA && D.eq(B, D.round2(D.add(L, C)))) ||
          (noA && noC && D.eq(B, D.round2(L)))
        );
      },
      'Invoice total amount without VAT (BT-109) = Σ Invoice line net amount (BT-131) - Sum of allowances on document level (BT-107) + Sum of charges on document level (BT-108).',
      (e) => {
        const L = num(e, 'ram:LineTotalAmount');
        const computed =
          L === null ? 'nothing' : D.format(D.round2(D.add(D.sub(L, num(e, 'ram:AllowanceTotalAmount') ?? ZERO), num(e, 'ram:ChargeTotalAmount') ?? ZERO)));
        return `${shown(e, 'ram:TaxBasisTotalAmount')} given, ${computed} computed`;
      },
    ),
    fatal(
      'BR-CO-16',
      (e) => {
        const Du = num(e, 'ram:DuePayableAmount');
        const G = num(e, 'ram:GrandTotalAmount');
        const P = num(e, 'ram:TotalPrepaidAmount');
        const R = num(e, 'ram:RoundingAmount');
        if (Du === null || G === null) return false;
        const noP = P === null || D.isZero(P);
        const noR = R === null || D.isZero(R);
        return (
          (P !== null && R !== null && D.eq(Du, D.add(D.sub(G, P), R))) ||
          (R !== null && noP && D.eq(Du, D.add(G, R))) ||
          (P !== null && noR && D.eq(Du, D.sub(G, P))) ||
          (noP && noR && D.eq(Du, G))
        );
      },
      'Amount due for payment (BT-115) = Invoice total amount with VAT (BT-112) - Paid amount (BT-113) + Rounding amount (BT-114).',
      (e) => {
        const G = num(e, 'ram:GrandTotalAmount');
        const computed = G === null ? 'nothing' : D.format(D.add(D.sub(G, num(e, 'ram:TotalPrepaidAmount') ?? ZERO), num(e, 'ram:RoundingAmount') ?? ZERO));
        return `${shown(e, 'ram:DuePayableAmount')} given, ${computed} computed`;
      },
    ),
    decimals2('BR-DEC-09', 'ram:LineTotalAmount', 'The allowed maximum number of decimals for the Sum of Invoice line net amount (BT-106) is 2.'),
    decimals2('BR-DEC-10', 'ram:AllowanceTotalAmount', 'The allowed maximum number of decimals for the Sum of allowances on document level (BT-107) is 2.'),
    decimals2('BR-DEC-11', 'ram:ChargeTotalAmount', 'The allowed maximum number of decimals for the Sum of charges on document level (BT-108) is 2.'),
    decimals2('BR-DEC-12', 'ram:TaxBasisTotalAmount', 'The allowed maximum number of decimals for the Invoice total amount without VAT (BT-109) is 2.'),
    decimals2('BR-DEC-14', 'ram:GrandTotalAmount', 'The allowed maximum number of decimals for the Invoice total amount with VAT (BT-112) is 2.'),
    fatal(
      'BR-DEC-13',
      (e, d) => {
        const totals = find(e, 'ram:TaxTotalAmount');
        const inv = icc(d);
        return totals.length === 0 || totals.some((t) => !inv.includes(t.attrs.get('currencyID') ?? '\u0000') || cents(t));
      },
      'The allowed maximum number of decimals for the Invoice total VAT amount (BT-110) is 2.',
    ),
    fatal(
      'BR-DEC-15',
      (e, d) => {
        const totals = find(e, 'ram:TaxTotalAmount');
        const t = tcc(d);
        return totals.length === 0 || t.length === 0 || totals.some((x) => t.includes(x.attrs.get('currencyID') ?? '\u0000') && cents(x));
      },
      'The allowed maximum number of decimals for the Invoice total VAT amount in accounting currency (BT-111) is 2.',
    ),
    decimals2('BR-DEC-16', 'ram:TotalPrepaidAmount', 'The allowed maximum number of decimals for the Paid amount (BT-113) is 2.'),
    decimals2('BR-DEC-17', 'ram:RoundingAmount', 'The allowed maximum number of decimals for the Rounding amount (BT-114) is 2.'),
    decimals2('BR-DEC-18', 'ram:DuePayableAmount', 'The allowed maximum number of decimals for the Amount due for payment (BT-115) is 2.'),
  ];
}
/** . = round(. * 100) div 100 */
const cents = (e: El): boolean => {
  const v = dec(text(e));
  return v !== null && D.eq(v, D.round2(v));
};

function invoiceChecks(): Check[] {
  const party = (d: Doc, local: string) => first(d.agreement, `ram:${local}`);
  const checks: Check[] = [
    fatal(
      'BR-01',
      (e) => filled(e, 'rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID'),
      'An Invoice shall have a Specification identifier (BT-24).',
    ),
    fatal('BR-02', (e) => filled(e, 'rsm:ExchangedDocument/ram:ID'), 'An Invoice shall have an Invoice number (BT-1).'),
    fatal(
      'BR-03',
      (e) => norm(text(find(e, 'rsm:ExchangedDocument/ram:IssueDateTime/udt:DateTimeString').find((x) => x.attrs.get('format') === '102'))) !== '',
      'An Invoice shall have an Invoice issue date (BT-2).',
    ),
    fatal('BR-04', (e) => filled(e, 'rsm:ExchangedDocument/ram:TypeCode'), 'An Invoice shall have an Invoice type code (BT-3).'),
    fatal('BR-05', (_e, d) => filled(d.settlement, 'ram:InvoiceCurrencyCode'), 'An Invoice shall have an Invoice currency code (BT-5).'),
    fatal('BR-06', (_e, d) => filled(party(d, 'SellerTradeParty'), 'ram:Name'), 'An Invoice shall contain the Seller name (BT-27).'),
    fatal('BR-07', (_e, d) => filled(party(d, 'BuyerTradeParty'), 'ram:Name'), 'An Invoice shall contain the Buyer name (BT-44).'),
    fatal('BR-08', (_e, d) => has(party(d, 'SellerTradeParty'), 'ram:PostalTradeAddress'), 'An Invoice shall contain the Seller postal address (BG-5).'),
    fatal(
      'BR-09',
      (_e, d) =>
        filled(party(d, 'SellerTradeParty'), 'ram:PostalTradeAddress/ram:CountryID') ||
        (isMinimum(d) && !has(party(d, 'SellerTradeParty'), 'ram:PostalTradeAddress')),
      'The Seller postal address (BG-5) shall contain a Seller country code (BT-40).',
    ),
    fatal('BR-10', (_e, d) => has(party(d, 'BuyerTradeParty'), 'ram:PostalTradeAddress'), 'An Invoice shall contain the Buyer postal address (BG-8).'),
    fatal(
      'BR-11',
      (_e, d) => filled(party(d, 'BuyerTradeParty'), 'ram:PostalTradeAddress/ram:CountryID'),
      'The Buyer postal address shall contain a Buyer country code (BT-55).',
    ),
    fatal('BR-16', (_e, d) => d.any('ram:IncludedSupplyChainTradeLineItem').length > 0, 'An Invoice shall have at least one Invoice line (BG-25).'),
    fatal(
      'BR-62',
      (_e, d) => {
        const s = party(d, 'SellerTradeParty');
        return (
          !has(s, 'ram:URIUniversalCommunication') || norm(first(first(s, 'ram:URIUniversalCommunication'), 'ram:URIID')?.attrs.get('schemeID') ?? '') !== ''
        );
      },
      'The Seller electronic address (BT-34) shall have a Scheme identifier.',
    ),
    fatal(
      'BR-63',
      (_e, d) => {
        const b = party(d, 'BuyerTradeParty');
        return (
          !has(b, 'ram:URIUniversalCommunication') || norm(first(first(b, 'ram:URIUniversalCommunication'), 'ram:URIID')?.attrs.get('schemeID') ?? '') !== ''
        );
      },
      'The Buyer electronic address (BT-49) shall have a Scheme identifier.',
    ),
    fatal(
      'BR-CO-15',
      (_e, d) => {
        const totals = d.any('ram:SpecifiedTradeSettlementHeaderMonetarySummation')[0];
        const G = num(totals, 'ram:GrandTotalAmount');
        const B = num(totals, 'ram:TaxBasisTotalAmount');
        const noVat = G !== null && B !== null && D.eq(G, B);
        return find(d.settlement, 'ram:InvoiceCurrencyCode').every((cc) => {
          const inCurrency = find(totals, 'ram:TaxTotalAmount').filter((t) => t.attrs.get('currencyID') === text(cc));
          const T = inCurrency.length ? dec(text(inCurrency[0])) : null;
          return (inCurrency.length === 1 && G !== null && B !== null && T !== null && D.eq(G, D.round2(D.add(B, T)))) || noVat;
        });
      },
      'Invoice total amount with VAT (BT-112) = Invoice total amount without VAT (BT-109) + Invoice total VAT amount (BT-110), with exactly one Invoice total VAT amount in the invoice currency.',
      (_e, d) => {
        const totals = d.any('ram:SpecifiedTradeSettlementHeaderMonetarySummation')[0];
        const currency = str(d.settlement, 'ram:InvoiceCurrencyCode');
        const vat = find(totals, 'ram:TaxTotalAmount').filter((t) => t.attrs.get('currencyID') === currency);
        const B = num(totals, 'ram:TaxBasisTotalAmount');
        const T = vat.length ? dec(text(vat[0])) : null;
        const computed = B === null ? 'nothing' : D.format(D.round2(D.add(B, T ?? ZERO)));
        return `${shown(totals, 'ram:GrandTotalAmount')} given, ${computed} computed, ${vat.length} VAT total(s) in ${norm(currency) || 'the invoice currency'}`;
      },
    ),
    warning(
      'BR-CO-25',
      (_e, d) => {
        const due = d.any('ram:DuePayableAmount').map((x) => Number(text(x)));
        const positive = due.some((n) => n > 0);
        return !positive || d.any('ram:SpecifiedTradePaymentTerms').some((t) => has(t, 'ram:DueDateDateTime') || has(t, 'ram:Description'));
      },
      'In case the Amount due for payment (BT-115) is positive, either the Payment due date (BT-9) or the Payment terms (BT-20) shall be present (not checked by the official artefacts since 1.3.16: a warning).',
    ),
  ];
  for (const cat of Object.values(CATEGORIES))
    checks.push(
      fatal(
        `BR-${cat.family}-01`,
        (_e, d) => breakdownPresent(cat.code, d),
        `An Invoice that contains an Invoice line (BG-25), a Document level allowance (BG-20) or a Document level charge (BG-21) where the VAT category code (BT-151, BT-95 or BT-102) is "${cat.name}" shall contain in the VAT breakdown (BG-23) ${cat.code === 'S' || cat.code === 'L' || cat.code === 'M' ? 'at least one' : 'exactly one'} VAT category code (BT-118) equal with "${cat.name}".`,
      ),
    );
  const codes = (d: Doc) => d.any('ram:CategoryCode').map(text);
  checks.push(
    fatal(
      'BR-B-01',
      (_e, d) => !codes(d).includes('B') || !d.any('ram:CountryID').some((c) => text(c) !== 'IT'),
      'An Invoice where the VAT category code (BT-151, BT-95 or BT-102) is "Split payment" shall be a domestic Italian invoice.',
    ),
    fatal(
      'BR-B-02',
      (_e, d) => !codes(d).includes('B') || !codes(d).includes('S'),
      'An Invoice that contains an Invoice line (BG-25), a Document level allowance (BG-20) or a Document level charge (BG-21) where the VAT category code is "Split payment" shall not contain one where it is "Standard rated".',
    ),
  );
  return checks;
}

function lineChecks(): Check[] {
  const netPrice = 'ram:SpecifiedLineTradeAgreement/ram:NetPriceProductTradePrice/ram:ChargeAmount';
  const grossPrice = 'ram:SpecifiedLineTradeAgreement/ram:GrossPriceProductTradePrice/ram:ChargeAmount';
  return [
    fatal(
      'BR-21',
      (e) => filled(e, 'ram:AssociatedDocumentLineDocument/ram:LineID'),
      'Each Invoice line (BG-25) shall have an Invoice line identifier (BT-126).',
    ),
    fatal('BR-22', (e) => has(e, 'ram:SpecifiedLineTradeDelivery/ram:BilledQuantity'), 'Each Invoice line (BG-25) shall have an Invoiced quantity (BT-129).'),
    fatal(
      'BR-23',
      (e) => find(e, 'ram:SpecifiedLineTradeDelivery/ram:BilledQuantity').some((q) => q.attrs.has('unitCode')),
      'An Invoice line (BG-25) shall have an Invoiced quantity unit of measure code (BT-130).',
    ),
    fatal(
      'BR-24',
      (e) => has(e, 'ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount'),
      'Each Invoice line (BG-25) shall have an Invoice line net amount (BT-131).',
    ),
    fatal('BR-25', (e) => filled(e, 'ram:SpecifiedTradeProduct/ram:Name'), 'Each Invoice line (BG-25) shall contain the Item name (BT-153).'),
    fatal('BR-26', (e) => has(e, netPrice), 'Each Invoice line (BG-25) shall contain the Item net price (BT-146).'),
    fatal('BR-27', (e) => some(e, netPrice, ge, ZERO), 'The Item net price (BT-146) shall NOT be negative.'),
    fatal('BR-28', (e) => !has(e, grossPrice) || some(e, grossPrice, ge, ZERO), 'The Item gross price (BT-148) shall NOT be negative.'),
    fatal(
      'BR-64',
      (e) => !has(e, 'ram:SpecifiedTradeProduct/ram:GlobalID') || norm(first(e, 'ram:SpecifiedTradeProduct/ram:GlobalID')?.attrs.get('schemeID') ?? '') !== '',
      'The Item standard identifier (BT-157) shall have a Scheme identifier.',
    ),
    fatal(
      'BR-CO-04',
      (e) => find(e, LINE_TAX).some((t) => vatType(t) && has(t, 'ram:CategoryCode')),
      'Each Invoice line (BG-25) shall be categorized with an Invoiced item VAT category code (BT-151).',
    ),
    fatal('BR-CO-18', (_e, d) => find(d.settlement, 'ram:ApplicableTradeTax').length > 0, 'An Invoice shall at least have one VAT breakdown group (BG-23).'),
    decimals2(
      'BR-DEC-23',
      'ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount',
      'The allowed maximum number of decimals for the Invoice line net amount (BT-131) is 2.',
    ),
  ];
}

const periodChecks = (line: boolean): Check[] => {
  const date = (e: El, which: string) => text(find(e, `ram:${which}/udt:DateTimeString`).find((x) => x.attrs.get('format') === '102'));
  const ordered = (e: El) => {
    if (!has(e, 'ram:EndDateTime') || !has(e, 'ram:StartDateTime')) return true;
    const end = find(e, 'ram:EndDateTime/udt:DateTimeString').find((x) => x.attrs.get('format') === '102');
    const start = find(e, 'ram:StartDateTime/udt:DateTimeString').find((x) => x.attrs.get('format') === '102');
    return !!end && !!start && date(e, 'EndDateTime') >= date(e, 'StartDateTime');
  };
  return line
    ? [
        fatal(
          'BR-30',
          ordered,
          'If both Invoice line period start date (BT-134) and Invoice line period end date (BT-135) are given then the Invoice line period end date (BT-135) shall be later or equal to the Invoice line period start date (BT-134).',
        ),
        fatal(
          'BR-CO-20',
          (e) => has(e, 'ram:StartDateTime') || has(e, 'ram:EndDateTime'),
          'If Invoice line period (BG-26) is used, the Invoice line period start date (BT-134) or the Invoice line period end date (BT-135) shall be filled, or both.',
        ),
      ]
    : [
        fatal(
          'BR-29',
          ordered,
          'If both Invoicing period start date (BT-73) and Invoicing period end date (BT-74) are given then the Invoicing period end date (BT-74) shall be later or equal to the Invoicing period start date (BT-73).',
        ),
        fatal(
          'BR-CO-19',
          (e) => has(e, 'ram:StartDateTime') || has(e, 'ram:EndDateTime'),
          'If Invoicing period (BG-14) is used, the Invoicing period start date (BT-73) or the Invoicing period end date (BT-74) shall be filled, or both.',
        ),
      ];
};

function breakdownChecks(): Check[] {
  return [
    fatal('BR-45', (e) => has(e, 'ram:BasisAmount'), 'Each VAT breakdown (BG-23) shall have a VAT category taxable amount (BT-116).'),
    fatal('BR-46', (e) => has(e, 'ram:CalculatedAmount'), 'Each VAT breakdown (BG-23) shall have a VAT category tax amount (BT-117).'),
    fatal('BR-47', (e) => vatType(e) && has(e, 'ram:CategoryCode'), 'Each VAT breakdown (BG-23) shall be defined through a VAT category code (BT-118).'),
    fatal(
      'BR-48',
      (e) => vatType(e) && (has(e, 'ram:RateApplicablePercent') || find(e, 'ram:CategoryCode').some((c) => text(c) === 'O')),
      'Each VAT breakdown (BG-23) shall have a VAT category rate (BT-119), except if the Invoice is not subject to VAT.',
    ),
    fatal(
      'BR-CO-03',
      (_e, d) => !(d.any('ram:TaxPointDate').length > 0 && d.any('ram:DueDateTypeCode').length > 0),
      'Value added tax point date (BT-7) and Value added tax point date code (BT-8) are mutually exclusive.',
    ),
    fatal(
      'BR-CO-17',
      (e) => {
        const vat = find(e, 'ram:TypeCode').some((t) => norm(text(t).toUpperCase()) === 'VAT');
        const rate = vat ? num(e, 'ram:RateApplicablePercent') : null;
        const tax = num(e, 'ram:CalculatedAmount');
        const basis = num(e, 'ram:BasisAmount');
        if (tax === null) return false;
        if (rate === null) return D.isZero(D.round(tax));
        if (D.isZero(D.round(rate))) return D.isZero(D.round(tax));
        if (basis === null) return false;
        const computed = D.round2(D.mul(D.abs(basis), D.shift(rate, 2)));
        return D.cmp(D.sub(D.abs(tax), D.fromInt(1)), computed) <= 0 && D.cmp(D.add(D.abs(tax), D.fromInt(1)), computed) >= 0;
      },
      'VAT category tax amount (BT-117) = VAT category taxable amount (BT-116) x (VAT category rate (BT-119) / 100), rounded to two decimals.',
    ),
    decimals2('BR-DEC-19', 'ram:BasisAmount', 'The allowed maximum number of decimals for the VAT category taxable amount (BT-116) is 2.'),
    decimals2('BR-DEC-20', 'ram:CalculatedAmount', 'The allowed maximum number of decimals for the VAT category tax amount (BT-117) is 2.'),
  ];
}

const R = (path: string, absolute = false) => {
  const st = steps(path);
  return (e: El) => atSteps(e, st, absolute);
};

/** The model pattern, its rules in the artefacts' order. */
export const MODEL: Pattern = (() => {
  const families = Object.fromEntries(Object.values(CATEGORIES).map((c) => [c.code, vatFamily(c)]));
  const fam = (code: string) => families[code];
  return [
    rule('DesignatedProductClassification', R('ram:DesignatedProductClassification'), [
      fatal(
        'BR-65',
        (e) => !has(e, 'ram:ClassCode') || norm(first(e, 'ram:ClassCode')?.attrs.get('listID') ?? '') !== '',
        'The Item classification identifier (BT-158) shall have a Scheme identifier.',
      ),
    ]),
    rule('AdditionalReferencedDocument', R('ram:AdditionalReferencedDocument'), [
      fatal(
        'BR-52',
        (e) => filled(e, 'ram:IssuerAssignedID'),
        'Each Additional supporting document (BG-24) shall contain a Supporting document reference (BT-122).',
      ),
    ]),
    rule('ApplicableTradeSettlementFinancialCard', R('ram:ApplicableTradeSettlementFinancialCard'), [
      fatal(
        'BR-51',
        (e) => [...str(e, 'ram:ID')].length <= 10,
        'In accordance with card payments security standards an invoice should never include a full card primary account number (BT-87): at most the first 6 and last 4 digits.',
      ),
    ]),
    rule(
      'PayeePartyCreditorFinancialAccount',
      (e) =>
        at(e, 'ram:SpecifiedTradeSettlementPaymentMeans/ram:PayeePartyCreditorFinancialAccount') &&
        find(e.parent, 'ram:TypeCode').some((t) => text(t) === '30' || text(t) === '58'),
      [
        fatal(
          'BR-50',
          (e) => has(e, 'ram:IBANID') || has(e, 'ram:ProprietaryID'),
          'A Payment account identifier (BT-84) shall be present if Credit transfer (BG-17) information is provided in the Invoice.',
        ),
        fatal(
          'BR-61',
          (e) => has(e, 'ram:IBANID') || has(e, 'ram:ProprietaryID'),
          'If the Payment means type code (BT-81) means SEPA credit transfer, Local credit transfer or Non-SEPA international credit transfer, the Payment account identifier (BT-84) shall be present.',
        ),
        // Not in the artefacts since 1.3.16; kept from the rule's text for credit transfers (as Factur-X's artefacts).
        fatal(
          'BR-CO-27',
          (e) => !(filled(e, 'ram:IBANID') && filled(e, 'ram:ProprietaryID')),
          'Either the IBAN or a Proprietary ID (BT-84) shall be used, not both.',
        ),
      ],
    ),
    rule('ApplicableHeaderTradeDelivery', R('rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeDelivery', true), [
      fatal(
        'BR-57',
        (e) => !has(e, 'ram:ShipToTradeParty/ram:PostalTradeAddress') || filled(e, 'ram:ShipToTradeParty/ram:PostalTradeAddress/ram:CountryID'),
        'Each Deliver to address (BG-15) shall contain a Deliver to country code (BT-80).',
      ),
    ]),
    rule(
      'ChargeIndicator',
      (e) => at(e, 'ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator') && indicatorIs('false')(e),
      allowanceChargeChecks(false, false),
    ),
    rule(
      'ChargeIndicator',
      (e) => at(e, 'ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator') && indicatorIs('true')(e),
      allowanceChargeChecks(true, false),
    ),
    rule('SpecifiedTradeSettlementHeaderMonetarySummation', R('ram:SpecifiedTradeSettlementHeaderMonetarySummation'), documentTotals()),
    rule('CrossIndustryInvoice', R('rsm:CrossIndustryInvoice', true), invoiceChecks()),
    rule('IncludedSupplyChainTradeLineItem', R('ram:IncludedSupplyChainTradeLineItem'), lineChecks()),
    rule(
      'ChargeIndicator',
      (e) => at(e, 'ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator') && indicatorIs('false')(e),
      allowanceChargeChecks(false, true),
    ),
    rule(
      'ChargeIndicator',
      (e) => at(e, 'ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeAllowanceCharge/ram:ChargeIndicator') && indicatorIs('true')(e),
      allowanceChargeChecks(true, true),
    ),
    rule('BillingSpecifiedPeriod', R('ram:SpecifiedLineTradeSettlement/ram:BillingSpecifiedPeriod'), periodChecks(true)),
    rule('BillingSpecifiedPeriod', R('ram:ApplicableHeaderTradeSettlement/ram:BillingSpecifiedPeriod'), periodChecks(false)),
    rule('ApplicableProductCharacteristic', R('ram:ApplicableProductCharacteristic'), [
      fatal(
        'BR-54',
        (e) => has(e, 'ram:Description') && has(e, 'ram:Value'),
        'Each Item attribute (BG-32) shall contain an Item attribute name (BT-160) and an Item attribute value (BT-161).',
      ),
    ]),
    rule('PayeeTradeParty', R('ram:PayeeTradeParty'), [
      fatal(
        'BR-17',
        (e) => {
          const seller = first(e.parent?.parent, 'ram:ApplicableHeaderTradeAgreement/ram:SellerTradeParty');
          const same = (path: string) => find(e, path).some((x) => find(seller, path).some((y) => text(y) === text(x)));
          return has(e, 'ram:Name') && !same('ram:Name') && !same('ram:ID') && !same('ram:SpecifiedLegalOrganization/ram:ID');
        },
        'The Payee name (BT-59) shall be provided in the Invoice, if the Payee (BG-10) is different from the Seller (BG-4).',
      ),
    ]),
    rule('SpecifiedTradeSettlementPaymentMeans', R('ram:SpecifiedTradeSettlementPaymentMeans'), [
      fatal('BR-49', (e) => has(e, 'ram:TypeCode'), 'A Payment instruction (BG-16) shall specify the Payment means type code (BT-81).'),
    ]),
    rule(
      'InvoiceReferencedDocument',
      R('rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement/ram:InvoiceReferencedDocument', true),
      [
        fatal(
          'BR-55',
          (e) => filled(e, 'ram:IssuerAssignedID'),
          'Each Preceding Invoice reference (BG-3) shall contain a Preceding Invoice reference (BT-25).',
        ),
      ],
    ),
    rule('SellerTradeParty', R('ram:SellerTradeParty'), [
      fatal(
        'BR-CO-26',
        (e) => has(e, 'ram:ID') || has(e, 'ram:GlobalID') || has(e, 'ram:SpecifiedLegalOrganization/ram:ID') || regIds(e, ['VA']).length > 0,
        'In order for the buyer to automatically identify a supplier, the Seller identifier (BT-29), the Seller legal registration identifier (BT-30) and/or the Seller VAT identifier (BT-31) shall be present.',
      ),
    ]),
    rule('SellerTaxRepresentativeTradeParty', R('ram:SellerTaxRepresentativeTradeParty'), [
      fatal(
        'BR-18',
        (e) => has(e, 'ram:Name'),
        'The Seller tax representative name (BT-62) shall be provided in the Invoice, if the Seller (BG-4) has a Seller tax representative party (BG-11).',
      ),
      fatal(
        'BR-19',
        (e) => has(e, 'ram:PostalTradeAddress'),
        'The Seller tax representative postal address (BG-12) shall be provided in the Invoice, if the Seller (BG-4) has a Seller tax representative party (BG-11).',
      ),
      fatal(
        'BR-20',
        (e) => has(e, 'ram:PostalTradeAddress/ram:CountryID'),
        'The Seller tax representative postal address (BG-12) shall contain a Tax representative country code (BT-69), if the Seller (BG-4) has a Seller tax representative party (BG-11).',
      ),
      fatal(
        'BR-56',
        (e) => norm(text(regIds(e, ['VA'])[0])) !== '',
        'Each Seller tax representative party (BG-11) shall have a Seller tax representative VAT identifier (BT-63).',
      ),
    ]),
    rule(
      'TaxTotalAmount',
      (e, d) =>
        at(e, 'ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:TaxTotalAmount') &&
        find(d.settlement, 'ram:InvoiceCurrencyCode').some((c) => text(c) === e.attrs.get('currencyID')),
      [
        fatal(
          'BR-CO-14',
          (e, d) => D.eq(dec(text(e)), D.round2(sumOf(find(d.settlement, 'ram:ApplicableTradeTax/ram:CalculatedAmount')))),
          'Invoice total VAT amount (BT-110) = Σ VAT category tax amount (BT-117).',
          (e, d) => `${norm(text(e))} given, ${D.format(D.round2(sumOf(find(d.settlement, 'ram:ApplicableTradeTax/ram:CalculatedAmount'))))} computed`,
        ),
      ],
    ),
    rule('ID', (e) => at(e, 'ram:SpecifiedTaxRegistration/ram:ID') && e.attrs.get('schemeID') === 'VA', [
      fatal(
        'BR-CO-09',
        (e) => VAT_PREFIXES.has(text(e).slice(0, 2)) && text(e).length >= 2 && !text(e).slice(0, 2).includes(' '),
        'The Seller VAT identifier (BT-31), the Seller tax representative VAT identifier (BT-63) and the Buyer VAT identifier (BT-48) shall have a prefix in accordance with ISO code ISO 3166-1 alpha-2 by which the country of issue may be identified. Nevertheless, Greece may use the prefix ‘EL’.',
        (e) => text(e),
      ),
    ]),
    // The category families in the artefacts' order: AE, AF (L), AG (M), E, G, IC (K), O, S, Z; each its
    // breakdown, line, allowance and charge rules (the artefacts interleave them the same way per family).
    ...fam('AE'),
    ...fam('L'),
    ...fam('M'),
    ...fam('E'),
    ...fam('G'),
    ...fam('K'),
    ...fam('O'),
    ...fam('S'),
    ...fam('Z'),
    rule('ApplicableTradeTax', R(HEADER_TAX), breakdownChecks()),
  ];
})();

/**
 * Ids a Factur-X MINIMUM or BASIC WL invoice is not held to: those profiles carry no lines (nor, in MINIMUM, the
 * addresses, the line total and the VAT breakdown), so EN 16931's rules on them cannot hold there.
 */
const LINE_RULES = ['BR-16', 'BR-CO-10', 'BR-CO-25', 'BR-CO-26', 'BR-21', 'BR-22', 'BR-23', 'BR-24', 'BR-25', 'BR-26', 'BR-27', 'BR-CO-04'];
const VAT_FAMILY = /^BR-(S|Z|E|AE|IC|G|O|AF|AG|B)-/;
const MINIMUM_RULES = [...LINE_RULES, 'BR-08', 'BR-10', 'BR-11', 'BR-12', 'BR-CO-11', 'BR-CO-12', 'BR-CO-13', 'BR-CO-14', 'BR-CO-18'];
const MINIMUM_IDS = ['urn:factur-x.eu:1p0:minimum', 'urn:zugferd.de:2p0:minimum'];
const guidelineOf = (root: El) => norm(str(root, 'rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID'));
function isMinimum(d: Doc): boolean {
  return MINIMUM_IDS.includes(guidelineOf(d.root));
}
function profileExempt(guideline: string, id: string): boolean {
  const minimum = MINIMUM_IDS.includes(guideline);
  const basicwl = guideline === 'urn:factur-x.eu:1p0:basicwl' || guideline === 'urn:zugferd.de:2p0:basicwl';
  if (!minimum && !basicwl) return false;
  return VAT_FAMILY.test(id) || (minimum ? MINIMUM_RULES : LINE_RULES).includes(id);
}

/** The EN 16931 findings of a CII invoice: model, code-list and syntax patterns, in that order. */
export function checkEn16931(xml: string): RuleFinding[] {
  const { root, all } = parseTree(xml);
  const d = new Doc(root, all);
  const out: RuleFinding[] = [];
  if (!(root.local === 'CrossIndustryInvoice' && root.ns === NS.rsm)) return out;
  runPattern(MODEL, d, out);
  runPattern(en16931Codes, d, out);
  runPattern(en16931Syntax, d, out);
  const guideline = guidelineOf(root);
  return out.filter((f) => !profileExempt(guideline, f.id));
}

/** The code-list pattern alone (BR-CL-*), for probing the lists on documents that are no complete invoice. */
export function checkCodeLists(xml: string): RuleFinding[] {
  const { root, all } = parseTree(xml);
  const out: RuleFinding[] = [];
  runPattern(en16931Codes, new Doc(root, all), out);
  return out;
}
