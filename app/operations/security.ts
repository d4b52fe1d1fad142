import { join } from 'node:path';
import { addOpenPassword, liftRestrictions, RESTRICTIONS, removeSecurity, restrictPdf } from '../document/index.js';
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
    const out = resultFile(dir, outputName);
    const pw = { newOpen: fields.new_open_password, open: fields.current_open_password, perms: fields.current_permissions_password };
    await addOpenPassword(input.path, out.path, pw, { cwd: dir, signal, timeoutMs });
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
    const out = resultFile(dir, outputName);
    const pw = { open: fields.current_open_password, perms: fields.current_permissions_password };
    await removeSecurity(input.path, out.path, pw, { cwd: dir, signal, timeoutMs });
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
    const out = resultFile(dir, outputName);
    const pw = { newPerms: fields.new_permissions_password, open: fields.current_open_password, perms: fields.current_permissions_password };
    await restrictPdf(input.path, out.path, pw, fields.restrictions, { cwd: dir, signal, timeoutMs });
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
    const out = resultFile(dir, outputName);
    const pw = { open: fields.current_open_password, perms: fields.current_permissions_password };
    await liftRestrictions(input.path, out.path, pw, { cwd: dir, signal, timeoutMs });
    return { files: [out] };
  },
});

export default [encryptedPdf, decryptedPdf, restrictedPdf, unrestrictedPdf];
