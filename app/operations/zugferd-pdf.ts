import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { EngineError } from '../../engines/errors.js';
import { popplerPageWords } from '../../engines/poppler.js';
import { openPdf } from '../document/index.js';
import { AppError, invalidInput, limitExceeded } from '../errors.js';
import {
  checkLocale,
  cmykToRgb,
  DEFAULT_RENDER,
  embedInvoice,
  findingsText,
  fontFamily,
  type Invoice,
  invoiceText,
  logoSize,
  printInvoice,
  type RenderOptions,
  type Rgb,
  readInvoiceFile,
  renderInvoiceHtml,
  toPdfA3,
  validateInvoice,
} from '../invoice/index.js';
import { colorValues, int, json, oneOf, output, text, trueFalse } from '../requests/fields.js';
import { operation, type RunContext } from '../requests/operation.js';

const COLORS = ['text_color', 'muted_text_color', 'accent_color', 'border_color', 'table_header_color', 'table_alternate_color'] as const;
const CORNERS = ['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const;

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
type RenderFields = z.infer<typeof renderOptions> & Partial<Record<`${(typeof COLORS)[number]}_${'rgb' | 'cmyk'}`, number[]>>;

const camel = (s: string) => s.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

/** The client's render_options over the defaults (fonts and locale checked: 400 naming the option). */
function renderSettings(r: RenderFields | undefined, logo: RenderOptions['logo']): RenderOptions {
  const o: RenderOptions = { ...DEFAULT_RENDER, logo };
  if (!r) return o;
  if (r.locale) {
    checkLocale(r.locale.replace(/_/g, '-'));
    o.locale = r.locale.replace(/_/g, '-');
  }
  if (r.label_language) o.labelLanguage = r.label_language;
  else if (r.locale && /^(de|fr)\b/i.test(r.locale)) o.labelLanguage = r.locale.slice(0, 2).toLowerCase() as 'de' | 'fr';
  if (r.currency_display) o.currencyDisplay = r.currency_display;
  if (r.date_format) o.dateFormat = r.date_format;
  if (r.decimal_precision !== undefined) o.decimalPrecision = r.decimal_precision;
  if (r.font) o.font = fontFamily(r.font);
  if (r.bold_font) o.boldFont = fontFamily(r.bold_font);
  if (r.footer_message) o.footerMessage = r.footer_message;
  if (logo && r.logo_corner) logo.corner = r.logo_corner;
  for (const c of COLORS) {
    const rgb = r[`${c}_rgb`];
    const cmyk = r[`${c}_cmyk`];
    const key = camel(c) as keyof RenderOptions;
    if (rgb) (o as unknown as Record<string, Rgb>)[key] = rgb as Rgb;
    else if (cmyk) (o as unknown as Record<string, Rgb>)[key] = cmykToRgb(cmyk);
  }
  return o;
}

/** Whether a source PDF shows this invoice: its text holds the invoice number and the grand total (in a common notation). */
async function showsInvoice(path: string, inv: Invoice, ctx: { cwd: string; signal: AbortSignal; timeoutMs: number }): Promise<boolean> {
  const { pageCount } = await openPdf(path, ctx);
  const words = await popplerPageWords(
    path,
    Array.from({ length: Math.min(pageCount, 20) }, (_, i) => i + 1),
    ctx,
  );
  const textOf = [...words.values()]
    .flat()
    .map((w) => w.text)
    .join(' ');
  const total = Number(inv.totals.grandTotal ?? inv.totals.due);
  if (!inv.number || !textOf.includes(inv.number) || !Number.isFinite(total)) return false;
  const [whole, cents] = total.toFixed(2).split('.');
  const grouped = (sep: string) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  return [
    `${whole}.${cents}`,
    `${whole},${cents}`,
    `${grouped(',')}.${cents}`,
    `${grouped('.')},${cents}`,
    `${grouped(' ')},${cents}`,
    `${grouped('\u00a0')},${cents}`,
    `${grouped('\u202f')},${cents}`,
  ].some((v) => textOf.includes(v));
}

const htmlLimit = (err: unknown, limits: RunContext<unknown>['limits']) => {
  if (!(err instanceof EngineError) || !err.details.limit) return err;
  const l = err.details.limit;
  if (l === 'time') return limitExceeded('Rendering the invoice', 'HTML_TIMEOUT_SECONDS', limits.htmlTimeoutMs / 1000);
  if (l === 'pages') return limitExceeded('The number of pages the invoice prints', 'HTML_MAX_PAGES', limits.htmlMaxPages);
  if (l === 'memory') return limitExceeded("The memory of the invoice page's renderer", 'HTML_MAX_MEMORY_MB', limits.htmlMaxMemoryBytes / 1024 / 1024);
  return limitExceeded('The bytes of the invoice page', 'HTML_MAX_MB', limits.htmlMaxBytes / 1024 / 1024);
};

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
    const ctx = { cwd: dir, signal, timeoutMs };
    const source = inputs.pdf_file?.[0];
    if (fields.regenerate_pdf && !source) throw invalidInput('regenerate_pdf requires a source PDF (pdf_file or pdf_id).');
    const bytes = await readFile(input.path);
    const xml = invoiceText(bytes);
    const { findings, path } = await validateInvoice(xml, ctx, limits.invoiceMaxLines);
    if (findings.some((f) => f.severity === 'fatal')) throw new AppError('invalid_input', `The invoice XML is not valid: ${findingsText(findings)}`);
    const invoice = await readInvoiceFile(path, signal);
    const profile = invoice.profile!;

    let logo: RenderOptions['logo'];
    const logoFile = inputs.logo_file?.[0];
    if (logoFile) {
      const data = await readFile(logoFile.path);
      const size = logoSize(data);
      if (!size) throw invalidInput(`${logoFile.name} is not a PNG or JPEG image`);
      if (size.width * size.height > limits.maxImagePixels)
        throw limitExceeded(`The logo (${size.width}x${size.height} pixels)`, 'MAX_IMAGE_PIXELS', limits.maxImagePixels);
      logo = { mime: size.mime, data, corner: 'top-right' };
    }
    const settings = renderSettings(fields.render_options as RenderFields | undefined, logo);

    let visual: string | undefined = source?.path;
    if (source && fields.regenerate_pdf && !(await showsInvoice(source.path, invoice, ctx))) visual = undefined;
    if (!visual) {
      visual = join(dir, 'rendered.pdf');
      const limitsHtml = {
        timeoutMs: limits.htmlTimeoutMs,
        maxPages: limits.htmlMaxPages,
        maxBytes: limits.htmlMaxBytes,
        maxMemoryBytes: limits.htmlMaxMemoryBytes,
      };
      await printInvoice(renderInvoiceHtml(invoice, settings), visual, limitsHtml, ctx).catch((err) => {
        throw htmlLimit(err, limits);
      });
    }
    const pdfa = join(dir, 'invoice-pdfa.pdf');
    await toPdfA3(visual, pdfa, `${invoice.number ?? 'Invoice'}`, ctx);
    const out = join(dir, 'zugferd.pdf');
    await embedInvoice(pdfa, bytes, profile, out, ctx);
    return { files: [{ path: out, name: `${outputName}.pdf` }] };
  },
});
