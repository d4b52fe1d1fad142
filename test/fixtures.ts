import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { constants, crc32, deflateSync } from 'node:zlib';

/**
 * Hand-built inputs the corpus lacks, shared by several suites (and the load benchmark): hostile files whose
 * declared or inflated size is huge, and a static XFA form.
 */

/**
 * A PDF from object bodies (object n is objects[n-1]) with a correct xref table. A body is written as it is;
 * a [dictionary, data] pair becomes a stream whose dictionary gets its /Length.
 */
export function pdfFromObjects(objects: (string | Buffer | [string, Buffer])[], root = 1): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let at = parts[0].length;
  const offsets: number[] = [];
  const push = (b: Buffer) => {
    parts.push(b);
    at += b.length;
  };
  objects.forEach((o, i) => {
    offsets.push(at);
    push(Buffer.from(`${i + 1} 0 obj\n`));
    if (Array.isArray(o)) {
      push(Buffer.from(`${o[0].replace(/>>\s*$/, ` /Length ${o[1].length} >>`)}\nstream\n`));
      push(o[1]);
      push(Buffer.from('\nendstream'));
    } else push(Buffer.isBuffer(o) ? o : Buffer.from(o, 'latin1'));
    push(Buffer.from('\nendobj\n'));
  });
  const xref = at;
  const rows = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${objects.length + 1} /Root ${root} 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

/**
 * A zlib stream of `total` zero bytes, a thousandth of that in size: one full-flush block of 1 MB of zeros
 * (which refers to nothing before it) repeated, then a final block and the Adler-32 of zeros.
 */
export function zerosZlib(total: number): Buffer {
  const CHUNK = 1 << 20;
  const first = deflateSync(Buffer.alloc(CHUNK), { level: 9, flush: constants.Z_FULL_FLUSH, finishFlush: constants.Z_FULL_FLUSH });
  const n = Math.floor(total / CHUNK);
  const last = deflateSync(Buffer.alloc(total - n * CHUNK), { level: 9 });
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((total % 65521) << 16) | 1) >>> 0);
  return Buffer.concat([first.subarray(0, 2), ...Array<Buffer>(n).fill(first.subarray(2)), last.subarray(2, last.length - 4), adler]);
}

/** A PNG of the given header (8-bit, `colorType` 0 grey / 2 RGB) and IDAT data, chunks with correct CRCs. */
export function pngOf(w: number, h: number, colorType: 0 | 2, idat: Buffer): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, colorType, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A static XFA form (the corpus has none): the 2-field AcroForm `src` with an XFA template and datasets holding
 * `data` added by qpdf, written to `out` (`out.json` is the update qpdf reads).
 */
export function staticXfaForm(src: string, out: string, data = '<form1><Field1>Alpha &amp; co</Field1><Field2>Beta πʬ</Field2></form1>'): string {
  const json = JSON.parse(execFileSync('qpdf', ['--json-output', '--json-key=qpdf', src], { encoding: 'utf8' }));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const rootRef = (objects.trailer.value as Record<string, string>)['/Root'];
  const root = objects[`obj:${rootRef}`].value!;
  const max = json.qpdf[0].maxobjectid as number;
  const stream = (text: string) => ({ stream: { dict: {}, data: Buffer.from(text).toString('base64') } });
  const template =
    '<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1"><field name="Field1"/><field name="Field2"/></subform></template>';
  const datasets = `<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>${data}</xfa:data></xfa:datasets>`;
  const updates: Record<string, unknown> = { [`obj:${max + 1} 0 R`]: stream(template), [`obj:${max + 2} 0 R`]: stream(datasets) };
  const xfa = ['u:template', `${max + 1} 0 R`, 'u:datasets', `${max + 2} 0 R`];
  if (typeof root['/AcroForm'] === 'string') updates[`obj:${root['/AcroForm']}`] = { value: { ...objects[`obj:${root['/AcroForm']}`].value, '/XFA': xfa } };
  else updates[`obj:${rootRef}`] = { value: { ...root, '/AcroForm': { ...(root['/AcroForm'] as object), '/XFA': xfa } } };
  writeFileSync(`${out}.json`, JSON.stringify({ qpdf: [json.qpdf[0], updates] }));
  execFileSync('qpdf', [src, out, `--update-from-json=${out}.json`]);
  return out;
}

/** PDF 2.0 algorithm 2.B: the R6 hash of a password with a salt (and, for the owner, the 48-byte /U). */
function r6Hash(password: Buffer, salt: Buffer, udata: Buffer): Buffer {
  let k = createHash('sha256')
    .update(Buffer.concat([password, salt, udata]))
    .digest();
  for (let round = 0; ; round++) {
    const k1 = Buffer.concat(Array<Buffer>(64).fill(Buffer.concat([password, k, udata])));
    const aes = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false);
    const e = Buffer.concat([aes.update(k1), aes.final()]);
    const mod3 = e.subarray(0, 16).reduce((sum, b) => sum + b, 0) % 3;
    k = createHash(['sha256', 'sha384', 'sha512'][mod3]).update(e).digest();
    if (round >= 63 && e[e.length - 1] <= round + 1 - 32) return k.subarray(0, 32);
  }
}

/** AES-256-CBC without padding and a zero IV (/UE, /OE) or ECB (/Perms), as the R6 handler stores keys. */
const aes256Raw = (key: Buffer, data: Buffer, mode: 'cbc' | 'ecb') => {
  const c = mode === 'cbc' ? createCipheriv('aes-256-cbc', key, Buffer.alloc(16)) : createCipheriv('aes-256-ecb', key, null);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
};

/**
 * A one-page PDF whose only encryption is of its embedded file, as Acrobat's "encrypt only file attachments"
 * writes it (the corpus has none): standard security handler V5 R6 (AES-256) with /StmF and /StrF /Identity,
 * so the page and every string are in the clear, and /EFF /StdCF, so the attachment `name` holds `attachment`
 * encrypted with the file key. `password` is both the user and the owner password.
 * `cryptFilter` also names /StdCF in the attachment's own /Crypt filter: qpdf 11.3, MuPDF 1.21 and Poppler 22.12
 * do not apply /EFF by itself, and qpdf and MuPDF decrypt the attachment with the password only that way.
 * `xrefStream` writes a cross-reference stream (PDF 1.5) instead of a table and trailer.
 */
export function effOnlyEncrypted(opts: {
  password: string;
  text: string;
  attachment: Buffer;
  name?: string;
  cryptFilter?: boolean;
  xrefStream?: boolean;
}): Buffer {
  const pw = Buffer.from(opts.password, 'utf8');
  const fileKey = randomBytes(32);
  const [uvs, uks, ovs, oks] = [randomBytes(8), randomBytes(8), randomBytes(8), randomBytes(8)];
  const u = Buffer.concat([r6Hash(pw, uvs, Buffer.alloc(0)), uvs, uks]);
  const ue = aes256Raw(r6Hash(pw, uks, Buffer.alloc(0)), fileKey, 'cbc');
  const o = Buffer.concat([r6Hash(pw, ovs, u), ovs, oks]);
  const oe = aes256Raw(r6Hash(pw, oks, u), fileKey, 'cbc');
  const p = -4;
  const perms = Buffer.alloc(16);
  perms.writeInt32LE(p, 0);
  perms.writeUInt32LE(0xffffffff, 4);
  perms.write('Tadb', 8, 'latin1');
  randomBytes(4).copy(perms, 12);
  const iv = randomBytes(16);
  const aes = createCipheriv('aes-256-cbc', fileKey, iv);
  const sealed = Buffer.concat([iv, aes.update(opts.attachment), aes.final()]);
  const name = opts.name ?? 'attachment.txt';
  const hex = (b: Buffer) => `<${b.toString('hex')}>`;
  const content = Buffer.from(`BT /F1 24 Tf 72 700 Td (${opts.text.replace(/[\\()]/g, '\\$&')}) Tj ET`, 'latin1');
  const crypt = opts.cryptFilter ? '/Filter [/Crypt] /DecodeParms [<< /Type /CryptFilterDecodeParms /Name /StdCF >>] ' : '';
  const pdf = pdfFromObjects([
    `<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(${name}) 6 0 R] >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    ['<< >>', content],
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Type /Filespec /F (${name}) /UF (${name}) /EF << /F 7 0 R >> >>`,
    [`<< /Type /EmbeddedFile ${crypt}/Params << /Size ${opts.attachment.length} >> >>`, sealed],
    `<< /Filter /Standard /V 5 /R 6 /Length 256 /P ${p} /CF << /StdCF << /CFM /AESV3 /AuthEvent /EFOpen /Length 32 >> >> ` +
      `/StmF /Identity /StrF /Identity /EFF /StdCF /U ${hex(u)} /UE ${hex(ue)} /O ${hex(o)} /OE ${hex(oe)} /Perms ${hex(aes256Raw(fileKey, perms, 'ecb'))} >>`,
  ]);
  const id = randomBytes(16).toString('hex');
  const keys = `/Root 1 0 R /Encrypt 8 0 R /ID [<${id}> <${id}>]`;
  const at = pdf.lastIndexOf('xref\n0 ');
  if (!opts.xrefStream) {
    // The encryption dictionary and the file identifier go in the trailer, which follows every offset of the xref.
    const tail = pdf.subarray(at).toString('latin1').replace('/Root 1 0 R', keys);
    return Buffer.concat([pdf.subarray(0, at), Buffer.from(tail, 'latin1')]);
  }
  // Object 9 is the cross-reference stream, where the table was: rows of type (1 byte), offset (4), generation (2).
  const offsets = [
    ...pdf
      .subarray(at)
      .toString('latin1')
      .matchAll(/^(\d{10}) 00000 n $/gm),
  ].map((m) => Number(m[1]));
  const row = (type: number, offset: number, gen: number) => {
    const r = Buffer.alloc(7);
    r.writeUInt8(type, 0);
    r.writeUInt32BE(offset, 1);
    r.writeUInt16BE(gen, 5);
    return r;
  };
  const rows = Buffer.concat([row(0, 0, 0xffff), ...offsets.map((o) => row(1, o, 0)), row(1, at, 0)]);
  const head = `9 0 obj\n<< /Type /XRef /Size 10 /W [1 4 2] ${keys} /Length ${rows.length} >>\nstream\n`;
  return Buffer.concat([pdf.subarray(0, at), Buffer.from(head, 'latin1'), rows, Buffer.from(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`, 'latin1')]);
}

/**
 * A page whose lower part is filled with a tiling pattern of `step`-point cells: every engine draws each cell, so
 * the cost grows with 1/step². Measured at 72 dpi (MuPDF 1.21, Poppler 22.12, Ghostscript 10.0): step 0.2 takes
 * MuPDF ~4 s, Poppler over 30 s and Ghostscript ~0.8 s; step 0.01 takes each of them over 30 s, so step 0.001
 * takes each over 50 minutes here and over 5 on a machine ten times faster. Its text ("Tiny tiles") costs nothing
 * to read.
 */
export function tinyTiles(step: number): Buffer {
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Pattern << /P1 5 0 R >> /Font << /F1 6 0 R >> >> >>',
    ['<< >>', Buffer.from('BT /F1 24 Tf 72 700 Td (Tiny tiles) Tj ET /Pattern cs /P1 scn 0 0 612 600 re f')],
    [
      `<< /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep ${step} /YStep ${step} /Resources << >> >>`,
      Buffer.from('0 0 1 rg 0 0 0.5 0.5 re f'),
    ],
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}

/**
 * Work no machine finishes: a page whose content draws a form that draws the next form ten times, `depth` levels
 * down, so every engine interprets 10^depth copies of the innermost form from a file of ~2 KB. The engines do
 * not cache forms (MuPDF 1.21, Poppler 22.12, Ghostscript 10.0's pdfwrite): measured per innermost copy, MuPDF's
 * text ~13 us and drawing a full-page fill ~0.7 ms, Poppler's text ~37 us, pdfwrite ~90 us. At depth 9 that is
 * hours of work here, still minutes on a machine ten times faster, with memory flat throughout (nothing is kept
 * per copy). So a budget test built on it cuts the engine whatever the machine, and a test that waits for the
 * cut waits only for the budget.
 *
 * `inner`: 'empty' (q Q: nothing to keep, only interpreting), 'fill' (a blue fill of the area). `annotation`:
 * the forms are the appearance of an annotation without the Print flag instead of the page content. Viewers
 * (MuPDF, Poppler) draw such an annotation; Ghostscript draws pages as printed and leaves it out, so only
 * MuPDF and Poppler spin on that page.
 */
export function nestedForms(depth: number, opts: { inner?: 'empty' | 'fill'; annotation?: boolean } = {}): Buffer {
  const area = '0 0 612 600';
  const first = 7;
  const forms: [string, Buffer][] = [];
  // Object first + i is the form i levels above the innermost one counted from the top: first is the outermost.
  for (let level = depth; level >= 0; level--) {
    const body = level === 0 ? (opts.inner === 'fill' ? `0 0 1 rg ${area} re f` : 'q Q') : '/X Do '.repeat(10);
    const resources = level === 0 ? '<< >>' : `<< /XObject << /X ${first + depth - level + 1} 0 R >> >>`;
    forms.push([`<< /Type /XObject /Subtype /Form /BBox [${area}] /Resources ${resources} >>`, Buffer.from(body)]);
  }
  const title = opts.annotation ? 'Heavy annotation' : 'Nested forms';
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X ${first} 0 R >> >>${opts.annotation ? ' /Annots [6 0 R]' : ''} >>`,
    ['<< >>', Buffer.from(`BT /F1 24 Tf 72 700 Td (${title}) Tj ET${opts.annotation ? '' : ' /X Do'}`)],
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Type /Annot /Subtype /Square /Rect [${area}] /F 0 /AP << /N ${first} 0 R >> >>`,
    ...forms,
  ]);
}
