import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import type { EngineContext } from '../../engines/context.js';
import { checkBmpPixels, decodeBmp, ImageTooLargeError } from '../../engines/image-pdf.js';
import { AppError, limitExceeded } from '../errors.js';
import { type Credentials, fromPem, fromPkcs12 } from './sign-credentials.js';

/** A file of the request, as the signing inputs need it. */
export interface CredentialFile {
  path: string;
  size: number;
}

const one = (files: CredentialFile[] | undefined) => files?.[0];

/** A certificate chain in PEM is some 2 KB per certificate: a larger file is no credential, and is not read whole. */
const MAX_CREDENTIAL_BYTES = 1024 * 1024;

/**
 * The signer's credentials from the request's files: a PKCS#12 file with its passphrase file, or a certificate with
 * its private key; one style, both parts, each under MAX_CREDENTIAL_BYTES.
 */
export async function credentialsFromFiles(inputs: Record<string, CredentialFile[] | undefined>, ctx: EngineContext): Promise<Credentials> {
  const pfx = one(inputs.pfx_credential_file);
  const pass = one(inputs.pfx_passphrase_file);
  const cert = one(inputs.certificate_file);
  const key = one(inputs.private_key_file);
  for (const [f, base] of [
    [pfx, 'pfx_credential'],
    [pass, 'pfx_passphrase'],
    [cert, 'certificate'],
    [key, 'private_key'],
  ] as const) {
    if (f && f.size > MAX_CREDENTIAL_BYTES) throw new AppError('out_of_range', `${base}_file (or ${base}_id) is larger than 1 MB, which no credential file is`);
  }
  if ((pfx || pass) && (cert || key)) {
    throw new AppError(
      'invalid_request',
      'Send one style of credentials: pfx_credential_file/_id with pfx_passphrase_file/_id, or certificate_file/_id with private_key_file/_id, not both',
    );
  }
  if (pfx || pass) {
    if (!pfx) throw new AppError('missing_input', 'pfx_credential_file (or pfx_credential_id) is required with pfx_passphrase_file');
    if (!pass) throw new AppError('missing_input', 'pfx_passphrase_file (or pfx_passphrase_id) is required with pfx_credential_file');
    return fromPkcs12(pfx.path, await readFile(pass.path), ctx);
  }
  if (cert || key) {
    if (!cert) throw new AppError('missing_input', 'certificate_file (or certificate_id) is required with private_key_file');
    if (!key) throw new AppError('missing_input', 'private_key_file (or private_key_id) is required with certificate_file');
    return fromPem(await readFile(cert.path), await readFile(key.path));
  }
  throw new AppError(
    'missing_input',
    'Signing credentials are required: pfx_credential_file (or pfx_credential_id) with pfx_passphrase_file (or pfx_passphrase_id), or certificate_file (or certificate_id) with private_key_file (or private_key_id)',
  );
}

const LOGO_FORMATS = ['jpeg', 'png', 'tiff', 'gif', 'webp'];

/**
 * JPG, PNG, TIFF or BMP to PNG (what the PDF embeds), at most 1000 px a side: a logo needs no more. An image
 * declaring more than `maxPixels` (MAX_IMAGE_PIXELS) is refused on its header, before it is decoded.
 */
export async function logoPng(path: string, maxPixels: number): Promise<Buffer> {
  try {
    const bytes = await readFile(path);
    const bmp = bytes.subarray(0, 2).toString('latin1') === 'BM' ? decodeBmp(checkBmpPixels(bytes, maxPixels)) : undefined;
    const img =
      bmp && typeof bmp !== 'string'
        ? sharp(bmp.raw, { raw: { width: bmp.width, height: bmp.height, channels: bmp.channels } })
        : sharp(bytes, { limitInputPixels: false }).rotate();
    if (!bmp) {
      const meta = await img.metadata();
      // sharp also reads SVG (an XML parser and renderer) and other formats the logo does not take.
      if (!LOGO_FORMATS.includes(meta.format ?? '')) throw new Error('not a logo format');
      // sharp's own limit (on the header too) would answer as an unreadable image: ours names the setting.
      const [w, h] = [meta.width ?? 0, meta.pageHeight ?? meta.height ?? 0];
      if (w * h > maxPixels) throw new ImageTooLargeError(w, h, maxPixels);
    }
    return await img.resize(1000, 1000, { fit: 'inside', withoutEnlargement: true }).png().toBuffer();
  } catch (err) {
    if (err instanceof ImageTooLargeError) throw limitExceeded(`The logo (${err.width}x${err.height} pixels)`, 'MAX_IMAGE_PIXELS', err.limit);
    throw new AppError('invalid_input', 'The logo (logo_file / logo_id) is not a readable JPG, PNG, TIFF or BMP image');
  }
}
