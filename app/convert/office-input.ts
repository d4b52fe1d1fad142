/**
 * Checks on office files before LibreOffice sees them: a zip (OOXML, ODF) whose declared uncompressed size
 * would exhaust memory or disk is refused from its central directory alone, and an encrypted OOXML file
 * (an OLE container holding EncryptedPackage) is recognised as password protected, which LibreOffice's
 * type detection reports only as "type detection aborted".
 */

export const ZIP_LIMITS = { totalBytes: 1024 ** 3, entries: 20_000, ratio: 1000, ratioFloorBytes: 50 * 1024 ** 2 };

export interface ZipVerdict {
  ok: boolean;
  reason?: string;
  entries: number;
  totalUncompressed: number;
}

const isZip = (b: Buffer) => b.length >= 4 && b.readUInt32LE(0) === 0x04034b50;

/** Reads the central directory (ZIP64 sizes included) and judges the declared sizes. Non-zip input is ok: not ours to judge. */
export function inspectZip(buf: Buffer, limits = ZIP_LIMITS): ZipVerdict {
  if (!isZip(buf)) return { ok: true, entries: 0, totalUncompressed: 0 };
  const bad = (reason: string, entries = 0, total = 0): ZipVerdict => ({ ok: false, reason, entries, totalUncompressed: total });
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return bad('no zip central directory');
  let count = buf.readUInt16LE(eocd + 10);
  let offset = buf.readUInt32LE(eocd + 16);
  if (offset === 0xffffffff || count === 0xffff) {
    const loc = eocd - 20;
    if (loc < 0 || buf.readUInt32LE(loc) !== 0x07064b50) return bad('broken ZIP64 directory');
    const z = Number(buf.readBigUInt64LE(loc + 8));
    if (z + 56 > buf.length || buf.readUInt32LE(z) !== 0x06064b50) return bad('broken ZIP64 directory');
    count = Number(buf.readBigUInt64LE(z + 32));
    offset = Number(buf.readBigUInt64LE(z + 48));
  }
  if (count > limits.entries) return bad(`${count} entries`, count);
  let total = 0;
  let p = offset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50) return bad('broken zip central directory', n, total);
    let compressed = buf.readUInt32LE(p + 20);
    let size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    if (size === 0xffffffff || compressed === 0xffffffff) {
      // ZIP64 extra field: the 64-bit sizes, in this order, for the fields that overflowed.
      let e = p + 46 + nameLen;
      const end = e + extraLen;
      while (e + 4 <= end) {
        const id = buf.readUInt16LE(e);
        const len = buf.readUInt16LE(e + 2);
        if (id === 0x0001) {
          let q = e + 4;
          if (size === 0xffffffff) {
            size = Number(buf.readBigUInt64LE(q));
            q += 8;
          }
          if (compressed === 0xffffffff) compressed = Number(buf.readBigUInt64LE(q));
          break;
        }
        e += 4 + len;
      }
    }
    total += size;
    if (total > limits.totalBytes) return bad(`it would expand to more than ${limits.totalBytes} bytes`, n + 1, total);
    if (size > limits.ratioFloorBytes && size > Math.max(1, compressed) * limits.ratio) return bad('an entry is compressed more than 1000:1', n + 1, total);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return { ok: true, entries: count, totalUncompressed: total };
}

const CFB = Buffer.from('d0cf11e0a1b11ae1', 'hex');

/** An OLE compound file with an EncryptedPackage stream: an OOXML document encrypted with a password. */
export function isEncryptedOoxml(buf: Buffer): boolean {
  return buf.subarray(0, 8).equals(CFB) && buf.includes(Buffer.from('EncryptedPackage', 'utf16le'));
}
