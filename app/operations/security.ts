import { join } from 'node:path';
import { ALL_ALLOWED, type Permissions, writePdf } from '../../engines/qpdf-edit.js';
import { permissionsOf, secureTo, unlockPdf, unlockToChange, wrongPermissionsPassword } from '../document/index.js';
import { AppError } from '../errors.js';
import { list, output, text } from '../requests/fields.js';
import { operation, pdfInput } from '../requests/operation.js';

/**
 * The security family (spec 4.7): all four write AES-256 (or remove security) with qpdf. Authority rule
 * shared by all: whatever changes or removes restrictions needs the permissions password; the open
 * password only opens.
 */

// New passwords: 6-128 characters (spec section 8).
const newPassword = () => text({ min: 6, max: 128 });
const currentPassword = () => text({ max: 1024 }).optional();
const TAG = 'Security';

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
type Restriction = (typeof RESTRICTIONS)[number];

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

const resultFile = (dir: string, outputName: string) => ({ path: join(dir, 'secured.pdf'), name: `${outputName}.pdf` });

export const encryptedPdf = operation({
  path: '/encrypted-pdf',
  tag: TAG,
  summary: 'Add an open password (AES-256)',
  description:
    'Sets new_open_password (6-128 characters). A file that already has an open password needs current_open_password; one with a permissions password needs current_permissions_password, and keeps it and its restrictions.',
  inputs: pdfInput(),
  fields: {
    new_open_password: newPassword(),
    current_open_password: currentPassword(),
    current_permissions_password: currentPassword(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pdf = await unlockToChange(input.path, ctx, { open: fields.current_open_password, perms: fields.current_permissions_password });
    const out = resultFile(dir, outputName);
    const keepOwner = pdf.encrypt.encrypted && fields.current_permissions_password !== undefined;
    await secureTo(
      input.path,
      out.path,
      pdf.password,
      {
        user: fields.new_open_password,
        owner: keepOwner ? fields.current_permissions_password! : fields.new_open_password,
        permissions: keepOwner ? permissionsOf(pdf) : ALL_ALLOWED,
      },
      ctx,
    );
    return { files: [out] };
  },
});

export const decryptedPdf = operation({
  path: '/decrypted-pdf',
  tag: TAG,
  summary: 'Remove the open password and all security',
  description:
    'current_open_password opens the file (it may be left out for a file that opens without one, whose open password is empty). A file that also restricts permissions needs current_permissions_password as well.',
  inputs: pdfInput(),
  fields: {
    // Required by the spec, but an empty open password cannot be sent: a missing one is the spec's 401.
    current_open_password: currentPassword(),
    current_permissions_password: currentPassword(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    // Decrypting lifts restrictions too: that is the permissions password's call, as in /unrestricted-pdf.
    const pdf = await unlockToChange(input.path, ctx, { open: fields.current_open_password, perms: fields.current_permissions_password });
    const out = resultFile(dir, outputName);
    await writePdf(input.path, out.path, { password: pdf.password, decrypt: true }, ctx);
    return { files: [out] };
  },
});

export const restrictedPdf = operation({
  path: '/restricted-pdf',
  tag: TAG,
  summary: 'Set a permissions password and restrictions (AES-256)',
  description: `restrictions[]: ${RESTRICTIONS.join(', ')}. Without restrictions the permissions password alone guards the security settings. current_open_password keeps the file's open password; without it the output opens without one. Changing an existing permissions password needs current_permissions_password.`,
  inputs: pdfInput(),
  fields: {
    new_permissions_password: newPassword(),
    current_permissions_password: currentPassword(),
    current_open_password: currentPassword(),
    restrictions: list(RESTRICTIONS).optional().default([]),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  check: (f) => {
    if (f.current_open_password !== undefined && f.current_open_password === f.new_permissions_password) {
      throw new AppError('out_of_range', 'new_permissions_password must differ from the open password, or it would lift every restriction');
    }
  },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pdf = await unlockToChange(input.path, ctx, { open: fields.current_open_password, perms: fields.current_permissions_password });
    const out = resultFile(dir, outputName);
    await secureTo(
      input.path,
      out.path,
      pdf.password,
      {
        user: pdf.hasOpenPassword && fields.current_open_password !== undefined ? fields.current_open_password : '',
        owner: fields.new_permissions_password,
        permissions: permissionsFrom(fields.restrictions),
      },
      ctx,
    );
    return { files: [out] };
  },
});

export const unrestrictedPdf = operation({
  path: '/unrestricted-pdf',
  tag: TAG,
  summary: 'Remove the permissions password and every restriction',
  description:
    'current_permissions_password is required. With current_open_password the file keeps that open password (AES-256, nothing restricted); without it all security is removed.',
  inputs: pdfInput(),
  fields: {
    current_permissions_password: text({ max: 1024 }),
    current_open_password: currentPassword(),
    output: output(),
  },
  output: 'file',
  engines: ['qpdf'],
  cost: { lane: 'light' },
  run: async ({ fields, input, dir, signal, timeoutMs, outputName }) => {
    const ctx = { cwd: dir, signal, timeoutMs };
    const pdf = await unlockPdf(input.path, ctx, { open: fields.current_open_password, perms: fields.current_permissions_password });
    if (!pdf.ownerOk) throw wrongPermissionsPassword(true);
    const out = resultFile(dir, outputName);
    const open = pdf.hasOpenPassword ? fields.current_open_password : undefined;
    if (open !== undefined && open !== '') {
      await secureTo(input.path, out.path, pdf.password, { user: open, owner: open, permissions: ALL_ALLOWED }, ctx);
    } else {
      await writePdf(input.path, out.path, { password: pdf.password, decrypt: true }, ctx);
    }
    return { files: [out] };
  },
});

export default [encryptedPdf, decryptedPdf, restrictedPdf, unrestrictedPdf];
