import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { openPdf } from '../document/index.js';
import { AppError, passwordProtected } from '../errors.js';
import { json, looseBool, looseNumber, output } from '../requests/fields.js';
import { type InputFile, operation } from '../requests/operation.js';
import { type Credentials, commonName, credentialsFromFiles, distinguishedName, logoPng, signPdf } from '../sign/index.js';

const str = z.preprocess((v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v), z.string().max(500));
const bool = z.preprocess(looseBool, z.boolean());
const coord = z.preprocess(looseNumber, z.number().finite());
const point = z.object({ x: coord, y: coord });

/** Spec 4.6; numbers and booleans may arrive as strings (CLIENTS.md). */
const configuration = z.object({
  type: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.enum(['new', 'existing'])),
  name: str.optional(),
  logo_opacity: z.preprocess(looseNumber, z.number().min(0).max(1)).optional(),
  location: z
    .object({
      bottom_left: point,
      top_right: point,
      page: z.preprocess(looseNumber, z.number().int().min(1)),
    })
    .optional(),
  display: z
    .object({
      include_distinguished_name: bool.optional(),
      include_datetime: bool.optional(),
      contact: str.optional(),
      location: str.optional(),
      name: str.optional(),
      reason: str.optional(),
    })
    .optional(),
});
export type SignatureConfiguration = z.infer<typeof configuration>;

/** Clients match the spec's sentence; the field's name is added so a person knows which one. */
const namedJson = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    const s = Array.isArray(v) && v.length === 1 ? v[0] : v;
    if (typeof s === 'string') {
      try {
        JSON.parse(s);
      } catch {
        throw new AppError('bad_json', 'JSON data provided is not properly formatted: signature_configuration must be a JSON object');
      }
    }
    return v;
  }, json(schema));

/** The appearance's lines, top to bottom, from the display options (datetime shown unless turned off). */
export function appearanceLines(cfg: SignatureConfiguration, creds: Credentials, time: Date): string[] {
  const d = cfg.display ?? {};
  const lines = [`Digitally signed by ${d.name || commonName(creds.certificate)}`];
  if (d.include_distinguished_name) lines.push(`DN: ${distinguishedName(creds.certificate)}`);
  if (d.include_datetime ?? true) lines.push(`Date: ${signatureDate(time)}`);
  if (d.reason) lines.push(`Reason: ${d.reason}`);
  if (d.location) lines.push(`Location: ${d.location}`);
  if (d.contact) lines.push(`Contact: ${d.contact}`);
  return lines;
}

/** Acrobat's style, in UTC: `2024.05.06 07:08:09 +00'00'`. */
const signatureDate = (t: Date) => `${t.toISOString().slice(0, 19).replace(/-/g, '.').replace('T', ' ')} +00'00'`;

const one = (files: InputFile[] | undefined) => files?.[0];

export default operation({
  path: '/signed-pdf',
  tag: 'Signing, redaction, watermark',
  summary: 'Digitally sign a PDF',
  description:
    'Adds a PDF signature (adbe.pkcs7.detached CMS, SHA-256) in a new signature field, as an incremental update: the original bytes are kept, so earlier signatures stay valid. Credentials: a PKCS#12 file and a passphrase file (the passphrase is its first line; a BOM and the line end are not part of it), or a certificate (PEM with optional chain, or DER) and an unencrypted private key (PEM or DER); RSA, RSA-PSS, ECDSA or Ed25519 keys (signed by OpenSSL); a credential or passphrase file over 1 MB is refused (400). Without signature_configuration.location the signature is invisible; with it, the box (PDF units of the unrotated page, origin bottom-left) shows "Digitally signed by <display.name or the certificate CN>", the DN if display.include_distinguished_name, the date unless display.include_datetime is false, and the reason, location and contact given; a logo (visible signatures only) is drawn behind the text at logo_opacity (default 0.5). signature_configuration.name names the field (default Signature1, 2, ...). With signature_configuration.type existing, name names an empty signature field of the PDF, which is signed in place: the box and page of its widget hold the appearance (none for a zero-size widget) and location is ignored; an unknown name, a field that is not a signature field, or one already signed is refused (400). Encrypted PDFs (401) and PDFs certified with "no changes allowed" (400) are refused.',
  inputs: {
    file: { idField: 'id', kind: 'pdf', description: 'The PDF to sign' },
    pfx_credential_file: { idField: 'pfx_credential_id', kind: 'any', required: false, description: 'PKCS#12 credential (.pfx/.p12)' },
    pfx_passphrase_file: { idField: 'pfx_passphrase_id', kind: 'any', required: false, description: 'Text file holding the PKCS#12 passphrase' },
    certificate_file: {
      idField: 'certificate_id',
      kind: 'any',
      required: false,
      description: 'Signer certificate (.pem/.der), optionally followed by its chain (PEM)',
    },
    private_key_file: { idField: 'private_key_id', kind: 'any', required: false, description: 'Unencrypted private key (.pem/.der; RSA, ECDSA, Ed25519)' },
    logo_file: { idField: 'logo_id', kind: 'any', required: false, description: 'Logo shown in a visible signature (JPG, PNG, TIFF or BMP)' },
  },
  fields: {
    signature_configuration: namedJson(configuration),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf', 'openssl'],
  defaultName: (name) => `${name ?? 'service'}_service_signed_pdf`,
  run: async ({ fields, inputs, input, dir, signal, timeoutMs, outputName, limits }) => {
    const cfg = fields.signature_configuration;
    const existing = cfg.type === 'existing';
    if (existing && !cfg.name?.trim())
      throw new AppError(
        'missing_input',
        'signature_configuration.name is required when signature_configuration.type is existing: it names the empty signature field to sign',
      );
    const info = await openPdf(input.path, { cwd: dir, signal, timeoutMs });
    // Signing an encrypted file would mean encrypting the new revision with its key: decrypt it first.
    if (info.encrypt.encrypted) throw passwordProtected();
    const ectx = { cwd: dir, signal, timeoutMs };
    const creds = await credentialsFromFiles(inputs, ectx);
    const loc = cfg.location;
    if (loc) {
      if (loc.page > info.pageCount)
        throw new AppError(
          'out_of_range',
          `${loc.page} is not within the acceptable range for signature_configuration.location.page: the PDF has ${info.pageCount} page${info.pageCount > 1 ? 's' : ''}`,
        );
      if (loc.top_right.x <= loc.bottom_left.x || loc.top_right.y <= loc.bottom_left.y) {
        throw new AppError('out_of_range', 'signature_configuration.location is not a box: top_right must be above and to the right of bottom_left');
      }
    }
    const logo = one(inputs.logo_file);
    const time = new Date();
    const signed = await signPdf(
      await readFile(input.path),
      creds,
      {
        fieldName: cfg.name?.trim() || undefined,
        existing,
        // An existing field's widget gives the box; location is only for a new field.
        placement: existing || !loc ? undefined : { page: loc.page, rect: [loc.bottom_left.x, loc.bottom_left.y, loc.top_right.x, loc.top_right.y] },
        lines: appearanceLines(cfg, creds, time),
        logo: logo && (loc || existing) ? await logoPng(logo.path, limits.maxImagePixels) : undefined,
        logoOpacity: cfg.logo_opacity ?? 0.5,
        name: cfg.display?.name || commonName(creds.certificate),
        reason: cfg.display?.reason,
        location: cfg.display?.location,
        contact: cfg.display?.contact,
        time,
      },
      ectx,
    );
    const path = join(dir, 'signed.pdf');
    await writeFile(path, signed);
    return { files: [{ path, name: `${outputName}.pdf` }] };
  },
});
