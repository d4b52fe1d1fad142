import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { validateSchema } from '../../engines/xmllint.js';
import { AppError, limitExceeded } from '../errors.js';
import { runInThread, threadModule } from '../threads.js';
import { countLines, type InvoiceHeader, MAX_INVOICE_BYTES, readInvoiceHeader, refuseDoctype } from './cii.js';
import { checkEn16931, type RuleFinding } from './en16931.js';
import { PROFILES, schemaPath } from './profiles.js';

/**
 * Validation of one CII invoice: the Factur-X XSD of its profile (xmllint) and, side by side, the EN 16931 business
 * rules and CII syntax binding (en16931.ts, in-process; a large invoice in a worker thread).
 */

const RULES_WORKER = threadModule('./rules-worker', import.meta.url);
/**
 * Invoices up to this size are checked on the event loop: ~1,000 lines, 60-180 ms of rules, less than a worker
 * thread's start (~0.2 s built, ~1 s under tsx); larger ones in a thread that the job's signal can end.
 */
const RULES_INLINE_BYTES = 1024 * 1024;

export interface Finding {
  /** The rule: `BR-CO-15`, `XSD` (schema), `FX-*` (Factur-X PDF checks). */
  id: string;
  severity: 'fatal' | 'warning';
  /** XPath of the element the rule checks (its context), or `line N` for schema errors. */
  location: string;
  message: string;
}

/** The EN 16931 findings of the invoice XML `xml` (warnings do not fail the invoice); large ones in a thread. */
export async function businessRules(xml: string, ctx: Pick<EngineContext, 'signal'> & { path?: string }): Promise<Finding[]> {
  refuseDoctype(xml);
  const found: RuleFinding[] =
    Buffer.byteLength(xml) <= RULES_INLINE_BYTES || !ctx.path
      ? checkEn16931(xml)
      : await runInThread<RuleFinding[]>(RULES_WORKER, { path: ctx.path }, { what: 'invoice', signal: ctx.signal });
  return found.map((f) => ({ id: f.id, severity: f.flag, location: f.location, message: f.message }));
}

/** The findings of the invoice file at `file`. */
export const businessRulesOfFile = async (file: string, ctx: Pick<EngineContext, 'signal'>): Promise<Finding[]> =>
  businessRules(await readFile(file, 'utf8'), { ...ctx, path: file });

export interface Report {
  status: 'VALID' | 'INVALID';
  valid: boolean;
  /** The Factur-X / ZUGFeRD profile the specification identifier (BT-24) names, or null. */
  profile: string | null;
  specification_identifier: string | null;
  invoice_number: string | null;
  findings: Finding[];
}

export const report = (inv: InvoiceHeader, findings: Finding[]): Report => {
  const valid = !findings.some((f) => f.severity === 'fatal');
  return {
    status: valid ? 'VALID' : 'INVALID',
    valid,
    profile: inv.profile?.name ?? null,
    specification_identifier: inv.guideline ?? null,
    invoice_number: inv.number ?? null,
    findings,
  };
};

/** The invoice text, refused (400) when it is too large or not UTF-8 text. */
export function invoiceText(bytes: Buffer): string {
  if (bytes.length > MAX_INVOICE_BYTES)
    throw new AppError('invalid_input', `The invoice XML is larger than ${MAX_INVOICE_BYTES / 1024 / 1024} MB, which no invoice needs.`);
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}

/**
 * Validates: 400 for input that is not a CII invoice at all (not well-formed, another root), otherwise the
 * findings. The header is read here; the schema and the rules run side by side in their engines. `path` is the
 * invoice as checked, for a caller that reads all of it next (readInvoiceFile).
 */
export async function validateInvoice(
  xml: string,
  ctx: EngineContext,
  maxLines: number,
): Promise<{ header: InvoiceHeader; findings: Finding[]; path: string }> {
  const header = readInvoiceHeader(xml);
  // A finding's location counts its element's preceding siblings: thousands of failing lines cost seconds each thousand.
  const lines = countLines(xml);
  if (lines > maxLines) throw limitExceeded(`The invoice's ${lines} lines`, 'INVOICE_MAX_LINES', maxLines);
  const path = join(ctx.cwd, 'invoice-check.xml');
  await writeFile(path, xml);
  // xmllint runs in its own process while the rules run here (or in a thread, for a large invoice).
  const schemaRun = validateSchema(path, schemaPath(header.profile ?? PROFILES.EXTENDED), ctx);
  schemaRun.catch(() => {});
  const rules = businessRules(xml, { signal: ctx.signal, path }).then(
    (found) => ({ found }),
    (error: unknown) => ({ error }),
  );
  const schema = await schemaRun;
  if (!schema.wellFormed) {
    const e = schema.errors[0];
    throw new AppError('invalid_input', `The invoice XML is not well-formed: ${e.message}${e.line === null ? '' : ` (line ${e.line})`}`);
  }
  const findings: Finding[] = [];
  // EN 16931 sets no value for BT-24 (CEN's own examples carry ZUGFeRD 1's ids), so an unknown one does not fail the
  // invoice: it is checked against the EXTENDED schema and the rules, and named.
  if (header.guideline && !header.profile) {
    findings.push({
      id: 'FX-PROFILE',
      severity: 'warning',
      location: '/rsm:CrossIndustryInvoice/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID',
      message: `The specification identifier (BT-24) ${header.guideline} names no Factur-X / ZUGFeRD profile (MINIMUM, BASIC WL, BASIC, EN16931, EXTENDED, XRECHNUNG): checked against the EXTENDED schema and the EN 16931 rules.`,
    });
  }
  for (const e of schema.errors) findings.push({ id: 'XSD', severity: 'fatal', location: e.line === null ? '/' : `line ${e.line}`, message: e.message });
  const checked = await rules;
  if ('error' in checked) throw checked.error;
  findings.push(...checked.found);
  return { header, findings, path };
}

/** One line naming the first findings, for a 400 answer. */
export function findingsText(findings: Finding[], max = 5): string {
  const fatal = findings.filter((f) => f.severity === 'fatal');
  const shown = fatal.slice(0, max).map((f) => (f.id === 'XSD' ? `[XSD ${f.location}] ${f.message}` : f.message));
  return shown.join(' ') + (fatal.length > max ? ` (and ${fatal.length - max} more)` : '');
}
