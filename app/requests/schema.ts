import { z } from 'zod';
import type { Operation } from './operation.js';

export const uuid = { type: 'string', format: 'uuid' };

export function requestSchema(op: Operation, multipart: boolean) {
  const fields = z.toJSONSchema(z.object(op.fields), { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
  const properties: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(op.inputs)) {
    if (multipart)
      properties[name] = spec.multiple
        ? { type: 'array', items: { type: 'string', format: 'binary' } }
        : { type: 'string', format: 'binary', description: spec.description };
    // x-input tells generated forms (the web page at /) which upload an id stands for and whether it is needed.
    const input = { 'x-input': { field: name, required: spec.required !== false, extensions: spec.kind === 'pdf' ? ['pdf'] : spec.extensions } };
    properties[spec.idField] = spec.multiple
      ? { type: 'array', items: uuid, description: `Ids of stored files, instead of uploading ${name}`, ...input }
      : { ...uuid, description: `Id of a stored file, instead of uploading ${name}`, ...input };
  }
  // An input's id field may also be declared as a field (merge does, to tell ids from uploads): the field's schema
  // wins, the input's x-input stays.
  for (const [k, v] of Object.entries(fields.properties ?? {})) properties[k] = { ...(properties[k] as object | undefined), ...(v as object) };
  return { type: 'object', properties, required: fields.required ?? [] };
}
