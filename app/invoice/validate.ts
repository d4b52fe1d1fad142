import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineContext } from '../../engines/context.js';
import { validateSchema } from '../../engines/xmllint.js';
import { AppError } from '../errors.js';
import { MAX_INVOICE_BYTES, refuseDoctype, type Invoice } from './cii.js';
import { PROFILES, schemaPath } from './profiles.js';
import type { Finding } from './rules.js';
import { checkInvoiceRules } from './thread.js';

/** Schema (Factur-X XSD of the profile, through xmllint) and business-rule validation of one CII invoice. */

export interface Report {
  status: 'VALID' | 'INVALID';
  valid: boolean;
  /** The Factur-X / ZUGFeRD profile the specification identifier (BT-24) names, or null. */
  profile: string | null;
  specification_identifier: string | null;
  invoice_number: string | null;
  findings: Finding[];
}

export const report = (inv: Invoice, findings: Finding[]): Report => {
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
  if (bytes.length > MAX_INVOICE_BYTES) throw new AppError('invalid_input', `The invoice XML is larger than ${MAX_INVOICE_BYTES / 1024 / 1024} MB, which no invoice needs.`);
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}

/** Parses and validates: 400 for input that is not a CII invoice at all, otherwise the findings. */
export async function validateInvoice(xml: string, ctx: EngineContext): Promise<{ invoice: Invoice; findings: Finding[] }> {
  refuseDoctype(xml);
  const file = join(ctx.cwd, 'invoice-check.xml');
  await writeFile(file, xml);
  const { invoice, findings: rules } = await checkInvoiceRules(file, ctx.signal);
  const findings: Finding[] = [];
  if (invoice.guideline && !invoice.profile) {
    findings.push({
      id: 'FX-PROFILE',
      severity: 'fatal',
      location: '/rsm:CrossIndustryInvoice/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID',
      message: `The specification identifier (BT-24) ${invoice.guideline} names no Factur-X / ZUGFeRD profile (MINIMUM, BASIC WL, BASIC, EN16931, EXTENDED, XRECHNUNG).`,
    });
  }
  const schema = schemaPath(invoice.profile ?? PROFILES.EXTENDED);
  for (const e of await validateSchema(file, schema, ctx)) {
    findings.push({ id: 'XSD', severity: 'fatal', location: e.line === null ? '/' : `line ${e.line}`, message: e.message });
  }
  findings.push(...rules);
  return { invoice, findings };
}

/** One line naming the first findings, for a 400 answer. */
export function findingsText(findings: Finding[], max = 5): string {
  const fatal = findings.filter((f) => f.severity === 'fatal');
  const shown = fatal.slice(0, max).map((f) => (f.id === 'XSD' ? `[XSD ${f.location}] ${f.message}` : f.message));
  return shown.join(' ') + (fatal.length > max ? ` (and ${fatal.length - max} more)` : '');
}
