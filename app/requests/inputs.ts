import { formatOf, isPdfHeader } from '../document/index.js';
import { AppError, invalidInput, TEXT } from '../errors.js';
import type { Store } from '../store/index.js';
import { extensionOf } from '../store/names.js';
import type { InputSpec, StoredFile } from './operation.js';
import type { Body } from './uploads.js';

const asIds = (v: unknown): string[] => {
  if (v === undefined || v === null || v === '') return [];
  const list = Array.isArray(v) ? v : String(v).split(',');
  return list.map((x) => String(x).trim()).filter(Boolean);
};

/**
 * The one-of rule (spec 4.1 rule 2) for every upload / id pair, ids resolved to stored files, and the
 * type check (a PDF input must start like a PDF). Order: uploads first, then ids, unless `type[]` says
 * otherwise (merge), in which case the caller orders them.
 */
export async function resolveInputs(
  specs: Record<string, InputSpec>,
  body: Body,
  store: Store,
  opts: { owner: string | null; sniffPdf?: boolean },
): Promise<Record<string, StoredFile[]>> {
  const resolved: Record<string, StoredFile[]> = {};
  for (const [fileField, spec] of Object.entries(specs)) {
    const uploads = (body.files[fileField] ?? []).filter(Boolean);
    const ids = asIds(body.fields[spec.idField]);
    if (uploads.length && ids.length && !spec.multiple) {
      throw new AppError(
        'both_inputs',
        fileField === 'file'
          ? 'This route will only accept a File or an ID, not both.'
          : `This route will only accept a ${fileField} or a ${spec.idField}, not both.`,
      );
    }
    if (!uploads.length && !ids.length) {
      if (spec.required === false) {
        resolved[fileField] = [];
        continue;
      }
      throw new AppError('missing_input', `Either ${fileField} (an upload) or ${spec.idField} (the id of a stored file) is required`);
    }
    if (!spec.multiple && (uploads.length > 1 || ids.length > 1)) {
      throw new AppError('invalid_request', `Only one ${fileField} or ${spec.idField} is accepted by this route`);
    }
    const files: StoredFile[] = uploads.map((r) => ({ id: r.id, name: r.name, type: r.type, size: r.size }));
    for (const id of ids) {
      const rec = await store.getFor(id, opts.owner);
      if (!rec) throw new AppError('unknown_resource', `That file does not exist: no resource has the ${spec.idField} ${id.slice(0, 64)}`);
      files.push({ id: rec.id, name: rec.name, type: rec.type, size: rec.size });
    }
    for (const f of files) await checkKind(f, spec, store, opts.sniffPdf ?? true);
    resolved[fileField] = files;
  }
  return resolved;
}

async function checkKind(file: StoredFile, spec: InputSpec, store: Store, sniffPdf: boolean): Promise<void> {
  if (spec.kind === 'pdf' && sniffPdf) {
    const head = await store.head(file.id).catch((err: NodeJS.ErrnoException) => {
      // Recorded, but its bytes are gone (a shared dir or bucket cleaned by something else).
      if (err.code === 'ENOENT') throw new AppError('unknown_resource', TEXT.unknownResource);
      throw err;
    });
    // Say what it is instead (an image, an Office document, HTML, text starting with...): the usual mistakes.
    if (!isPdfHeader(head)) throw invalidInput(`${file.name} is not a PDF: it is ${formatOf(head)}`);
  }
  if (spec.extensions && !spec.extensions.includes(extensionOf(file.name))) {
    throw invalidInput(`${file.name} is not one of: ${spec.extensions.map((e) => `.${e}`).join(', ')}`);
  }
}

/** PDF readers accept the header anywhere in the first 1024 bytes. */
