import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeTdm } from '../app/operations/tdm-reserved-pdf.js';
import { needsPrepass, pdfToPsArgs, psPrepassArgs } from '../engines/postscript.js';
import { corpus, pdfPages, pdfText, startApp, type TestApp, tool } from './helpers.js';

/** /tdm-reserved-pdf (XMP read back with pdfinfo -meta and qpdf) and /postscript (read back with gs and pdftotext). */

let t: TestApp;
const work = mkdtempSync(join(tmpdir(), 'quire-tdm-ps-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(work, { recursive: true, force: true });
});

const xmpOf = (path: string) => tool('pdfinfo', ['-meta', path]);
const words = (s: string) => s.split(/\s+/).filter(Boolean);

async function upload(path: string): Promise<string> {
  const res = await t.form('/upload', { file: { file: path } });
  const body = (await res.json()) as { files: { id: string }[] };
  return body.files[0].id;
}

// ---------- /tdm-reserved-pdf ----------

test('mergeTdm keeps every property and replaces earlier tdm values', () => {
  const xmp =
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:t="http://www.w3.org/ns/tdmrep/" t:reservation="0"><dc:title>X</dc:title><t:policy>https://old</t:policy></rdf:Description></rdf:RDF></x:xmpmeta>';
  const out = mergeTdm(xmp, 'https://example.com/p?a=1&b=2');
  assert.match(out, '<dc:title>X</dc:title>');
  assert.not.match(out, 'https://old');
  assert.not.match(out, 't:reservation="0"');
  assert.match(out, '<tdm:reservation>1</tdm:reservation>');
  assert.match(out, '<tdm:policy>https://example.com/p?a=1&amp;b=2</tdm:policy>');
  assert.match(mergeTdm('', undefined), /<\?xpacket begin[\s\S]*tdm:reservation>1<[\s\S]*<\?xpacket end="w"\?>/);
});

test('an XMP-bearing PDF: tdm:reservation 1, tdm:policy, the old XMP and Info kept (JSON by id)', async () => {
  const src = corpus('pdf/tagged-libreoffice.pdf');
  const id = await upload(src);
  const res = await t.json('/tdm-reserved-pdf', { id, policy: 'https://example.com/tdm-policy', output: 'pdfrest_tdm_reserved_pdf' });
  assert.is(res.status, 200);
  const body = (await res.json()) as { outputUrl: string; outputId: string; inputId: string };
  assert.is(body.inputId, id);
  const out = await t.download(body.outputUrl);
  const xmp = xmpOf(out);
  assert.match(xmp, 'xmlns:tdm="http://www.w3.org/ns/tdmrep/"');
  assert.match(xmp, '<tdm:reservation>1</tdm:reservation>');
  assert.match(xmp, '<tdm:policy>https://example.com/tdm-policy</tdm:policy>');
  assert.match(xmp, /<dc:title>[\s\S]*Tagged PDF Demo/);
  assert.match(xmp, '<pdf:Producer>LibreOffice 7.3</pdf:Producer>');
  assert.match(xmp, '<pdfaid:part>3</pdfaid:part>');
  // The Info dictionary is kept.
  const info = (p: string) =>
    tool('pdfinfo', [p])
      .split('\n')
      .filter((l) => /^(Title|Producer|Creator):/.test(l));
  assert.equal(info(out), info(src));
  // The metadata stream read with qpdf too (an independent reader of the object).
  const catalog = tool('qpdf', ['--show-object=trailer', out]);
  const root = /\/Root (\d+) (\d+) R/.exec(catalog)!;
  const meta = /\/Metadata (\d+) (\d+) R/.exec(tool('qpdf', [`--show-object=${root[1]},${root[2]}`, out]))!;
  const raw = tool('qpdf', [`--show-object=${meta[1]},${meta[2]}`, '--filtered-stream-data', out]);
  assert.match(raw, '<tdm:reservation>1</tdm:reservation>');
  const info2 = await t.request(`/resource/${body.outputId}?format=info`);
  const rec = (await info2.json()) as { name: string; type: string };
  assert.is(rec.name, 'pdfrest_tdm_reserved_pdf.pdf');
  assert.is(rec.type, 'application/pdf');
});

test('a PDF without XMP gets a packet; without policy only the reservation; multipart', async () => {
  const src = corpus('pdf/text-minimal-pdflatex.pdf');
  assert.is(xmpOf(src).trim(), '');
  const res = await t.form('/tdm-reserved-pdf', { file: { file: src } });
  assert.is(res.status, 200);
  const out = await t.download(((await res.json()) as { outputUrl: string }).outputUrl);
  const xmp = xmpOf(out);
  assert.match(xmp, '<tdm:reservation>1</tdm:reservation>');
  assert.not.match(xmp, 'tdm:policy');
  assert.is(pdfText(out), pdfText(src));
});

test('an owner-password-only file keeps its encryption', async () => {
  const src = corpus('encrypted/aes-256-owner-only-acrobat.pdf');
  const res = await t.form('/tdm-reserved-pdf', { file: { file: src }, policy: 'http://example.org/terms' });
  assert.is(res.status, 200);
  const out = await t.download(((await res.json()) as { outputUrl: string }).outputUrl);
  assert.match(tool('qpdf', ['--show-encryption', out]), 'R = 6');
  assert.match(xmpOf(out), '<tdm:policy>http://example.org/terms</tdm:policy>');
});

test('tdm errors: bad policy 400 naming policy, user password 401, broken 400', async () => {
  for (const policy of ['not a url', 'ftp://example.com/x', 'javascript:alert(1)']) {
    const res = await t.form('/tdm-reserved-pdf', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, policy });
    assert.is(res.status, 400, policy);
    assert.match(((await res.json()) as { error: string }).error, 'policy');
  }
  const enc = await t.form('/tdm-reserved-pdf', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') } });
  assert.is(enc.status, 401);
  const broken = await t.form('/tdm-reserved-pdf', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') } });
  assert.is(broken.status, 400);
});

// ---------- /postscript ----------

test('engine arguments: gs prepass with -dSAFER, page list, annotations, scale prolog; pdftops level', () => {
  const o = { level: 2 as const, pages: [1, 3], annotations: false, autoRotate: false, scale: 0.5 };
  const a = psPrepassArgs('in.pdf', 'out.pdf', o);
  for (const x of ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=pdfwrite', '-sPageList=1,3', '-dShowAnnots=false', '-dAutoRotatePages=/None'])
    assert.ok(a.includes(x), x);
  assert.ok(a.some((x) => x.includes('0.5 0.5 scale')));
  assert.equal(a.slice(-2), ['--', 'in.pdf']);
  assert.ok(needsPrepass(o));
  assert.not.ok(needsPrepass({ level: 3, annotations: true, autoRotate: false, scale: 1 }));
  assert.equal(pdfToPsArgs('in.pdf', 'o.ps', { level: 3 }), ['-level3', '-paper', 'match', 'in.pdf', 'o.ps']);
});

const ps2pdf = (ps: string) => {
  const pdf = join(work, `back-${Math.random().toString(36).slice(2)}.pdf`);
  execFileSync('gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', `-sOutputFile=${pdf}`, '--', ps]);
  return pdf;
};

for (const level of ['2', '3']) {
  test(`/postscript level ${level}: DSC header, page count, text survives a round trip through ps2pdf`, async () => {
    const src = corpus('pdf/text-4-pages-pdflatex.pdf');
    const res = await t.form('/postscript', { file: { file: src }, ps_level: level });
    assert.is(res.status, 200);
    const body = (await res.json()) as { outputUrl: string; outputId: string };
    const ps = await t.download(body.outputUrl);
    const head = readFileSync(ps).subarray(0, 4096).toString('latin1');
    assert.ok(head.startsWith('%!PS-Adobe-'), head.slice(0, 20));
    assert.match(head, new RegExp(`%%LanguageLevel: ${level}\\b`));
    assert.is(Number(/%%Pages: (\d+)/.exec(head)?.[1]), pdfPages(src));
    const back = ps2pdf(ps);
    assert.is(pdfPages(back), pdfPages(src));
    assert.equal(words(pdfText(back)).slice(0, 12), words(pdfText(src)).slice(0, 12));
    const rec = (await (await t.request(`/resource/${body.outputId}?format=info`)).json()) as { name: string; type: string };
    assert.is(rec.type, 'application/postscript');
    assert.match(rec.name, /\.ps$/);
  });
}

test('/postscript options: page_range, scale, shrink_to_fit, loose types, JSON by id', async () => {
  const src = corpus('pdf/text-4-pages-pdflatex.pdf');
  const id = await upload(src);
  const res = await t.json('/postscript', {
    id,
    page_range: '2-last',
    ps_level: 2,
    print_annotations: 'false',
    rotate: true,
    binary_output: false,
    scale: '0.5',
  });
  assert.is(res.status, 200);
  const ps = await t.download(((await res.json()) as { outputUrl: string }).outputUrl);
  assert.match(readFileSync(ps, 'latin1'), /%%Pages: 3\b/);
  const back = ps2pdf(ps);
  assert.is(pdfPages(back), 3);
  const page2 = words(tool('pdftotext', ['-f', '2', '-l', '2', src, '-'])).slice(0, 6);
  assert.equal(words(tool('pdftotext', ['-f', '1', '-l', '1', back, '-'])).slice(0, 6), page2);
  // Scaled by half about the centre: the first word moves towards the centre, at half its size.
  const box = (p: string) => {
    const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"/.exec(tool('pdftotext', ['-f', '1', '-l', '1', '-bbox', p, '-']))!;
    return { x: Number(m[1]), w: Number(m[3]) - Number(m[1]) };
  };
  const o = tool('pdftotext', ['-f', '2', '-l', '2', '-bbox', src, '-']);
  const om = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)"/.exec(o)!;
  const b = box(back);
  assert.ok(Math.abs(b.w - (Number(om[3]) - Number(om[1])) / 2) < 1, `width ${b.w}`);
  assert.ok(b.x > Number(om[1]), `x ${b.x}`);
  // shrink_to_fit caps an enlargement at 1: the text stays where it was.
  const fit = await t.json('/postscript', { id, page_range: '2', scale: 3, shrink_to_fit: 'on' });
  assert.is(fit.status, 200);
  const fitBack = ps2pdf(await t.download(((await fit.json()) as { outputUrl: string }).outputUrl));
  assert.ok(Math.abs(box(fitBack).x - Number(om[1])) < 1);
});

test('/postscript errors: 400 naming ps_level, scale, page_range; 401 encrypted; 400 broken', async () => {
  const src = { file: corpus('pdf/text-minimal-pdflatex.pdf') };
  for (const [k, v] of [
    ['ps_level', '1'],
    ['scale', '0'],
    ['scale', '-2'],
    ['page_range', '9'],
    ['page_range', 'x-y'],
  ]) {
    const res = await t.form('/postscript', { file: src, [k]: v });
    assert.is(res.status, 400, `${k}=${v}`);
    assert.match(((await res.json()) as { error: string }).error, k);
  }
  assert.is((await t.form('/postscript', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') } })).status, 401);
  assert.is((await t.form('/postscript', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') } })).status, 400);
});

test.run();
