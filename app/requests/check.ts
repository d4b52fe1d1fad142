import { z } from 'zod';
import { TOOLS } from '../../engines/tools.js';
import { AppError, outOfRange } from '../errors.js';
import { stripExtension } from '../store/names.js';
import type { Deps } from './context.js';
import type { Operation, StoredFile } from './operation.js';

/** Turns zod's first complaint into the spec's sentence, naming the parameter and echoing the value. */
export function validationError(err: z.ZodError, raw: Record<string, unknown>): AppError {
  const issue = err.issues[0];
  const path = issue.path.map(String);
  const param = path[0] ?? 'body';
  let value: unknown = raw[param];
  if (value === undefined || value === '' || value === null) {
    if (path.length === 1) return new AppError('out_of_range', `${param} is required`);
  }
  if (path.length > 1) {
    // A nested JSON field: name the whole path and show the offending value.
    value = (issue as { input?: unknown }).input;
    const where = path.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : `${acc}.${p}`));
    if (value === undefined) return new AppError('out_of_range', `${where} is required`);
    return outOfRange(value, where);
  }
  return outOfRange(Array.isArray(value) && value.length === 1 ? value[0] : value, param);
}

const isAbsent = (v: unknown) => v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.every(isAbsent));

export function parseFields<S extends z.ZodRawShape>(op: Operation<S>, raw: Record<string, unknown>): z.infer<z.ZodObject<S>> {
  // An empty form field or a JSON null means "not sent", so defaults apply.
  const sent = Object.fromEntries(Object.entries(raw).filter(([, v]) => !isAbsent(v)));
  const parsed = z.object(op.fields).safeParse(sent, { reportInput: true });
  if (!parsed.success) throw Object.assign(validationError(parsed.error, raw), { field: String(parsed.error.issues[0].path[0] ?? '') || undefined });
  op.check?.(parsed.data);
  return parsed.data;
}

export function requireEngines(op: Operation, deps: Deps): void {
  const missing = op.engines.filter((t) => !deps.tools[t]);
  if (missing.length) {
    throw new AppError(
      'engine_missing',
      `${op.path} is unavailable: ${missing.map((t) => `${TOOLS[t].bin} (Debian package ${TOOLS[t].pkg})`).join(', ')} is not installed on this server`,
    );
  }
}

export const defaultName = (op: Operation, first: StoredFile | undefined) =>
  op.defaultName ? op.defaultName(first && stripExtension(first.name)) : `${first ? stripExtension(first.name) : 'service'}_service_${op.path.slice(1)}`;
