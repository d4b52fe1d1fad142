import { createHash } from 'node:crypto';
import type { EngineContext } from '../../engines/context.js';
import { type ReadLimits, readPdfJson, streamData } from '../../engines/qpdf.js';
import { PdfObjects, pdfText } from '../document/index.js';
import { readWritten, updateObjects } from '../rewrite/index.js';
import type { Profile } from './profiles.js';
import type { Finding } from './validate.js';

/** The hybrid invoice PDF (Factur-X 1.07 / ZUGFeRD 2.3): the XML as a PDF/A-3 associated file, declared in the XMP. */

export const FX_NS = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';
/** Names the XML may carry inside a hybrid PDF (Factur-X, ZUGFeRD 2.x, XRechnung; ZUGFeRD 1.0's ZUGFeRD-invoice.xml), compared case-insensitively. */
export const INVOICE_FILE_NAMES = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml'];

const FX_PROPERTIES: [string, string][] = [
  ['DocumentFileName', 'The name of the embedded XML document'],
  ['DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER'],
  ['Version', 'The actual version of the standard applying to the embedded XML document'],
  ['ConformanceLevel', 'The conformance level of the embedded XML document'],
];

/** The two rdf:Descriptions Factur-X requires: the PDF/A extension schema declaring fx, and the fx values. */
export function facturxDescriptions(p: Profile): string {
  const props = FX_PROPERTIES.map(
    ([name, desc]) =>
      `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${name}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType>` +
      `<pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${desc}</pdfaProperty:description></rdf:li>`,
  ).join('');
  return [
    '<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">',
    '<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">',
    `<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema><pdfaSchema:namespaceURI>${FX_NS}</pdfaSchema:namespaceURI><pdfaSchema:prefix>fx</pdfaSchema:prefix>`,
    `<pdfaSchema:property><rdf:Seq>${props}</rdf:Seq></pdfaSchema:property>`,
    '</rdf:li></rdf:Bag></pdfaExtension:schemas>',
    '</rdf:Description>',
    `<rdf:Description rdf:about="" xmlns:fx="${FX_NS}">`,
    `<fx:DocumentType>INVOICE</fx:DocumentType><fx:DocumentFileName>${p.fileName}</fx:DocumentFileName><fx:Version>1.0</fx:Version><fx:ConformanceLevel>${p.level}</fx:ConformanceLevel>`,
    '</rdf:Description>',
  ].join('\n');
}

/** D:YYYYMMDDHHmmSS+00'00' */
const pdfDate = (d: Date) => `D:${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}+00'00'`;

/**
 * Embeds `xml` in a PDF/A-3 (as Ghostscript wrote it): an EmbeddedFile stream (/Subtype text/xml, /Params with
 * dates, size and MD5), a file specification with /AFRelationship, the catalog's /AF and EmbeddedFiles name
 * tree, and the Factur-X descriptions added to the existing XMP (so Info and XMP still agree).
 */
export async function embedInvoice(pdfa: string, xml: Buffer, p: Profile, out: string, ctx: EngineContext): Promise<void> {
  const w = await readWritten(pdfa, ctx);
  if (!w.metadataRef || !/<\/rdf:RDF>/.test(w.xmp)) throw new Error('the PDF/A conversion wrote no XMP metadata');
  const now = pdfDate(new Date());
  const next = w.maxObjectId + 1;
  const fileRef = `${next} 0 R`;
  const specRef = `${next + 1} 0 R`;
  const at = w.xmp.lastIndexOf('</rdf:RDF>');
  const xmp = `${w.xmp.slice(0, at)}${facturxDescriptions(p)}\n${w.xmp.slice(at)}`;
  const names = (w.objects.dict(w.objects.catalog['/Names']) ?? {}) as Record<string, unknown>;
  await updateObjects(
    pdfa,
    out,
    {
      [fileRef]: {
        stream: {
          dict: {
            '/Type': '/EmbeddedFile',
            '/Subtype': '/text/xml',
            '/Params': {
              '/CreationDate': `u:${now}`,
              '/ModDate': `u:${now}`,
              '/Size': xml.length,
              '/CheckSum': `b:${createHash('md5').update(xml).digest('hex')}`,
            },
          },
          data: xml,
        },
      },
      [specRef]: {
        '/Type': '/Filespec',
        '/F': `u:${p.fileName}`,
        '/UF': `u:${p.fileName}`,
        '/Desc': `u:${p.name === 'XRECHNUNG' ? 'XRechnung' : 'Factur-X'} invoice (${p.level})`,
        '/AFRelationship': `/${p.relationship}`,
        '/EF': { '/F': fileRef, '/UF': fileRef },
      },
      [w.metadataRef]: { stream: { dict: { '/Type': '/Metadata', '/Subtype': '/XML' }, data: xmp } },
      [w.catalogRef]: { ...w.objects.catalog, '/AF': [specRef], '/Names': { ...names, '/EmbeddedFiles': { '/Names': [`u:${p.fileName}`, specRef] } } },
    },
    ctx,
  );
}

export interface Hybrid {
  /** The embedded invoice XML, or null when none of INVOICE_FILE_NAMES is attached. */
  xml: Buffer | null;
  fileName: string | null;
  /** What the PDF itself declares: PDF/A part, Factur-X XMP values, the file's AFRelationship. */
  declared: {
    pdfaPart: number | null;
    conformanceLevel: string | null;
    documentFileName: string | null;
    documentType: string | null;
    afRelationship: string | null;
  };
  /** Findings on the PDF level (FX-*); those that need the XML's profile are added by checkDeclared. */
  findings: Finding[];
}

const xmpValue = (xmp: string, name: string): string | null => {
  const m = new RegExp(`<[\\w.-]+:${name}>\\s*([^<]*?)\\s*</[\\w.-]+:${name}>|\\s[\\w.-]+:${name}\\s*=\\s*["']([^"']*)["']`).exec(xmp);
  return m ? (m[1] ?? m[2]) : null;
};

/** Reads a hybrid invoice PDF: its embedded XML and what its catalog, file specification and XMP declare. */
export async function readHybrid(path: string, ctx: EngineContext, read: ReadLimits): Promise<Hybrid> {
  const { json } = await readPdfJson(path, ctx, read);
  const objects = new PdfObjects(json);
  const findings: Finding[] = [];
  const attachments = (json.attachments ?? {}) as Record<string, { filespec?: string; preferredname?: string; preferredcontents?: string }>;
  const wanted = INVOICE_FILE_NAMES.map((n) => n.toLowerCase());
  const entry = Object.entries(attachments).find(
    ([key, a]) => wanted.includes(pdfText(a.preferredname ?? key).toLowerCase()) || wanted.includes(pdfText(key).toLowerCase()),
  );
  const meta = objects.catalog['/Metadata'];
  const xmp =
    typeof meta === 'string' && /^\d+ \d+ R$/.test(meta)
      ? (await streamData(path, meta.replace(/ R$/, ''), ctx, read).catch(() => Buffer.alloc(0))).toString('utf8')
      : '';
  const part = xmpValue(xmp, 'part');
  const declared: Hybrid['declared'] = {
    pdfaPart: part && /^\d+$/.test(part) ? Number(part) : null,
    conformanceLevel: xmpValue(xmp, 'ConformanceLevel'),
    documentFileName: xmpValue(xmp, 'DocumentFileName'),
    documentType: xmpValue(xmp, 'DocumentType'),
    afRelationship: null,
  };
  if (declared.pdfaPart !== 3)
    findings.push({
      id: 'FX-PDFA',
      severity: 'fatal',
      location: 'XMP pdfaid:part',
      message: `A hybrid invoice shall be a PDF/A-3 document; the XMP claims ${declared.pdfaPart ? `PDF/A-${declared.pdfaPart}` : 'no PDF/A part'}.`,
    });
  if (!entry) {
    findings.push({
      id: 'FX-XML',
      severity: 'fatal',
      location: 'Catalog /Names /EmbeddedFiles',
      message: `No embedded invoice XML (${INVOICE_FILE_NAMES.slice(0, 3).join(', ')}) was found.`,
    });
    return { xml: null, fileName: null, declared, findings };
  }
  const [key, a] = entry;
  const fileName = pdfText(a.preferredname ?? key);
  const spec = objects.dict(a.filespec) ?? {};
  const rel = spec['/AFRelationship'];
  declared.afRelationship = typeof rel === 'string' ? rel.replace(/^\//, '') : null;
  const af = objects.array(objects.catalog['/AF']);
  if (!declared.afRelationship)
    findings.push({
      id: 'FX-AF',
      severity: 'fatal',
      location: `${a.filespec} /AFRelationship`,
      message: `The file specification of ${fileName} has no /AFRelationship (PDF/A-3 associated file).`,
    });
  else if (!['Alternative', 'Data', 'Source'].includes(declared.afRelationship))
    findings.push({
      id: 'FX-AF',
      severity: 'fatal',
      location: `${a.filespec} /AFRelationship`,
      message: `/AFRelationship /${declared.afRelationship} is not one Factur-X allows (Alternative, Data, Source).`,
    });
  if (!af.includes(a.filespec))
    findings.push({
      id: 'FX-AF',
      severity: 'fatal',
      location: 'Catalog /AF',
      message: `${fileName} is not listed in the document catalog's /AF array (PDF/A-3 associated files).`,
    });
  if (!declared.conformanceLevel || !declared.documentFileName || !declared.documentType) {
    findings.push({
      id: 'FX-XMP',
      severity: 'fatal',
      location: 'XMP fx:*',
      message: 'The XMP metadata lacks the Factur-X properties (fx:DocumentType, fx:DocumentFileName, fx:Version, fx:ConformanceLevel).',
    });
  } else if (declared.documentFileName !== fileName) {
    findings.push({
      id: 'FX-XMP',
      severity: 'fatal',
      location: 'XMP fx:DocumentFileName',
      message: `fx:DocumentFileName is ${declared.documentFileName} but the embedded file is ${fileName}.`,
    });
  }
  const xml = a.preferredcontents ? await streamData(path, a.preferredcontents.replace(/ R$/, ''), ctx, read) : null;
  return { xml, fileName, declared, findings };
}

/** Checks what the PDF declares against the profile the XML names. */
export function checkDeclared(h: Hybrid, p: Profile | null): Finding[] {
  if (!p || !h.xml) return [];
  const out: Finding[] = [];
  const level = h.declared.conformanceLevel?.toUpperCase().replace(/\s+/g, ' ');
  // ZUGFeRD 2.x writes "EN 16931" and older tools "COMFORT"/"EN16931"; compare without spaces.
  if (level && level.replace(/ /g, '') !== p.level.replace(/ /g, '')) {
    out.push({
      id: 'FX-XMP',
      severity: 'fatal',
      location: 'XMP fx:ConformanceLevel',
      message: `fx:ConformanceLevel is ${h.declared.conformanceLevel} but the XML's specification identifier names ${p.level}.`,
    });
  }
  if (h.declared.afRelationship && h.declared.afRelationship !== p.relationship && h.declared.afRelationship !== 'Source') {
    out.push({
      id: 'FX-AF',
      severity: 'warning',
      location: '/AFRelationship',
      message: `/AFRelationship is /${h.declared.afRelationship}; Factur-X 1.07 expects /${p.relationship} for the ${p.level} profile.`,
    });
  }
  return out;
}
