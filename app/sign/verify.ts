import { createHash, X509Certificate } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, open, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { verifyChain } from '../../engines/openssl.js';
import { type QpdfJson, type ReadLimits, readPdfJson, xrefEntries } from '../../engines/qpdf.js';
import { PdfObjects, pdfDate, pdfText } from '../document/index.js';
import {
  type CmsCheck,
  CmsError,
  checkSigner,
  digestOf,
  embeddedRevocation,
  isTimestampToken,
  parseSignedData,
  readTimestamp,
  type SignedData,
  signatureTimestamp,
  signingTimeOf,
  type Timestamp,
} from './cms.js';
import { commonName, distinguishedName } from './sign-credentials.js';

/**
 * Verifying the signatures a PDF holds, each on its own: the bytes its /ByteRange covers hashed and set against
 * the CMS message digest, the CMS signature checked with the signer's key, whether the signed revision is the
 * whole file or later incremental updates changed it (each object written after it, by what it is: form fill,
 * annotation, signature, validation data, metadata, other), the certificate chain against the operator's trust
 * anchors (openssl verify), an RFC 3161 timestamp, and the revocation data embedded (CMS or the document's DSS).
 */

export interface CertificateInfo {
  commonName: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  validFrom: string;
  validTo: string;
}

export interface SignatureReport {
  field: string;
  page: number | null;
  /** signature, certification (DocMDP), or document_timestamp (RFC 3161 over the document). */
  type: 'signature' | 'certification' | 'document_timestamp';
  subFilter: string;
  signer: CertificateInfo | null;
  name: string | null;
  reason: string | null;
  location: string | null;
  contactInfo: string | null;
  /** The CMS signing-time attribute, else the signature dictionary's /M (claimed by the signer, not proven). */
  signingTime: string | null;
  digestAlgorithm: string | null;
  timestamp: { time: string | null; authority: CertificateInfo | null; imprintMatches: boolean; signatureVerifies: boolean } | null;
  integrity: { intact: boolean; digestMatches: boolean; signatureVerifies: boolean; problem: string | null };
  byteRange: number[];
  coversWholeDocument: boolean;
  modifiedAfterSigning: boolean;
  /** Incremental updates after the signed revision. */
  revisionsAfter: number;
  /** Objects written after the signed revision, by kind (form_fill, annotation, signature, validation_data, metadata, other). */
  changesAfter: { kind: string; count: number }[];
  /** For a certification: the DocMDP permission (1 none, 2 form fill and signing, 3 also annotations) and whether the later changes keep to it. */
  certification: { permission: number; changesAllowed: boolean } | null;
  chain: { trusted: boolean; problem: string | null; trustedAtSigningTime: boolean | null; certificates: { subject: string; issuer: string }[] };
  revocation: { crls: number; ocspResponses: number; inDocumentStore: boolean };
  /** Revocation data is embedded (in the CMS, or the document's security store), so the signature can be validated later. */
  ltv: boolean;
}

export interface VerifyResult {
  signatures: SignatureReport[];
  /** Signature fields without a signature. */
  unsignedFields: string[];
}

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => !!v && typeof v === 'object' && !Array.isArray(v);
const REF = /^\d+ \d+ R$/;
const isRef = (v: unknown): v is string => typeof v === 'string' && REF.test(v);

export const certificateInfo = (c: X509Certificate): CertificateInfo => ({
  commonName: commonName(c),
  subject: distinguishedName(c),
  issuer: c.issuer.split('\n').filter(Boolean).reverse().join(', '),
  serialNumber: c.serialNumber.toUpperCase(),
  validFrom: new Date(c.validFrom).toISOString(),
  validTo: new Date(c.validTo).toISOString(),
});

/** The PEM certificates (.pem, .crt, .cer; PEM or DER) of the trust directory, as one PEM text ('' when none). */
export async function trustAnchors(dir: string | undefined): Promise<string> {
  if (!dir) return '';
  const pems: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (!/\.(pem|crt|cer)$/i.test(name)) continue;
    const bytes = await readFile(join(dir, name)).catch(() => null);
    if (!bytes) continue;
    const text = bytes.toString('latin1');
    const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
    try {
      if (blocks) for (const b of blocks) pems.push(new X509Certificate(b).toString());
      else pems.push(new X509Certificate(bytes).toString());
    } catch {
      /* not a certificate: left out */
    }
  }
  return pems.join('');
}

async function hashRanges(path: string, ranges: [number, number][], digest: string): Promise<Buffer> {
  const h = createHash(digest);
  for (const [start, length] of ranges) {
    if (length <= 0) continue;
    for await (const chunk of createReadStream(path, { start, end: start + length - 1 })) h.update(chunk as Buffer);
  }
  return h.digest();
}

async function readAt(path: string, start: number, length: number): Promise<Buffer> {
  const f = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.max(0, length));
    const { bytesRead } = await f.read(buf, 0, buf.length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}

/** Occurrences of %%EOF from `start` to the end of the file: the revisions written after it. */
async function revisionsFrom(path: string, start: number): Promise<number> {
  let n = 0;
  let tail = '';
  for await (const chunk of createReadStream(path, { start })) {
    const text = tail + (chunk as Buffer).toString('latin1');
    n += text.split('%%EOF').length - 1;
    tail = text.slice(-4).includes('%') ? text.slice(-4) : '';
    if (tail.includes('%%EOF')) tail = '';
  }
  return n;
}

const ALLOWED_AFTER: Record<number, string[]> = {
  1: ['validation_data'],
  2: ['validation_data', 'signature', 'form_fill'],
  3: ['validation_data', 'signature', 'form_fill', 'annotation'],
};

export async function verifySignatures(
  input: string,
  opts: { trustDir?: string },
  ctx: EngineContext & { cwd: string },
  limits: ReadLimits = {},
): Promise<VerifyResult> {
  const { json } = await readPdfJson(input, ctx, limits);
  const pdf = new PdfObjects(json);
  const size = (await stat(input)).size;
  const fields = ((json.acroform?.fields ?? []) as { fieldtype?: string; fullname?: string; value?: unknown; pageposfrom1?: number; object?: string }[]).filter(
    (f) => f.fieldtype === '/Sig',
  );
  const anchors = await trustAnchors(opts.trustDir);
  const trusted = join(ctx.cwd, 'trust-anchors.pem');
  if (anchors) await writeFile(trusted, anchors);
  const dss = pdf.dict(pdf.catalog['/DSS']);
  const docRevocation = pdf.array(dss?.['/CRLs']).length + pdf.array(dss?.['/OCSPs']).length;
  const vri = pdf.dict(dss?.['/VRI']) ?? {};
  const perms = pdf.dict(pdf.catalog['/Perms']);
  const certifying = perms?.['/DocMDP'];

  const signatures: SignatureReport[] = [];
  const unsignedFields: string[] = [];
  const seen = new Set<string>();
  let finalXref: Map<string, string> | undefined;
  for (const f of fields) {
    const v = f.value;
    const sig = pdf.dict(v);
    const range = pdf.array(sig?.['/ByteRange']).map((n) => Number(pdf.resolve(n)));
    if (!sig || range.length !== 4 || !range.every((n) => Number.isInteger(n) && n >= 0)) {
      unsignedFields.push(f.fullname ?? '');
      continue;
    }
    if (isRef(v)) {
      if (seen.has(v)) continue;
      seen.add(v);
    }
    const [a, b, c, d] = range;
    const signedEnd = c + d;
    const problems: string[] = [];
    if (a !== 0) problems.push('the signed bytes do not start at the beginning of the file');
    if (signedEnd > size || b > c) problems.push('the byte range lies outside the file');
    const hole = b <= c && signedEnd <= size ? await readAt(input, b, c - b) : Buffer.alloc(0);
    const hex = /^<([0-9A-Fa-f\s]*)>$/.exec(hole.toString('latin1'))?.[1];
    if (hex === undefined && !problems.length) problems.push('the bytes left out of the signature are not its /Contents string alone');
    const contents = Buffer.from((hex ?? '').replace(/\s+/g, ''), 'hex');
    const subFilter = pdfText(sig['/SubFilter']);
    let sd: SignedData | null = null;
    try {
      sd = parseSignedData(contents);
    } catch (err) {
      problems.push(err instanceof CmsError ? `the signature is not readable CMS (${err.message})` : 'the signature is not readable CMS');
    }
    const ranges: [number, number][] = [
      [a, b],
      [c, d],
    ];
    const isDocTimestamp = !!sd && isTimestampToken(sd);
    let digestMatches = false;
    let signatureVerifies = false;
    let certificate: X509Certificate | null = null;
    let timestamp: Timestamp | null = null;
    if (sd && !problems.length) {
      if (isDocTimestamp) {
        // A document timestamp: the authority's token stamps the digest of the signed bytes.
        timestamp = await readTimestamp(contents, (alg) => hashRanges(input, ranges, alg));
        digestMatches = timestamp.imprintMatches;
        signatureVerifies = timestamp.signatureVerifies;
        certificate = timestamp.authority;
      } else {
        let check: CmsCheck | null = null;
        try {
          // adbe.pkcs7.sha1 signs a SHA-1 digest of the ranges, carried inside the CMS; the others the ranges themselves.
          check =
            subFilter === 'adbe.pkcs7.sha1' && sd.content
              ? checkSigner(sd, { content: sd.content, also: (await hashRanges(input, ranges, 'sha1')).equals(sd.content) })
              : checkSigner(sd, { digest: await hashRanges(input, ranges, sd.signer.digest) });
        } catch {
          problems.push(`the digest algorithm ${sd.signer.digest} is not supported`);
        }
        digestMatches = !!check?.digestMatches;
        signatureVerifies = !!check?.signatureVerifies;
        certificate = check?.certificate ?? null;
        timestamp = await signatureTimestamp(sd);
      }
    }
    if (sd && !problems.length && !digestMatches) problems.push('the digest of the signed bytes does not match the one signed: the document was changed');
    if (sd && !problems.length && !signatureVerifies) problems.push("the signature does not verify with the signer's key");
    const intact = !problems.length && digestMatches && signatureVerifies;

    const covers = a === 0 && signedEnd === size && hex !== undefined;
    const changes =
      signedEnd < size && signedEnd > 0 ? await changesAfter(input, signedEnd, json, pdf, (finalXref ??= await xrefEntries(input, ctx)), ctx, limits) : [];
    const revisionsAfter = signedEnd < size ? await revisionsFrom(input, signedEnd) : 0;

    const isCertification = isRef(v) && certifying === v;
    const permission = isCertification ? docMdpPermission(pdf, sig) : null;
    const signingTime = (sd && signingTimeOf(sd)) ?? null;
    const claimed = signingTime?.toISOString() ?? (pdfText(sig['/M']) ? pdfDate(pdfText(sig['/M'])) : null);
    const when = timestamp?.time ?? signingTime ?? (claimed ? new Date(claimed) : null);
    const chain = await checkChain(sd, certificate, anchors ? trusted : null, when, ctx, signatures.length);
    const cmsRevocation = sd ? embeddedRevocation(sd) : { crls: 0, ocsps: 0 };
    const vriKeys = [digestOf('sha1', contents).toString('hex').toUpperCase(), digestOf('sha1', hole).toString('hex').toUpperCase()];
    const ownVri = Object.keys(vri).some((k) => vriKeys.includes(k.slice(1).toUpperCase()));
    const revocation = { crls: cmsRevocation.crls, ocspResponses: cmsRevocation.ocsps, inDocumentStore: docRevocation > 0 || ownVri };

    signatures.push({
      field: f.fullname ?? '',
      page: f.pageposfrom1 ?? null,
      type: isDocTimestamp || pdfText(sig['/Type']) === 'DocTimeStamp' ? 'document_timestamp' : isCertification ? 'certification' : 'signature',
      subFilter,
      signer: certificate ? certificateInfo(certificate) : null,
      name: pdfText(sig['/Name']) || null,
      reason: pdfText(sig['/Reason']) || null,
      location: pdfText(sig['/Location']) || null,
      contactInfo: pdfText(sig['/ContactInfo']) || null,
      signingTime: isDocTimestamp ? (timestamp?.time?.toISOString() ?? null) : claimed,
      digestAlgorithm: sd?.signer.digest ?? null,
      timestamp: timestamp
        ? {
            time: timestamp.time?.toISOString() ?? null,
            authority: timestamp.authority ? certificateInfo(timestamp.authority) : null,
            imprintMatches: timestamp.imprintMatches,
            signatureVerifies: timestamp.signatureVerifies,
          }
        : null,
      integrity: { intact, digestMatches, signatureVerifies, problem: problems[0] ?? null },
      byteRange: range,
      coversWholeDocument: covers,
      modifiedAfterSigning: signedEnd < size,
      revisionsAfter,
      changesAfter: changes,
      certification: permission === null ? null : { permission, changesAllowed: changes.every((ch) => (ALLOWED_AFTER[permission] ?? []).includes(ch.kind)) },
      chain,
      revocation,
      ltv: revocation.crls + revocation.ocspResponses > 0 || revocation.inDocumentStore,
    });
  }
  return { signatures, unsignedFields };
}

function docMdpPermission(pdf: PdfObjects, sig: Dict): number {
  for (const r of pdf.array(sig['/Reference'])) {
    const ref = pdf.dict(r);
    if (ref?.['/TransformMethod'] !== '/DocMDP') continue;
    const p = Number(pdf.resolve(pdf.dict(ref['/TransformParams'])?.['/P']));
    return [1, 2, 3].includes(p) ? p : 2;
  }
  return 2;
}

async function checkChain(
  sd: SignedData | null,
  cert: X509Certificate | null,
  trusted: string | null,
  when: Date | null,
  ctx: EngineContext & { cwd: string },
  n: number,
) {
  const certificates = (sd?.certificates ?? []).map((c) => ({
    subject: distinguishedName(c),
    issuer: c.issuer.split('\n').filter(Boolean).reverse().join(', '),
  }));
  if (!cert) return { trusted: false, problem: 'no signer certificate', trustedAtSigningTime: null, certificates };
  if (!trusted) return { trusted: false, problem: 'no trust anchors are configured (SIGNATURE_TRUST_DIR)', trustedAtSigningTime: null, certificates };
  const leaf = join(ctx.cwd, `signer-${n}.pem`);
  await writeFile(leaf, cert.toString());
  const others = (sd?.certificates ?? []).filter((c) => c !== cert);
  const untrusted = others.length ? join(ctx.cwd, `chain-${n}.pem`) : undefined;
  if (untrusted) await writeFile(untrusted, others.map((c) => c.toString()).join(''));
  const problem = await verifyChain(leaf, { trusted, untrusted }, undefined, ctx);
  const atSigning = when ? (problem ? (await verifyChain(leaf, { trusted, untrusted }, when, ctx)) === null : true) : null;
  return { trusted: problem === null, problem, trustedAtSigningTime: atSigning, certificates };
}

/**
 * What incremental updates after the signed revision (the file's first `signedEnd` bytes) changed: objects whose
 * cross-reference entry differs from the revision's, each counted by what it is in the final document. Containers
 * that only gained references (catalog, form, page annotation lists, page tree) are not counted themselves.
 */
async function changesAfter(
  input: string,
  signedEnd: number,
  json: QpdfJson,
  pdf: PdfObjects,
  finalXref: Map<string, string>,
  ctx: EngineContext & { cwd: string },
  limits: ReadLimits,
): Promise<{ kind: string; count: number }[]> {
  const prefix = join(ctx.cwd, `revision-${signedEnd}.pdf`);
  await copyFile(input, prefix);
  await truncate(prefix, signedEnd);
  let before: Map<string, string>;
  let old: PdfObjects;
  try {
    before = await xrefEntries(prefix, ctx);
    old = new PdfObjects((await readPdfJson(prefix, ctx, limits)).json);
  } catch {
    return [{ kind: 'other', count: 1 }];
  }
  const roles = rolesOf(pdf, json);
  const used = reachable(pdf);
  const counts = new Map<string, number>();
  const objects = json.qpdf?.[1] ?? {};
  for (const [key, entry] of finalXref) {
    if (entry === 'free' || before.get(key) === entry) continue;
    const ref = `${key.replace('/', ' ')} R`;
    const o = objects[`obj:${ref}`];
    // An object stream or cross-reference stream (qpdf does not list them), or an object nothing refers to.
    if (!o || !used.has(ref)) continue;
    const value = o.value ?? o.stream?.dict;
    const type = isDict(value) ? value['/Type'] : undefined;
    if (type === '/ObjStm' || type === '/XRef') continue;
    const kind = roles.get(ref) ?? containerChange(ref, value, old.dict(ref), pdf) ?? 'other';
    if (kind === 'none') continue;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([kind, count]) => ({ kind, count }));
}

/** The objects a reader can reach from the trailer. */
function reachable(pdf: PdfObjects): Set<string> {
  const seen = new Set<string>();
  const stack: unknown[] = [pdf.trailer];
  while (stack.length) {
    const v = stack.pop();
    if (isRef(v)) {
      if (seen.has(v)) continue;
      seen.add(v);
      stack.push(pdf.resolve(v, 31)); // one step: the object's own value or stream dictionary
    } else if (Array.isArray(v)) stack.push(...v);
    else if (isDict(v)) stack.push(...Object.values(v));
  }
  return seen;
}

const CONTAINER_KEYS: Record<string, Set<string>> = {
  '/Catalog': new Set(['/AcroForm', '/DSS', '/Extensions', '/Perms', '/Metadata', '/Names']),
  '/Page': new Set(['/Annots']),
  '/Pages': new Set(),
  acroform: new Set(['/Fields', '/SigFlags', '/DR', '/NeedAppearances', '/DA']),
};

/** Equal values; numbers within 0.001, as writers print reals differently (595.27563 read and written as 595.27566). */
function same(a: unknown, b: unknown, depth = 0): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 0.001;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && depth < 32 && a.every((x, i) => same(x, b[i], depth + 1));
  if (isDict(a) && isDict(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return depth < 32 && [...keys].every((k) => same(a[k], b[k], depth + 1));
  }
  return a === b;
}

/** 'none' for a container whose changed keys only hold references to other changed objects; null when it is something else. */
function containerChange(ref: string, value: unknown, old: Dict | null, pdf: PdfObjects): string | null {
  if (Array.isArray(value)) return 'none'; // an annotation or field list
  if (!isDict(value)) return null;
  const type = ref === String(pdf.trailer['/Root']) ? '/Catalog' : ref === pdf.catalog['/AcroForm'] ? 'acroform' : String(value['/Type'] ?? '');
  const allowed = CONTAINER_KEYS[type];
  if (!allowed) return null;
  if (!old) return 'other';
  const keys = new Set([...Object.keys(value), ...Object.keys(old)]);
  const changed = [...keys].filter((k) => !same(value[k], old[k]));
  return changed.every((k) => allowed.has(k)) ? 'none' : 'other';
}

/** What each object of the final document belongs to: annotations with their appearances, fields, signatures, the DSS, metadata. */
function rolesOf(pdf: PdfObjects, json: QpdfJson): Map<string, string> {
  const roles = new Map<string, string>();
  const walk = (v: unknown, kind: string, depth = 0) => {
    if (depth > 24) return;
    if (isRef(v)) {
      if (roles.has(v)) return;
      roles.set(v, kind);
      return walk(pdf.resolve(v), kind, depth + 1);
    }
    if (Array.isArray(v)) for (const x of v) walk(x, kind, depth + 1);
    else if (isDict(v)) for (const [k, x] of Object.entries(v)) if (k !== '/Parent' && k !== '/P') walk(x, kind, depth + 1);
  };
  const isSigField = (d: Dict | null) => {
    for (let n = d, i = 0; n && i < 32; n = pdf.dict(n['/Parent']), i++) if (n['/FT'] === '/Sig') return true;
    return false;
  };
  for (const { ref, value } of pdf.all()) {
    if (!isDict(value)) continue;
    if (value['/Type'] === '/Sig' || value['/Type'] === '/DocTimeStamp' || '/ByteRange' in value) roles.set(ref, 'signature');
  }
  for (const { ref, value } of pdf.all()) {
    if (!isDict(value) || roles.has(ref)) continue;
    const widget = value['/Subtype'] === '/Widget';
    const field = '/FT' in value || ('/T' in value && ('/Kids' in value || '/Parent' in value));
    if (!widget && !field && !(value['/Type'] === '/Annot' || ('/Subtype' in value && '/Rect' in value))) continue;
    const kind = widget || field ? (isSigField(value) ? 'signature' : 'form_fill') : 'annotation';
    roles.set(ref, kind);
    walk(value['/AP'], kind);
    walk(value['/V'], kind);
    if (!widget && !field) walk(value['/Popup'], kind);
  }
  walk(pdf.catalog['/DSS'], 'validation_data');
  walk(pdf.catalog['/Metadata'], 'metadata');
  walk(pdf.trailer['/Info'], 'metadata');
  void json;
  return roles;
}
