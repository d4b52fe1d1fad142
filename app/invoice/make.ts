import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { popplerPageWords } from '../../engines/poppler.js';
import { openPdf } from '../document/index.js';
import { AppError, invalidInput, limitExceeded } from '../errors.js';
import type { Invoice } from './cii.js';
import { embedInvoice } from './facturx.js';
import { printInvoice, toPdfA3 } from './hybrid.js';
import { checkLocale, cmykToRgb, DEFAULT_RENDER, fontFamily, logoSize, type RenderOptions, type Rgb, renderInvoiceHtml } from './render.js';
import { readInvoiceFile } from './thread.js';
import { findingsText, invoiceText, validateInvoice } from './validate.js';

export const INVOICE_COLORS = ['text_color', 'muted_text_color', 'accent_color', 'border_color', 'table_header_color', 'table_alternate_color'] as const;
const COLORS = INVOICE_COLORS;
export const LOGO_CORNERS = ['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const;

/** render_options of /zugferd-pdf, as the request gives them. */
export type RenderFields = {
  logo_corner?: (typeof LOGO_CORNERS)[number];
  font?: string;
  bold_font?: string;
  locale?: string;
  label_language?: 'en' | 'de' | 'fr';
  currency_display?: 'symbol' | 'narrowSymbol' | 'code' | 'name';
  date_format?: string;
  decimal_precision?: number;
  footer_message?: string;
} & Partial<Record<`${(typeof COLORS)[number]}_${'rgb' | 'cmyk'}`, number[]>>;

interface HtmlLimits {
  htmlTimeoutMs: number;
  htmlMaxPages: number;
  htmlMaxBytes: number;
  htmlMaxMemoryBytes: number;
}

const camel = (s: string) => s.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

/** The client's render_options over the defaults (fonts and locale checked: 400 naming the option). */
export function renderSettings(r: RenderFields | undefined, logo: RenderOptions['logo']): RenderOptions {
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

const htmlLimit = (err: unknown, limits: HtmlLimits) => {
  if (!(err instanceof EngineError) || !err.details.limit) return err;
  const l = err.details.limit;
  if (l === 'time') return limitExceeded('Rendering the invoice', 'HTML_TIMEOUT_SECONDS', limits.htmlTimeoutMs / 1000);
  if (l === 'pages') return limitExceeded('The number of pages the invoice prints', 'HTML_MAX_PAGES', limits.htmlMaxPages);
  if (l === 'memory') return limitExceeded("The memory of the invoice page's renderer", 'HTML_MAX_MEMORY_MB', limits.htmlMaxMemoryBytes / 1024 / 1024);
  return limitExceeded('The bytes of the invoice page', 'HTML_MAX_MB', limits.htmlMaxBytes / 1024 / 1024);
};

/**
 * The hybrid invoice: the CII XML at `xmlPath` validated (400 naming the failed rules), its visual part (the source
 * PDF, kept unless regenerating and it does not show the invoice, else a rendering printed by Chromium) made
 * PDF/A-3b, and the XML embedded into `output`.
 */
export async function makeHybridInvoice(
  xmlPath: string,
  req: { source?: { path: string }; regenerate: boolean; logo?: { path: string; name: string }; renderOptions?: RenderFields },
  output: string,
  limits: HtmlLimits & { invoiceMaxLines: number; maxImagePixels: number },
  ctx: EngineContext & { signal: AbortSignal; timeoutMs: number },
): Promise<void> {
  const source = req.source;
  const bytes = await readFile(xmlPath);
  const xml = invoiceText(bytes);
  const { findings, path } = await validateInvoice(xml, ctx, limits.invoiceMaxLines);
  if (findings.some((f) => f.severity === 'fatal')) throw new AppError('invalid_input', `The invoice XML is not valid: ${findingsText(findings)}`);
  const invoice = await readInvoiceFile(path, ctx.signal);
  const profile = invoice.profile!;

  let logo: RenderOptions['logo'];
  const logoFile = req.logo;
  if (logoFile) {
    const data = await readFile(logoFile.path);
    const size = logoSize(data);
    if (!size) throw invalidInput(`${logoFile.name} is not a PNG or JPEG image`);
    if (size.width * size.height > limits.maxImagePixels)
      throw limitExceeded(`The logo (${size.width}x${size.height} pixels)`, 'MAX_IMAGE_PIXELS', limits.maxImagePixels);
    logo = { mime: size.mime, data, corner: 'top-right' };
  }
  const settings = renderSettings(req.renderOptions, logo);

  let visual: string | undefined = source?.path;
  if (source && req.regenerate && !(await showsInvoice(source.path, invoice, ctx))) visual = undefined;
  if (!visual) {
    visual = join(ctx.cwd, 'rendered.pdf');
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
  const pdfa = join(ctx.cwd, 'invoice-pdfa.pdf');
  await toPdfA3(visual, pdfa, `${invoice.number ?? 'Invoice'}`, ctx);
  await embedInvoice(pdfa, bytes, profile, output, ctx);
}
