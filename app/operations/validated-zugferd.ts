import { readFile } from 'node:fs/promises';
import { inputError, isPdfHeader, openPdf } from '../document/index.js';
import { AppError, invalidInput } from '../errors.js';
import { operation } from '../http/operation.js';
import { checkDeclared, type Finding, invoiceText, readHybrid, refuseDoctype, report, validateInvoice } from '../invoice/index.js';
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
    "profile's Factur-X 1.07.3 XSD (xmllint; id `XSD`, location `line N`) and, side by side, the EN 16931 business rules as ISO Schematron " +
    "run by xsltproc, with their official ids, the XPath of the element checked as location and the assert's flag as severity: BR-01..BR-65 " +
    'as bound to CII, BR-CO-03/04/09..27, BR-DEC-01..28, the VAT category families (BR-S, BR-Z, BR-E, BR-AE, BR-IC, BR-G, BR-O, BR-IG, BR-IP, ' +
    'BR-B) and the code lists BR-CL-01..26 (written from EN 16931-1 and its CII binding: the CEN/TC 434 artefacts are not packaged; not checked: ' +
    'BR-CO-05..08 and whether an exemption text fits its category; MINIMUM and BASIC WL skip the line and VAT category rules; as in the ' +
    'official artefacts, BR-CO-25 is a warning, BR-CO-27 applies to credit transfers, and tax amounts may be up to 1.00 off the product ' +
    '(BR-CO-17; less than 1.00 for BR-S/IG/IP-09 and for the taxable amounts of BR-Z/E/AE/IC/G-08)); an unknown ' +
    'profile is `FX-PROFILE`. For PDFs also (`pdf`: pdfaPart, conformanceLevel, documentFileName, ' +
    'documentType, afRelationship as declared): `FX-XML` no embedded invoice, `FX-PDFA` no PDF/A-3 claim in the XMP, `FX-AF` file not an ' +
    "associated file of the catalog (/AF, /AFRelationship; a relationship other than the profile's is a warning), `FX-XMP` Factur-X XMP " +
    "properties missing or disagreeing with the file name or the XML's profile. PDF/A conformance itself is not validated (veraPDF is not " +
    'packaged in Debian 12). An XML input that is not well-formed or not a CrossIndustryInvoice, or any XML with a DOCTYPE, answers 400, ' +
    'and so does a PDF sent under an .xml name. Invoice XML up to 64 KB runs with the light jobs; larger XML and PDFs with the CPU-bound ones.',
  inputs: { file: { idField: 'id', kind: 'any', extensions: ['pdf', 'xml'], description: 'The invoice PDF or XML' } },
  fields: {},
  output: 'json',
  engines: ['qpdf', 'xmllint', 'xsltproc'],
  // A typical invoice takes 20-80 ms, but one whose lines fail the rules costs lines² (each finding's location
  // counts its preceding siblings): up to ~3 s at INVOICE_MAX_LINES. Four of those held /pdf-info back 12 s in the
  // light lane. XML size bounds the lines (an empty one is ~40 bytes); a PDF's does not (XML deflates ~1000:1).
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
