import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpus, expectError, expectOk, pdfPages, pdfText, settledStatus, startApp, type TestApp, tool, uploadId } from './helpers.js';

let t: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'quire-flatten-'));
const FORM = corpus('forms/qpdf-form-filled-by-acrobat.pdf');
const LO_FORM = corpus('forms/libreoffice-form.pdf'); // /NeedAppearances true
const ANNOTS = corpus('pdf/annotations-text-highlight-ink.pdf'); // annotations without appearance streams
const LINKS = corpus('pdf/outline-bookmarks-links.pdf');
const ENCRYPTED = corpus('encrypted/rc4-40-user-view-owner-master.pdf');
const BROKEN = corpus('malformed/invalid-header-then-eof.pdf');

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const okBody = expectOk;
const ok = async (res: Response) => t.download((await expectOk(res)).outputUrl as string);
const fails = expectError;
const upload = (path: string) => uploadId(t, path);

/** A hand-written PDF: the objects in order (1 = catalog), with a correct xref. */
function writePdf(name: string, objects: string[]): string {
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  const path = join(tmp, name);
  writeFileSync(path, out, 'latin1');
  return path;
}
const stream = (dict: string, data: string) => `<< ${dict} /Length ${Buffer.byteLength(data, 'latin1')} >>\nstream\n${data}\nendstream`;

/** One page, three texts: one in a layer on by default, one in a layer the default configuration turns off, one outside layers. */
const LAYERS = () =>
  writePdf('layers.pdf', [
    '<< /Type /Catalog /Pages 2 0 R /OCProperties << /OCGs [4 0 R 5 0 R] /D << /Order [4 0 R 5 0 R] /ON [4 0 R] /OFF [5 0 R] >> >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R /Resources << /Font << /F1 7 0 R >> /Properties << /oc1 4 0 R /oc2 5 0 R >> >> >>',
    '<< /Type /OCG /Name (Shown) >>',
    '<< /Type /OCG /Name (Hidden) >>',
    stream(
      '',
      '/OC /oc1 BDC BT /F1 24 Tf 72 700 Td (VisibleLayerText) Tj ET EMC\n/OC /oc2 BDC BT /F1 24 Tf 72 600 Td (HiddenLayerText) Tj ET EMC\nBT /F1 24 Tf 72 500 Td (PlainText) Tj ET',
    ),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);

/** One page with a half-opaque blue square over a red one (constant alpha in an ExtGState) and some text. */
const TRANSPARENT = () =>
  writePdf('transparent.pdf', [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 300] /Contents 4 0 R /Group << /S /Transparency /CS /DeviceRGB >> /Resources << /ExtGState << /GS1 5 0 R >> /Font << /F1 6 0 R >> >> >>',
    stream('', '1 0 0 rg 50 50 150 150 re f\nq /GS1 gs 0 0 1 rg 100 100 150 150 re f Q\nBT /F1 18 Tf 20 270 Td (Transparency) Tj ET'),
    '<< /Type /ExtGState /ca 0.5 /CA 0.5 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);

/** Every object of a PDF as qpdf JSON v2 sees it (streams' dictionaries included). */
function objects(path: string): Record<string, any>[] {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=qpdf', path])) as { qpdf: [unknown, Record<string, any>] };
  return Object.entries(json.qpdf[1])
    .filter(([k]) => k.startsWith('obj:'))
    .map(([, v]) => (v.value ?? v.stream?.dict ?? {}) as Record<string, any>);
}
const acroform = (path: string) => JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', path])).acroform as { hasacroform: boolean; fields: unknown[] };
const annotationCount = (path: string) =>
  objects(path).filter(
    (o) =>
      (o && typeof o === 'object' && o['/Type'] === '/Annot') ||
      (o?.['/Subtype'] && ['/Link', '/Widget', '/Text', '/Highlight', '/Ink'].includes(o['/Subtype'])),
  ).length;
const pageAnnots = (path: string) => objects(path).filter((o) => o && o['/Type'] === '/Page' && o['/Annots']).length;
const trailerAndCatalog = (path: string) =>
  tool('qpdf', ['--show-object=trailer', path]) +
  tool('qpdf', [
    `--show-object=${tool('qpdf', ['--show-object=trailer', path])
      .match(/\/Root (\d+) (\d+) R/)!
      .slice(1)
      .join(',')}`,
    path,
  ]);

/** Mean absolute difference of two grey renderings (0-255), both at 50 dpi. */
async function renderDiff(a: string, b: string): Promise<number> {
  const grey = async (pdf: string, name: string) => {
    tool('pdftoppm', ['-r', '50', '-f', '1', '-l', '1', '-singlefile', '-png', pdf, join(tmp, name)]);
    return sharp(join(tmp, `${name}.png`))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
  };
  const [x, y] = [await grey(a, 'a'), await grey(b, 'b')];
  assert.is(x.info.width, y.info.width);
  assert.is(x.info.height, y.info.height);
  let sum = 0;
  for (let i = 0; i < x.data.length; i++) sum += Math.abs(x.data[i] - y.data[i]);
  return sum / x.data.length;
}

test('/flattened-forms-pdf: values become page text, no fields or widgets left', async () => {
  const out = await ok(await t.form('/flattened-forms-pdf', { file: { file: FORM } }));
  assert.is(pdfPages(out), pdfPages(FORM));
  assert.match(pdfText(out), /abc potato/);
  assert.equal(acroform(out), { ...acroform(out), hasacroform: false, fields: [] });
  assert.is(objects(out).filter((o) => o['/Subtype'] === '/Widget').length, 0);
  assert.not.match(trailerAndCatalog(out), /AcroForm/);
});

test('/flattened-forms-pdf: NeedAppearances values get appearances first; JSON by id, output name', async () => {
  const id = await upload(LO_FORM);
  const body = await okBody(await t.json('/flattened-forms-pdf', { id, output: 'flat', as_printed: 'false' }));
  assert.is(body.inputId, id);
  const out = await t.download(body.outputUrl);
  const text = pdfText(out);
  assert.match(text, /Alice/);
  assert.match(text, /Bob/);
  assert.is(acroform(out).hasacroform, false);
  const info = (await (await t.request(`/resource/${body.outputId}?format=info`)).json()) as { name: string; type: string };
  assert.is(info.name, 'flat.pdf');
  assert.is(info.type, 'application/pdf');
});

test('/flattened-forms-pdf: other annotations are kept', async () => {
  const out = await ok(await t.form('/flattened-forms-pdf', { file: { file: ANNOTS } }));
  assert.ok(pageAnnots(out) > 0);
});

test('/flattened-annotations-pdf: annotations drawn (even without appearance streams) and removed', async () => {
  const out = await ok(await t.form('/flattened-annotations-pdf', { file: { file: ANNOTS } }));
  assert.is(pageAnnots(out), 0);
  assert.is(annotationCount(out), 0);
  assert.match(pdfText(out), /Not highlighted/);
  // The highlight and ink are now pixels of the page: the rendering matches the input's (poppler draws
  // annotations without appearances too), and differs from the page with annotations hidden.
  assert.ok((await renderDiff(ANNOTS, out)) < 3, 'flattened page renders like the annotated input');
  const hidden = join(tmp, 'no-annots.pdf');
  tool('gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=pdfwrite', '-dShowAnnots=false', '-dPreserveAnnots=false', `-sOutputFile=${hidden}`, ANNOTS]);
  const shown = await renderDiff(hidden, out);
  assert.ok(shown > 0.1, `the annotations are visible in the output (${shown})`);
});

test('/flattened-annotations-pdf: links and form widgets removed too', async () => {
  const out = await ok(await t.form('/flattened-annotations-pdf', { file: { file: LINKS } }));
  assert.is(pageAnnots(out), 0);
  const form = await ok(await t.form('/flattened-annotations-pdf', { file: { file: FORM } }));
  assert.is(acroform(form).hasacroform, false);
  assert.match(pdfText(form), /abc potato/);
});

test('/flattened-layers-pdf: visible layer kept, hidden layer dropped, no OCProperties', async () => {
  const input = LAYERS();
  assert.match(trailerAndCatalog(input), /OCProperties/);
  const out = await ok(await t.form('/flattened-layers-pdf', { file: { file: input } }));
  const text = pdfText(out);
  assert.match(text, /VisibleLayerText/);
  assert.match(text, /PlainText/);
  assert.not.match(text, /HiddenLayerText/);
  // Not merely hidden: gone from the content (qpdf's QDF form shows content streams uncompressed).
  const qdf = tool('qpdf', ['--qdf', '--object-streams=disable', out, '-']);
  assert.not.match(qdf, /HiddenLayer/);
  assert.not.match(qdf, /\/OC\b/);
  assert.not.match(trailerAndCatalog(out), /OCProperties/);
  assert.is(objects(out).filter((o) => o['/Type'] === '/OCG').length, 0);
});

test('/flattened-transparencies-pdf: no transparency left, renders alike, quality default and range', async () => {
  const input = TRANSPARENT();
  const hasTransparency = (path: string) =>
    objects(path).some(
      (o) =>
        (o['/SMask'] && o['/SMask'] !== '/None') ||
        (typeof o['/ca'] === 'number' && o['/ca'] < 1) ||
        (typeof o['/CA'] === 'number' && o['/CA'] < 1) ||
        o['/Group']?.['/S'] === '/Transparency' ||
        (o['/BM'] && o['/BM'] !== '/Normal'),
    );
  assert.ok(hasTransparency(input));
  for (const quality of [undefined, 'low', 'high']) {
    const out = await ok(await t.form('/flattened-transparencies-pdf', { file: { file: input }, ...(quality ? { quality } : {}) }));
    assert.not.ok(hasTransparency(out), `quality ${quality}`);
    assert.match(tool('qpdf', ['--show-object=trailer', out]) + tool('head', ['-c', '9', out]), /%PDF-1\.3/);
    const diff = await renderDiff(input, out);
    assert.ok(diff < 4, `quality ${quality}: mean difference ${diff}`);
  }
  await fails(await t.form('/flattened-transparencies-pdf', { file: { file: input }, quality: 'best' }), 400, /quality/);
});

test('flatten endpoints: encrypted input 401, broken 400, file and id 400, polling', async () => {
  for (const path of ['/flattened-forms-pdf', '/flattened-annotations-pdf', '/flattened-layers-pdf', '/flattened-transparencies-pdf']) {
    await fails(await t.form(path, { file: { file: ENCRYPTED } }), 401, /password protected/);
    await fails(await t.form(path, { file: { file: BROKEN } }), 400, /not valid input/);
  }
  const id = await upload(FORM);
  await fails(await t.form('/flattened-layers-pdf', { file: { file: FORM }, id }), 400, /only accept a File or an ID/);
  const r = await okBody(await t.json('/flattened-annotations-pdf', { id }, { 'Response-Type': 'requestId' }));
  const status = await settledStatus(t, r.requestId);
  assert.is(status.status, 'completed', JSON.stringify(status));
  assert.is(status.inputId, id);
});

test('OpenAPI lists the four endpoints with quality', async () => {
  const doc = (await (await t.request('/openapi.json')).json()) as { paths: Record<string, any> };
  for (const p of ['/flattened-forms-pdf', '/flattened-annotations-pdf', '/flattened-layers-pdf', '/flattened-transparencies-pdf'])
    assert.ok(doc.paths[p]?.post, p);
  assert.match(JSON.stringify(doc.paths['/flattened-transparencies-pdf']), /"medium"/);
});

test.run();
