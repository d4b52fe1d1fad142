import forge from 'node-forge';
import { Signer } from '@signpdf/utils';
import { AppError } from '../../errors.js';

/**
 * Signing credentials (PKCS#12, or a certificate and a private key in PEM or DER) read with node-forge, and
 * the CMS SignedData (adbe.pkcs7.detached, SHA-256, signed attributes content-type, signing-time and
 * message-digest) that @signpdf/signpdf places in the signature. node-forge signs with RSA keys only.
 */

export interface Credentials {
  key: forge.pki.rsa.PrivateKey;
  certificate: forge.pki.Certificate;
  /** Every certificate that came with the credential (the signer's included), embedded for validators. */
  chain: forge.pki.Certificate[];
}

const bad = (message: string) => new AppError('invalid_input', message);

/** A PKCS#12 file and its passphrase; a passphrase file's trailing line break is not part of the passphrase. */
export function fromPkcs12(bytes: Buffer, passphraseFile: Buffer): Credentials {
  let asn1: forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(bytes.toString('binary')), false);
  } catch {
    throw bad('The PFX credential (pfx_credential_file / pfx_credential_id) is not a PKCS#12 (.pfx/.p12) file');
  }
  const raw = passphraseFile.toString('utf8').replace(/^\uFEFF/, '');
  const candidates = [...new Set([raw.replace(/\r?\n$/, ''), raw])];
  let p12: forge.pkcs12.Pkcs12Pfx | undefined;
  let failure = '';
  for (const pass of candidates) {
    try {
      p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, pass);
      break;
    } catch (err) {
      failure = String((err as Error).message ?? err);
    }
  }
  if (!p12) {
    if (/password|mac/i.test(failure)) throw bad('The passphrase (pfx_passphrase_file / pfx_passphrase_id) does not open the PFX credential: wrong passphrase');
    if (/OID|algorithm|unsupported/i.test(failure)) throw bad(`The PFX credential uses an encryption this server cannot read (${failure.slice(0, 120)}); re-export it with AES-256 or 3DES`);
    throw bad('The PFX credential (pfx_credential_file / pfx_credential_id) is not a readable PKCS#12 (.pfx/.p12) file');
  }
  const bags = (type: string) => p12!.getBags({ bagType: type })[type] ?? [];
  const keys = [...bags(forge.pki.oids.pkcs8ShroudedKeyBag), ...bags(forge.pki.oids.keyBag)].map((b) => b.key).filter(Boolean);
  const certs = bags(forge.pki.oids.certBag).map((b) => b.cert).filter((c): c is forge.pki.Certificate => !!c);
  if (!keys.length) throw bad('The PFX credential holds no private key that this server can use (RSA keys only)');
  return match(keys as forge.pki.rsa.PrivateKey[], certs, 'The PFX credential');
}

/** A certificate file (PEM, possibly with its chain, or DER) and an unencrypted RSA private key (PEM or DER, PKCS#1 or PKCS#8). */
export function fromPem(certFile: Buffer, keyFile: Buffer): Credentials {
  const certs = readCertificates(certFile);
  const text = keyFile.toString('latin1');
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    throw bad('The private key (private_key_file / private_key_id) is encrypted: send it unencrypted, or send a PFX credential with its passphrase');
  }
  let key: forge.pki.rsa.PrivateKey;
  try {
    key = /-----BEGIN/.test(text)
      ? forge.pki.privateKeyFromPem(text)
      : forge.pki.privateKeyFromAsn1(forge.asn1.fromDer(forge.util.createBuffer(keyFile.toString('binary'))));
  } catch {
    throw bad('The private key (private_key_file / private_key_id) is not a readable RSA private key (PEM or DER; RSA keys only)');
  }
  if (!key || !('n' in key)) throw bad('The private key (private_key_file / private_key_id) is not an RSA private key (RSA keys only)');
  return match([key], certs, 'The certificate');
}

function readCertificates(file: Buffer): forge.pki.Certificate[] {
  const text = file.toString('latin1');
  try {
    if (/-----BEGIN CERTIFICATE-----/.test(text)) {
      return forge.pem.decode(text).filter((m) => m.type === 'CERTIFICATE').map((m) => forge.pki.certificateFromAsn1(forge.asn1.fromDer(m.body)));
    }
    return [forge.pki.certificateFromAsn1(forge.asn1.fromDer(forge.util.createBuffer(file.toString('binary'))))];
  } catch (err) {
    const why = /not RSA/i.test(String((err as Error).message)) ? ' (only RSA certificates are supported)' : '';
    throw bad(`The certificate (certificate_file / certificate_id) is not a readable X.509 certificate in PEM or DER${why}`);
  }
}

function match(keys: forge.pki.rsa.PrivateKey[], certs: forge.pki.Certificate[], what: string): Credentials {
  for (const key of keys) {
    const certificate = certs.find((c) => {
      const pub = c.publicKey as forge.pki.rsa.PublicKey;
      return pub?.n?.compareTo(key.n) === 0 && pub.e.compareTo(key.e) === 0;
    });
    if (certificate) return { key, certificate, chain: [certificate, ...certs.filter((c) => c !== certificate)] };
  }
  if (!certs.length) throw bad(`${what} holds no certificate`);
  throw bad(`${what} does not match the private key: the key belongs to another certificate`);
}

/** The signer's common name, for the signature's /Name and its appearance. */
export const commonName = (c: forge.pki.Certificate) => String(c.subject.getField('CN')?.value ?? c.subject.attributes[0]?.value ?? 'Unknown signer');

/** The subject as an RFC 4514-like string, most significant last as certificates print it: `CN=..., O=..., C=...`. */
export const distinguishedName = (c: forge.pki.Certificate) =>
  c.subject.attributes
    .map((a) => `${a.shortName ?? a.name ?? a.type}=${a.value}`)
    .reverse()
    .join(', ');

/** Upper bound of the CMS blob's size, so the /Contents placeholder is large enough and not much larger. */
export function signatureSize(c: Credentials): number {
  const certs = c.chain.reduce((n, cert) => n + forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).length(), 0);
  return certs + c.key.n.bitLength() / 4 + 2048;
}

export class CmsSigner extends Signer {
  constructor(private readonly creds: Credentials) {
    super();
  }

  async sign(content: Buffer, signingTime?: Date): Promise<Buffer> {
    const p7 = forge.pkcs7.createSignedData();
    p7.content = forge.util.createBuffer(content.toString('binary'));
    for (const cert of this.creds.chain) p7.addCertificate(cert);
    p7.addSigner({
      key: this.creds.key,
      certificate: this.creds.certificate,
      digestAlgorithm: forge.pki.oids.sha256,
      // This order (content type, signing time, digest) is what EU validators (DSS) expect.
      authenticatedAttributes: [
        { type: forge.pki.oids.contentType, value: forge.pki.oids.data },
        { type: forge.pki.oids.signingTime, value: (signingTime ?? new Date()) as unknown as string },
        { type: forge.pki.oids.messageDigest },
      ],
    });
    p7.sign({ detached: true });
    return Buffer.from(forge.asn1.toDer(p7.toAsn1()).getBytes(), 'binary');
  }
}
