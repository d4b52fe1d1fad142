import { readFile } from 'node:fs/promises';
import { inputError, isPdfHeader, openPdf } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { checkDeclared, type Finding, invoiceText, readHybrid, refuseDoctype, report, validateInvoice } from '../invoice/index.js';
import { operation } from '../requests/operation.js';
import { extensionOf } from '../store/names.js';

/** Invoice XML up to this size runs in the light lane: ~1,600 failing lines at most, ~0.3 s. */
const LIGHT_XML_BYTES = 64 * 1024;

export default operation({
  path: '/validated-zugferd',
  tag: 'Conversion to PDF and standards',
  summary: 'Validate a ZUGFeRD / Factur-X invoice (PDF or XML)',
  description:
    'Input: a hybrid invoice PDF (its embedded factur-x.xml, zugferd-invoice.xml or xrechnung.xml is read) or the CII invoice XML itself. ' +
    'Answers JSON, no file: `{status: "VALID" | "INVALID", valid, profile, specification_identifier, invoice_number, findings: [{id, severity: ' +
    '"fatal" | "warning", location, message}], file_type: "pdf" | "xml", embedded_file, pdf}`; valid when no finding is fatal. Checks: the ' +
    "profile's Factur-X 1.07.3 XSD (xmllint; id `XSD`, location `line N`) and, side by side, the EN 16931 rules as CEN/TC 434's " +
    'validation artefacts for CII (release 1.3.16) word them, with their official ids and flags: BR-01..BR-65, BR-CO-*, BR-DEC-*, the VAT ' +
    'category families (BR-S, BR-Z, BR-E, BR-AE, BR-IC, BR-G, BR-O, BR-AF, BR-AG, BR-B), the code lists BR-CL-* and the CII syntax binding ' +
    '(CII-SR-*, CII-DT-*; many CII-SR are warnings there and here), with exact decimal arithmetic; the location is the XPath of the element ' +
    "the rule checks. Departures from the artefacts, each from the rule text: BR-AF-08 / BR-AG-08 use the breakdown's own rate, " +
    'BR-AF-09 / BR-AG-09 check tax = taxable amount x rate (within 1), BR-CO-27 (IBAN or proprietary id, not both) applies to credit ' +
    'transfers, BR-CO-25 is a warning (1.3.16 removed it); MINIMUM and BASIC WL are not held to the rules on lines, VAT breakdown and the ' +
    'content those profiles do not carry. A specification ' +
    'identifier (BT-24) that names no Factur-X profile is the warning `FX-PROFILE` (EN 16931 does not fix it); such an invoice is checked against the EXTENDED schema. For PDFs also (`pdf`: pdfaPart, conformanceLevel, documentFileName, ' +
    'documentType, afRelationship as declared): `FX-XML` no embedded invoice, `FX-PDFA` no PDF/A-3 claim in the XMP, `FX-AF` file not an ' +
    "associated file of the catalog (/AF, /AFRelationship; a relationship other than the profile's is a warning), `FX-XMP` Factur-X XMP " +
    "properties missing or disagreeing with the file name or the XML's profile. PDF/A conformance itself is not validated (veraPDF is not " +
    'packaged in Debian 12). An XML input that is not well-formed or not a CrossIndustryInvoice, or any XML with a DOCTYPE, answers 400, ' +
    'and so does a PDF sent under an .xml name. Invoice XML up to 64 KB runs with the light jobs; larger XML and PDFs with the CPU-bound ones.',
  inputs: { file: { idField: 'id', kind: 'any', extensions: ['pdf', 'xml'], description: 'The invoice PDF or XML' } },
  fields: {},
  output: 'json',
  engines: ['qpdf', 'xmllint'],
  // A typical invoice takes a few ms of rules and one xmllint run; large ones take seconds (20,000 lines ~2 s) in a
  // worker thread. XML size bounds the lines (an empty one is ~40 bytes); a PDF's does not (XML deflates ~1000:1).
  cost: ({ inputs }) => {
    const f = inputs.file[0];
    return f && extensionOf(f.name) !== 'pdf' && f.size <= LIGHT_XML_BYTES ? { lane: 'light' } : { lane: 'cpu', processes: 1 };
  },
  run: async ({ input, dir, signal, timeoutMs, limits }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const bytes = await readFile(input.path);
    if (!isPdfHeader(bytes)) {
      const { header, findings } = await validateInvoice(invoiceText(bytes), ctx, limits.invoiceMaxLines);
      return { json: { ...report(header, findings), file_type: 'xml' } };
    }
    // Its lane was chosen by the name: a PDF's embedded invoice must not run where small XML does.
    if (extensionOf(input.name) !== 'pdf') throw invalidInput(`${input.name} is a PDF: send it with the .pdf extension`);
    await openPdf(input.path, ctx); // 401 for a password-protected file, 400 for a broken one
    const hybrid = await readHybrid(input.path, ctx, { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects }).catch((err) => {
      throw inputError(err);
    });
    const pdf = { file_type: 'pdf', embedded_file: hybrid.fileName, pdf: hybrid.declared };
    const empty = (findings: Finding[]) => ({
      status: 'INVALID',
      valid: false,
      profile: null,
      specification_identifier: null,
      invoice_number: null,
      findings,
      ...pdf,
    });
    if (!hybrid.xml) return { json: empty(hybrid.findings) };
    const xml = invoiceText(hybrid.xml);
    refuseDoctype(xml);
    try {
      const { header, findings } = await validateInvoice(xml, ctx, limits.invoiceMaxLines);
      return { json: { ...report(header, [...hybrid.findings, ...checkDeclared(hybrid, header.profile), ...findings]), ...pdf } };
    } catch (err) {
      // An embedded file that is no invoice at all is a finding about this PDF, not a bad request.
      if (!(err instanceof AppError) || err.code !== 'invalid_input') throw err;
      return { json: empty([...hybrid.findings, { id: 'FX-XML', severity: 'fatal', location: hybrid.fileName ?? '', message: err.message }]) };
    }
  },
});
