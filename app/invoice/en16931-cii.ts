import { CODE_LISTS } from './en16931-code-lists.js';
import { type Check, type Doc, fatal, type Pattern, rule, warning } from './en16931-rules.js';
import { ancestor, at, atSteps, countSteps, type El, find, findSteps, NS, norm, steps, text } from './xml-tree.js';

/**
 * The EN 16931 code-list pattern (BR-CL-*) and the CII syntax binding (CII-SR-*, CII-DT-*: what the EN 16931 subset
 * of CII D16B leaves out, as CEN's artefacts check it, most CII-SR as warnings), under the artefacts' ids, flags
 * and rule order (the first rule whose context an element matches is the one applied to it).
 */

const list = (name: keyof typeof CODE_LISTS) => new Set(CODE_LISTS[name].split(' '));
const L = {
  c1001: list('untdid1001'),
  c4217: list('iso4217'),
  c2005: list('untdid2005'),
  c1153: list('untdid1153'),
  c4451: list('untdid4451'),
  c6523: list('iso6523'),
  c7143: list('untdid7143'),
  c3166: list('iso3166'),
  c4461: list('untdid4461'),
  c5305: list('untdid5305'),
  c5189: list('untdid5189'),
  c7161: list('untdid7161'),
  vatex: list('vatex'),
  rec20: list('rec20'),
  eas: list('eas'),
  mime: list('mime'),
};

/** The artefacts' test: normalize-space(value) holds no space and is in the list. */
const inList = (codes: Set<string>, value: string | undefined): boolean => {
  const v = norm(value ?? '');
  return v !== '' && !v.includes(' ') && codes.has(v);
};
const R = (path: string) => {
  const st = steps(path);
  return (e: El) => atSteps(e, st);
};
const attr = (name: string) => (e: El) => e.attrs.has(name);
const ram = (e: El) => e.ns === NS.ram;
/** ChargeIndicator/udt:Indicator = true() / false(), an untyped value cast to a boolean. */
const indicatorIs = (ac: El | null, value: boolean) =>
  !!ac &&
  find(ac, 'ram:ChargeIndicator/udt:Indicator').some((i) => {
    const v = text(i).trim();
    return value ? v === 'true' || v === '1' : v === 'false' || v === '0';
  });

const code = (id: string, codes: Set<string>, value: (e: El) => string | undefined, what: string, raw = value): Check =>
  fatal(
    id,
    (e) => inList(codes, value(e)),
    `${what}.`,
    (e) => `'${norm(raw(e) ?? '')}' is not in the list`,
  );
const own = (e: El) => text(e);
const at_ = (name: string) => (e: El) => e.attrs.get(name);

export const en16931Codes: Pattern = [
  rule('TypeCode', R('rsm:ExchangedDocument/ram:TypeCode'), [
    code('BR-CL-01', L.c1001, own, 'The document type code MUST be coded by the invoice and credit note related code lists of UNTDID 1001'),
  ]),
  rule('TaxTotalAmount', (e) => ram(e) && attr('currencyID')(e), [
    code('BR-CL-03', L.c4217, at_('currencyID'), 'currencyID MUST be coded using ISO code list 4217 alpha-3'),
  ]),
  rule('InvoiceCurrencyCode', ram, [code('BR-CL-04', L.c4217, own, 'Invoice currency code MUST be coded using ISO code list 4217 alpha-3')]),
  rule('TaxCurrencyCode', ram, [code('BR-CL-05', L.c4217, own, 'Tax currency code MUST be coded using ISO code list 4217 alpha-3')]),
  rule('DueDateTypeCode', ram, [code('BR-CL-06', L.c2005, own, 'Value added tax point date code MUST be coded using a restriction of UNTDID 2475')]),
  rule('ReferenceTypeCode', ram, [
    code('BR-CL-07', L.c1153, own, 'Object identifier identification scheme identifier MUST be coded using a restriction of UNTDID 1153'),
  ]),
  rule('SubjectCode', ram, [code('BR-CL-08', L.c4451, own, 'Subject Code MUST be coded using a restriction of UNTDID 4451')]),
  rule('GlobalID', (e) => ram(e) && attr('schemeID')(e) && !ancestor(e, 'ram:SpecifiedTradeProduct') && !ancestor(e, 'ram:ShipToTradeParty'), [
    code('BR-CL-10', L.c6523, at_('schemeID'), 'Any identifier identification scheme identifier MUST be coded using one of the ISO 6523 ICD list'),
  ]),
  rule('ID', (e) => ram(e) && attr('schemeID')(e) && !ancestor(e, 'ram:SpecifiedTaxRegistration'), [
    code('BR-CL-11', L.c6523, at_('schemeID'), 'Any registration identifier identification scheme identifier MUST be coded using one of the ISO 6523 ICD list'),
  ]),
  rule('ClassCode', (e) => ram(e) && attr('listID')(e), [
    code('BR-CL-13', L.c7143, at_('listID'), 'Item classification identifier identification scheme identifier MUST be coded using one of the UNTDID 7143 list'),
  ]),
  rule('CountryID', ram, [code('BR-CL-14', L.c3166, own, 'Country codes in an invoice MUST be coded using ISO code list 3166-1')]),
  rule('ID', R('ram:OriginTradeCountry/ram:ID'), [code('BR-CL-15', L.c3166, own, 'Country codes in an invoice MUST be coded using ISO code list 3166-1')]),
  rule('TypeCode', R('ram:SpecifiedTradeSettlementPaymentMeans/ram:TypeCode'), [
    code('BR-CL-16', L.c4461, own, 'Payment means in an invoice MUST be coded using UNTDID 4461 code list'),
  ]),
  rule('CategoryCode', R('ram:CategoryTradeTax/ram:CategoryCode'), [
    code('BR-CL-17', L.c5305, own, 'Invoice tax categories MUST be coded using UNCL 5305 code list'),
  ]),
  rule('CategoryCode', R('ram:ApplicableTradeTax/ram:CategoryCode'), [
    code('BR-CL-18', L.c5305, own, 'Invoice tax categories MUST be coded using UNCL 5305 code list'),
  ]),
  rule('ReasonCode', (e) => at(e, 'ram:SpecifiedTradeAllowanceCharge/ram:ReasonCode') && indicatorIs(e.parent, false), [
    code('BR-CL-19', L.c5189, own, 'Coded allowance reasons MUST belong to the UNCL 5189 code list'),
  ]),
  rule('ReasonCode', (e) => at(e, 'ram:SpecifiedTradeAllowanceCharge/ram:ReasonCode') && indicatorIs(e.parent, true), [
    code('BR-CL-20', L.c7161, own, 'Coded charge reasons MUST belong to the UNCL 7161 code list'),
  ]),
  rule('GlobalID', (e) => at(e, 'ram:SpecifiedTradeProduct/ram:GlobalID') && attr('schemeID')(e), [
    code('BR-CL-21', L.c6523, at_('schemeID'), 'Item standard identifier scheme identifier MUST belong to the ISO 6523 ICD code list'),
  ]),
  rule('ExemptionReasonCode', ram, [
    code(
      'BR-CL-22',
      L.vatex,
      (e) => text(e).toUpperCase(),
      'Tax exemption reason code identifier scheme identifier MUST belong to the CEF VATEX code list',
      own,
    ),
  ]),
  rule(['BasisQuantity', 'BilledQuantity'], (e) => ram(e) && attr('unitCode')(e), [
    code('BR-CL-23', L.rec20, at_('unitCode'), 'Unit code MUST be coded according to the UN/ECE Recommendation 20 with Rec 21 extension'),
  ]),
  rule('AttachmentBinaryObject', (e) => ram(e) && attr('mimeCode')(e), [
    fatal(
      'BR-CL-24',
      (e) => L.mime.has(e.attrs.get('mimeCode') ?? ''),
      'For Mime code in attribute use MIMEMediaType.',
      (e) => `'${e.attrs.get('mimeCode')}' is not in the list`,
    ),
  ]),
  rule('URIID', (e) => at(e, 'ram:URIUniversalCommunication/ram:URIID') && attr('schemeID')(e), [
    code('BR-CL-25', L.eas, at_('schemeID'), 'Endpoint identifier scheme identifier MUST belong to the CEF EAS code list'),
  ]),
  rule('GlobalID', (e) => at(e, 'ram:ApplicableHeaderTradeDelivery/ram:ShipToTradeParty/ram:GlobalID') && attr('schemeID')(e), [
    code('BR-CL-26', L.c6523, at_('schemeID'), 'Delivery location identifier scheme identifier MUST belong to the ISO 6523 ICD code list'),
  ]),
];
// ---- The syntax binding ---------------------------------------------------------------------------------------

/**
 * One check in a compact form: `NNN f|w TEST` with TEST `!path` (absent), `<=1 path`, `=1 path` (how many), where
 * path is relative to the context and may end in `/@attribute`; `CII-DT-NNN` ids are written `DT-NNN`.
 */
function sr(spec: string, custom?: (e: El, d: Doc) => boolean): Check {
  const [num, flag, ...rest] = spec.split(' ');
  const id = num.startsWith('DT-') ? `CII-${num}` : num.startsWith('SR-') ? `CII-${num}` : `CII-SR-${num}`;
  const test = rest.join(' ');
  let check: (e: El, d: Doc) => boolean;
  let msg: string;
  /** How many elements (or attributes, for a path ending in `/@name`) `path` finds from a context element. */
  const counter = (path: string): ((e: El) => number) => {
    const m = /^(.*?)\/?@([\w]+)$/.exec(path);
    if (!m) {
      const st = steps(path);
      return (e) => countSteps(e, st);
    }
    const [, elements, attribute] = m;
    if (!elements) return (e) => (e.attrs.has(attribute) ? 1 : 0);
    const st = steps(elements);
    return (e) => findSteps(e, st).filter((x) => x.attrs.has(attribute)).length;
  };
  const name = (path: string) => path.slice(path.lastIndexOf('/') + 1).replace(/^ram:|^udt:/, '');
  if (custom) {
    check = custom;
    msg = test;
  } else if (test.startsWith('!')) {
    const path = test.slice(1);
    const count = counter(path);
    check = (e) => count(e) === 0;
    msg = `${name(path)} should not be present`;
  } else if (test.startsWith('<=1 ')) {
    const path = test.slice(4);
    const count = counter(path);
    check = (e) => count(e) <= 1;
    msg = `${name(path)} should exist maximum once`;
  } else if (test.startsWith('=1 ')) {
    const path = test.slice(3);
    const count = counter(path);
    check = (e) => count(e) === 1;
    msg = `${name(path)} must exist exactly once`;
  } else throw new Error(`bad syntax rule ${spec}`);
  return (flag === 'f' ? fatal : warning)(id, check, msg);
}
const S = (specs: string[]) => specs.map((s) => sr(s));

const ROOT = 'rsm:CrossIndustryInvoice';
const TX = `${ROOT}/rsm:SupplyChainTradeTransaction`;
const LINE = `${TX}/ram:IncludedSupplyChainTradeLineItem`;
const abs = (path: string) => {
  const st = steps(path);
  return (e: El) => atSteps(e, st, true);
};
const endsWith = (suffix: string) => (e: El) => ram(e) && e.local.endsWith(suffix);
/** Neither both an ID and a GlobalID (CII-SR-449..451). */
const oneIdentifier = (party: string) => (e: El) => {
  const p = find(e, party);
  return !(p.some((x) => find(x, 'ram:ID').length > 0) && p.some((x) => find(x, 'ram:GlobalID').length > 0));
};

const GROSS = 'ram:GrossPriceProductTradePrice';
const GAC = `${GROSS}/ram:AppliedTradeAllowanceCharge`;
const NET = 'ram:NetPriceProductTradePrice';
const LAC = 'ram:SpecifiedTradeAllowanceCharge';
const LSUM = 'ram:SpecifiedTradeSettlementLineMonetarySummation';
const SELLER = 'ram:SellerTradeParty';
const BUYER = 'ram:BuyerTradeParty';
const STC = 'DefinedTradeContact';
const contactRules = (party: string, first: number) =>
  [
    `${first} w !${party}/ram:${STC}/ram:ID`,
    `${first + 1} w !${party}/ram:${STC}/ram:TypeCode`,
    `${first + 2} w !${party}/ram:${STC}/ram:JobTitle`,
    `${first + 3} w !${party}/ram:${STC}/ram:Responsibility`,
    `${first + 4} w !${party}/ram:${STC}/ram:PersonID`,
    `${first + 5} w !${party}/ram:${STC}/ram:TelephoneUniversalCommunication/ram:URIID`,
    `${first + 6} w !${party}/ram:${STC}/ram:TelephoneUniversalCommunication/ram:ChannelCode`,
    `${first + 7} w !${party}/ram:${STC}/ram:DirectTelephoneUniversalCommunication`,
    `${first + 8} w !${party}/ram:${STC}/ram:MobileTelephoneUniversalCommunication`,
    `${first + 9} w !${party}/ram:${STC}/ram:FaxUniversalCommunication`,
    `${first + 10} w !${party}/ram:${STC}/ram:EmailURIUniversalCommunication/ram:ChannelCode`,
    `${first + 11} w !${party}/ram:${STC}/ram:EmailURIUniversalCommunication/ram:CompleteNumber`,
    `${first + 12} w !${party}/ram:${STC}/ram:TelexUniversalCommunication`,
    `${first + 13} w !${party}/ram:${STC}/ram:VOIPUniversalCommunication`,
    `${first + 14} w !${party}/ram:${STC}/ram:InstantMessagingUniversalCommunication`,
    `${first + 15} w !${party}/ram:${STC}/ram:SpecifiedNote`,
    `${first + 16} w !${party}/ram:${STC}/ram:SpecifiedContactPerson`,
    `${first + 17} w !${party}/ram:URIUniversalCommunication/ram:ChannelCode`,
    `${first + 18} w !${party}/ram:URIUniversalCommunication/ram:CompleteNumber`,
    `${first + 19} w !${party}/ram:SpecifiedTaxRegistration/ram:AssociatedRegisteredTax`,
    `${first + 20} w !${party}/ram:EndPointURIUniversalCommunication`,
    `${first + 21} w !${party}/ram:LogoAssociatedSpecifiedBinaryFile`,
  ].map((s) => s.replace(/^\d+/, (n) => String(n).padStart(3, '0')));

/** DT-097: a date under format 102 is YYYYMMDD with a real month and day number. */
const DATE_102 = /^\s*(\d{4})(1[0-2]|0[1-9])(3[01]|[12][0-9]|0[1-9])\s*$/u;

export const en16931Syntax: Pattern = [
  rule('SpecifiedTradeSettlementPaymentMeans', ram, []), // CII-SR-464's test holds for every element
  rule('ExchangedDocumentContext', abs(`${ROOT}/rsm:ExchangedDocumentContext`), [
    ...S([
      '001 w !ram:SpecifiedTransactionID',
      '002 w !ram:TestIndicator',
      '003 w <=1 ram:BusinessProcessSpecifiedDocumentContextParameter',
      '006 w !ram:BIMSpecifiedDocumentContextParameter',
    ]),
    ...S([
      '007 w !ram:ScenarioSpecifiedDocumentContextParameter',
      '008 w !ram:ApplicationSpecifiedDocumentContextParameter',
      '009 f =1 ram:GuidelineSpecifiedDocumentContextParameter',
    ]),
    ...S([
      '010 f =1 ram:GuidelineSpecifiedDocumentContextParameter/ram:ID',
      '011 w !ram:SubsetSpecifiedDocumentContextParameter',
      '012 w !ram:MessageStandardSpecifiedDocumentContextParameter',
    ]),
  ]),
  rule(
    'ExchangedDocument',
    abs(`${ROOT}/rsm:ExchangedDocument`),
    S([
      '013 w !ram:Name',
      '014 f =1 ram:TypeCode',
      '015 w !ram:IssueDateTime/udt:DateTime',
      '016 w !ram:CopyIndicator',
      '017 w !ram:Purpose',
      '018 w !ram:ControlRequirementIndicator',
      '019 w !ram:LanguageID',
      '020 w !ram:PurposeCode',
      '021 w !ram:RevisionDateTime',
      '022 w !ram:VersionID',
      '023 w !ram:GlobalID',
      '024 w !ram:RevisionID',
      '025 w !ram:PreviousRevisionID',
      '026 w !ram:CategoryCode',
      '027 w !ram:IncludedNote/ram:Subject',
      '028 w !ram:IncludedNote/ram:ContentCode',
      '032 w !ram:IncludedNote/ram:ID',
      '033 w !ram:EffectiveSpecifiedPeriod',
      '034 w !ram:IssuerTradeParty',
    ]),
  ),
  rule('IncludedNote', abs(`${ROOT}/rsm:ExchangedDocument/ram:IncludedNote`), S(['030 w <=1 ram:Content'])),
  rule(
    'IncludedSupplyChainTradeLineItem',
    abs(LINE),
    S([
      '035 w !ram:DescriptionCode',
      '036 w !ram:ParentLineID',
      '037 w !ram:LineStatusCode',
      '038 w !ram:LineStatusReasonCode',
      '221 w !ram:IncludedSubordinateTradeLineItem',
    ]),
  ),
  rule(
    'AssociatedDocumentLineDocument',
    abs(`${LINE}/ram:AssociatedDocumentLineDocument`),
    S([
      '039 w <=1 ram:IncludedNote',
      '040 w <=1 ram:IncludedNote/ram:Content',
      '041 w !ram:IncludedNote/ram:SubjectCode',
      '042 w !ram:IncludedNote/ram:ID',
      '043 w !ram:IncludedNote/ram:Subject',
      '044 w !ram:IncludedNote/ram:ContentCode',
    ]),
  ),
  rule('SpecifiedTradeProduct', abs(`${LINE}/ram:SpecifiedTradeProduct`), [
    sr('045 w !ram:ID'),
    sr(
      '046 f schemeID must be present if GlobalID is present',
      (e) => find(e, 'ram:GlobalID').length === 0 || find(e, 'ram:GlobalID').some((g) => g.attrs.has('schemeID')),
    ),
    ...S([
      '048 w !ram:ManufacturerAssignedID',
      '049 w !ram:TradeName',
      '050 w !ram:TypeCode',
      '051 w !ram:NetWeightMeasure',
      '052 w !ram:GrossWeightMeasure',
      '053 w !ram:ProductGroupID',
      '054 w !ram:EndItemTypeCode',
      '055 w !ram:EndItemName',
      '056 w !ram:AreaDensityMeasure',
      '057 w !ram:UseDescription',
      '058 w !ram:BrandName',
      '059 w !ram:SubBrandName',
      '060 w !ram:DrainedNetWeightMeasure',
      '061 w !ram:VariableMeasureIndicator',
      '062 w !ram:ColourCode',
      '063 w !ram:ColourDescription',
      '064 w !ram:Designation',
      '065 w !ram:FormattedCancellationAnnouncedLaunchDateTime',
      '066 w !ram:FormattedLatestProductDataChangeDateTime',
      '067 w !ram:ApplicableProductCharacteristic/ram:ID',
      '068 w !ram:ApplicableProductCharacteristic/ram:TypeCode',
      '070 w !ram:ApplicableProductCharacteristic/ram:ValueMeasure',
      '071 w !ram:ApplicableProductCharacteristic/ram:MeasurementMethodCode',
      '073 w !ram:ApplicableProductCharacteristic/ram:ValueCode',
      '074 w !ram:ApplicableProductCharacteristic/ram:ValueDateTime',
      '075 w !ram:ApplicableProductCharacteristic/ram:ValueIndicator',
      '076 w !ram:ApplicableProductCharacteristic/ram:ContentTypeCode',
      '077 w !ram:ApplicableProductCharacteristic/ram:ValueSpecifiedBinaryFile',
      '078 w !ram:ApplicableProductCharacteristic/ram:ApplicableProductCharacteristicCondition',
      '079 w !ram:ApplicableProductCharacteristic/ram:ApplicableReferencedStandard',
      '080 w !ram:ApplicableMaterialGoodsCharacteristic',
      '081 w !ram:DesignatedProductClassification/ram:SystemID',
      '082 w !ram:DesignatedProductClassification/ram:SystemName',
      '083 w !ram:DesignatedProductClassification/ram:ClassName',
      '084 w !ram:DesignatedProductClassification/ram:SubClassCode',
      '085 w !ram:DesignatedProductClassification/ram:ClassProductCharacteristic',
      '086 w !ram:DesignatedProductClassification/ram:ApplicableReferencedStandard',
      '087 w !ram:IndividualTradeProductInstance',
      '088 w !ram:CertificationEvidenceReferenceReferencedDocument',
      '089 w !ram:InspectionReferenceReferencedDocument',
    ]),
    sr('090 f ID should exist maximum once.', (e) => find(e, 'ram:OriginTradeCountry').length === 0 || find(e, 'ram:OriginTradeCountry/ram:ID').length === 1),
    ...S([
      '091 w !ram:OriginTradeCountry/ram:Name',
      '092 w !ram:OriginTradeCountry/ram:SubordinateTradeCountrySubDivision',
      '093 w !ram:LinearSpatialDimension',
      '094 w !ram:MinimumLinearSpatialDimension',
      '095 w !ram:MaximumLinearSpatialDimension',
      '096 w !ram:ManufacturerTradeParty',
      '097 w !ram:PresentationSpecifiedBinaryFile',
      '098 w !ram:MSDSReferenceReferencedDocument',
      '099 w !ram:AdditionalReferenceReferencedDocument',
      '100 w !ram:LegalRightsOwnerTradeParty',
      '101 w !ram:BrandOwnerTradeParty',
      '102 w !ram:IncludedReferencedProduct',
      '103 w !ram:InformationNote',
    ]),
  ]),
  rule('ApplicableProductCharacteristic', abs(`${LINE}/ram:SpecifiedTradeProduct/ram:ApplicableProductCharacteristic`), [
    sr('069 f Description should exist maximum once.', (e) => find(e, 'ram:Description').length === 1),
    sr('072 f Value should exist maximum once.', (e) => find(e, 'ram:Value').length === 1),
  ]),
  rule('SpecifiedLineTradeAgreement', abs(`${LINE}/ram:SpecifiedLineTradeAgreement`), [
    ...S([
      '104 w !ram:BuyerReference',
      '105 w !ram:BuyerRequisitionerTradeParty',
      '106 w !ram:ApplicableTradeDeliveryTerms',
      '107 w !ram:SellerOrderReferencedDocument',
      '108 w !ram:BuyerOrderReferencedDocument/ram:IssuerAssignedID',
      '109 w !ram:QuotationReferencedDocument',
      '110 w !ram:ContractReferencedDocument',
      '111 w !ram:DemandForecastReferencedDocument',
      '112 w !ram:PromotionalDealReferencedDocument',
      '113 w !ram:AdditionalReferencedDocument',
      `114 w !${GROSS}/ram:TypeCode`,
      `115 w !${GROSS}/ram:MinimumQuantity`,
      `116 w !${GROSS}/ram:MaximumQuantity`,
      `117 w !${GROSS}/ram:ChangeReason`,
      `118 w !${GROSS}/ram:OrderUnitConversionFactorNumeric`,
    ]),
    sr('439 f ChargeAmount should exist maximum once', (e) => find(e, `${NET}/ram:ChargeAmount`).length === 1),
    sr('119 w Only allowances on price a price should be present', (e) => {
      const indicators = find(e, `${GAC}/ram:ChargeIndicator`);
      const amounts = find(e, `${GAC}/ram:ActualAmount`);
      const allowance = indicators.some((i) => find(i, 'udt:Indicator').some((x) => ['false', '0'].includes(text(x).trim())));
      return (allowance && amounts.length > 0) || (indicators.length === 0 && amounts.length === 0);
    }),
    ...S([
      `120 w !${GAC}/ram:ID`,
      `121 w !${GAC}/ram:SequenceNumeric`,
      `122 w !${GAC}/ram:CalculationPercent`,
      `123 w !${GAC}/ram:BasisAmount`,
      `124 w !${GAC}/ram:BasisQuantity`,
      `125 w !${GAC}/ram:PrepaidIndicator`,
      `126 w !${GAC}/ram:UnitBasisAmount`,
      `127 w !${GAC}/ram:ReasonCode`,
      `128 w !${GAC}/ram:Reason`,
      `129 w !${GAC}/ram:TypeCode`,
      `130 w !${GAC}/ram:CategoryTradeTax`,
      `131 w !${GAC}/ram:ActualTradeCurrencyExchange`,
      `445 w !${GROSS}/ram:IncludedTradeTax`,
      `132 w !${GROSS}/ram:ValiditySpecifiedPeriod`,
      `133 w !${GROSS}/ram:DeliveryTradeLocation`,
      `134 w !${GROSS}/ram:TradeComparisonReferencePrice`,
      `135 w !${GROSS}/ram:AssociatedReferencedDocument`,
      `136 w !${NET}/ram:TypeCode`,
      `138 w !${NET}/ram:MinimumQuantity`,
      `139 w !${NET}/ram:MaximumQuantity`,
      `140 w !${NET}/ram:ChangeReason`,
      `141 w !${NET}/ram:OrderUnitConversionFactorNumeric`,
      `142 w !${NET}/ram:AppliedTradeAllowanceCharge`,
      `446 w !${NET}/ram:IncludedTradeTax`,
      `143 w !${NET}/ram:ValiditySpecifiedPeriod`,
      `144 w !${NET}/ram:DeliveryTradeLocation`,
      `145 w !${NET}/ram:TradeComparisonReferencePrice`,
      `146 w !${NET}/ram:AssociatedReferencedDocument`,
      `441 f <=1 ${NET}/ram:ChargeAmount`,
      '147 w !ram:RequisitionerReferencedDocument',
      '148 w !ram:ItemSellerTradeParty',
      '149 w !ram:ItemBuyerTradeParty',
      '150 w !ram:IncludedSpecifiedMarketplace',
      '447 w !ram:UltimateCustomerOrderReferencedDocument',
    ]),
  ]),
  rule('SpecifiedTradeAllowanceCharge', ram, [
    sr('463 f Each Specified Trade Allowance Charge (BG-20)(BG-21) shall contain a Charge Indicator.', (e) => find(e, 'ram:ChargeIndicator').length > 0),
  ]),
  rule('AppliedTradeAllowanceCharge', R(GAC), S(['440 f <=1 ram:ActualAmount'])),
  rule(
    'SpecifiedLineTradeDelivery',
    abs(`${LINE}/ram:SpecifiedLineTradeDelivery`),
    S([
      '151 w !ram:RequestedQuantity',
      '152 w !ram:ReceivedQuantity',
      '153 w !ram:ChargeFreeQuantity',
      '154 w !ram:PackageQuantity',
      '155 w !ram:ProductUnitQuantity',
      '156 w !ram:PerPackageUnitQuantity',
      '157 w !ram:NetWeightMeasure',
      '158 w !ram:GrossWeightMeasure',
      '159 w !ram:TheoreticalWeightMeasure',
      '160 w !ram:DespatchedQuantity',
      '161 w !ram:SpecifiedDeliveryAdjustment',
      '162 w !ram:IncludedSupplyChainPackaging',
      '163 w !ram:RelatedSupplyChainConsignment',
      '164 w !ram:ShipToTradeParty',
      '165 w !ram:UltimateShipToTradeParty',
      '166 w !ram:ShipFromTradeParty',
      '167 w !ram:ActualDespatchSupplyChainEvent',
      '168 w !ram:ActualPickUpSupplyChainEvent',
      '169 w !ram:RequestedDeliverySupplyChainEvent',
      '170 w !ram:ActualDeliverySupplyChainEvent',
      '171 w !ram:ActualReceiptSupplyChainEvent',
      '172 w !ram:AdditionalReferencedDocument',
      '173 w !ram:DespatchAdviceReferencedDocument',
      '174 w !ram:ReceivingAdviceReferencedDocument',
      '175 w !ram:DeliveryNoteReferencedDocument',
      '176 w !ram:ConsumptionReportReferencedDocument',
      '177 w !ram:PackingListReferencedDocument',
    ]),
  ),
  rule(
    'SpecifiedLineTradeSettlement',
    abs(`${LINE}/ram:SpecifiedLineTradeSettlement`),
    S([
      '178 w !ram:PaymentReference',
      '179 w !ram:InvoiceIssuerReference',
      '180 w !ram:TotalAdjustmentAmount',
      '181 w !ram:DiscountIndicator',
      '182 w !ram:ApplicableTradeTax/ram:CalculatedAmount',
      `183 w !${LAC}/ram:ChargeIndicator/udt:IndicatorString`,
      `184 w !${LAC}/ram:ID`,
      `185 w !${LAC}/ram:SequenceNumeric`,
      `186 w !${LAC}/ram:CalculationPercent/@format`,
      `187 w !${LAC}/ram:BasisQuantity`,
      `188 w !${LAC}/ram:PrepaidIndicator`,
      `189 w !${LAC}/ram:UnitBasisAmount`,
      `190 w !${LAC}/ram:TypeCode`,
      `191 w !${LAC}/ram:CategoryTradeTax`,
      `192 w !${LAC}/ram:ActualTradeCurrencyExchange`,
      `193 w !${LAC}/ram:ID`,
      '194 w !ram:SubtotalCalculatedTradeTax',
      '195 w !ram:SpecifiedLogisticsServiceCharge',
      '196 w !ram:SpecifiedTradePaymentTerms',
      `197 w !${LSUM}/ram:ChargeTotalAmount`,
      `198 w !${LSUM}/ram:AllowanceTotalAmount`,
      `199 w !${LSUM}/ram:TaxBasisTotalAmount`,
      `200 w !${LSUM}/ram:TaxTotalAmount`,
      `201 w !${LSUM}/ram:GrandTotalAmount`,
      `202 w !${LSUM}/ram:InformationAmount`,
      `203 w !${LSUM}/ram:TotalAllowanceChargeAmount`,
      `204 w !${LSUM}/ram:TotalRetailValueInformationAmount`,
      `205 w !${LSUM}/ram:GrossLineTotalAmount`,
      `206 w !${LSUM}/ram:NetLineTotalAmount`,
      `207 w !${LSUM}/ram:NetIncludingTaxesLineTotalAmount`,
      `208 w !${LSUM}/ram:ProductWeightLossInformationAmount`,
      '209 w !ram:SpecifiedFinancialAdjustment',
      '210 w !ram:InvoiceReferencedDocument',
      '212 w !ram:PayableSpecifiedTradeAccountingAccount',
      '213 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:SetTriggerCode',
      '214 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:TypeCode',
      '215 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:AmountTypeCode',
      '216 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:Name',
      '217 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:CostReferenceDimensionPattern',
      '218 w !ram:PurchaseSpecifiedTradeAccountingAccount',
      '219 w !ram:SalesSpecifiedTradeAccountingAccount',
      '220 w !ram:SpecifiedTradeSettlementFinancialCard',
      '454 w =1 ram:ApplicableTradeTax',
    ]),
  ),
  rule('ApplicableHeaderTradeAgreement', abs(`${TX}/ram:ApplicableHeaderTradeAgreement`), [
    ...S([
      '442 w !ram:Reference',
      `222 w !${SELLER}/ram:RoleCode`,
      `223 w !${SELLER}/ram:SpecifiedLegalOrganization/ram:LegalClassificationCode`,
      `224 w !${SELLER}/ram:SpecifiedLegalOrganization/ram:Name`,
      `225 w !${SELLER}/ram:SpecifiedLegalOrganization/ram:PostalTradeAddress`,
      `226 w !${SELLER}/ram:SpecifiedLegalOrganization/ram:AuthorizedLegalRegistration`,
    ]),
    ...S(contactRules(SELLER, 227)),
    ...S([
      `249 w !${BUYER}/ram:RoleCode`,
      `250 w !${BUYER}/ram:Description`,
      `251 w !${BUYER}/ram:SpecifiedLegalOrganization/ram:LegalClassificationCode`,
      `252 w !${BUYER}/ram:SpecifiedLegalOrganization/ram:Name`,
      `254 w !${BUYER}/ram:SpecifiedLegalOrganization/ram:PostalTradeAddress`,
      `255 w !${BUYER}/ram:SpecifiedLegalOrganization/ram:AuthorizedLegalRegistration`,
    ]),
    ...S(contactRules(BUYER, 256)),
    ...S([
      '278 w !ram:SalesAgentTradeParty',
      '279 w !ram:BuyerRequisitionerTradeParty',
      '280 w !ram:BuyerAssignedAccountantTradeParty',
      '281 w !ram:SellerAssignedAccountantTradeParty',
      '282 w !ram:BuyerTaxRepresentativeTradeParty',
      '283 w !ram:SellerTaxRepresentativeTradeParty/ram:GlobalID',
      '284 w !ram:SellerTaxRepresentativeTradeParty/ram:RoleCode',
      '285 w !ram:SellerTaxRepresentativeTradeParty/ram:Description',
      '286 w !ram:SellerTaxRepresentativeTradeParty/ram:SpecifiedLegalOrganization',
      '287 w !ram:SellerTaxRepresentativeTradeParty/ram:DefinedTradeContact',
      '288 w !ram:SellerTaxRepresentativeTradeParty/ram:URIUniversalCommunication',
      '289 w !ram:SellerTaxRepresentativeTradeParty/ram:SpecifiedTaxRegistration/ram:AssociatedRegisteredTax',
      '290 w !ram:SellerTaxRepresentativeTradeParty/ram:EndPointURIUniversalCommunication',
      '291 w !ram:SellerTaxRepresentativeTradeParty/ram:LogoAssociatedSpecifiedBinaryFile',
      '292 w !ram:ProductEndUserTradeParty',
      '293 w !ram:ApplicableTradeDeliveryTerms',
      '294 w !ram:SellerOrderReferencedDocument/ram:LineID',
      '295 w !ram:BuyerOrderReferencedDocument/ram:LineID',
      '296 w !ram:QuotationReferencedDocument',
      '297 w !ram:OrderResponseReferencedDocument',
      '298 w !ram:ContractReferencedDocument/ram:LineID',
      '299 w !ram:DemandForecastReferencedDocument',
      '300 w !ram:SupplyInstructionReferencedDocument',
      '301 w !ram:PromotionalDealReferencedDocument',
      '302 w !ram:PriceListReferencedDocument',
      '303 w !ram:AdditionalReferencedDocument/ram:LineID',
      '304 w !ram:RequisitionerReferencedDocument',
      '305 w !ram:BuyerAgentTradeParty',
      '306 w !ram:PurchaseConditionsReferencedDocument',
      '307 w !ram:SpecifiedProcuringProject/ram:Description',
      '448 w !ram:UltimateCustomerOrderReferencedDocument',
    ]),
    sr('450 w Only one buyer identifier should be present (either the ID or the Global ID)', oneIdentifier(BUYER)),
    ...S([`455 f <=1 ${SELLER}/ram:${STC}`, `456 f <=1 ${BUYER}/ram:${STC}`]),
    sr(
      '457 w IssuerAssignedID with TypeCode 50 should exist maximum once',
      (e) => find(e, 'ram:AdditionalReferencedDocument').filter((a) => find(a, 'ram:TypeCode').some((t) => text(t) === '50')).length <= 1,
    ),
    sr(
      '458 w IssuerAssignedID with TypeCode 130 should exist maximum once',
      (e) => find(e, 'ram:AdditionalReferencedDocument').filter((a) => find(a, 'ram:TypeCode').some((t) => text(t) === '130')).length <= 1,
    ),
    ...S([`459 f <=1 ${SELLER}/ram:URIUniversalCommunication`, `460 f <=1 ${BUYER}/ram:URIUniversalCommunication`]),
    sr(
      '465 w Only one BT-41 element is allowed on an invoice.',
      (e) => !(find(e, `${SELLER}/ram:${STC}/ram:PersonName`).length && find(e, `${SELLER}/ram:${STC}/ram:DepartmentName`).length),
    ),
    sr(
      '466 w Only one BT-56 element is allowed on an invoice.',
      (e) => !(find(e, `${BUYER}/ram:${STC}/ram:PersonName`).length && find(e, `${BUYER}/ram:${STC}/ram:DepartmentName`).length),
    ),
  ]),
  rule('ApplicableHeaderTradeDelivery', abs(`${TX}/ram:ApplicableHeaderTradeDelivery`), [
    ...S([
      '308 w !ram:RelatedSupplyChainConsignment',
      '309 w !ram:ShipToTradeParty/ram:RoleCode',
      '310 w !ram:ShipToTradeParty/ram:Description',
      '311 w !ram:ShipToTradeParty/ram:SpecifiedLegalOrganization',
      '312 w !ram:ShipToTradeParty/ram:DefinedTradeContact',
      '313 w !ram:ShipToTradeParty/ram:URIUniversalCommunication',
      '314 w !ram:ShipToTradeParty/ram:SpecifiedTaxRegistration',
      '315 w !ram:ShipToTradeParty/ram:EndPointURIUniversalCommunication',
      '316 w !ram:ShipToTradeParty/ram:LogoAssociatedSpecifiedBinaryFile',
      '317 w !ram:UltimateShipToTradeParty',
      '318 w !ram:ShipFromTradeParty',
      '319 w !ram:ActualDespatchSupplyChainEvent',
      '320 w !ram:ActualPickUpSupplyChainEvent',
      '321 w !ram:ActualDeliverySupplyChainEvent/ram:ID',
      '322 w !ram:ActualDeliverySupplyChainEvent/ram:OccurrenceDateTime/udt:DateTime',
      '323 w !ram:ActualDeliverySupplyChainEvent/ram:TypeCode',
      '324 w !ram:ActualDeliverySupplyChainEvent/ram:Description',
      '325 w !ram:ActualDeliverySupplyChainEvent/ram:DescriptionBinaryObject',
      '326 w !ram:ActualDeliverySupplyChainEvent/ram:UnitQuantity',
      '327 w !ram:ActualDeliverySupplyChainEvent/ram:LatestOccurrenceDateTime',
      '328 w !ram:ActualDeliverySupplyChainEvent/ram:EarliestOccurrenceDateTime',
      '329 w !ram:ActualDeliverySupplyChainEvent/ram:OccurrenceSpecifiedPeriod',
      '330 w !ram:ActualDeliverySupplyChainEvent/ram:OccurrenceLogisticsLocation',
      '331 w !ram:ActualReceiptSupplyChainEvent',
      '332 w !ram:AdditionalReferencedDocument',
      '333 w !ram:DespatchAdviceReferencedDocument/ram:LineID',
      '334 w !ram:DespatchAdviceReferencedDocument/ram:LineID',
      '335 w !ram:DeliveryNoteReferencedDocument',
      '336 w !ram:ConsumptionReportReferencedDocument',
      '337 w !ram:PreviousDeliverySupplyChainEvent',
      '338 w !ram:PackingListReferencedDocument',
    ]),
    sr('449 w Only one delivery to location identifier should be present (either the ID or the Global ID)', oneIdentifier('ram:ShipToTradeParty')),
  ]),
  rule('ApplicableHeaderTradeSettlement', abs(`${TX}/ram:ApplicableHeaderTradeSettlement`), [
    ...S([
      '339 w !ram:DuePayableAmount',
      '340 w !ram:CreditorReferenceTypeCode',
      '341 w !ram:CreditorReferenceType',
      '342 w !ram:CreditorReferenceIssuerID',
      '344 w !ram:PaymentCurrencyCode',
      '345 w !ram:InvoiceIssuerReference',
      '346 w !ram:InvoiceDateTime',
      '347 w !ram:NextInvoiceDateTime',
      '348 w !ram:CreditReasonCode',
      '349 w !ram:CreditReason',
      '350 w !ram:InvoicerTradeParty',
      '351 w !ram:InvoiceeTradeParty',
      '352 w !ram:PayeeTradeParty/ram:RoleCode',
      '353 w !ram:PayeeTradeParty/ram:Description',
      '354 w !ram:PayeeTradeParty/ram:SpecifiedLegalOrganization/ram:LegalClassificationCode',
      '355 w !ram:PayeeTradeParty/ram:SpecifiedLegalOrganization/ram:Name',
      '356 w !ram:PayeeTradeParty/ram:SpecifiedLegalOrganization/ram:TradingBusinessName',
      '357 w !ram:PayeeTradeParty/ram:SpecifiedLegalOrganization/ram:PostalTradeAddress',
      '358 w !ram:PayeeTradeParty/ram:SpecifiedLegalOrganization/ram:AuthorizedLegalRegistration',
      '359 w !ram:PayeeTradeParty/ram:DefinedTradeContact',
      '360 w !ram:PayeeTradeParty/ram:PostalTradeAddress',
      '361 w !ram:PayeeTradeParty/ram:URIUniversalCommunication',
      '362 w !ram:PayeeTradeParty/ram:SpecifiedTaxRegistration',
      '363 w !ram:PayeeTradeParty/ram:EndPointURIUniversalCommunication',
      '364 w !ram:PayeeTradeParty/ram:LogoAssociatedSpecifiedBinaryFile',
    ]),
    sr('451 w Only one payee identifier should be present (either the ID or the Global ID)', oneIdentifier('ram:PayeeTradeParty')),
    ...S([
      '365 w !ram:PayerTradeParty',
      '366 w !ram:TaxApplicableTradeCurrencyExchange',
      '367 w !ram:InvoiceApplicableTradeCurrencyExchange',
      '368 w !ram:PaymentApplicableTradeCurrencyExchange',
      '369 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PaymentChannelCode',
      '370 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:GuaranteeMethodCode',
      '371 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PaymentMethodCode',
      '443 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ID',
      '372 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:MicrochipIndicator',
      '373 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:TypeCode',
      '375 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:ExpiryDate',
      '376 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:VerificationNumeric',
      '377 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:ValidFromDateTime',
      '378 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:CreditLimitAmount',
      '379 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:CreditAvailableAmount',
      '380 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:InterestRatePercent',
      '381 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:ApplicableTradeSettlementFinancialCard/ram:Description',
      '382 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PayerPartyDebtorFinancialAccount/ram:AccountName',
      '444 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PayerPartyDebtorFinancialAccount/ram:ProprietaryID',
      '384 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PayerSpecifiedDebtorFinancialInstitution/ram:ClearingSystemName',
      '385 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PayerSpecifiedDebtorFinancialInstitution/ram:Name',
      '386 w !ram:SpecifiedTradeSettlementPaymentMeans/ram:PayerSpecifiedDebtorFinancialInstitution/ram:LocationFinancialInstitutionAddress',
      '388 w !ram:SpecifiedTradeAllowanceCharge/ram:ID',
      '389 w !ram:SpecifiedTradeAllowanceCharge/ram:SequenceNumeric',
      '390 w !ram:SpecifiedTradeAllowanceCharge/ram:BasisQuantity',
      '391 w !ram:SpecifiedTradeAllowanceCharge/ram:PrepaidIndicator',
      '392 w !ram:SpecifiedTradeAllowanceCharge/ram:UnitBasisAmount',
      '393 w !ram:SpecifiedTradeAllowanceCharge/ram:TypeCode',
      '394 w !ram:SpecifiedTradeAllowanceCharge/ram:ActualTradeCurrencyExchange',
      '395 w !ram:SubtotalCalculatedTradeTax',
      '396 w !ram:SpecifiedLogisticsServiceCharge',
      '397 w !ram:SpecifiedTradePaymentTerms/ram:ID',
      '398 w !ram:SpecifiedTradePaymentTerms/ram:FromEventCode',
      '399 w !ram:SpecifiedTradePaymentTerms/ram:SettlementPeriodMeasure',
      '400 w !ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime/udt:DateTime',
      '401 w !ram:SpecifiedTradePaymentTerms/ram:TypeCode',
      '402 w !ram:SpecifiedTradePaymentTerms/ram:InstructionTypeCode',
      '404 w !ram:SpecifiedTradePaymentTerms/ram:PartialPaymentPercent',
      '405 w !ram:SpecifiedTradePaymentTerms/ram:PaymentMeansID',
      '406 w !ram:SpecifiedTradePaymentTerms/ram:PartialPaymentAmount',
      '407 w !ram:SpecifiedTradePaymentTerms/ram:ApplicableTradePaymentPenaltyTerms',
      '408 w !ram:SpecifiedTradePaymentTerms/ram:ApplicableTradePaymentDiscountTerms',
      '409 w !ram:SpecifiedTradePaymentTerms/ram:PayeeTradeParty',
      '421 w !ram:SpecifiedFinancialAdjustment',
      '422 w !ram:InvoiceReferencedDocument/ram:LineID',
      '423 w !ram:ProFormaInvoiceReferencedDocument',
      '424 w !ram:LetterOfCreditReferencedDocument',
      '425 w !ram:FactoringAgreementReferencedDocument',
      '426 w !ram:FactoringListReferencedDocument',
      '427 w !ram:PayableSpecifiedTradeAccountingAccount',
      '428 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:SetTriggerCode',
      '429 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:TypeCode',
      '430 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:AmountTypeCode',
      '431 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:Name',
      '432 w !ram:ReceivableSpecifiedTradeAccountingAccount/ram:CostReferenceDimensionPattern',
      '433 w !ram:PurchaseSpecifiedTradeAccountingAccount',
      '434 w !ram:SalesSpecifiedTradeAccountingAccount',
      '435 w !ram:SpecifiedTradeSettlementFinancialCard',
      '436 w !ram:SpecifiedAdvancePayment',
      '437 w !ram:UltimatePayeeTradeParty',
      '452 w <=1 ram:SpecifiedTradePaymentTerms',
      '453 w <=1 ram:SpecifiedTradePaymentTerms/ram:Description',
      '461 f <=1 ram:ApplicableTradeTax/ram:TaxPointDate',
    ]),
    sr(
      '462 f Only one DueDateTypeCode shall be present',
      (_e, d) =>
        new Set(
          d
            .any('ram:DueDateTypeCode')
            .filter((c) => c.parent?.local === 'ApplicableTradeTax')
            .map(text),
        ).size <= 1,
    ),
  ]),
  rule(
    'SpecifiedTradeSettlementHeaderMonetarySummation',
    abs(`${TX}/ram:ApplicableHeaderTradeSettlement/ram:SpecifiedTradeSettlementHeaderMonetarySummation`),
    S([
      '411 w !ram:InformationAmount',
      '412 w !ram:TotalDiscountAmount',
      '413 w !ram:TotalAllowanceChargeAmount',
      '414 w !ram:RetailValueExcludingTaxInformationAmount',
      '415 w !ram:TotalDepositFeeInformationAmount',
      '416 w !ram:ProductValueExcludingTobaccoTaxInformationAmount',
      '417 w !ram:TotalRetailValueInformationAmount',
      '418 w !ram:GrossLineTotalAmount',
      '419 w !ram:NetLineTotalAmount',
      '420 w !ram:NetIncludingTaxesLineTotalAmount',
    ]),
  ),
  rule('CrossIndustryInvoice', abs(ROOT), S(['DT-013 f !@languageID', 'DT-014 f !@languageLocaleID', '438 w !ram:ValuationBreakdownStatement'])),
  // The artefacts give these two the ids CII-SR-04 and CII-SR-05.
  rule(null, (e) => e.local.endsWith('DocumentContextParameter'), S(['SR-04 w !ram:Value', 'SR-05 w !ram:SpecifiedDocumentVersion'])),
  rule(
    ['ID', 'LineID', 'SellerAssignedID'],
    (e) =>
      at(e, `${ROOT}/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID`, true) ||
      at(e, `${ROOT}/rsm:ExchangedDocument/ram:ID`, true) ||
      at(e, `${LINE}/ram:AssociatedDocumentLineDocument/ram:LineID`, true) ||
      at(e, `${LINE}/ram:SpecifiedTradeProduct/ram:SellerAssignedID`, true),
    S([
      'DT-001 f !@schemeName',
      'DT-002 f !@schemeAgencyName',
      'DT-003 f !@schemeDataURI',
      'DT-004 f !@schemeURI',
      'DT-005 f !@schemeID',
      'DT-006 f !@schemeAgencyID',
      'DT-007 f !@schemeVersionID',
    ]),
  ),
  rule(null, endsWith('ID'), S(['DT-101 f !@schemeName', 'DT-102 f !@schemeAgencyName', 'DT-103 f !@schemeDataURI', 'DT-104 f !@schemeURI'])),
  // ExchangedDocument/TypeCode is a TypeCode first: CII-DT-010..012 never apply (as in the artefacts).
  rule('TypeCode', ram, S(['DT-008 f !@name', 'DT-009 f !@listURI'])),
  rule(
    'CategoryCode',
    abs(`${LINE}/ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:CategoryCode`),
    S(['DT-045 w !@listID', 'DT-046 w !@listAgencyID', 'DT-047 w !@listVersionID', 'DT-048 w !@listURI']),
  ),
  rule(null, endsWith('ReferencedDocument'), [
    sr('DT-015 f URIID should not be present', (e) => !find(e, 'ram:URIID').length || (e.local === 'AdditionalReferencedDocument' && typeIs(e, '916'))),
    sr('DT-016 f !ram:StatusCode'),
    sr('DT-017 f !ram:CopyIndicator'),
    sr(
      'DT-018 f TypeCode should not be present',
      (e) => !find(e, 'ram:TypeCode').length || (e.local === 'AdditionalReferencedDocument' && (typeIs(e, '50') || typeIs(e, '130') || typeIs(e, '916'))),
    ),
    sr('DT-019 f !ram:GlobalID'),
    sr('DT-020 f !ram:RevisionID'),
    sr('DT-021 f Name should not be present', (e) => !find(e, 'ram:Name').length || (e.local === 'AdditionalReferencedDocument' && typeIs(e, '916'))),
    sr(
      'DT-022 f AttachmentBinaryObject should not be present',
      (e) => !find(e, 'ram:AttachmentBinaryObject').length || (e.local === 'AdditionalReferencedDocument' && typeIs(e, '916')),
    ),
    sr('DT-023 f !ram:Information'),
    sr(
      'DT-024 f ReferenceTypeCode should not be present',
      (e) => !find(e, 'ram:ReferenceTypeCode').length || (e.local === 'AdditionalReferencedDocument' && typeIs(e, '130')),
    ),
    sr('DT-025 f !ram:SectionName'),
    sr('DT-026 f !ram:PreviousRevisionID'),
    sr(
      'DT-027 f FormattedIssueDateTime should not be present',
      (e) => !find(e, 'ram:FormattedIssueDateTime').length || e.local === 'InvoiceReferencedDocument',
    ),
    sr('DT-028 f !ram:EffectiveSpecifiedPeriod'),
    sr('DT-029 f !ram:IssuerTradeParty'),
    sr('DT-030 f !ram:AttachedSpecifiedBinaryFile'),
  ]),
  rule(null, (e) => endsWith('Amount')(e) && e.local !== 'TaxTotalAmount', S(['DT-031 f !@currencyID', 'DT-032 f !@currencyCodeListVersionID'])),
  rule(null, endsWith('Quantity'), [
    sr(
      'DT-033 f unitCode should not be present',
      (e, d) =>
        !e.attrs.has('unitCode') ||
        d.once('billedUnit', () =>
          d.any('ram:BilledQuantity').some((q) => q.attrs.has('unitCode') && at(q, `${LINE}/ram:SpecifiedLineTradeDelivery/ram:BilledQuantity`, true)),
        ),
    ),
    ...S(['DT-034 f !@unitCodeListID', 'DT-035 f !@unitCodeListAgencyID', 'DT-036 f !@unitCodeListAgencyName']),
  ]),
  rule(null, endsWith('TradeTax'), [
    sr("DT-037 f TypeCode shall be 'VAT'", (e) => !find(e, 'ram:TypeCode').length || find(e, 'ram:TypeCode').some((t) => text(t) === 'VAT')),
    ...S(['DT-038 w !ram:CalculatedRate', 'DT-039 w !ram:CalculationSequenceNumeric', 'DT-040 w !ram:BasisQuantity']),
    sr('DT-041 w BasisAmount should not be present', (e) => !find(e, 'ram:BasisAmount').length || ancestor(e, 'ram:ApplicableHeaderTradeSettlement')),
    ...S([
      'DT-042 w !ram:UnitBasisAmount',
      'DT-043 w !ram:LineTotalBasisAmount',
      'DT-044 w !ram:AllowanceChargeBasisAmount',
      'DT-049 w !ram:CurrencyCode',
      'DT-050 w !ram:Jurisdiction',
      'DT-051 w !ram:CustomsDutyIndicator',
    ]),
    sr('DT-052 w ExemptionReasonCode should not be present', (e) => !find(e, 'ram:ExemptionReasonCode').length || e.local === 'ApplicableTradeTax'),
    sr('DT-098 w ExemptionReason should not be present', (e) => !find(e, 'ram:ExemptionReason').length || e.local === 'ApplicableTradeTax'),
    sr('DT-053 w !ram:TaxBasisAllowanceRate'),
    sr('DT-054 w TaxPointDate should not be present', (e) => !find(e, 'ram:TaxPointDate').length || ancestor(e, 'ram:ApplicableHeaderTradeSettlement')),
    ...S(['DT-055 w !ram:Type', 'DT-056 w !ram:InformationAmount', 'DT-057 w !ram:CategoryName']),
    sr('DT-058 w DueDateTypeCode should not be present', (e) => !find(e, 'ram:DueDateTypeCode').length || ancestor(e, 'ram:ApplicableHeaderTradeSettlement')),
    ...S([
      'DT-059 w !ram:RateApplicablePercent/@format',
      'DT-060 w !ram:SpecifiedTradeAccountingAccount',
      'DT-061 w !ram:ServiceSupplyTradeCountry',
      'DT-062 w !ram:BuyerRepayableTaxSpecifiedTradeAccountingAccount',
      'DT-063 w !ram:SellerPayableTaxSpecifiedTradeAccountingAccount',
      'DT-064 w !ram:SellerRefundableTaxSpecifiedTradeAccountingAccount',
      'DT-065 w !ram:BuyerDeductibleTaxSpecifiedTradeAccountingAccount',
      'DT-066 w !ram:BuyerNonDeductibleTaxSpecifiedTradeAccountingAccount',
      'DT-067 w !ram:PlaceApplicableTradeLocation',
    ]),
  ]),
  rule(
    'BillingSpecifiedPeriod',
    ram,
    S([
      'DT-068 f !ram:StartDateTime/udt:DateTime',
      'DT-069 f !ram:DurationMeasure',
      'DT-070 f !ram:InclusiveIndicator',
      'DT-071 f !ram:Description',
      'DT-072 f !ram:EndDateTime/udt:DateTime',
      'DT-073 f !ram:CompleteDateTime',
      'DT-074 f !ram:OpenIndicator',
      'DT-075 f !ram:SeasonCode',
      'DT-076 f !ram:ID',
      'DT-077 f !ram:Name',
      'DT-078 f !ram:SequenceNumeric',
      'DT-079 f !ram:StartDateFlexibilityCode',
      'DT-080 f !ram:ContinuousIndicator',
      'DT-081 f !ram:PurposeCode',
    ]),
  ),
  rule(
    'PostalTradeAddress',
    ram,
    S([
      'DT-082 f !ram:ID',
      'DT-083 f !ram:PostOfficeBox',
      'DT-084 f !ram:BuildingName',
      'DT-086 f !ram:LineFour',
      'DT-087 f !ram:LineFive',
      'DT-088 f !ram:StreetName',
      'DT-089 f !ram:CitySubDivisionName',
      'DT-090 f !ram:CountryName',
      'DT-091 f !ram:CountrySubDivisionID',
      'DT-092 f !ram:AttentionOf',
      'DT-093 f !ram:CareOf',
      'DT-094 f !ram:BuildingNumber',
      'DT-095 f !ram:DepartmentName',
      'DT-096 f !ram:AdditionalStreetName',
    ]),
  ),
  rule('DateTimeString', (e) => e.ns === NS.udt && e.attrs.get('format') === '102', [
    sr('DT-097 f Date time string with format attribute 102 shall be YYYYMMDD.', (e) => DATE_102.test(text(e))),
  ]),
];

function typeIs(e: El, value: string): boolean {
  return find(e, 'ram:TypeCode').some((t) => text(t) === value);
}
