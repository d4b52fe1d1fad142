import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { GS_ICC_DIR, outputIntentProlog, type PdfwriteOptions } from '../../engines/ghostscript-pdfwrite.js';
import { openPdf, pdfText, withinPageBudget } from '../document/index.js';
import { rewriteAnyLength } from './cmyk-batches.js';
import { conversionFailed, readWritten, updateObjects, xmpPacket } from './standards.js';

/**
 * Ghostscript 10.00's -dPDFX always writes PDF 1.3 with transparency flattened: right for X-1a and X-3, which
 * forbid transparency. X-4 and X-6 allow live transparency, so they are written without -dPDFX at PDF 1.6 / 2.0
 * with the same CMYK conversion and OutputIntent, and the PDF/X XMP and page boxes are added by us.
 */
export const PDFX_TYPES = {
  'PDF/X-1a': { version: 'PDF/X-1a:2001', conformance: 'PDF/X-1a:2001', gs: { pdfx: true, compatibility: '1.3' }, xmp: false },
  'PDF/X-3': { version: 'PDF/X-3:2002', conformance: undefined, gs: { pdfx: true, compatibility: '1.3' }, xmp: false },
  'PDF/X-4': { version: 'PDF/X-4', conformance: undefined, gs: { compatibility: '1.6' }, xmp: true },
  'PDF/X-6': { version: 'PDF/X-6', conformance: undefined, gs: { compatibility: '2.0' }, xmp: true },
} as const satisfies Record<string, { version: string; conformance?: string; gs: PdfwriteOptions; xmp: boolean }>;
export type PdfxType = keyof typeof PDFX_TYPES;
const TYPES = PDFX_TYPES;

/** Ghostscript's CMYK profile (Debian libgs-common), described inside as "Artifex CMYK SWOP Profile". */
const CMYK = `${GS_ICC_DIR}/default_cmyk.icc`;
/** Resolution of pages flattened for X-1a/X-3 (Ghostscript's default 720 dpi makes a 1 MB image of an A4 page). */
export const PDFX_FLATTEN_DPI = 300;

type Box = [number, number, number, number];
const isBox = (v: unknown): v is Box => Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === 'number');

/** `input` as PDF/X of `type`, checked and completed (boxes, XMP) after Ghostscript; the path of the result in `dir`. */
export async function toPdfx(input: string, type: PdfxType, dir: string, ctx: EngineContext): Promise<string> {
  const t = TYPES[type];
  const { pageCount } = await openPdf(input, ctx);
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
    rewriteAnyLength(
      input,
      written,
      { ...t.gs, colorConversion: 'CMYK', readable: [CMYK], prologs: [prolog], flattenDpi: 'pdfx' in t.gs ? PDFX_FLATTEN_DPI : undefined },
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
  if (!Object.keys(updates).length) return written;
  const final = join(dir, 'pdfx.pdf');
  await updateObjects(written, final, updates, ctx);
  return final;
}
