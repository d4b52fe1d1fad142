import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import { AppError, TEXT, invalidInput, limitExceeded, passwordProtected } from '../errors.js';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { PasswordError, ReadLimitError, encryptionOf } from '../../engines/qpdf.js';
import { inspectPdf, writePdf, type Inspection, type Permissions, type Security } from '../../engines/qpdf-edit.js';

/** What a client sees for engine failures while reading an input: 401 for passwords, 400 for broken files, 422 for limits. */
export function inputError(err: unknown, passwordGiven = false): unknown {
  if (err instanceof PasswordError) return passwordGiven ? wrongOpenPassword() : passwordProtected();
  if (err instanceof ReadLimitError) return readLimitExceeded(err);
  if (err instanceof EngineError && !err.details.aborted && !err.details.timedOut && !err.details.missing) return invalidInput();
  return err;
}

/** The 422 naming the setting behind a read the qpdf engine cut (MAX_STREAM_MB, MAX_OBJECTS). */
export function readLimitExceeded(err: ReadLimitError): AppError {
  return err.kind === 'objects'
    ? limitExceeded('The number of objects in the PDF', 'MAX_OBJECTS', err.max)
    : limitExceeded('The data read from the PDF (a decoded stream, or the listing of its objects)', 'MAX_STREAM_MB', err.max / 1024 / 1024);
}

/** Clients match "password-protected" for a wrong open password (CLIENTS.md). */
export const wrongOpenPassword = () =>
  new AppError('password', `${TEXT.password} The current_open_password given does not open this password-protected file.`);

/** Clients match "permissions password" for a missing or wrong one. */
export const wrongPermissionsPassword = (sent: boolean) =>
  new AppError(
    'out_of_range',
    sent
      ? 'The current_permissions_password given is not the permissions password of this PDF.'
      : 'This PDF has a permissions password: send it as current_permissions_password to change its security.',
  );

/** Opens an input that takes no password: its page count, or the client error (401 / 400). */
export async function openPdf(path: string, ctx: EngineContext): Promise<Inspection> {
  try {
    return await inspectPdf(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
}

export interface Unlocked extends Inspection {
  /** The password to read the file with (the permissions password when it matched, else the open one). */
  password?: string;
  /** The file needs a password to open. */
  hasOpenPassword: boolean;
  /** Encrypted with at least one permission withheld. */
  restricted: boolean;
  /** Full authority over the file: unencrypted, or the permissions (owner) password was given and matched. */
  ownerOk: boolean;
}

/**
 * Opens a possibly encrypted input with the passwords the client sent. A missing open password is the
 * spec's 401; a wrong one is 401 too, with the text clients match. An open password sent for a file that
 * has none is ignored. The permissions password is checked against the owner password, not trusted.
 */
export async function unlockPdf(path: string, ctx: EngineContext, pw: { open?: string; perms?: string }): Promise<Unlocked> {
  let state: 'none' | 'open' | 'needs-password';
  try {
    state = await encryptionOf(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  const opener = state === 'needs-password' ? (pw.open ?? pw.perms) : undefined;
  if (state === 'needs-password' && opener === undefined) throw passwordProtected();
  let info: Inspection;
  try {
    info = await inspectPdf(path, ctx, { password: opener });
  } catch (err) {
    if (err instanceof PasswordError && pw.open === undefined) throw wrongPermissionsPassword(true);
    throw inputError(err, true);
  }
  const e = info.encrypt;
  let ownerOk = !e.encrypted || e.ownerpasswordmatched;
  if (!ownerOk && pw.perms !== undefined && pw.perms !== opener) {
    ownerOk = await inspectPdf(path, ctx, { password: pw.perms }).then(
      (r) => r.encrypt.ownerpasswordmatched,
      (err) => {
        if (err instanceof PasswordError) return false;
        throw inputError(err);
      },
    );
  }
  return {
    ...info,
    password: ownerOk && pw.perms !== undefined && e.encrypted ? pw.perms : opener,
    hasOpenPassword: state === 'needs-password',
    restricted: e.encrypted && Object.values(e.capabilities).some((allowed) => !allowed),
    ownerOk,
  };
}

/** unlockPdf for a change to its security: a restricted file needs its permissions password, given and right. */
export async function unlockToChange(path: string, ctx: EngineContext, pw: { open?: string; perms?: string }): Promise<Unlocked> {
  const pdf = await unlockPdf(path, ctx, pw);
  if (pdf.restricted && !pdf.ownerOk) throw wrongPermissionsPassword(pw.perms !== undefined);
  return pdf;
}

/** The permissions a file grants now (all, when it is not encrypted). */
export function permissionsOf(info: Inspection): Permissions {
  const c = info.encrypt.capabilities;
  if (!info.encrypt.encrypted) return { print: 'full', extract: true, accessibility: true, assemble: true, form: true, annotate: true, modifyOther: true };
  return {
    print: c.printhigh ? 'full' : c.printlow ? 'low' : 'none',
    extract: c.extract,
    accessibility: c.accessibility,
    assemble: c.modifyassembly,
    form: c.modifyforms,
    annotate: c.modifyannotations,
    modifyOther: c.modifyother,
  };
}

/**
 * Writes `input` with new AES-256 security. qpdf does it, except when accessibility must be withheld:
 * qpdf 11 always sets that bit for AES-256 (PDF 2.0 deprecates it), so then qpdf only decrypts and
 * @cantoo/pdf-lib writes the R6 handler with bit 10 cleared.
 */
export async function secureTo(input: string, output: string, readPassword: string | undefined, security: Security, ctx: EngineContext): Promise<void> {
  if (security.permissions.accessibility) {
    await writePdf(input, output, { password: readPassword, encrypt: security }, ctx);
    return;
  }
  const plain = join(ctx.cwd, 'plain.pdf');
  await writePdf(input, plain, { password: readPassword, decrypt: true }, ctx);
  const doc = await PDFDocument.load(await readFile(plain), { updateMetadata: false });
  const p = security.permissions;
  doc.encrypt({
    userPassword: security.user,
    ownerPassword: security.owner,
    algorithm: 'AES-256',
    permissions: {
      printing: p.print === 'full' ? 'highResolution' : p.print === 'low' ? 'lowResolution' : false,
      modifying: p.modifyOther,
      copying: p.extract,
      annotating: p.annotate,
      fillingForms: p.form,
      contentAccessibility: p.accessibility,
      documentAssembly: p.assemble,
    },
  });
  await writeFile(output, await doc.save());
}

/** Readers accept a PDF header anywhere in the first 1024 bytes (junk before it is common in the wild). */
export const isPdfHeader = (head: Buffer) => head.subarray(0, 1024).includes('%PDF-');
