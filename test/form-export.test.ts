import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { staticXfaForm } from './fixtures.js';
import { corpus, settledStatus, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
let tmp: string;
test.before(async () => {
  t = await startApp();
  tmp = mkdtempSync(join(tmpdir(), 'quire-form-export-'));
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const F = (name: string) => corpus(`forms/${name}`);
const FILLED = F('qpdf-form-filled-by-acrobat.pdf');
type Body = { outputUrl?: string; outputId?: string; inputId?: string[]; error?: string; warning?: string };

async function post(path: string, fields: Record<string, string | { file: string }>, status = 200): Promise<Body> {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return body;
}
const info = async (id: string) => (await (await t.request(`/resource/${id}?format=info`)).json()) as { name: string; type: string };

/** Field values as qpdf reads them (qpdf --json, acroform), one per name. */
function values(file: string): Record<string, unknown> {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', file]));
  const out: Record<string, unknown> = {};
  for (const f of json.acroform.fields as { fullname: string; value: unknown; fieldtype: string }[]) if (f.fieldtype !== '/Sig') out[f.fullname] ??= f.value;
  return out;
}

/** The form with every value cleared (/V removed, check boxes and radios Off), made with qpdf JSON. */
function emptyCopy(src: string): string {
  const json = JSON.parse(tool('qpdf', ['--json-output', '--json-key=qpdf', src]));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const updates: Record<string, unknown> = {};
  for (const [key, o] of Object.entries(objects)) {
    const v = o.value;
    if (!v || typeof v !== 'object' || Array.isArray(v) || key === 'trailer') continue;
    if (!('/V' in v) && !('/AS' in v)) continue;
    const next = { ...v };
    delete next['/V'];
    if ('/AS' in next) next['/AS'] = '/Off';
    updates[key] = { value: next };
  }
  const update = join(tmp, 'empty.json');
  writeFileSync(update, JSON.stringify({ qpdf: [json.qpdf[0], updates] }));
  const out = join(tmp, `empty-${Object.keys(updates).length}.pdf`);
  execFileSync('qpdf', [src, out, `--update-from-json=${update}`]);
  return out;
}

const EXPECTED = {
  'Text Box 1': 'u:abc potato',
  r1: '/1',
  'Check Box 1': '/Off',
  'Check Box 2': '/Yes',
  'Check Box 3': '/Off',
  r2: '/2',
  'Text Box 2': 'u:salad πʬ xyz',
};

for (const [format, type] of [
  ['fdf', 'application/vnd.fdf'],
  ['xfdf', 'application/vnd.adobe.xfdf'],
  ['xml', 'application/xml'],
] as const) {
  test(`AcroForm ${format}: exported with its MIME type, imported into an empty copy, every value comes back`, async () => {
    const exported = await post('/exported-form-data', { file: { file: FILLED }, data_format: format });
    const meta = await info(exported.outputId!);
    assert.is(meta.type, type);
    assert.is(meta.name, `qpdf-form-filled-by-acrobat_service_exported-form-data.${format}`);
    assert.is([exported.inputId].flat().length, 1);
    const file = await t.download(exported.outputUrl!);
    const text = readFileSync(file, 'utf8');
    if (format === 'fdf') {
      assert.ok(text.startsWith('%FDF-1.2'));
      // The cross-reference table points at the object: readers need not recover the file.
      const bytes = readFileSync(file);
      const xref = Number(/startxref\s+(\d+)/.exec(text)![1]);
      assert.is(bytes.subarray(xref, xref + 4).toString(), 'xref');
      const at = Number(/\n(\d{10}) 00000 n/.exec(text)![1]);
      assert.is(bytes.subarray(at, at + 7).toString(), '1 0 obj');
    } else assert.is(XMLValidator.validate(text), true);
    const empty = emptyCopy(FILLED);
    assert.is.not(values(empty)['Text Box 2'], EXPECTED['Text Box 2']);
    const filled = await post('/pdf-with-imported-form-data', {
      id: ((await post('/upload', { file: { file: empty } })) as unknown as { files: { id: string }[] }).files?.[0]?.id ?? '',
      data_file_id: exported.outputId!,
    } as never);
    const out = await t.download(filled.outputUrl!);
    assert.equal(values(out), EXPECTED);
    assert.is(filled.warning, undefined);
  });
}

test('AcroForm export escapes XML: a value with markup characters stays one well-formed value', async () => {
  const src = F('simple-form-2-fields.pdf');
  const xfdf = `<?xml version="1.0" encoding="UTF-8"?><xfdf xmlns="http://ns.adobe.com/xfdf/"><fields><field name="Field1"><value>a &lt;b&gt; &amp; "c" ]]&gt; (d) \\ e</value></field><field name="Field2"><value>Ünïcödé 中文</value></field></fields></xfdf>`;
  const filled = await post('/pdf-with-imported-form-data', { file: { file: src }, data_file: { bytes: Buffer.from(xfdf), name: 'd.xfdf' } } as never);
  for (const format of ['xfdf', 'xml', 'fdf']) {
    const exported = await post('/exported-form-data', { id: filled.outputId!, data_format: format });
    const back = await post('/pdf-with-imported-form-data', { file: { file: src }, data_file_id: exported.outputId! } as never);
    const v = values(await t.download(back.outputUrl!));
    assert.is(v.Field1, 'u:a <b> & "c" ]]> (d) \\ e', format);
    assert.is(v.Field2, 'u:Ünïcödé 中文', format);
  }
});

test('a format that does not fit the form: 400 naming data_format and the valid options', async () => {
  for (const format of ['xdp', 'xfd']) {
    const body = await post('/exported-form-data', { file: { file: FILLED }, data_format: format }, 400);
    assert.is(body.error, 'Input PDF contains AcroForm form fields. Valid options for data_format are: fdf, xfdf, xml');
  }
  for (const format of ['fdf', 'xfdf']) {
    const body = await post('/exported-form-data', { file: { file: F('xfa-pdfium-simple.pdf') }, data_format: format }, 400);
    assert.is(body.error, 'Input PDF contains XFA form fields. Valid options for data_format are: xfd, xdp, xml');
  }
  const bad = await post('/exported-form-data', { file: { file: FILLED }, data_format: 'csv' }, 400);
  assert.match(bad.error!, /data_format/);
  const missing = await post('/exported-form-data', { file: { file: FILLED } }, 400);
  assert.match(missing.error!, /data_format/);
});

test('a PDF without a form: 400; an encrypted one: 401; a broken one: 400', async () => {
  const none = await post('/exported-form-data', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') }, data_format: 'xml' }, 400);
  assert.match(none.error!, /no form fields/);
  await post('/exported-form-data', { file: { file: corpus('encrypted/rc4-128-user-view-owner-master.pdf') }, data_format: 'xml' }, 401);
  const broken = join(tmp, 'broken.pdf');
  writeFileSync(broken, '%PDF-1.7\nnot really\n');
  await post('/exported-form-data', { file: { file: broken }, data_format: 'xml' }, 400);
});

let fixtures = 0;
const staticXfa = (data?: string) => staticXfaForm(F('simple-form-2-fields.pdf'), join(tmp, `static-xfa-${++fixtures}.pdf`), data);

test('XFA export from the corpus form (no datasets): its template fields, as xml, xdp and xfd with their MIME types', async () => {
  const types = { xml: 'application/xml', xdp: 'application/vnd.adobe.xdp+xml', xfd: 'application/vnd.adobe.xfd+xml' };
  for (const format of ['xml', 'xdp', 'xfd'] as const) {
    const body = await post('/exported-form-data', { file: { file: F('xfa-pdfium-simple.pdf') }, data_format: format });
    assert.is((await info(body.outputId!)).type, types[format]);
    const text = readFileSync(await t.download(body.outputUrl!), 'utf8');
    assert.is(XMLValidator.validate(text), true);
    assert.match(text, /<form1><TextField1><\/TextField1><TextField11><\/TextField11><\/form1>/);
    if (format === 'xdp') assert.match(text, /<xdp:xdp xmlns:xdp="http:\/\/ns.adobe.com\/xdp\/"><xfa:datasets/);
    if (format === 'xfd') assert.match(text, /^<\?xml[^>]*>\s*<xfa:datasets/);
  }
});

test('XFA export of a form with datasets, imported back into the form: the values come back', async () => {
  const form = staticXfa();
  for (const format of ['xml', 'xdp', 'xfd']) {
    const body = await post('/exported-form-data', { file: { file: form }, data_format: format });
    const text = readFileSync(await t.download(body.outputUrl!), 'utf8');
    assert.match(text, /<Field1>Alpha &amp; co<\/Field1><Field2>Beta πʬ<\/Field2>/, format);
    const emptied = staticXfa('<form1><Field1></Field1><Field2></Field2></form1>');
    const back = await post('/pdf-with-imported-form-data', { file: { file: emptied }, data_file_id: body.outputId! } as never);
    const again = await post('/exported-form-data', { id: back.outputId!, data_format: 'xml' });
    // Exported from the XFA datasets again (the form is still XFA: an AcroForm export would be <fields>).
    assert.match(
      readFileSync(await t.download(again.outputUrl!), 'utf8'),
      /^<\?xml[^>]*>\s*<form1><Field1>Alpha &amp; co<\/Field1><Field2>Beta πʬ<\/Field2>/,
      format,
    );
  }
});

test('/pdf-with-acroforms: a static XFA form loses its XFA and its AcroForm fields take the XFA data', async () => {
  const form = staticXfa();
  const body = await post('/pdf-with-acroforms', { file: { file: form } });
  assert.is(body.warning, undefined);
  const out = await t.download(body.outputUrl!);
  assert.is((await info(body.outputId!)).type, 'application/pdf');
  assert.match(tool('pdfinfo', [out]), /Form:\s+AcroForm/);
  assert.match(tool('pdfinfo', [form]), /Form:\s+XFA/);
  assert.equal(values(out), { Field1: 'u:Alpha & co', Field2: 'u:Beta πʬ' });
  // The values are drawn: pdftotext reads the widgets' appearances.
  assert.match(tool('pdftotext', [out, '-']), /Alpha & co/);
});

test('/pdf-with-acroforms: dynamic XFA without widgets -> laid out (see test/xfa.test.ts); no XFA -> 200 warning, no output', async () => {
  for (const name of ['xfa-pdfium-simple.pdf', 'xfa-pdfium-dynamic-email-submit.pdf']) {
    const body = await post('/pdf-with-acroforms', { file: { file: F(name) } });
    assert.match(body.warning!, /dynamic XFA form was laid out by pdf\.js/);
  }
  for (const name of ['acroform-basic-fields-all-types.pdf', 'xfa-claimed-needsrendering-minimal.pdf']) {
    const body = await post('/pdf-with-acroforms', { file: { file: F(name) } });
    assert.is(body.warning, 'No XFA forms were detected in the input PDF. No output was produced.');
    assert.is(body.outputUrl, undefined);
    assert.is(body.outputId, undefined);
  }
  await post('/pdf-with-acroforms', { file: { file: corpus('encrypted/rc4-128-user-view-owner-master.pdf') } }, 401);
});

test('JSON by id and polling', async () => {
  const up = (await (await t.form('/upload', { file: { file: FILLED } })).json()) as { files: { id: string }[] };
  const res = await t.json('/exported-form-data', { id: up.files[0].id, data_format: 'xfdf', output: 'mine' }, { 'Request-Type': 'requestId' });
  const { requestId } = (await res.json()) as { requestId: string };
  const status = await settledStatus(t, requestId);
  assert.is(status.status, 'completed', JSON.stringify(status));
  assert.is((await info(status.outputId as string)).name, 'mine.xfdf');
});

test.run();
