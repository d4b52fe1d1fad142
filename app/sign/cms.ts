import { constants, createHash, verify as cryptoVerify, type KeyObject, X509Certificate } from 'node:crypto';
import { type Der, integer, integerHex, octets, oid, parseDer, raw, time } from './der.js';

/**
 * CMS SignedData (RFC 5652) as PDF signatures carry it: the signer info, its signed and unsigned attributes, the
 * embedded certificates and revocation data, and an RFC 3161 timestamp token (itself a SignedData over a TSTInfo).
 * The signature is checked with Node's crypto (OpenSSL): RSA (PKCS#1 v1.5 and PSS), ECDSA, EdDSA and DSA.
 */

const OID = {
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  timeStampToken: '1.2.840.113549.1.9.16.2.14',
  revocationValues: '1.2.840.113549.1.9.16.2.24',
  adbeRevocation: '1.2.840.113583.1.1.8',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  ocspResponse: '1.3.6.1.5.5.7.16.2',
  rsaPss: '1.2.840.113549.1.1.10',
};

const DIGESTS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.8': 'sha3-256',
  '2.16.840.1.101.3.4.2.9': 'sha3-384',
  '2.16.840.1.101.3.4.2.10': 'sha3-512',
  '1.2.840.113549.2.5': 'md5',
  '1.3.36.3.2.1': 'ripemd160',
};
const EDDSA = new Set(['1.3.101.112', '1.3.101.113']);

export interface SignerInfo {
  /** Node's name of the digest algorithm (sha256...), or the OID when unknown. */
  digest: string;
  signedAttrs: Der | null;
  /** attribute OID -> its first value. */
  attrs: Map<string, Der>;
  unsignedAttrs: Map<string, Der>;
  signatureAlgorithm: Der;
  signature: Buffer;
  serialHex: string | null;
}

export interface SignedData {
  /** The encapsulated content when there is one (adbe.pkcs7.sha1, timestamp tokens). */
  content: Buffer | null;
  contentType: string;
  certificates: X509Certificate[];
  /** CRLs and OCSP responses in the SignedData's own revocation field. */
  crls: number;
  ocsps: number;
  signer: SignerInfo;
}

export class CmsError extends Error {}

const attributes = (set: Der | undefined) => {
  const m = new Map<string, Der>();
  for (const a of set?.children ?? []) if (a.children.length >= 2 && a.children[1].children[0]) m.set(oid(a.children[0]), a.children[1].children[0]);
  return m;
};

/** ContentInfo(SignedData), DER or BER. Trailing zero bytes (the rest of a PDF's /Contents) are ignored. */
export function parseSignedData(bytes: Buffer): SignedData {
  let info: Der;
  try {
    info = parseDer(bytes);
  } catch (err) {
    throw new CmsError(`not CMS: ${(err as Error).message}`);
  }
  const [type, wrapped] = info.children;
  if (type?.tag !== 0x06 || oid(type) !== OID.signedData || !wrapped?.children[0]) throw new CmsError('not CMS SignedData');
  const sd = wrapped.children[0].children;
  const encap = sd[2];
  const certs = sd.find((c) => c.tag === 0xa0);
  const revocations = sd.find((c) => c.tag === 0xa1);
  const signers = sd.at(-1);
  const si = signers?.children[0];
  if (!encap || !si || si.children.length < 5) throw new CmsError('no signer info');
  const certificates: X509Certificate[] = [];
  for (const c of certs?.children ?? []) {
    if (c.tag !== 0x30) continue; // attribute and other certificate formats
    try {
      certificates.push(new X509Certificate(raw(c)));
    } catch {
      /* a certificate Node cannot read is left out */
    }
  }
  let crls = 0;
  let ocsps = 0;
  for (const r of revocations?.children ?? []) {
    if (r.tag === 0x30) crls++;
    else if (r.tag === 0xa1 && r.children[0] && oid(r.children[0]) === OID.ocspResponse) ocsps++;
  }
  const parts = si.children;
  const sid = parts[1];
  const signedAttrs = parts.find((p) => p.tag === 0xa0) ?? null;
  const after = signedAttrs ? parts.indexOf(signedAttrs) + 1 : 3;
  const eContent = encap.children[1]?.children[0];
  return {
    content: eContent ? octets(eContent) : null,
    contentType: encap.children[0] ? oid(encap.children[0]) : '',
    certificates,
    crls,
    ocsps,
    signer: {
      digest: DIGESTS[oid(parts[2].children[0])] ?? oid(parts[2].children[0]),
      signedAttrs,
      attrs: attributes(signedAttrs ?? undefined),
      unsignedAttrs: attributes(parts.find((p) => p.tag === 0xa1)),
      signatureAlgorithm: parts[after],
      signature: octets(parts[after + 1]),
      serialHex: sid.tag === 0x30 && sid.children[1] ? integerHex(sid.children[1]) : null,
    },
  };
}

export const digestOf = (name: string, ...parts: Buffer[]) => {
  const h = createHash(name);
  for (const p of parts) h.update(p);
  return h.digest();
};

/** Whether `signature` over `data` verifies with the certificate's key, by the signer info's algorithms. */
function verifies(si: SignerInfo, data: Buffer, key: KeyObject): boolean {
  const alg = oid(si.signatureAlgorithm.children[0]);
  try {
    if (EDDSA.has(alg) || key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448') return cryptoVerify(null, data, key, si.signature);
    if (alg === OID.rsaPss) {
      const params = si.signatureAlgorithm.children[1];
      const hashAlg = params?.children.find((c) => c.tag === 0xa0)?.children[0]?.children[0];
      const salt = params?.children.find((c) => c.tag === 0xa2)?.children[0];
      return cryptoVerify(
        hashAlg ? (DIGESTS[oid(hashAlg)] ?? 'sha1') : 'sha1',
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: salt ? integer(salt) : 20 },
        si.signature,
      );
    }
    return cryptoVerify(si.digest, data, key, si.signature);
  } catch {
    return false;
  }
}

export interface CmsCheck {
  /** The signed attributes' message digest equals the digest of the content (true when there are none). */
  digestMatches: boolean;
  signatureVerifies: boolean;
  /** The signer's certificate: the one whose key verifies, else the one the signer info names. */
  certificate: X509Certificate | null;
}

/**
 * Checks a SignerInfo against the signed data: its bytes (`content`), or their digest already computed by the
 * signer's digest algorithm (`digest`: a PDF's signed ranges are streamed, not held). `also` must hold too for
 * the digest to match (adbe.pkcs7.sha1: the carried digest is the ranges' one).
 */
export function checkSigner(sd: SignedData, data: { content?: Buffer; digest?: Buffer; also?: boolean }): CmsCheck {
  const si = sd.signer;
  let digestMatches = false;
  let signed = data.content ?? Buffer.alloc(0);
  if (si.signedAttrs) {
    const md = si.attrs.get(OID.messageDigest);
    try {
      const digest = data.digest ?? digestOf(si.digest, data.content ?? Buffer.alloc(0));
      digestMatches = !!md && digest.equals(octets(md));
    } catch {
      digestMatches = false; // an unknown digest algorithm
    }
    // The signature is over the attributes as a SET (RFC 5652 5.4), not under their [0] tag.
    signed = Buffer.concat([Buffer.from([0x31]), raw(si.signedAttrs).subarray(1)]);
  } else digestMatches = !!data.content; // without attributes the signature is over the content itself
  if (data.also === false) digestMatches = false;
  const named = sd.certificates.filter((c) => si.serialHex && c.serialNumber.toUpperCase().replace(/^0+(?=.)/, '') === si.serialHex);
  for (const c of [...named, ...sd.certificates.filter((c) => !named.includes(c))]) {
    if (verifies(si, signed, c.publicKey)) return { digestMatches, signatureVerifies: true, certificate: c };
  }
  return { digestMatches, signatureVerifies: false, certificate: named[0] ?? sd.certificates[0] ?? null };
}

export const signingTimeOf = (sd: SignedData): Date | null => {
  const t = sd.signer.attrs.get(OID.signingTime);
  return t ? time(t) : null;
};

export interface Timestamp {
  time: Date | null;
  /** The digest the authority signed matches the data it stamps. */
  imprintMatches: boolean;
  /** The token's own signature verifies (digest and signature). */
  signatureVerifies: boolean;
  authority: X509Certificate | null;
}

/** An RFC 3161 token: its TSTInfo's time and message imprint, checked against `stamped` (the bytes it covers). */
export async function readTimestamp(token: Buffer, stamped: (digest: string) => Promise<Buffer> | Buffer): Promise<Timestamp> {
  const sd = parseSignedData(token);
  if (sd.contentType !== OID.tstInfo || !sd.content) throw new CmsError('not a timestamp token');
  const tst = parseDer(sd.content).children;
  const imprint = tst[2];
  const digest = DIGESTS[oid(imprint.children[0].children[0])] ?? '';
  let imprintMatches = false;
  try {
    imprintMatches = !!digest && (await stamped(digest)).equals(octets(imprint.children[1]));
  } catch {
    imprintMatches = false;
  }
  const check = checkSigner(sd, { content: sd.content });
  return { time: time(tst[4]), imprintMatches, signatureVerifies: check.digestMatches && check.signatureVerifies, authority: check.certificate };
}

/** The signature timestamp (unsigned attribute) of a signer, checked against its signature value, or null. */
export async function signatureTimestamp(sd: SignedData): Promise<Timestamp | null> {
  const token = sd.signer.unsignedAttrs.get(OID.timeStampToken);
  if (!token) return null;
  try {
    return await readTimestamp(raw(token), (d) => digestOf(d, sd.signer.signature));
  } catch {
    return { time: null, imprintMatches: false, signatureVerifies: false, authority: null };
  }
}

/** CRLs and OCSP responses inside the CMS: its revocation field, Adobe's signed archival attribute, CAdES values. */
export function embeddedRevocation(sd: SignedData): { crls: number; ocsps: number } {
  let { crls, ocsps } = sd;
  for (const attr of [sd.signer.attrs.get(OID.adbeRevocation), sd.signer.unsignedAttrs.get(OID.revocationValues)]) {
    for (const part of attr?.children ?? []) {
      const n = part.children[0]?.children.length ?? 0;
      if (part.tag === 0xa0) crls += n;
      else if (part.tag === 0xa1) ocsps += n;
    }
  }
  return { crls, ocsps };
}

export const isTimestampToken = (sd: SignedData) => sd.contentType === OID.tstInfo;
