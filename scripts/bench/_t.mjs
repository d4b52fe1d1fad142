import sharp from 'sharp';
import zlib from 'node:zlib';
import { readFileSync } from 'node:fs';
function pam(p) { const buf = readFileSync(p); const e = buf.indexOf('ENDHDR\n') + 7; const h = buf.subarray(0, e).toString();
 return { W: +/WIDTH (\d+)/.exec(h)[1], H: +/HEIGHT (\d+)/.exec(h)[1], C: +/DEPTH (\d+)/.exec(h)[1], px: buf.subarray(e) }; }
function tiff(W, H, C, photometric, px) {
  // minimal uncompressed little-endian TIFF, one strip
  const n = 10; const ifdSize = 2 + n * 12 + 4; const bpsOff = 8 + ifdSize; const dataOff = bpsOff + 8;
  const b = Buffer.alloc(dataOff); b.write('II', 0); b.writeUInt16LE(42, 2); b.writeUInt32LE(8, 4);
  let o = 8; b.writeUInt16LE(n, o); o += 2;
  const ent = (tag, type, count, val) => { b.writeUInt16LE(tag, o); b.writeUInt16LE(type, o + 2); b.writeUInt32LE(count, o + 4); if (type === 3 && count === 1) b.writeUInt16LE(val, o + 8); else b.writeUInt32LE(val, o + 8); o += 12; };
  ent(256, 4, 1, W); ent(257, 4, 1, H); ent(258, 3, C, C === 1 ? 8 : bpsOff); ent(259, 3, 1, 1); ent(262, 3, 1, photometric);
  ent(273, 4, 1, dataOff); ent(277, 3, 1, C); ent(278, 4, 1, H); ent(279, 4, 1, px.length); ent(284, 3, 1, 1);
  b.writeUInt32LE(0, o); for (let i = 0; i < 4; i++) b.writeUInt16LE(8, bpsOff + 2 * i);
  return Buffer.concat([b, px]);
}
const t0 = performance.now(); const lap = (m) => console.log(m, (performance.now() - t0).toFixed(0));
const c = pam('/tmp/r5/c1.pam'); lap('read');
const tb = tiff(c.W, c.H, 4, 5, c.px); lap('wrap');
let o = await sharp(tb).toColourspace('cmyk').jpeg({ quality: 75 }).withMetadata({ density: 300 }).toBuffer(); lap('cmyk jpeg ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density]));
o = await sharp(tb).toColourspace('cmyk').tiff({ compression: 'deflate' }).withMetadata({ density: 300 }).toBuffer(); lap('cmyk tiff ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density, m.resolutionUnit]));
o = await sharp(tb).keepIccProfile().tiff({ compression: 'deflate' }).toBuffer(); lap('cmyk tiff keep ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density]));
o = zlib.deflateSync(c.px, { level: 1 }); lap('zlib1 ' + o.length);
o = zlib.deflateSync(c.px, { level: 6 }); lap('zlib6 ' + o.length);
const g = pam('/tmp/r5/g1.pam');
o = await sharp(g.px, { raw: { width: g.W, height: g.H, channels: 1 } }).gif({ effort: 1, dither: 0 }).toBuffer(); lap('gray gif ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density]));
o = await sharp(g.px, { raw: { width: g.W, height: g.H, channels: 1 } }).png().withMetadata({ density: 300 }).toBuffer(); lap('gray png ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density]));
o = await sharp(g.px, { raw: { width: g.W, height: g.H, channels: 1 } }).jpeg().withMetadata({ density: 300 }).toBuffer(); lap('gray jpg ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density]));
const a = pam('/tmp/r5/a1.pam');
o = await sharp(a.px, { raw: { width: a.W, height: a.H, channels: 4, premultiplied: false } }).png().withMetadata({ density: 300 }).toBuffer(); lap('rgba png ' + o.length);
console.log(await sharp(o).metadata().then(m => [m.space, m.channels, m.density, m.hasAlpha]));
const st = await sharp(o).stats(); console.log(st.channels[3]);
