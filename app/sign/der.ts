/**
 * A reader of ASN.1 in DER, and the BER that some signers still write (indefinite lengths, constructed strings):
 * enough to walk CMS SignedData, its signer infos and attributes, and RFC 3161 timestamp tokens.
 */

export interface Der {
  /** The identifier octet's class bits and tag number, e.g. 0x30 SEQUENCE, 0xa0 [0] constructed. */
  tag: number;
  constructed: boolean;
  /** Where the element starts (its identifier), where its content starts, and where it ends. */
  start: number;
  contentStart: number;
  end: number;
  children: Der[];
  buf: Buffer;
}

export class DerError extends Error {}

/** Parses one element at `at` (nesting at most 64 deep). */
export function parseDer(buf: Buffer, at = 0, depth = 0): Der {
  if (depth > 64) throw new DerError('nested too deeply');
  if (at + 2 > buf.length) throw new DerError('truncated');
  const first = buf[at];
  let p = at + 1;
  // High tag numbers (0x1f): the number follows in base-128; kept only as "some tag".
  if ((first & 0x1f) === 0x1f) while (p < buf.length && buf[p++] & 0x80);
  const constructed = (first & 0x20) !== 0;
  const lenByte = buf[p++];
  let len = -1;
  if (lenByte < 0x80) len = lenByte;
  else if (lenByte > 0x80) {
    const n = lenByte & 0x7f;
    if (n > 4 || p + n > buf.length) throw new DerError('bad length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++];
  } else if (!constructed) throw new DerError('indefinite length on a primitive');
  const contentStart = p;
  const children: Der[] = [];
  let end: number;
  if (len >= 0) {
    end = contentStart + len;
    if (end > buf.length) throw new DerError('truncated');
    if (constructed) for (let q = contentStart; q < end; ) q = children[children.push(parseDer(buf, q, depth + 1)) - 1].end;
  } else {
    let q = contentStart;
    while (!(buf[q] === 0 && buf[q + 1] === 0)) {
      if (q >= buf.length) throw new DerError('truncated');
      q = children[children.push(parseDer(buf, q, depth + 1)) - 1].end;
    }
    end = q + 2;
  }
  return { tag: first, constructed, start: at, contentStart, end, children, buf };
}

/** The content octets (a constructed string's pieces joined). */
export function octets(d: Der): Buffer {
  if (!d.constructed) return d.buf.subarray(d.contentStart, d.end);
  return Buffer.concat(d.children.map(octets));
}

/** The whole element's bytes, as it was encoded. */
export const raw = (d: Der): Buffer => d.buf.subarray(d.start, d.end);

export function oid(d: Der): string {
  const b = octets(d);
  const parts: number[] = [];
  let v = 0;
  for (let i = 0; i < b.length; i++) {
    v = v * 128 + (b[i] & 0x7f);
    if (!(b[i] & 0x80)) {
      if (!parts.length) parts.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** UTCTime or GeneralizedTime as a Date (null when unreadable). */
export function time(d: Der): Date | null {
  const s = octets(d).toString('latin1');
  const m =
    d.tag === 0x17
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(Z|[+-]\d{4})$/.exec(s)
      : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,]\d+)?(Z|[+-]\d{4})?$/.exec(s);
  if (!m) return null;
  const year = d.tag === 0x17 ? (Number(m[1]) < 50 ? 2000 : 1900) + Number(m[1]) : Number(m[1]);
  const zone = !m[7] || m[7] === 'Z' ? 'Z' : `${m[7].slice(0, 3)}:${m[7].slice(3)}`;
  const date = new Date(`${year}-${m[2]}-${m[3]}T${m[4]}:${m[5] ?? '00'}:${m[6] ?? '00'}${zone}`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** An INTEGER as unsigned hex, upper case, without leading zero bytes (as X509Certificate.serialNumber). */
export function integerHex(d: Der): string {
  let b = octets(d);
  while (b.length > 1 && b[0] === 0) b = b.subarray(1);
  return b.toString('hex').toUpperCase();
}

export function integer(d: Der): number {
  return Number.parseInt(integerHex(d) || '0', 16);
}
