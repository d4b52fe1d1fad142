import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Signer } from '@signpdf/utils';
import type { EngineContext } from '../../engines/context.js';
import { cmsSign, PassphraseError, pkcs12ToPem } from '../../engines/openssl.js';
import { AppError } from '../errors.js';

/**
 * Signing credentials: a PKCS#12 (opened by OpenSSL, which reads every encryption exporters use) or a certificate
 * with a private key in PEM or DER, held as Node crypto objects; any key type OpenSSL signs with (RSA, RSA-PSS,
 * ECDSA, Ed25519). The CMS SignedData (adbe.pkcs7.detached, SHA-256, signed attributes content-type,
 * signing-time and message-digest) that @signpdf/signpdf places in the signature is made by `openssl cms`.
 */

export interface Credentials {
  key: KeyObject;
  certificate: X509Certificate;
  /** Every other certificate that came with the credential, embedded for validators. */
  chain: X509Certificate[];
}

const bad = (message: string) => new AppError('invalid_input', message);

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
const blocks = (text: string, type: RegExp) => [...text.matchAll(PEM_BLOCK)].filter((m) => type.test(m[1])).map((m) => m[0]);

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const MAX_PASSPHRASE_BYTES = 1023;

/**
 * The passphrase a client's passphrase file holds: its first line, without a BOM or line end (a Windows line end
 * included), as bytes. OpenSSL takes passphrases as C strings, so a NUL byte cannot be part of one: before, a file
 * starting with NUL reached OpenSSL as no passphrase at all and was reported as a broken PFX.
 */
export function passphraseLine(file: Buffer): Buffer {
  const text = file.subarray(0, 3).equals(BOM) ? file.subarray(3) : file;
  const end = text.indexOf(0x0a);
  const line = end < 0 ? text : text.subarray(0, end);
  const passphrase = line.at(-1) === 0x0d ? line.subarray(0, -1) : line;
  if (passphrase.includes(0))
    throw bad('The passphrase (pfx_passphrase_file / pfx_passphrase_id) holds a NUL byte: send the passphrase as text, on the first line of the file');
  // OpenSSL reads a passphrase file's line into a 1,024-byte buffer: a longer one would silently be cut.
  if (passphrase.length > MAX_PASSPHRASE_BYTES)
    throw bad(`The passphrase (pfx_passphrase_file / pfx_passphrase_id) is longer than ${MAX_PASSPHRASE_BYTES} bytes, the most OpenSSL reads`);
  return passphrase;
}

/** A PKCS#12 file and the contents of its passphrase file (see passphraseLine). */
export async function fromPkcs12(p12: string, passphraseFile: Buffer, ctx: EngineContext): Promise<Credentials> {
  // The line end written after the passphrase lets an empty one through (OpenSSL refuses a file without a line).
  const passFile = join(ctx.cwd, 'passphrase.txt');
  await writeFile(passFile, Buffer.concat([passphraseLine(passphraseFile), Buffer.from('\n')]), { mode: 0o600 });
  let pem: string;
  try {
    pem = await pkcs12ToPem(p12, passFile, ctx);
  } catch (err) {
    if (err instanceof PassphraseError)
      throw bad('The passphrase (pfx_passphrase_file / pfx_passphrase_id) does not open the PFX credential: wrong passphrase');
    if (
      err instanceof AppError ||
      (err as { details?: { timedOut?: boolean; aborted?: boolean } }).details?.timedOut ||
      (err as { details?: { aborted?: boolean } }).details?.aborted
    )
      throw err;
    throw bad('The PFX credential (pfx_credential_file / pfx_credential_id) is not a readable PKCS#12 (.pfx/.p12) file');
  }
  const keys = blocks(pem, /PRIVATE KEY$/).map((k) => createPrivateKey(k));
  if (!keys.length) throw bad('The PFX credential holds no private key');
  return match(
    keys,
    blocks(pem, /^CERTIFICATE$/).map((c) => new X509Certificate(c)),
    'The PFX credential',
  );
}

/** A certificate file (PEM, possibly with its chain, or DER) and an unencrypted private key (PEM or DER; PKCS#1, PKCS#8 or SEC1). */
export function fromPem(certFile: Buffer, keyFile: Buffer): Credentials {
  const text = keyFile.toString('latin1');
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(text)) {
    throw bad('The private key (private_key_file / private_key_id) is encrypted: send it unencrypted, or send a PFX credential with its passphrase');
  }
  let key: KeyObject | undefined;
  for (const type of /-----BEGIN/.test(text) ? [undefined] : (['pkcs8', 'pkcs1', 'sec1'] as const)) {
    try {
      key = type ? createPrivateKey({ key: keyFile, format: 'der', type }) : createPrivateKey(text);
      break;
    } catch {
      /* the next DER layout */
    }
  }
  if (!key) throw bad('The private key (private_key_file / private_key_id) is not a readable private key (PEM or DER)');
  return match([key], readCertificates(certFile), 'The certificate');
}

function readCertificates(file: Buffer): X509Certificate[] {
  try {
    const pems = blocks(file.toString('latin1'), /^CERTIFICATE$/);
    return pems.length ? pems.map((c) => new X509Certificate(c)) : [new X509Certificate(file)];
  } catch {
    throw bad('The certificate (certificate_file / certificate_id) is not a readable X.509 certificate in PEM or DER');
  }
}

function match(keys: KeyObject[], certs: X509Certificate[], what: string): Credentials {
  if (!certs.length) throw bad(`${what} holds no certificate`);
  for (const key of keys) {
    const certificate = certs.find((c) => c.checkPrivateKey(key));
    if (certificate) return { key, certificate, chain: certs.filter((c) => c !== certificate) };
  }
  throw bad(`${what} does not match the private key: the key belongs to another certificate`);
}

/** The subject's attributes in the certificate's order, most significant first (`C=.., O=.., CN=..`). */
const subjectOf = (c: X509Certificate) => c.subject.split('\n').filter(Boolean);

/** The signer's common name, for the signature's /Name and its appearance. */
export const commonName = (c: X509Certificate) => {
  const parts = subjectOf(c);
  return (parts.find((p) => p.startsWith('CN=')) ?? parts[0] ?? 'CN=Unknown signer').replace(/^[^=]*=/, '');
};

/** The subject as certificates print it, most significant last: `CN=..., O=..., C=...`. */
export const distinguishedName = (c: X509Certificate) => subjectOf(c).reverse().join(', ');

/** Upper bound of the CMS blob's size, so the /Contents placeholder is large enough and not much larger. */
export function signatureSize(c: Credentials): number {
  const certs = [c.certificate, ...c.chain].reduce((n, cert) => n + cert.raw.length, 0);
  return certs + 1024 + 2048;
}

export class CmsSigner extends Signer {
  constructor(
    private readonly creds: Credentials,
    private readonly ctx: EngineContext,
  ) {
    super();
  }

  async sign(content: Buffer): Promise<Buffer> {
    const file = (name: string) => join(this.ctx.cwd, name);
    const chain = this.creds.chain.length ? file('chain.pem') : undefined;
    await Promise.all([
      writeFile(file('content.bin'), content),
      writeFile(file('signer.pem'), this.creds.certificate.toString()),
      writeFile(file('signer.key'), this.creds.key.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 }),
      chain ? writeFile(chain, this.creds.chain.map((c) => c.toString()).join('\n')) : undefined,
    ]);
    return cmsSign({ content: file('content.bin'), signer: file('signer.pem'), key: file('signer.key'), chain }, this.ctx);
  }
}
