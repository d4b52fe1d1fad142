import { join } from 'node:path';
import { z } from 'zod';
import { invalidInput } from '../errors.js';
import { INVOICE_COLORS as COLORS, LOGO_CORNERS as CORNERS, makeHybridInvoice, type RenderFields } from '../invoice/index.js';
import { colorValues, int, json, oneOf, output, text, trueFalse } from '../requests/fields.js';
import { operation } from '../requests/operation.js';

const renderOptions = z.object({
  logo_corner: oneOf(CORNERS).optional(),
  font: text({ max: 64 }).optional(),
  bold_font: text({ max: 64 }).optional(),
  locale: text({ max: 35, pattern: /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/ }).optional(),
  label_language: oneOf(['en', 'de', 'fr']).optional(),
  currency_display: oneOf(['symbol', 'narrowSymbol', 'code', 'name']).optional(),
  date_format: text({ max: 32, pattern: /^(yyyy|yy|MM|dd|[ ./-])+$/ }).optional(),
  decimal_precision: int(0, 4).optional(),
  footer_message: text({ max: 1000 }).optional(),
  ...Object.fromEntries(
    COLORS.flatMap((c) => [
      [`${c}_rgb`, colorValues(3, 255).optional()],
      [`${c}_cmyk`, colorValues(4, 100).optional()],
    ]),
  ),
});

export default operation({
  path: '/zugferd-pdf',
  tag: 'Conversion to PDF and standards',
  summary: 'Create a ZUGFeRD / Factur-X invoice PDF (PDF/A-3b with the invoice XML)',
  description:
    'Input: invoice XML in the UN/CEFACT CII syntax (Factur-X / ZUGFeRD / XRechnung CII); the profile is read from its specification identifier ' +
    '(GuidelineSpecifiedDocumentContextParameter/ID: MINIMUM, BASIC WL, BASIC, EN16931, EXTENDED, XRECHNUNG). The XML is validated first (the ' +
    "profile's Factur-X 1.07.3 XSD with xmllint, and the EN 16931 business rules as Schematron: see /validated-zugferd); an invalid invoice answers " +
    '400 naming the failed rules. The visual part is the optional source PDF (`pdf_file`/`pdf_id`) kept as it is, or with `regenerate_pdf=true` ' +
    'kept only when its text shows the invoice number and total, else replaced; without a source PDF a readable rendering of the invoice (parties, ' +
    'lines, VAT breakdown, totals, payment, notes; optional PNG/JPEG `logo_file`/`logo_id`) is printed by Chromium (A4). Ghostscript makes it PDF/A-3b ' +
    '(fonts embedded, sRGB OutputIntent); the XML is embedded unchanged as factur-x.xml (xrechnung.xml for XRECHNUNG), /Subtype text/xml with ' +
    '/Params dates, size and checksum, an associated file of the catalog (/AF) with /AFRelationship /Alternative (/Data for MINIMUM and BASIC WL, ' +
    'which are not complete invoices), and the XMP gets the Factur-X extension schema and fx:DocumentType INVOICE, fx:DocumentFileName, ' +
    'fx:Version 1.0, fx:ConformanceLevel. render_options (JSON object, or its JSON text in multipart): logo_corner (top-left, top-right, ' +
    'bottom-left, bottom-right), font and bold_font (arial, times, courier or an installed family), locale (number, currency and date format; ' +
    'e.g. de-DE), label_language (en, de, fr; default from the locale), currency_display (symbol, narrowSymbol, code, name), date_format ' +
    '(yyyy, yy, MM, dd and . / - space, e.g. dd.MM.yyyy), decimal_precision (0-4), footer_message, and colours text_color, muted_text_color, ' +
    'accent_color, border_color, table_header_color, table_alternate_color, each as <name>_rgb [r,g,b] 0-255 or <name>_cmyk [c,m,y,k] 0-100. ' +
    'Not validated with veraPDF (not packaged in Debian 12).',
  inputs: {
    file: { idField: 'id', kind: 'any', extensions: ['xml'], description: 'The invoice XML (CII)' },
    pdf_file: { idField: 'pdf_id', kind: 'pdf', required: false, description: 'The visual invoice PDF to keep (optional)' },
    logo_file: {
      idField: 'logo_id',
      kind: 'any',
      required: false,
      extensions: ['png', 'jpg', 'jpeg'],
      description: 'A PNG or JPEG logo for the generated rendering (optional)',
    },
  },
  fields: {
    regenerate_pdf: trueFalse(false),
    render_options: json(renderOptions).optional(),
    output: output(),
  },
  output: 'file',
  engines: ['xmllint', 'ghostscript', 'qpdf', 'chromium', 'poppler'],
  cost: ({ fields, inputs }) => (inputs.pdf_file?.length && !fields.regenerate_pdf ? { lane: 'cpu', processes: 1 } : { lane: 'browser' }),
  run: async ({ fields, inputs, input, dir, signal, timeoutMs, outputName, limits }) => {
    const source = inputs.pdf_file?.[0];
    if (fields.regenerate_pdf && !source) throw invalidInput('regenerate_pdf requires a source PDF (pdf_file or pdf_id).');
    const out = join(dir, 'zugferd.pdf');
    const req = { source, regenerate: fields.regenerate_pdf, logo: inputs.logo_file?.[0], renderOptions: fields.render_options as RenderFields | undefined };
    await makeHybridInvoice(input.path, req, out, limits, { cwd: dir, signal, timeoutMs });
    return { files: [{ path: out, name: `${outputName}.pdf` }] };
  },
});
