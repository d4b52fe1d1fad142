import {
  concatTransformationMatrix,
  drawObject,
  PDFArray,
  PDFDict,
  PDFDocument,
  type PDFFont,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFOperator,
  type PDFPage,
  PDFRef,
  PDFString,
  popGraphicsState,
  pushGraphicsState,
  setGraphicsState,
} from '@cantoo/pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import { DEFAULT_BYTE_RANGE_PLACEHOLDER, SUBFILTER_ADOBE_PKCS7_DETACHED } from '@signpdf/utils';
import type { EngineContext } from '../../engines/context.js';
import { FontSet, LINE_SPACING, type Line, resolveFont, textOperators, wrapText } from '../compose/index.js';
import { AppError, outOfRange } from '../errors.js';
import { CmsSigner, type Credentials, signatureSize } from './sign-credentials.js';

/**
 * Adds a signature as an incremental update: the original bytes stay as they are (earlier signatures keep
 * verifying), and the appended revision holds the signature field, its widget and appearance, and the
 * signature dictionary whose /ByteRange covers the whole file but the /Contents hole that the CMS fills.
 */

export interface SignRequest {
  /** Field name; default `Signature<n>`, the first one free. */
  fieldName?: string;
  /** Sign the existing empty signature field `fieldName` (its widget's box and page), instead of adding a field. */
  existing?: boolean;
  /** A visible signature: page (1-based) and rectangle in default user space of the unrotated page. */
  placement?: { page: number; rect: [number, number, number, number] };
  /** Lines of the visible appearance, top to bottom. */
  lines: string[];
  /** PNG bytes of the logo, drawn behind the text. */
  logo?: Buffer;
  logoOpacity: number;
  /** Signature dictionary entries. */
  name: string;
  reason?: string;
  location?: string;
  contact?: string;
  time: Date;
}

export async function signPdf(input: Buffer, creds: Credentials, req: SignRequest, ectx: EngineContext): Promise<Buffer> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(input, { forIncrementalUpdate: true, updateMetadata: false, throwOnInvalidObject: false });
  } catch {
    throw new AppError('invalid_input', 'Uploaded file is not valid input for this route: the PDF structure cannot be read for signing');
  }
  refuseIfCertifiedLocked(doc);
  const pages = doc.getPages();
  const target = req.existing ? existingSignatureField(doc, req.fieldName ?? '') : undefined;
  if (target) req = { ...req, placement: target.placement };
  const pageNo = req.placement?.page ?? 1;
  if (pageNo > pages.length) throw outOfRange(pageNo, 'signature_configuration.location.page');
  const page = pages[pageNo - 1];
  if (req.placement) {
    const { x, y, width, height } = page.getMediaBox();
    const [x1, y1, x2, y2] = req.placement.rect;
    if (x2 <= x || y2 <= y || x1 >= x + width || y1 >= y + height) {
      throw new AppError(
        'out_of_range',
        `signature_configuration.location lies outside page ${pageNo}, whose media box is [${[x, y, x + width, y + height].map((n) => +n.toFixed(2)).join(' ')}]`,
      );
    }
  }
  const ctx = doc.context;

  const acroForm = doc.catalog.getOrCreateAcroForm();
  const fieldName = req.existing ? req.fieldName! : (req.fieldName ?? freeFieldName(acroForm.getAllFields().map(([f]) => f.getFullyQualifiedName() ?? '')));
  if (!req.existing && req.fieldName && acroForm.getAllFields().some(([f]) => f.getFullyQualifiedName() === req.fieldName)) {
    throw new AppError('out_of_range', `A field named ${req.fieldName} already exists in this PDF: choose another signature_configuration.name`);
  }

  const size = Math.ceil(signatureSize(creds) / 1024) * 1024;
  // @signpdf finds /ByteRange by its placeholder and expects /Contents after it, so keys go in this order.
  const sig = ctx.obj({
    Type: 'Sig',
    Filter: 'Adobe.PPKLite',
    SubFilter: SUBFILTER_ADOBE_PKCS7_DETACHED,
    ByteRange: [0, ...Array(3).fill(PDFName.of(DEFAULT_BYTE_RANGE_PLACEHOLDER))],
    Contents: PDFHexString.of('0'.repeat(size * 2)),
    M: PDFString.fromDate(req.time),
    Name: PDFHexString.fromText(req.name),
  });
  if (req.reason) sig.set(PDFName.of('Reason'), PDFHexString.fromText(req.reason));
  if (req.location) sig.set(PDFName.of('Location'), PDFHexString.fromText(req.location));
  if (req.contact) sig.set(PDFName.of('ContactInfo'), PDFHexString.fromText(req.contact));
  const sigRef = ctx.register(sig);

  if (target) {
    // The field gets its value; its widget (the field itself, or its first kid) the appearance.
    target.field.set(PDFName.of('V'), sigRef);
    if (req.placement) target.widget.set(PDFName.of('AP'), ctx.obj({ N: await appearance(doc, pages[req.placement.page - 1], req) }));
    acroForm.dict.set(PDFName.of('SigFlags'), PDFNumber.of(3));
    const ready = Buffer.from(await doc.commit({ useObjectStreams: false }));
    return new SignPdf().sign(ready, new CmsSigner(creds, ectx), req.time);
  }

  const rect = req.placement?.rect ?? [0, 0, 0, 0];
  const widget = ctx.obj({
    Type: 'Annot',
    Subtype: 'Widget',
    FT: 'Sig',
    T: PDFHexString.fromText(fieldName),
    V: sigRef,
    F: 4,
    Rect: rect,
    P: page.ref,
  });
  if (req.placement) widget.set(PDFName.of('AP'), ctx.obj({ N: await appearance(doc, page, req) }));
  const widgetRef = ctx.register(widget);
  page.node.addAnnot(widgetRef);
  acroForm.addField(widgetRef);
  acroForm.dict.set(PDFName.of('SigFlags'), PDFNumber.of(3));

  // Object streams would compress the signature dictionary, and its byte offsets must be in the file itself.
  const prepared = Buffer.from(await doc.commit({ useObjectStreams: false }));
  return new SignPdf().sign(prepared, new CmsSigner(creds, ectx), req.time);
}

const freeFieldName = (taken: string[]) => {
  for (let n = 1; ; n++) if (!taken.includes(`Signature${n}`)) return `Signature${n}`;
};

/** A certification signature with DocMDP P=1 allows no change at all: another signature would void it. */
function refuseIfCertifiedLocked(doc: PDFDocument): void {
  const perms = doc.catalog.lookupMaybe(PDFName.of('Perms'), PDFDict);
  const certifying = perms?.lookupMaybe(PDFName.of('DocMDP'), PDFDict);
  const refs = certifying?.lookupMaybe(PDFName.of('Reference'), PDFArray);
  for (let i = 0; refs && i < refs.size(); i++) {
    const params = refs.lookupMaybe(i, PDFDict)?.lookupMaybe(PDFName.of('TransformParams'), PDFDict);
    if (params?.lookupMaybe(PDFName.of('P'), PDFNumber)?.asNumber() === 1) {
      throw new AppError(
        'invalid_input',
        'This PDF is certified with no changes allowed (DocMDP permission 1): a new signature would invalidate its certification',
      );
    }
  }
}

/**
 * The visible appearance: the logo fitted and centred behind the text, then the lines, wrapped and sized to
 * fill the box. On a rotated page the form's /Matrix turns it back, so it reads upright on screen.
 */
async function appearance(doc: PDFDocument, page: PDFPage, req: SignRequest): Promise<PDFRef> {
  const [x1, y1, x2, y2] = req.placement!.rect;
  const rotation = (((page.getRotation().angle % 360) + 360) % 360) as 0 | 90 | 180 | 270;
  const turned = rotation === 90 || rotation === 270;
  const width = turned ? y2 - y1 : x2 - x1;
  const height = turned ? x2 - x1 : y2 - y1;
  const matrix = { 0: [1, 0, 0, 1, 0, 0], 90: [0, 1, -1, 0, 0, 0], 180: [-1, 0, 0, -1, 0, 0], 270: [0, -1, 1, 0, 0, 0] }[rotation];

  const ops: PDFOperator[] = [];
  const resources: Record<string, Record<string, PDFRef | PDFDict>> = { Font: {} };
  if (req.logo) {
    const image = await doc.embedPng(req.logo);
    const scale = Math.min(width / image.width, height / image.height);
    const [w, h] = [image.width * scale, image.height * scale];
    resources.XObject = { Logo: image.ref };
    resources.ExtGState = { GLogo: doc.context.obj({ Type: 'ExtGState', ca: req.logoOpacity, CA: req.logoOpacity }) };
    ops.push(
      pushGraphicsState(),
      setGraphicsState('GLogo'),
      concatTransformationMatrix(w, 0, 0, h, (width - w) / 2, (height - h) / 2),
      drawObject('Logo'),
      popGraphicsState(),
    );
  }
  // Helvetica while the text fits Latin-1, else embedded subsets with per-character fallbacks (Cyrillic, CJK,
  // Arabic...): the same font model as /pdf-with-added-text, so a signer's name shows as written.
  const fonts = new FontSet(doc);
  const texts = await Promise.all(
    req.lines.map(async (l) => {
      const chars = [...l.replace(/[\r\n\t]+/g, ' ')];
      return { chars, fonts: await fonts.fontsFor(chars, resolveFont('Helvetica')) };
    }),
  );
  const pad = Math.min(4, width / 20, height / 20);
  const { size, lines } = fitText(texts, width - 2 * pad, height - 2 * pad);
  if (lines.length) {
    // Baseline of the first line one ascent below the top; the block is centred vertically.
    const block = size * LINE_SPACING * (lines.length - 1) + size;
    const text = textOperators(lines, size, height - (height - block) / 2 - size * 0.8, () => pad);
    ops.push(...text.ops);
    resources.Font = text.fonts;
  }
  return doc.context.register(doc.context.formXObject(ops, { BBox: [0, 0, width, height], Matrix: matrix, Resources: resources }));
}

/** The largest size (12 pt down to 3 pt) at which the wrapped lines fit the box. */
function fitText(texts: { chars: string[]; fonts: PDFFont[] }[], width: number, height: number): { size: number; lines: Line[] } {
  let lines: Line[] = [];
  for (let size = 12; size >= 3; size -= 0.5) {
    lines = texts.flatMap((t) => wrapText(t.chars, t.fonts, size, width));
    if (lines.length * size * LINE_SPACING <= height && lines.every((l) => l.width <= width)) return { size, lines };
  }
  return { size: 3, lines };
}

/**
 * The empty signature field `name` (fully qualified), with its widget and, when the widget has a box on a
 * page, the placement of the visible signature. Unknown, non-signature and already signed fields are refused.
 */
function existingSignatureField(doc: PDFDocument, name: string): { field: PDFDict; widget: PDFDict; placement?: SignRequest['placement'] } {
  const form = doc.catalog.getAcroForm();
  const all = form?.getAllFields() ?? [];
  const isSig = (f: (typeof all)[number][0]) => f.getInheritableAttribute(PDFName.of('FT')) === PDFName.of('Sig');
  const entry = all.find(([f]) => f.getFullyQualifiedName() === name);
  if (!entry) {
    const sigs = all.filter(([f]) => isSig(f)).map(([f]) => f.getFullyQualifiedName());
    const known = sigs.length ? `its signature fields are ${sigs.join(', ')}` : 'it has no signature field';
    throw new AppError(
      'out_of_range',
      `${name} is not within the acceptable range for signature_configuration.name: this PDF has no field named ${name} (${known})`,
    );
  }
  const [field, fieldRef] = entry;
  if (!isSig(field)) throw new AppError('out_of_range', `The field ${name} (signature_configuration.name) is not a signature field`);
  if (field.dict.lookup(PDFName.of('V')) !== undefined) {
    throw new AppError(
      'invalid_input',
      `The signature field ${name} (signature_configuration.name) is already signed: sign an empty field, or use signature_configuration.type new`,
    );
  }
  // The widget: the field itself when merged with it, else its first kid.
  let widget = field.dict;
  let widgetRef: PDFRef | undefined = fieldRef;
  if (field.dict.lookup(PDFName.of('Subtype')) !== PDFName.of('Widget')) {
    const kids = field.dict.lookupMaybe(PDFName.of('Kids'), PDFArray);
    const kid = kids?.size() ? kids.get(0) : undefined;
    widgetRef = kid instanceof PDFRef ? kid : undefined;
    widget = (kids?.size() && kids.lookupMaybe(0, PDFDict)) || field.dict;
  }
  const rect = widget
    .lookupMaybe(PDFName.of('Rect'), PDFArray)
    ?.asArray()
    .map((v) => (v instanceof PDFNumber ? v.asNumber() : 0));
  const pages = doc.getPages();
  const p = widget.get(PDFName.of('P'));
  let index =
    p instanceof PDFRef
      ? pages.findIndex((pg) => pg.ref === p || (pg.ref.objectNumber === p.objectNumber && pg.ref.generationNumber === p.generationNumber))
      : -1;
  if (index < 0 && widgetRef) {
    index = pages.findIndex((pg) => {
      const annots = pg.node.Annots();
      return !!annots && annots.asArray().some((a) => a instanceof PDFRef && a.objectNumber === widgetRef!.objectNumber);
    });
  }
  if (rect?.length !== 4 || index < 0) return { field: field.dict, widget };
  const [x1, y1, x2, y2] = [Math.min(rect[0], rect[2]), Math.min(rect[1], rect[3]), Math.max(rect[0], rect[2]), Math.max(rect[1], rect[3])];
  // A zero-size widget is an invisible signature: no appearance is drawn.
  if (x2 - x1 < 1 || y2 - y1 < 1) return { field: field.dict, widget };
  return { field: field.dict, widget, placement: { page: index + 1, rect: [x1, y1, x2, y2] } };
}
