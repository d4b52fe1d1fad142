import { execFileSync } from 'node:child_process';
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
  push(Buffer.from(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}trailer\n<< /Size ${objects.length + 1} /Root ${root} 0 R >>\nstartxref\n${xref}\n%%EOF\n`));
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
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
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
  const template = '<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1"><field name="Field1"/><field name="Field2"/></subform></template>';
  const datasets = `<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>${data}</xfa:data></xfa:datasets>`;
  const updates: Record<string, unknown> = { [`obj:${max + 1} 0 R`]: stream(template), [`obj:${max + 2} 0 R`]: stream(datasets) };
  const xfa = ['u:template', `${max + 1} 0 R`, 'u:datasets', `${max + 2} 0 R`];
  if (typeof root['/AcroForm'] === 'string') updates[`obj:${root['/AcroForm']}`] = { value: { ...objects[`obj:${root['/AcroForm']}`].value, '/XFA': xfa } };
  else updates[`obj:${rootRef}`] = { value: { ...root, '/AcroForm': { ...(root['/AcroForm'] as object), '/XFA': xfa } } };
  writeFileSync(`${out}.json`, JSON.stringify({ qpdf: [json.qpdf[0], updates] }));
  execFileSync('qpdf', [src, out, `--update-from-json=${out}.json`]);
  return out;
}
