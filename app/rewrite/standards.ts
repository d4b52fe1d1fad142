import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { listFonts } from '../../engines/poppler.js';
import { readPdfJson, streamData } from '../../engines/qpdf.js';
import { writePdf } from '../../engines/qpdf-edit.js';
import { isRef, PdfObjects, pdfText } from '../document/index.js';
import { AppError } from '../errors.js';

/** Shared by /pdfa and /pdfx: what Ghostscript wrote, read back with qpdf, and small object updates. */

export interface Written {
  objects: PdfObjects;
  catalogRef: string;
  maxObjectId: number;
  pdfVersion: string;
  metadataRef: string | null;
  xmp: string;
  /** /S of every OutputIntent. */
  intents: string[];
  pageRefs: string[];
}

export async function readWritten(path: string, ctx: EngineContext): Promise<Written> {
  const { json } = await readPdfJson(path, ctx);
  const objects = new PdfObjects(json);
  const catalogRef = String(objects.trailer['/Root'] ?? '');
  const meta = objects.catalog['/Metadata'];
  const metadataRef = isRef(meta) ? meta : null;
  const xmp = metadataRef ? (await streamData(path, metadataRef.replace(/ R$/, ''), ctx)).toString('utf8') : '';
  const intents = objects.array(objects.catalog['/OutputIntents']).map((i) => pdfText(objects.dict(i)?.['/S']));
  return {
    objects,
    catalogRef,
    maxObjectId: json.qpdf?.[0].maxobjectid ?? 0,
    pdfVersion: json.qpdf?.[0].pdfversion ?? '',
    metadataRef,
    xmp,
    intents,
    pageRefs: (json.pages ?? []).map((p) => p.object),
  };
}

/** Replaces or adds objects (`"N G R"` -> value, or `{stream: {dict, data}}` with raw data) through qpdf's JSON update. */
export async function updateObjects(input: string, output: string, objects: Record<string, unknown>, ctx: EngineContext): Promise<void> {
  const file = join(ctx.cwd, `.update-${randomUUID()}.json`);
  const entries = Object.fromEntries(
    Object.entries(objects).map(([ref, v]) => {
      const s = v as { stream?: { dict: Record<string, unknown>; data: string | Buffer } };
      if (s && typeof s === 'object' && s.stream) {
        return [`obj:${ref}`, { stream: { dict: s.stream.dict, data: Buffer.from(s.stream.data).toString('base64') } }];
      }
      return [`obj:${ref}`, { value: v }];
    }),
  );
  await writeFile(file, JSON.stringify({ qpdf: [{ jsonversion: 2 }, entries] }));
  await writePdf(input, output, { updateFromJson: file }, ctx);
}

/** Pages whose fonts do not all map to Unicode: no ToUnicode CMap and none of the encodings PDF/A exempts. */
export async function pagesWithoutUnicode(path: string, pages: number, ctx: EngineContext): Promise<{ pages: number[]; fonts: string[] }> {
  // ISO 19005-2 6.2.11.7.2: WinAnsi, MacRoman and MacExpert encodings map to Unicode by themselves. Fonts with
  // other (custom) encodings are counted as unmapped even when their glyph names would map: the check errs on
  // the safe side.
  const exempt = new Set(['WinAnsi', 'MacRoman', 'MacExpert']);
  const bad: number[] = [];
  const fonts = new Set<string>();
  for (let p = 1; p <= pages; p++) {
    const unmapped = (await listFonts(path, ctx, { page: p })).filter((f) => !f.unicode && !exempt.has(f.encoding));
    if (unmapped.length) {
      bad.push(p);
      for (const f of unmapped) fonts.add(f.name);
    }
  }
  return { pages: bad, fonts: [...fonts] };
}

/** A conversion the client asked to fail rather than rasterise: 400 naming the standard (CLIENTS.md: /pdf.?a/, /pdf.?x/). */
export const conversionFailed = (standard: string, why: string) => new AppError('invalid_input', `The input could not be converted to ${standard}: ${why}`);

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An XMP packet with the usual Dublin Core, XMP basic, PDF and media-management properties plus `extra` (already escaped). */
export function xmpPacket(p: {
  title?: string;
  producer: string;
  created: Date;
  documentId: string;
  extraNamespaces: Record<string, string>;
  extra: string;
}): string {
  const iso = p.created.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const ns = Object.entries({
    dc: 'http://purl.org/dc/elements/1.1/',
    xmp: 'http://ns.adobe.com/xap/1.0/',
    pdf: 'http://ns.adobe.com/pdf/1.3/',
    xmpMM: 'http://ns.adobe.com/xap/1.0/mm/',
    ...p.extraNamespaces,
  })
    .map(([k, v]) => ` xmlns:${k}="${v}"`)
    .join('');
  return [
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>',
    '<x:xmpmeta xmlns:x="adobe:ns:meta/">',
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">',
    `<rdf:Description rdf:about=""${ns}>`,
    p.title ? `<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${esc(p.title)}</rdf:li></rdf:Alt></dc:title>` : '',
    '<dc:format>application/pdf</dc:format>',
    `<xmp:CreateDate>${iso}</xmp:CreateDate><xmp:ModifyDate>${iso}</xmp:ModifyDate><xmp:MetadataDate>${iso}</xmp:MetadataDate>`,
    `<pdf:Producer>${esc(p.producer)}</pdf:Producer><pdf:Trapped>False</pdf:Trapped>`,
    `<xmpMM:DocumentID>uuid:${p.documentId}</xmpMM:DocumentID><xmpMM:InstanceID>uuid:${p.documentId}</xmpMM:InstanceID><xmpMM:VersionID>1</xmpMM:VersionID><xmpMM:RenditionClass>default</xmpMM:RenditionClass>`,
    p.extra,
    '</rdf:Description>',
    '</rdf:RDF>',
    '</x:xmpmeta>',
    `${`${' '.repeat(100)}\n`.repeat(20)}<?xpacket end="w"?>`,
  ]
    .filter(Boolean)
    .join('\n');
}
