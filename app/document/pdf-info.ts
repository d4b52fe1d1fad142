/**
 * What /pdf-info answers about a PDF: its Info and XMP claims, structure, fonts and boxes, read with qpdf's object
 * dump and Poppler. A file that cannot be read fully (encrypted, damaged, past a read limit) answers what it can,
 * with a warning.
 */
import { stat } from 'node:fs/promises';
import { EngineError } from '../../engines/errors.js';
import { type FontRow, listFonts, listImages } from '../../engines/poppler.js';
import { oversizedContentStream, PasswordError, type QpdfJson, ReadLimitError, readPdfJson, streamData } from '../../engines/qpdf.js';
import { isPdfHeader, readableWithoutPassword, readPdfHead } from './pdf-access.js';
import { isRef, PdfObjects, pdfDate, pdfText } from './pdf-objects.js';

export const PDF_INFO_QUERIES = [
  'tagged',
  'image_only',
  'title',
  'subject',
  'author',
  'producer',
  'creator',
  'creation_date',
  'modified_date',
  'keywords',
  'doc_language',
  'page_count',
  'contains_annotations',
  'contains_signature',
  'pdf_version',
  'file_size',
  'filename',
  'restrict_permissions_set',
  'contains_xfa',
  'contains_acroforms',
  'contains_javascript',
  'contains_transparency',
  'contains_embedded_file',
  'uses_embedded_fonts',
  'uses_nonembedded_fonts',
  'pdfa',
  'pdfua_claim',
  'pdfe_claim',
  'pdfx_claim',
  'requires_password_to_open',
  'custom_metadata',
  'page_boxes',
  'pdfvt_claim',
] as const;
type Query = (typeof PDF_INFO_QUERIES)[number];
const QUERIES = PDF_INFO_QUERIES;

interface InfoInput {
  path: string;
  name: string;
}
interface InfoJob {
  dir: string;
  signal: AbortSignal;
  limits: { maxStreamBytes: number; maxObjects: number };
}

const INFO_KEYS: Partial<Record<Query, string>> = {
  title: '/Title',
  subject: '/Subject',
  author: '/Author',
  producer: '/Producer',
  creator: '/Creator',
  keywords: '/Keywords',
};
const STANDARD_INFO = new Set(['/Title', '/Author', '/Subject', '/Keywords', '/Creator', '/Producer', '/CreationDate', '/ModDate', '/Trapped']);
const FONT_QUERIES: Query[] = ['uses_embedded_fonts', 'uses_nonembedded_fonts', 'image_only'];
const XMP_QUERIES: Query[] = ['pdfa', 'pdfua_claim', 'pdfe_claim', 'pdfx_claim', 'pdfvt_claim'];

const NEEDS_PASSWORD = 'The input file is password protected: it needs a password to open, so most queries cannot be answered.';

/**
 * A file whose attachments alone are encrypted opens without a password: it is answered from a copy without the
 * encryption (readableWithoutPassword), with its warning. Every other encrypted file answers what it can (pdfInfoOf).
 */
export async function pdfInfo(input: InfoInput, queries: string[], job: InfoJob): Promise<Record<string, unknown>> {
  const answers = await pdfInfoOf(input, queries, job);
  if (answers.warning !== NEEDS_PASSWORD) return answers;
  const readable = await readableWithoutPassword(input.path, { cwd: job.dir, signal: job.signal });
  if (!readable) return answers;
  const copy = await pdfInfoOf({ ...input, path: readable.path }, queries, job);
  if ('requires_password_to_open' in copy) copy.requires_password_to_open = false;
  return { ...copy, warning: [readable.warning, copy.warning].filter(Boolean).join(' ') };
}

async function pdfInfoOf(input: InfoInput, queries: string[], { dir, signal, limits }: InfoJob): Promise<Record<string, unknown>> {
  const asked: Query[] = queries.includes('all') ? [...QUERIES] : [...new Set(queries as Query[])];
  const ectx = { cwd: dir, signal };
  const size = (await stat(input.path)).size;
  const answers: Record<string, unknown> = {};
  const cheap: Partial<Record<Query, unknown>> = { filename: input.name, file_size: size };
  const partial = (warning: string, extra: Partial<Record<Query, unknown>> = {}) => {
    for (const q of asked) if (q in cheap || q in extra) answers[q] = { ...cheap, ...extra }[q];
    return { ...answers, allQueriesProcessed: false, warning };
  };

  if (!isPdfHeader(await readPdfHead(input.path)))
    return partial('The input is not a PDF, so only filename and file_size could be answered.', { requires_password_to_open: false });

  // Beyond a limit (MAX_STREAM_MB, MAX_OBJECTS) what needs the data is answered null, with a warning naming it.
  const read = { maxBytes: limits.maxStreamBytes, maxObjects: limits.maxObjects };
  const overStream = `a stream of the PDF decodes to more than the limit MAX_STREAM_MB=${limits.maxStreamBytes / 1024 / 1024} allows`;
  let json: QpdfJson;
  let recoveredLengths: Record<string, number>;
  // Fonts come from another engine: both run at once (the answer costs the slower of the two, not their sum).
  const needFonts = asked.some((q) => FONT_QUERIES.includes(q));
  const fontsRead: Promise<FontRow[] | null> = needFonts ? listFonts(input.path, ectx).catch(() => null) : Promise.resolve([]);
  try {
    ({ json, recoveredLengths } = await readPdfJson(input.path, ectx, read));
  } catch (err) {
    await fontsRead;
    if (err instanceof PasswordError) {
      return partial(NEEDS_PASSWORD, { requires_password_to_open: true });
    }
    if (err instanceof ReadLimitError) {
      const why =
        err.kind === 'objects'
          ? `the PDF has more objects than the limit MAX_OBJECTS=${err.max} allows`
          : `the listing of the PDF's objects is larger than the limit MAX_STREAM_MB=${err.max / 1024 / 1024} allows`;
      return partial(`Only filename and file_size could be answered: ${why}.`);
    }
    if (err instanceof EngineError && !err.details.aborted && !err.details.timedOut) {
      return partial('The input PDF is damaged and could not be read, so only filename and file_size could be answered.');
    }
    throw err;
  }

  const pdf = new PdfObjects(json);
  const fonts = await fontsRead;
  const xmpRead = asked.some((q) => XMP_QUERIES.includes(q)) ? await readXmp(pdf, input.path, ectx, limits.maxStreamBytes) : '';
  const xmp = xmpRead ?? '';
  let incomplete = fonts === null;
  let overLimit = xmpRead === null;

  for (const q of asked) {
    switch (q) {
      case 'filename':
      case 'file_size':
        answers[q] = cheap[q];
        break;
      case 'requires_password_to_open':
        answers[q] = false; // it opened without one
        break;
      case 'title':
      case 'subject':
      case 'author':
      case 'producer':
      case 'creator':
      case 'keywords':
        answers[q] = pdfText(pdf.resolve(pdf.info[INFO_KEYS[q]!]));
        break;
      case 'creation_date':
      case 'modified_date': {
        const raw = pdfText(pdf.resolve(pdf.info[q === 'creation_date' ? '/CreationDate' : '/ModDate']));
        answers[q] = raw ? pdfDate(raw) : '';
        break;
      }
      case 'doc_language':
        answers[q] = pdfText(pdf.resolve(pdf.catalog['/Lang']));
        break;
      case 'page_count':
        answers[q] = json.pages?.length ?? 0;
        break;
      case 'pdf_version':
        answers[q] = pdfVersion(pdf, json);
        break;
      case 'tagged':
        answers[q] = '/StructTreeRoot' in pdf.catalog || pdf.dict(pdf.catalog['/MarkInfo'])?.['/Marked'] === true;
        break;
      case 'contains_annotations':
        answers[q] = (json.pages ?? []).some((p) => pdf.array(pdf.dict(p.object)?.['/Annots']).length > 0);
        break;
      case 'contains_signature':
        answers[q] = containsSignature(pdf, json);
        break;
      case 'restrict_permissions_set':
        answers[q] = !!json.encrypt?.encrypted && Object.values(json.encrypt.capabilities).some((allowed) => !allowed);
        break;
      case 'contains_xfa':
        answers[q] = pdf.dict(pdf.catalog['/AcroForm'])?.['/XFA'] !== undefined;
        break;
      case 'contains_acroforms':
        answers[q] = !!json.acroform?.hasacroform && (json.acroform.fields?.length ?? 0) > 0;
        break;
      case 'contains_javascript':
        answers[q] = containsJavaScript(pdf);
        break;
      case 'contains_transparency':
        answers[q] = containsTransparency(pdf);
        break;
      case 'contains_embedded_file':
        answers[q] = Object.keys(json.attachments ?? {}).length > 0 || hasFileAttachmentAnnots(pdf, json);
        break;
      case 'uses_embedded_fonts':
        answers[q] = fonts ? fonts.some((f) => f.embedded) : null;
        break;
      case 'uses_nonembedded_fonts':
        answers[q] = fonts ? fonts.some((f) => !f.embedded) : null;
        break;
      case 'image_only': {
        if (!fonts) {
          answers[q] = null;
          break;
        }
        // Poppler parses every content stream: one that decodes past the limit is not handed to it.
        if (fonts.length === 0 && (await oversizedContentStream(input.path, { json, recoveredLengths }, ectx, read).catch(() => null))) {
          overLimit = true;
          answers[q] = null;
          break;
        }
        const images = await listImages(input.path, ectx).catch(() => null);
        if (!images) {
          incomplete = true;
          answers[q] = null;
          break;
        }
        const perPage = new Map<number, number>();
        for (const im of images) if (im.type === 'image') perPage.set(im.page, (perPage.get(im.page) ?? 0) + 1);
        const pages = json.pages?.length ?? 0;
        answers[q] = pages > 0 && fonts.length === 0 && Array.from({ length: pages }, (_, i) => perPage.get(i + 1) ?? 0).every((n) => n === 1);
        break;
      }
      case 'pdfa':
        answers[q] = /pdfaid:part/.test(xmp);
        break;
      case 'pdfua_claim':
        answers[q] = /pdfuaid:part/.test(xmp);
        break;
      case 'pdfe_claim':
        answers[q] = /pdfe:ISO_PDFEVersion/.test(xmp);
        break;
      case 'pdfx_claim':
        answers[q] = /pdfxid:GTS_PDFXVersion|pdfx:GTS_PDFXVersion/.test(xmp) || '/GTS_PDFXVersion' in pdf.info;
        break;
      case 'pdfvt_claim':
        answers[q] = /pdfvtid:GTS_PDFVTVersion/.test(xmp);
        break;
      case 'custom_metadata':
        answers[q] = Object.fromEntries(
          Object.entries(pdf.info)
            .filter(([k]) => !STANDARD_INFO.has(k))
            .map(([k, v]) => [decodeName(k), pdfText(pdf.resolve(v))]),
        );
        break;
      case 'page_boxes':
        answers[q] = pageBoxes(pdf, json);
        break;
    }
  }
  if (xmpRead === null) for (const q of asked) if (XMP_QUERIES.includes(q)) answers[q] = null;
  if (overLimit) return { ...answers, allQueriesProcessed: false, warning: `Some queries could not be answered (null): ${overStream}.` };
  if (incomplete) return { ...answers, allQueriesProcessed: false, warning: 'Some queries could not be answered because the PDF is damaged.' };
  return { ...answers, allQueriesProcessed: true };
}

/** Header version, raised by the catalog's /Version, plus Adobe's extension level: "1.7.3". */
function pdfVersion(pdf: PdfObjects, json: QpdfJson): string {
  const header = json.qpdf?.[0].pdfversion ?? '1.0';
  const catalogVersion = pdfText(pdf.resolve(pdf.catalog['/Version']));
  const newer = /^\d+\.\d+$/.test(catalogVersion) && Number(catalogVersion) > Number(header) ? catalogVersion : header;
  const adbe = pdf.dict(pdf.dict(pdf.catalog['/Extensions'])?.['/ADBE']);
  const level = Number(pdf.resolve(adbe?.['/ExtensionLevel']) ?? 0) || 0;
  return `${newer}.${level}`;
}

function containsSignature(pdf: PdfObjects, json: QpdfJson): boolean {
  const fields = (json.acroform?.fields ?? []) as { fieldtype?: string; value?: unknown }[];
  if (fields.some((f) => f.fieldtype === '/Sig' && f.value !== null && f.value !== undefined)) return true;
  return pdf.dict(pdf.catalog['/Perms']) !== null;
}

function containsJavaScript(pdf: PdfObjects): boolean {
  if (pdf.dict(pdf.dict(pdf.catalog['/Names'])?.['/JavaScript'])) return true;
  for (const { value } of pdf.all()) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const d = value as Record<string, unknown>;
      if (d['/S'] === '/JavaScript' || '/JS' in d) return true;
    }
  }
  return false;
}

/** Constant alpha below 1, soft masks and blend modes other than Normal make a page need transparency. */
function containsTransparency(pdf: PdfObjects): boolean {
  for (const { value } of pdf.all()) {
    if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
    const d = value as Record<string, unknown>;
    for (const k of ['/CA', '/ca']) {
      const a = pdf.resolve(d[k]);
      if (typeof a === 'number' && a < 1) return true;
    }
    const smask = d['/SMask'];
    if (smask !== undefined && smask !== '/None') return true;
    const bm = pdf.resolve(d['/BM']);
    const modes = Array.isArray(bm) ? bm : bm === undefined ? [] : [bm];
    if (modes.some((m) => m !== '/Normal' && m !== '/Compatible')) return true;
  }
  return false;
}

function hasFileAttachmentAnnots(pdf: PdfObjects, json: QpdfJson): boolean {
  return (json.pages ?? []).some((p) => pdf.array(pdf.dict(p.object)?.['/Annots']).some((a) => pdf.dict(a)?.['/Subtype'] === '/FileAttachment'));
}

/** The XMP packet ('' when there is none or it is unreadable), or null when it decodes past `maxBytes`. */
async function readXmp(pdf: PdfObjects, path: string, ectx: { cwd: string; signal: AbortSignal }, maxBytes: number): Promise<string | null> {
  const ref = pdf.catalog['/Metadata'];
  if (!isRef(ref)) return '';
  const data = await streamData(path, ref.replace(/ R$/, ''), ectx, { maxBytes }).catch((err) => (err instanceof ReadLimitError ? null : Buffer.alloc(0)));
  return data ? data.toString('utf8') : null;
}

const BOXES = [
  ['mediaBox', '/MediaBox'],
  ['cropBox', '/CropBox'],
  ['bleedBox', '/BleedBox'],
  ['trimBox', '/TrimBox'],
  ['artBox', '/ArtBox'],
] as const;

/** Each page's boxes with the PDF defaults applied (crop = media; bleed, trim, art = crop). */
function pageBoxes(pdf: PdfObjects, json: QpdfJson) {
  return (json.pages ?? []).map((p, i) => {
    const rect = (key: string) => {
      const raw = key === '/MediaBox' || key === '/CropBox' ? pdf.inherited(p.object, key) : pdf.resolve(pdf.dict(p.object)?.[key]);
      const arr = pdf.array(raw).map((n) => Number(pdf.resolve(n)));
      return arr.length === 4 && arr.every(Number.isFinite)
        ? [Math.min(arr[0], arr[2]), Math.min(arr[1], arr[3]), Math.max(arr[0], arr[2]), Math.max(arr[1], arr[3])]
        : null;
    };
    const media = rect('/MediaBox') ?? [0, 0, 612, 792];
    const crop = rect('/CropBox') ?? media;
    const boxes: Record<string, unknown> = { page: i + 1, mediaBox: media, cropBox: crop };
    for (const [name, key] of BOXES.slice(2)) boxes[name] = rect(key) ?? crop;
    boxes.rotation = Number(pdf.inherited(p.object, '/Rotate') ?? 0) || 0;
    return boxes;
  });
}

/** Names in qpdf JSON keep #xx escapes: "/Company#20Name" is "Company Name". */
const decodeName = (k: string) => k.slice(1).replace(/#([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
