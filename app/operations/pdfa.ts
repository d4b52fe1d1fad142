import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../engines/errors.js';
import { GS_ICC_DIR, outputIntentProlog, rasterizePages, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { assemblePages, type PageSource } from '../../engines/qpdf-edit.js';
import { openPdf, withinPageBudget } from '../document/index.js';
import { AppError } from '../errors.js';
import { onOff, output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { conversionFailed, pagesWithoutUnicode, readWritten, updateObjects } from '../rewrite/index.js';
import { pdfaPart } from './pdf-with-added-attachment.js';

const TYPES = { 'PDF/A-1b': [1, false], 'PDF/A-2b': [2, false], 'PDF/A-2u': [2, true], 'PDF/A-3b': [3, false], 'PDF/A-3u': [3, true] } as const;
type PdfaType = keyof typeof TYPES;
const NAMES = Object.keys(TYPES) as PdfaType[];

/** Ghostscript's sRGB profile (Debian libgs-common): the OutputIntent every output carries. */
const SRGB = `${GS_ICC_DIR}/srgb.icc`;
/** Pages that cannot be made conformant are drawn at this resolution, as /rasterized-pdf does. */
const RASTER_DPI = 150;

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

export default operation({
  path: '/pdfa',
  tag: 'Conversion to PDF and standards',
  summary: 'Convert a PDF to PDF/A',
  description:
    `output_type: ${NAMES.join(', ')}. Ghostscript pdfwrite (-dPDFA, PDFACompatibilityPolicy 1: features a part forbids are dropped, e.g. non-printing annotations, ` +
    "attachments in PDF/A-1/2, interpolation flags) converts colours to RGB with an sRGB OutputIntent (Ghostscript's srgb.icc), embeds every font (missing ones substituted) " +
    'and writes the XMP pdfaid:part/conformance. The output is read back: a missing pdfaid claim or OutputIntent is an error. u variants also need every font on a page to map to ' +
    'Unicode (ToUnicode CMap, or WinAnsi/MacRoman/MacExpert encoding; custom encodings without ToUnicode count as unmapped). rasterize_if_errors_encountered=on draws ' +
    `such pages (or the whole document when Ghostscript cannot convert it) as ${RASTER_DPI} dpi images and converts again; off answers 400 naming the pages. ` +
    'Not validated with veraPDF (not packaged in Debian 12).',
  inputs: pdfInput(),
  fields: {
    output_type: text().meta({ type: 'string', enum: NAMES }),
    rasterize_if_errors_encountered: onOff(false),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf', 'poppler'],
  check: (f) => {
    if (!(f.output_type in TYPES))
      throw new AppError('out_of_range', `${f.output_type} is not within the acceptable range for output_type: one of ${NAMES.join(', ')}`);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const type = fields.output_type as PdfaType;
    const [part, unicode] = TYPES[type];
    const rasterize = fields.rasterize_if_errors_encountered;
    const { pageCount } = await openPdf(input.path, ctx);
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
    let result = await convert(input.path).catch(async (err) => {
      if (!(err instanceof EngineError) || err.details.aborted || err.details.timedOut) throw err;
      if (!rasterize) {
        // With Ghostscript's failure as the cause, the job is tried again on a repaired copy before this answer.
        const refusal = conversionFailed(type, 'Ghostscript could not convert this document (send rasterize_if_errors_encountered=on to rasterize it)');
        refusal.cause = [err];
        throw refusal;
      }
      const raster = join(dir, 'raster-all.pdf');
      await withinPageBudget('Rasterizing', 'writePageMs', ctx, (c) => rasterizePages(input.path, raster, all, RASTER_DPI, c));
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
      return { files: [{ path: final, name: `${outputName}.pdf` }] };
    }
    return { files: [{ path: result.out, name: `${outputName}.pdf` }] };
  },
});
