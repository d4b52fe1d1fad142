import type { QpdfJson } from '../../engines/qpdf.js';

/** An indirect reference as qpdf JSON writes it (`"12 0 R"`). */
export const isRef = (v: unknown): v is string => typeof v === 'string' && /^\d+ \d+ R$/.test(v);

/**
 * Read-only navigation over qpdf's JSON v2 object dump: references are strings "N G R", names "/Name",
 * text strings "u:..." and binary strings "b:<hex>".
 */
export class PdfObjects {
  private readonly objects: Record<string, { value?: unknown; stream?: { dict: Record<string, unknown> } }>;

  constructor(json: QpdfJson) {
    this.objects = json.qpdf?.[1] ?? {};
  }

  /** Follows a reference (or returns the value itself); streams resolve to their dictionary. */
  resolve(v: unknown, depth = 0): unknown {
    if (isRef(v) && depth < 32) {
      const o = this.objects[`obj:${v}`];
      if (!o) return null;
      return this.resolve(o.value ?? o.stream?.dict ?? null, depth + 1);
    }
    return v;
  }

  dict(v: unknown): Record<string, unknown> | null {
    const r = this.resolve(v);
    return r && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : null;
  }

  array(v: unknown): unknown[] {
    const r = this.resolve(v);
    return Array.isArray(r) ? r : [];
  }

  get trailer(): Record<string, unknown> {
    return (this.objects.trailer?.value as Record<string, unknown>) ?? {};
  }

  get catalog(): Record<string, unknown> {
    return this.dict(this.trailer['/Root']) ?? {};
  }

  get info(): Record<string, unknown> {
    return this.dict(this.trailer['/Info']) ?? {};
  }

  /** Every object's value or stream dictionary (for document-wide scans). */
  *all(): Generator<{ ref: string; value: unknown; isStream: boolean }> {
    for (const [key, o] of Object.entries(this.objects)) {
      if (key === 'trailer') continue;
      yield { ref: key.replace(/^obj:/, ''), value: o.value ?? o.stream?.dict, isStream: !!o.stream };
    }
  }

  /** An inheritable page attribute (MediaBox, CropBox, Rotate, Resources) looked up the /Parent chain. */
  inherited(pageRef: string, key: string): unknown {
    let node = this.dict(pageRef);
    for (let i = 0; node && i < 64; i++) {
      if (key in node) return this.resolve(node[key]);
      node = this.dict(node['/Parent']);
    }
    return undefined;
  }
}

/** A PDF text string from qpdf JSON as a JS string (UTF-16BE/UTF-8/PDFDocEncoding handled by qpdf for u:). */
export function pdfText(v: unknown): string {
  if (typeof v !== 'string') return typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
  if (v.startsWith('u:')) return v.slice(2);
  if (v.startsWith('b:')) return Buffer.from(v.slice(2), 'hex').toString('latin1');
  if (v.startsWith('/')) return v.slice(1);
  return v;
}

/** `D:YYYYMMDDHHmmSS+HH'mm'` to ISO 8601 UTC; anything unparsable is returned as written. */
export function pdfDate(raw: string): string {
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(Z|[+-]\d{2}'?\d{0,2}'?)?/.exec(raw.trim());
  if (!m) return raw;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', tz] = m;
  let offset = 'Z';
  if (tz && tz !== 'Z') {
    const t = /([+-])(\d{2})'?(\d{2})?/.exec(tz)!;
    offset = `${t[1]}${t[2]}:${t[3] ?? '00'}`;
  }
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(date.getTime()) ? raw : date.toISOString();
}
