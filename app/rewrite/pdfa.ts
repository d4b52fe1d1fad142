import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { GS_ICC_DIR, outputIntentProlog, rasterizePages, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { assemblePages, type PageSource } from '../../engines/qpdf-edit.js';
import { openPdf, withinPageBudget } from '../document/index.js';
import { conversionFailed, pagesWithoutUnicode, readWritten, updateObjects } from './standards.js';

/** The PDF/A part an XMP packet claims (`pdfaid:part`, as attribute or element), or null. */
export function pdfaPart(xmp: string): number | null {
  const m = /pdfaid:part\s*=\s*["'](\d+)["']|<pdfaid:part>\s*(\d+)\s*</.exec(xmp);
  return m ? Number(m[1] ?? m[2]) : null;
}

export const PDFA_TYPES = { 'PDF/A-1b': [1, false], 'PDF/A-2b': [2, false], 'PDF/A-2u': [2, true], 'PDF/A-3b': [3, false], 'PDF/A-3u': [3, true] } as const;
export type PdfaType = keyof typeof PDFA_TYPES;
const TYPES = PDFA_TYPES;

/** Ghostscript's sRGB profile (Debian libgs-common): the OutputIntent every output carries. */
const SRGB = `${GS_ICC_DIR}/srgb.icc`;
/** Pages that cannot be made conformant are drawn at this resolution, as /rasterized-pdf does. */
export const PDFA_RASTER_DPI = 150;
const RASTER_DPI = PDFA_RASTER_DPI;

/** Runs of consecutive pages from one of two files, in page order (bad pages come from the rasterised file). */
export function spliceSources(total: number, bad: number[], converted: string, raster: string): PageSource[] {
  const sources: PageSource[] = [];
  for (let p = 1; p <= total; p++) {
    const k = bad.indexOf(p);
    const [path, page] = k >= 0 ? [raster, k + 1] : [converted, p];
    const last = sources[sources.length - 1];
    if (last?.path === path) last.pages.push(page);
    else sources.push({ path, pages: [page] });
  }
  return sources;
}

/** pdfaid:conformance as the u variants need it (Ghostscript writes B; written as attribute or element). */
export const conformanceU = (xmp: string) =>
  xmp.replace(/pdfaid:conformance\s*=\s*(["'])B\1/, "pdfaid:conformance='U'").replace(/<pdfaid:conformance>\s*B\s*</, '<pdfaid:conformance>U<');

/**
 * `input` as PDF/A of `type` through Ghostscript, read back (claim and OutputIntent); with `rasterize`, what Ghostscript
 * cannot convert (the whole document, or the pages whose fonts do not map to Unicode for the u variants) is drawn as
 * images and converted again, else it is a 400 naming why. The path of the result in `dir`.
 */
export async function toPdfa(input: string, type: PdfaType, rasterize: boolean, dir: string, ctx: EngineContext & { signal: AbortSignal }): Promise<string> {
  const [part, unicode] = TYPES[type];
  const { pageCount } = await openPdf(input, ctx);
  const prolog = join(dir, 'pdfa.ps');
  await writeFile(
    prolog,
    outputIntentProlog({
      profile: SRGB,
      components: 3,
      subtype: 'GTS_PDFA1',
      identifier: 'sRGB IEC61966-2.1',
      info: 'sRGB IEC61966-2.1',
      registry: 'http://www.color.org',
    }),
  );

  let n = 0;
  const convert = async (src: string) => {
    const out = join(dir, `pdfa-${++n}.pdf`);
    await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
      rewritePdf(src, out, { pdfa: part, colorConversion: 'RGB', readable: [SRGB], prologs: [prolog] }, { ...c, pages: pageCount }),
    );
    const w = await readWritten(out, ctx);
    if (pdfaPart(w.xmp) !== part || !w.intents.includes('GTS_PDFA1')) throw new EngineError('gs', 'no PDF/A claim or OutputIntent written');
    return { out, w };
  };
  const all = Array.from({ length: pageCount }, (_, i) => i + 1);
  let result = await convert(input).catch(async (err) => {
    if (!(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
    if (!rasterize) {
      // With Ghostscript's failure as the cause, the job is tried again on a repaired copy before this answer.
      const refusal = conversionFailed(type, 'Ghostscript could not convert this document (send rasterize_if_errors_encountered=on to rasterize it)');
      refusal.cause = [err];
      throw refusal;
    }
    const raster = join(dir, 'raster-all.pdf');
    await withinPageBudget('Rasterizing', 'writePageMs', ctx, (c) => rasterizePages(input, raster, all, RASTER_DPI, c));
    return convert(raster);
  });

  if (unicode) {
    const bad = await pagesWithoutUnicode(result.out, pageCount, ctx);
    if (bad.pages.length && !rasterize) {
      throw conversionFailed(
        type,
        `text on page(s) ${bad.pages.join(', ')} uses fonts without Unicode mappings (${bad.fonts.slice(0, 5).join(', ')}); send rasterize_if_errors_encountered=on to rasterize those pages`,
      );
    }
    if (bad.pages.length) {
      const raster = join(dir, 'raster-pages.pdf');
      await withinPageBudget('Rasterizing', 'writePageMs', ctx, (c) => rasterizePages(result.out, raster, bad.pages, RASTER_DPI, c));
      const spliced = join(dir, 'spliced.pdf');
      await assemblePages(spliceSources(pageCount, bad.pages, result.out, raster), spliced, ctx);
      result = await convert(spliced);
      const still = await pagesWithoutUnicode(result.out, pageCount, ctx);
      if (still.pages.length) throw conversionFailed(type, `page(s) ${still.pages.join(', ')} still use fonts without Unicode mappings`);
    }
    // Ghostscript writes conformance B; every text now maps to Unicode, which is what U adds.
    const final = join(dir, 'pdfa-u.pdf');
    const w = result.w;
    await updateObjects(
      result.out,
      final,
      { [w.metadataRef!]: { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, data: conformanceU(w.xmp) } } },
      ctx,
    );
    return final;
  }
  return result.out;
}
