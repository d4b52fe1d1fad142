import { randomUUID } from 'node:crypto';
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PDFDocument } from '@cantoo/pdf-lib';
import type { EngineContext } from '../../engines/context.js';
import { EngineError } from '../../engines/errors.js';
import { type Encryption, encryptionOf, PasswordError, ReadLimitError } from '../../engines/qpdf.js';
import { type Inspection, inspectPdf, type Permissions, type Security, writePdf } from '../../engines/qpdf-edit.js';
import { AppError, invalidInput, limitExceeded, passwordProtected, TEXT } from '../errors.js';

/** What a client sees for engine failures while reading an input: 401 for passwords, 400 for broken files, 422 for limits. */
export function inputError(err: unknown, passwordGiven = false): unknown {
  if (err instanceof PasswordError) return passwordGiven ? wrongOpenPassword() : passwordProtected();
  if (err instanceof ReadLimitError) return readLimitExceeded(err);
  if (err instanceof EngineError && !err.details.aborted && !err.details.timedOut && !err.details.missing) {
    // The engine's failure goes along: a repair is tried, and whyUnreadable reads it, before the client sees the 400.
    const e = invalidInput();
    e.cause = [err];
    return e;
  }
  return err;
}

/** The 422 naming the setting behind a read the qpdf engine cut (MAX_STREAM_MB, MAX_OBJECTS). */
export function readLimitExceeded(err: ReadLimitError): AppError {
  return err.kind === 'objects'
    ? limitExceeded('The number of objects in the PDF', 'MAX_OBJECTS', err.max)
    : limitExceeded('The data read from the PDF (a decoded stream, or the listing of its objects)', 'MAX_STREAM_MB', err.max / 1024 / 1024);
}

/** Clients match "password-protected" for a wrong open password (CLIENTS.md). */
export const wrongOpenPassword = () => new AppError('password', `${TEXT.password} The current_open_password given does not open this password-protected file.`);

/** Clients match "password protected"; the rest says why a file that opens without a password needs one here. */
export const attachmentsPasswordNeeded = () =>
  new AppError(
    'password',
    `${TEXT.password} It opens without a password, but its embedded files (attachments) are encrypted, and changing its security needs their password: send it as current_open_password.`,
  );

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
  let state: Encryption;
  try {
    state = await encryptionOf(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  // Written without its password, a file that encrypts only its attachments would lose them for good.
  const opener = state === 'needs-password' || state === 'attachments' ? (pw.open ?? pw.perms) : undefined;
  if (state === 'needs-password' && opener === undefined) throw passwordProtected();
  if (state === 'attachments' && opener === undefined) throw attachmentsPasswordNeeded();
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

/**
 * Readers accept a PDF header anywhere in the first 1024 bytes (junk before it is common in the wild), and qpdf,
 * Poppler and MuPDF read a file without one whose first object follows blank space (fuzzed and hand-made files).
 */
export const isPdfHeader = (head: Buffer) =>
  head.subarray(0, 1024).includes('%PDF-') || /^\s*\d+\s+\d+\s+obj\b/.test(head.subarray(0, 1024).toString('latin1'));

/** The first 1 KB of a file: where readers look for the PDF header (isPdfHeader) and its version. */
export async function readPdfHead(path: string): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(1024);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Said by every read of a file whose attachments alone are encrypted (readableWithoutPassword). */
export const ENCRYPTED_ATTACHMENTS_WARNING =
  'Only the embedded files (attachments) of this PDF are encrypted: its pages were read without a password, and its attachments were left as they are, encrypted.';

export interface Readable {
  /** The file for the engines: a job-local copy. */
  path: string;
  warning: string;
}

/**
 * For a read that qpdf refused for want of a password (PasswordError): a file whose only encryption is of its
 * embedded files opens without one in any reader, but qpdf and MuPDF insist on it, so the engines get a copy
 * without the encryption (withoutEncryption) and the answer a warning. Null when the file does need a password.
 */
export async function readableWithoutPassword(path: string, ctx: EngineContext): Promise<Readable | null> {
  let state: Encryption;
  try {
    state = await encryptionOf(path, ctx);
  } catch (err) {
    throw inputError(err);
  }
  if (state !== 'attachments') return null;
  const copy = join(ctx.cwd, `unencrypted-${randomUUID()}.pdf`);
  await writeFile(copy, withoutEncryption(await readFile(path)));
  return { path: copy, warning: ENCRYPTED_ATTACHMENTS_WARNING };
}

/**
 * The bytes of a PDF with the /Encrypt entry of every trailer and cross-reference stream dictionary overwritten
 * by spaces: no offset moves, so the xref stays valid, and readers take the file as unencrypted. Only right for
 * a file whose streams and strings are in the clear (/StmF and /StrF /Identity); its encrypted embedded files
 * keep their bytes, which nothing can decrypt any more.
 */
export function withoutEncryption(pdf: Buffer): Buffer {
  const out = Buffer.from(pdf);
  const blank = (at: number) => {
    const keys = new Map(readDict(out, at, 0)?.entries.map((e) => [e.key, e]));
    const encrypt = keys.get('/Encrypt');
    // Both kinds carry /Size: a "trailer" or "/XRef" that a stream's data happens to contain rarely does.
    if (encrypt && keys.has('/Size')) out.fill(0x20, encrypt.start, encrypt.end);
  };
  for (let i = out.indexOf('trailer'); i >= 0; i = out.indexOf('trailer', i + 7)) {
    const at = skipSpace(out, i + 7);
    if (out[at] === LT && out[at + 1] === LT) blank(at);
  }
  for (let i = out.indexOf('/XRef'); i >= 0; i = out.indexOf('/XRef', i + 5)) {
    if (i + 5 < out.length && !DELIMITER.has(out[i + 5]) && !WHITESPACE.has(out[i + 5])) continue; // /XRefStm
    const obj = out.lastIndexOf('obj', i);
    if (obj < 0) continue;
    const at = skipSpace(out, obj + 3);
    if (out[at] !== LT || out[at + 1] !== LT) continue;
    // The /XRef found must be the value of this dictionary's /Type.
    if (readDict(out, at, 0)?.entries.find((e) => e.key === '/Type')?.end === i + 5) blank(at);
  }
  return out;
}

const LT = 0x3c;
const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITER = new Set([...'()<>[]{}/%'].map((c) => c.charCodeAt(0)));
/** Nesting allowed inside a trailer: real ones hold an /ID array of two strings; a hostile one must not overflow the stack. */
const MAX_NESTING = 32;

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length) {
    if (WHITESPACE.has(b[i])) i++;
    else if (b[i] === 0x25) while (i < b.length && b[i] !== 0x0a && b[i] !== 0x0d) i++;
    else break;
  }
  return i;
}

const regularEnd = (b: Buffer, i: number) => {
  while (i < b.length && !WHITESPACE.has(b[i]) && !DELIMITER.has(b[i])) i++;
  return i;
};
const isInteger = (b: Buffer, from: number, to: number) => /^\d+$/.test(b.toString('latin1', from, to));

/** The top-level entries of the dictionary whose "<<" is at `i` (key with its value's extent), or null if it is not one. */
function readDict(b: Buffer, i: number, depth: number): { end: number; entries: { key: string; start: number; end: number }[] } | null {
  if (depth > MAX_NESTING) return null;
  const entries: { key: string; start: number; end: number }[] = [];
  for (i += 2; ; ) {
    i = skipSpace(b, i);
    if (i >= b.length) return null;
    if (b[i] === 0x3e && b[i + 1] === 0x3e) return { end: i + 2, entries };
    if (b[i] !== 0x2f) return null;
    const start = i;
    const keyEnd = regularEnd(b, i + 1);
    const end = objectEnd(b, skipSpace(b, keyEnd), depth);
    if (end < 0) return null;
    entries.push({ key: b.toString('latin1', start, keyEnd), start, end });
    i = end;
  }
}

/** Where the object that starts at `i` ends: a string, name, array, dictionary, number, reference "N G R" or keyword; -1 if none. */
function objectEnd(b: Buffer, i: number, depth: number): number {
  if (i >= b.length) return -1;
  const c = b[i];
  if (c === 0x28) {
    for (let open = 0; i < b.length; i++) {
      if (b[i] === 0x5c) i++;
      else if (b[i] === 0x28) open++;
      else if (b[i] === 0x29 && --open === 0) return i + 1;
    }
    return -1;
  }
  if (c === LT && b[i + 1] === LT) return readDict(b, i, depth + 1)?.end ?? -1;
  if (c === LT) {
    const end = b.indexOf(0x3e, i);
    return end < 0 ? -1 : end + 1;
  }
  if (c === 0x5b) {
    if (depth >= MAX_NESTING) return -1;
    for (i++; ; ) {
      i = skipSpace(b, i);
      if (i >= b.length) return -1;
      if (b[i] === 0x5d) return i + 1;
      i = objectEnd(b, i, depth + 1);
      if (i < 0) return -1;
    }
  }
  if (c === 0x2f) return regularEnd(b, i + 1);
  const end = regularEnd(b, i);
  if (end === i) return -1;
  if (isInteger(b, i, end)) {
    const gen = skipSpace(b, end);
    const genEnd = regularEnd(b, gen);
    const r = skipSpace(b, genEnd);
    if (genEnd > gen && isInteger(b, gen, genEnd) && b[r] === 0x52 && regularEnd(b, r) === r + 1) return r + 1;
  }
  return end;
}
