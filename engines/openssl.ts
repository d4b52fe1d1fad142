import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from './context.js';
import { EngineError } from './errors.js';
import { expectOutput, run } from './run.js';

/**
 * OpenSSL for signing: it reads every PKCS#12 a user may hold (AES, 3DES, and with its legacy provider the
 * RC2-40 of older exports) and signs CMS with any key type (RSA, RSA-PSS, ECDSA, Ed25519). Passphrases and keys
 * go through files in the job dir, never the command line.
 */

export class PassphraseError extends EngineError {
  constructor(stderr: string) {
    super('openssl', 'wrong passphrase', { stderr });
  }
}

export function pkcs12Args(p12: string, passFile: string, legacy: boolean): string[] {
  return ['pkcs12', ...(legacy ? ['-legacy'] : []), '-in', p12, '-passin', `file:${passFile}`, '-nodes'];
}

/** The PKCS#12's keys and certificates as PEM (`-----BEGIN PRIVATE KEY-----` and `CERTIFICATE` blocks). */
export async function pkcs12ToPem(p12: string, passFile: string, ctx: EngineContext): Promise<string> {
  try {
    return (await run('openssl', pkcs12Args(p12, passFile, false), ctx)).stdout;
  } catch (err) {
    const stderr = err instanceof EngineError ? (err.details.stderr ?? '') : '';
    if (/mac verify|invalid password/i.test(stderr)) throw new PassphraseError(stderr);
    // OpenSSL 3 reads RC2 and single DES only through its legacy provider.
    if (!/unsupported|RC2|legacy/i.test(stderr)) throw err;
  }
  try {
    return (await run('openssl', pkcs12Args(p12, passFile, true), ctx)).stdout;
  } catch (err) {
    const stderr = err instanceof EngineError ? (err.details.stderr ?? '') : '';
    if (/mac verify|invalid password/i.test(stderr)) throw new PassphraseError(stderr);
    throw err;
  }
}

export interface CmsSignFiles {
  content: string;
  signer: string;
  key: string;
  /** Further certificates to embed (the chain), or none. */
  chain?: string;
}

/** Detached CMS SignedData, SHA-256, signed attributes content-type, signing-time and message-digest. */
export function cmsSignArgs(f: CmsSignFiles, output: string): string[] {
  return [
    'cms',
    '-sign',
    '-binary',
    '-in',
    f.content,
    '-signer',
    f.signer,
    '-inkey',
    f.key,
    ...(f.chain ? ['-certfile', f.chain] : []),
    '-md',
    'sha256',
    '-nosmimecap',
    '-outform',
    'DER',
    '-out',
    output,
  ];
}

export async function cmsSign(f: CmsSignFiles, ctx: EngineContext): Promise<Buffer> {
  const output = join(ctx.cwd, 'signature.der');
  await run('openssl', cmsSignArgs(f, output), ctx);
  await expectOutput('openssl', output);
  return readFile(output);
}

/**
 * `openssl verify` of a certificate against trust anchors (`trusted`, PEM), with intermediates from `untrusted`,
 * optionally at another time than now. No purpose is checked: document signing certificates carry varied key usages.
 * Returns null when the chain verifies, else OpenSSL's reason ("certificate has expired", "unable to get local
 * issuer certificate"...).
 */
export async function verifyChain(
  cert: string,
  files: { trusted: string; untrusted?: string },
  at: Date | undefined,
  ctx: EngineContext,
): Promise<string | null> {
  const args = ['verify', '-CAfile', files.trusted, ...(files.untrusted ? ['-untrusted', files.untrusted] : [])];
  if (at) args.push('-attime', String(Math.floor(at.getTime() / 1000)));
  // openssl verify exits 2 when the chain does not verify, saying why on stderr.
  const r = await run('openssl', [...args, '--', cert], { ...ctx, okExitCodes: [2] });
  if (r.exitCode === 0) return null;
  return /error \d+ at \d+ depth lookup: ?(.*)/.exec(r.stderr)?.[1]?.trim() ?? 'the chain does not verify';
}
