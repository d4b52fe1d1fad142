import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from './errors.js';
import type { EngineContext } from './context.js';
import { run } from './run.js';

// qpdf exits 3 when it succeeded with warnings (a damaged file it could recover).
const WARNINGS = [3];

export type QpdfJson = {
  qpdf?: [{ pdfversion: string; maxobjectid: number }, Record<string, { value?: unknown; stream?: { dict: Record<string, unknown> } }>];
  pages?: { object: string; images: unknown[]; contents: string[]; pageposfrom1: number }[];
  encrypt?: {
    encrypted: boolean;
    capabilities: Record<string, boolean>;
    parameters: { P: number; R: number; V: number; bits: number; method: string };
    userpasswordmatched: boolean;
    ownerpasswordmatched: boolean;
  };
  attachments?: Record<string, unknown>;
  acroform?: { hasacroform: boolean; fields: unknown[] };
};

/** Passwords go through a file in the job dir, never on the command line (where `ps` shows them). */
export async function passwordArgs(password: string | undefined, ctx: EngineContext): Promise<string[]> {
  if (password === undefined) return [];
  const file = join(ctx.cwd, `.password-${randomUUID()}`);
  await writeFile(file, password, { mode: 0o600 });
  return [`--password-file=${file}`];
}

/** The whole document as qpdf's JSON v2 (objects, pages, encryption, attachments, form). */
export async function readPdfJson(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<{ json: QpdfJson; warnings: string }> {
  try {
    const r = await run('qpdf', ['--json', '--json-stream-data=none', ...(await passwordArgs(opts.password, ctx)), '--', input], { ...ctx, okExitCodes: WARNINGS });
    return { json: JSON.parse(r.stdout) as QpdfJson, warnings: r.stderr };
  } catch (err) {
    throw classify(err);
  }
}

export type Encryption = 'none' | 'open' | 'needs-password';

/** `qpdf --requires-password`: 0 = a password is needed, 2 = not encrypted, 3 = encrypted, opens without one. */
export async function encryptionOf(input: string, ctx: EngineContext): Promise<Encryption> {
  const r = await run('qpdf', ['--requires-password', '--', input], { ...ctx, okExitCodes: [2, 3] });
  return r.exitCode === 0 ? 'needs-password' : r.exitCode === 3 ? 'open' : 'none';
}

export class PasswordError extends EngineError {}

/** qpdf says "invalid password" both for a missing and for a wrong one. */
export function classify(err: unknown): unknown {
  if (err instanceof EngineError && /invalid password/i.test(err.details.stderr ?? '')) {
    return new PasswordError(err.tool, 'invalid password', err.details);
  }
  return err;
}

export async function pageCount(input: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<number> {
  try {
    const r = await run('qpdf', ['--show-npages', ...(await passwordArgs(opts.password, ctx)), '--', input], { ...ctx, okExitCodes: WARNINGS });
    return Number(r.stdout.trim());
  } catch (err) {
    throw classify(err);
  }
}

/** The decoded bytes of one stream object (XMP metadata, embedded files). `ref` is "N G". */
export async function streamData(input: string, ref: string, ctx: EngineContext, opts: { password?: string } = {}): Promise<Buffer> {
  const [num, gen] = ref.split(' ');
  const r = await run('qpdf', [`--show-object=${num},${gen ?? 0}`, '--filtered-stream-data', ...(await passwordArgs(opts.password, ctx)), '--', input], {
    ...ctx,
    okExitCodes: WARNINGS,
    binary: true,
  });
  return r.stdoutBuffer;
}
