import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type HtmlLimits, printHtml } from '../../engines/chromium/print.js';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { GS_ICC_DIR, outputIntentProlog, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { openPdf, withinPageBudget } from '../document/index.js';
import { conversionFailed, readWritten } from '../rewrite/index.js';

/** The visual part of a hybrid invoice: the rendering printed by Chromium, then any PDF made PDF/A-3b by Ghostscript. */

/** A4 with 15 mm margins, laid out at the printable width (scale 1). */
const A4 = { width: 595.28, height: 841.89, margin: 42.52 };

/** Prints the invoice page; it loads nothing (the logo is inline), so every host is refused. */
export async function printInvoice(html: string, out: string, limits: HtmlLimits, ctx: EngineContext & { cwd: string }): Promise<void> {
  const page = join(ctx.cwd, 'invoice.html');
  await writeFile(page, html);
  await printHtml(
    page,
    out,
    {
      viewportWidth: Math.round(((A4.width - 2 * A4.margin) * 96) / 72),
      paper: A4,
      scale: 1,
      settleMs: 0,
      javascript: false,
      resolveHost: async () => null,
      limits,
    },
    ctx,
  );
}

/** Ghostscript's sRGB profile, the OutputIntent (as /pdfa writes it). */
const SRGB = `${GS_ICC_DIR}/srgb.icc`;

/** PDF/A-3b of `input` (fonts embedded, colours to sRGB), with `title` in Info and XMP; 400 when it cannot be converted. */
export async function toPdfA3(input: string, out: string, title: string, ctx: EngineContext & { cwd: string }): Promise<void> {
  const { pageCount } = await openPdf(input, ctx);
  const prolog = join(ctx.cwd, 'pdfa3.ps');
  await writeFile(
    prolog,
    outputIntentProlog(
      { profile: SRGB, components: 3, subtype: 'GTS_PDFA1', identifier: 'sRGB IEC61966-2.1', info: 'sRGB IEC61966-2.1', registry: 'http://www.color.org' },
      { Title: title },
    ),
  );
  try {
    await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
      rewritePdf(input, out, { pdfa: 3, colorConversion: 'RGB', readable: [SRGB], prologs: [prolog] }, { ...c, pages: pageCount }),
    );
  } catch (err) {
    if (!(err instanceof EngineError) || err.details.aborted || err.details.timedOut || err.details.limit) throw err;
    throw conversionFailed('PDF/A-3b', 'Ghostscript could not convert the invoice PDF');
  }
  const w = await readWritten(out, ctx);
  if (!/pdfaid:part\s*=\s*["']3["']|<pdfaid:part>\s*3\s*</.test(w.xmp) || !w.intents.includes('GTS_PDFA1'))
    throw new EngineError('gs', 'no PDF/A-3 claim or OutputIntent written');
}
