import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GS_ICC_DIR, outputIntentProlog, type PdfwriteOptions, rewritePdf } from '../../engines/ghostscript-pdfwrite.js';
import { openPdf, pdfText, withinPageBudget } from '../document/index.js';
import { AppError } from '../errors.js';
import { output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';
import { conversionFailed, readWritten, updateObjects, xmpPacket } from '../rewrite/index.js';

/**
 * Ghostscript 10.00's -dPDFX always writes PDF 1.3 with transparency flattened: right for X-1a and X-3, which
 * forbid transparency. X-4 and X-6 allow live transparency, so they are written without -dPDFX at PDF 1.6 / 2.0
 * with the same CMYK conversion and OutputIntent, and the PDF/X XMP and page boxes are added by us.
 */
const TYPES = {
  'PDF/X-1a': { version: 'PDF/X-1a:2001', conformance: 'PDF/X-1a:2001', gs: { pdfx: true, compatibility: '1.3' }, xmp: false },
  'PDF/X-3': { version: 'PDF/X-3:2002', conformance: undefined, gs: { pdfx: true, compatibility: '1.3' }, xmp: false },
  'PDF/X-4': { version: 'PDF/X-4', conformance: undefined, gs: { compatibility: '1.6' }, xmp: true },
  'PDF/X-6': { version: 'PDF/X-6', conformance: undefined, gs: { compatibility: '2.0' }, xmp: true },
} as const satisfies Record<string, { version: string; conformance?: string; gs: PdfwriteOptions; xmp: boolean }>;
type PdfxType = keyof typeof TYPES;
const NAMES = Object.keys(TYPES) as PdfxType[];

/** Ghostscript's CMYK profile (Debian libgs-common), described inside as "Artifex CMYK SWOP Profile". */
const CMYK = `${GS_ICC_DIR}/default_cmyk.icc`;
/** Resolution of pages flattened for X-1a/X-3 (Ghostscript's default 720 dpi makes a 1 MB image of an A4 page). */
const FLATTEN_DPI = 300;

type Box = [number, number, number, number];
const isBox = (v: unknown): v is Box => Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === 'number');

export default operation({
  path: '/pdfx',
  tag: 'Conversion to PDF and standards',
  summary: 'Convert a PDF to PDF/X',
  description:
    `output_type: ${NAMES.join(', ')} (exactly as written). Every output: colours converted to DeviceCMYK, fonts embedded, a GTS_PDFX OutputIntent carrying Ghostscript's CMYK (SWOP) profile ` +
    '(identifier Custom), GTS_PDFXVersion in the Info dictionary (X-6: in XMP only; Ghostscript writes no Info for PDF 2.0), Trapped False, and a TrimBox and BleedBox on every page (the crop box where the input sets none). ' +
    `PDF/X-1a (PDF/X-1a:2001, also GTS_PDFXConformance) and PDF/X-3 (PDF/X-3:2002) come from Ghostscript's -dPDFX: PDF 1.3, so pages with transparency are flattened to a ${FLATTEN_DPI} dpi image (their text is no longer text). ` +
    'Ghostscript 10.00 writes no PDF/X-4 or X-6 itself: those are Ghostscript CMYK output at PDF 1.6 (X-4) or 2.0 (X-6), transparency kept, labelled by us with the version in Info and ' +
    'in XMP (pdfxid:GTS_PDFXVersion, with the media-management keys PDF/X-4 requires). Outputs are not checked by a PDF/X validator (none is packaged in Debian).',
  inputs: pdfInput(),
  fields: {
    output_type: text().meta({ type: 'string', enum: NAMES }),
    output: output(),
  },
  output: 'file',
  engines: ['ghostscript', 'qpdf'],
  check: (f) => {
    if (!(f.output_type in TYPES))
      throw new AppError('out_of_range', `${f.output_type} is not within the acceptable range for output_type: one of ${NAMES.join(', ')}`);
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const type = fields.output_type as PdfxType;
    const t = TYPES[type];
    const { pageCount } = await openPdf(input.path, ctx);
    const prolog = join(dir, 'pdfx.ps');
    const docinfo: Record<string, string> = { GTS_PDFXVersion: t.version, Trapped: '/False' };
    if (t.conformance) docinfo.GTS_PDFXConformance = t.conformance;
    await writeFile(
      prolog,
      outputIntentProlog(
        {
          profile: CMYK,
          components: 4,
          subtype: 'GTS_PDFX',
          identifier: 'Custom',
          info: 'Artifex CMYK SWOP Profile (Ghostscript default_cmyk.icc)',
          condition: 'Commercial offset printing, coated (SWOP)',
          registry: 'http://www.color.org',
        },
        docinfo,
      ),
    );
    const written = join(dir, 'gs.pdf');
    await withinPageBudget('Writing', 'writePageMs', ctx, (c) =>
      rewritePdf(
        input.path,
        written,
        { ...t.gs, colorConversion: 'CMYK', readable: [CMYK], prologs: [prolog], flattenDpi: 'pdfx' in t.gs ? FLATTEN_DPI : undefined },
        { ...c, pages: pageCount },
      ),
    );

    const w = await readWritten(written, ctx);
    // PDF 2.0 deprecates the Info dictionary and Ghostscript writes none there: X-6 carries its version in XMP only.
    const infoOk = t.xmp && w.pdfVersion.startsWith('2') ? true : pdfText(w.objects.info['/GTS_PDFXVersion']) === t.version;
    if (!w.intents.includes('GTS_PDFX') || !infoOk) throw conversionFailed(type, 'Ghostscript wrote no OutputIntent or version');
    const updates: Record<string, unknown> = {};
    for (const ref of w.pageRefs) {
      const page = w.objects.dict(ref) ?? {};
      const media = w.objects.inherited(ref, '/MediaBox');
      const crop = w.objects.inherited(ref, '/CropBox');
      const base = isBox(crop) ? crop : isBox(media) ? media : null;
      if (!base) throw conversionFailed(type, 'a page has no MediaBox');
      const trim = isBox(w.objects.resolve(page['/TrimBox'])) ? null : base;
      const bleed = isBox(w.objects.resolve(page['/BleedBox'])) ? null : base;
      if (trim || bleed) updates[ref] = { ...page, ...(trim ? { '/TrimBox': trim } : {}), ...(bleed ? { '/BleedBox': bleed } : {}) };
    }
    if (t.xmp) {
      const ref = `${w.maxObjectId + 1} 0 R`;
      const xmp = xmpPacket({
        title: pdfText(w.objects.info['/Title']) || undefined,
        producer: pdfText(w.objects.info['/Producer']) || 'Ghostscript',
        created: new Date(),
        documentId: randomUUID(),
        extraNamespaces: { pdfxid: 'http://www.npes.org/pdfx/ns/id/' },
        extra: `<pdfxid:GTS_PDFXVersion>${t.version}</pdfxid:GTS_PDFXVersion>`,
      });
      updates[ref] = { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, data: xmp } };
      updates[w.catalogRef] = { ...w.objects.catalog, '/Metadata': ref };
    }
    if (!Object.keys(updates).length) return { files: [{ path: written, name: `${outputName}.pdf` }] };
    const final = join(dir, 'pdfx.pdf');
    await updateObjects(written, final, updates, ctx);
    return { files: [{ path: final, name: `${outputName}.pdf` }] };
  },
});
