import type { EngineContext } from '../../engines/context.js';
import { ALL_ALLOWED, type Permissions, writePdf } from '../../engines/qpdf-edit.js';
import { permissionsOf, secureTo, unlockPdf, unlockToChange, wrongPermissionsPassword } from './pdf-access.js';

/**
 * Security set and removed (spec 4.7): AES-256 written by qpdf, or all security removed. Authority rule shared
 * by all: whatever changes or removes restrictions needs the permissions password; the open password only opens.
 */

export const RESTRICTIONS = [
  'print_low',
  'print_high',
  'edit_document_assembly',
  'edit_fill_and_sign_form_fields',
  'edit_annotations',
  'edit_content',
  'copy_content',
  'accessibility_off',
] as const;
export type Restriction = (typeof RESTRICTIONS)[number];

/** restrictions[] to permissions: each name withholds one right (print_low withholds all printing). */
export function permissionsFrom(restrictions: readonly Restriction[]): Permissions {
  const r = new Set(restrictions);
  return {
    print: r.has('print_low') ? 'none' : r.has('print_high') ? 'low' : 'full',
    assemble: !r.has('edit_document_assembly'),
    form: !r.has('edit_fill_and_sign_form_fields'),
    annotate: !r.has('edit_annotations'),
    modifyOther: !r.has('edit_content'),
    extract: !r.has('copy_content'),
    accessibility: !r.has('accessibility_off'),
  };
}

/** A new open password; a permissions password given is kept with its restrictions. */
export async function addOpenPassword(
  input: string,
  output: string,
  pw: { newOpen: string; open?: string; perms?: string },
  ctx: EngineContext,
): Promise<void> {
  const pdf = await unlockToChange(input, ctx, { open: pw.open, perms: pw.perms });
  const keepOwner = pdf.encrypt.encrypted && pw.perms !== undefined;
  await secureTo(
    input,
    output,
    pdf.password,
    { user: pw.newOpen, owner: keepOwner ? pw.perms! : pw.newOpen, permissions: keepOwner ? permissionsOf(pdf) : ALL_ALLOWED },
    ctx,
  );
}

/** All security removed. */
export async function removeSecurity(input: string, output: string, pw: { open?: string; perms?: string }, ctx: EngineContext): Promise<void> {
  // Decrypting lifts restrictions too: that is the permissions password's call, as in /unrestricted-pdf.
  const pdf = await unlockToChange(input, ctx, pw);
  await writePdf(input, output, { password: pdf.password, decrypt: true }, ctx);
}

/** A new permissions password with `restrictions`; the open password given is kept, else the output opens without one. */
export async function restrictPdf(
  input: string,
  output: string,
  pw: { newPerms: string; open?: string; perms?: string },
  restrictions: readonly Restriction[],
  ctx: EngineContext,
): Promise<void> {
  const pdf = await unlockToChange(input, ctx, { open: pw.open, perms: pw.perms });
  await secureTo(
    input,
    output,
    pdf.password,
    { user: pdf.hasOpenPassword && pw.open !== undefined ? pw.open : '', owner: pw.newPerms, permissions: permissionsFrom(restrictions) },
    ctx,
  );
}

/** The permissions password and every restriction removed; the open password given is kept (AES-256, nothing restricted). */
export async function liftRestrictions(input: string, output: string, pw: { open?: string; perms: string }, ctx: EngineContext): Promise<void> {
  const pdf = await unlockPdf(input, ctx, pw);
  if (!pdf.ownerOk) throw wrongPermissionsPassword(true);
  const open = pdf.hasOpenPassword ? pw.open : undefined;
  if (open !== undefined && open !== '') {
    await secureTo(input, output, pdf.password, { user: open, owner: open, permissions: ALL_ALLOWED }, ctx);
  } else {
    await writePdf(input, output, { password: pdf.password, decrypt: true }, ctx);
  }
}
