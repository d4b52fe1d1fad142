import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assetPath } from '../engines/chromium/xfa.js';
import { corpus, startApp, type TestApp, tool } from './helpers.js';

/**
 * Dynamic XFA forms (issue 30): laid out by pdf.js in Chromium, converted to an AcroForm by /pdf-with-acroforms,
 * and read as laid out by /png, /extracted-text and /flattened-forms-pdf. Outputs are read back with qpdf,
 * pdftotext and tesseract.
 */

let t: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'quire-xfa-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const F = (name: string) => corpus(`forms/${name}`);
const SIMPLE = F('xfa-pdfium-simple.pdf');
const EMAIL = F('xfa-pdfium-dynamic-email-submit.pdf');
type Body = { outputUrl?: string | string[]; outputId?: string | string[]; error?: string; warning?: string; fullText?: string };

async function post(path: string, fields: Record<string, unknown>, status = 200): Promise<Body> {
  const res = await t.form(path, fields as never);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, `${path}: ${JSON.stringify(body)}`);
  return body;
}
const download = (body: Body) => t.download(String(body.outputUrl));

interface Field {
  fullname: string;
  fieldtype: string;
  value: unknown;
  pageposfrom1: number;
  annotation: { appearancestate: string; annotationflags: number };
  choices: string[];
}
/** The AcroForm fields as qpdf reads them. */
const fieldsOf = (file: string): Field[] => JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', file])).acroform.fields;

/** The catalog and the AcroForm dictionary, read with qpdf. */
function catalogOf(file: string): { root: Record<string, unknown>; acro: Record<string, unknown> } {
  const objects = JSON.parse(tool('qpdf', ['--json', '--json-key=qpdf', file])).qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const root = objects[`obj:${(objects.trailer.value as Record<string, string>)['/Root']}`].value!;
  const ref = root['/AcroForm'];
  const acro = (typeof ref === 'string' ? objects[`obj:${ref}`].value : ref) as Record<string, unknown>;
  return { root, acro };
}

/**
 * A dynamic XFA form made from the corpus's simple XFA form: its template replaced by `template` (and a datasets
 * packet with `data`), with a Helvetica font in /DR (pdf.js lays captions out with the form's fonts), and
 * optionally a title and an attachment.
 */
function dynamicForm(name: string, template: string, data?: string, extra: { title?: string; attachment?: string } = {}): string {
  const out = join(tmp, name);
  const json = JSON.parse(execFileSync('qpdf', ['--json-output', '--json-key=qpdf', SIMPLE], { encoding: 'utf8' }));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const max = json.qpdf[0].maxobjectid as number;
  const stream = (text: string) => ({ stream: { dict: {}, data: Buffer.from(text).toString('base64') } });
  const root = objects[`obj:${(objects.trailer.value as Record<string, string>)['/Root']}`].value!;
  const acroRef = root['/AcroForm'] as string;
  const parts = [...(objects[`obj:${acroRef}`].value!['/XFA'] as string[])];
  const updates: Record<string, unknown> = {};
  updates[`obj:${parts[parts.indexOf('u:template') + 1]}`] = stream(template);
  if (data !== undefined) {
    updates[`obj:${max + 1} 0 R`] = stream(`<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>${data}</xfa:data></xfa:datasets>`);
    parts.splice(parts.indexOf('u:localeSet'), 0, 'u:datasets', `${max + 1} 0 R`);
  }
  updates[`obj:${max + 2} 0 R`] = { value: { '/Type': '/Font', '/Subtype': '/Type1', '/BaseFont': '/Helvetica', '/Encoding': '/WinAnsiEncoding' } };
  updates[`obj:${acroRef}`] = { value: { '/XFA': parts, '/DR': { '/Font': { '/Helv': `${max + 2} 0 R` } }, '/DA': 'u:/Helv 0 Tf 0 g' } };
  if (extra.title) {
    updates[`obj:${max + 3} 0 R`] = { value: { '/Title': `u:${extra.title}` } };
    updates.trailer = { value: { '/Root': (objects.trailer.value as Record<string, string>)['/Root'], '/Size': max + 4, '/Info': `${max + 3} 0 R` } };
  }
  writeFileSync(`${out}.json`, JSON.stringify({ qpdf: [json.qpdf[0], updates] }));
  const attach = extra.attachment ? ['--add-attachment', extra.attachment, '--'] : [];
  execFileSync('qpdf', [SIMPLE, out, `--update-from-json=${out}.json`, ...attach]);
  return out;
}

const ALL_TYPES = `<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1" layout="tb">
<pageSet><pageArea name="Page1"><contentArea x="0.25in" y="0.25in" w="8in" h="10.5in"/><medium stock="letter" short="8.5in" long="11in"/></pageArea></pageSet>
<subform name="page1" w="8in" h="6in">
<field name="Name" x="0.5in" y="0.5in" w="4in" h="0.4in"><ui><textEdit/></ui><caption reserve="1.2in"><value><text>Full name</text></value></caption></field>
<field name="Notes" x="0.5in" y="1.1in" w="4in" h="0.9in"><ui><textEdit multiLine="1"/></ui><caption reserve="1.2in"><value><text>Notes</text></value></caption></field>
<field name="Agree" x="0.5in" y="2.2in" w="2in" h="0.3in"><ui><checkButton/></ui><items><integer>1</integer><integer>0</integer></items><caption placement="right"><value><text>I agree</text></value></caption></field>
<exclGroup name="Colour" x="0.5in" y="2.7in" w="3in" h="0.8in" layout="tb">
<field name="Red" w="2in" h="0.3in"><ui><checkButton shape="round"/></ui><items><text>red</text></items><caption placement="right"><value><text>Red</text></value></caption></field>
<field name="Blue" w="2in" h="0.3in"><ui><checkButton shape="round"/></ui><items><text>blue</text></items><caption placement="right"><value><text>Blue</text></value></caption></field>
</exclGroup>
<field name="Country" x="0.5in" y="3.7in" w="4in" h="0.4in"><ui><choiceList/></ui><items><text>France</text><text>Germany</text><text>Italy</text></items><caption reserve="1.2in"><value><text>Country</text></value></caption></field>
</subform></subform></template>`;
const ALL_DATA =
  '<form1><page1><Name>Ada Lovelace</Name><Notes>First line Ελένη</Notes><Agree>1</Agree><Colour>blue</Colour><Country>Germany</Country></page1></form1>';

test('pdf.js is served from node_modules by a fixed list of names', () => {
  assert.ok(assetPath('/pdfjs/build/pdf.min.mjs'));
  assert.ok(assetPath('/pdfjs/build/pdf.worker.min.mjs'));
  assert.ok(assetPath('/pdfjs/standard_fonts/LiberationSans-Regular.ttf'));
  for (const bad of [
    '/pdfjs/build/pdf.mjs.map',
    '/pdfjs/../package.json',
    '/pdfjs/build/../../../etc/passwd',
    '/pdfjs/standard_fonts/.hidden',
    '/etc/passwd',
    '/pdfjs/types/x',
  ])
    assert.is(assetPath(bad), null, bad);
});

test('/pdf-with-acroforms: both corpus XFA forms become AcroForms, fields named by their XFA paths at the laid-out places', async () => {
  const expected: [string, string[], RegExp][] = [
    [SIMPLE, ['form1[0].TextField1[0]', 'form1[0].TextField11[0]'], /^$/],
    [EMAIL, Array.from({ length: 9 }, (_, i) => `form1[0].TextField1[${i}]`), /Text Field[\s\S]*E-Mail/],
  ];
  for (const [file, names, labels] of expected) {
    const body = await post('/pdf-with-acroforms', { file: { file } });
    assert.match(body.warning!, /laid out by pdf\.js \(1 page, \d+ fields?\)/);
    const out = await download(body);
    assert.match(tool('pdfinfo', [out]), /Form:\s+AcroForm/);
    assert.match(tool('pdfinfo', [out]), /Page size:\s+612 x 792 pts/);
    const fields = fieldsOf(out);
    assert.equal(
      fields.map((f) => f.fullname),
      names,
    );
    for (const f of fields) {
      assert.is(f.fieldtype, '/Tx');
      assert.is(f.pageposfrom1, 1);
    }
    const { root, acro } = catalogOf(out);
    assert.is(acro['/XFA'], undefined);
    assert.is(root['/NeedsRendering'], undefined);
    // The page shows the form's labels, not the "Please wait" placeholder.
    const text = tool('pdftotext', ['-layout', out, '-']);
    assert.match(text.trim(), labels);
    assert.not.match(text, /Please wait/);
  }
  // The e-mail form's fields sit in two columns, one above the other (the layout's places, not one pile).
  const out = await download(await post('/pdf-with-acroforms', { file: { file: EMAIL } }));
  const rects = (JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', out])).acroform.fields as { annotation: { object: string } }[]).length;
  assert.is(rects, 9);
  const boxes = tool('qpdf', ['--json', '--json-key=qpdf', out]).match(/"\/Rect": \[[^\]]+\]/g)!;
  assert.is(new Set(boxes).size, 9);
});

test('/pdf-with-acroforms: text, multiline, check box, radio group and choice keep their types and values; metadata and attachments kept', async () => {
  const note = join(tmp, 'note.txt');
  writeFileSync(note, 'attached note');
  const form = dynamicForm('all-types.pdf', ALL_TYPES, ALL_DATA, { title: 'Quire XFA title', attachment: note });
  const body = await post('/pdf-with-acroforms', { file: { file: form } });
  assert.match(body.warning!, /5 fields/);
  const out = await download(body);
  const byName = new Map<string, Field[]>();
  for (const f of fieldsOf(out)) byName.set(f.fullname, [...(byName.get(f.fullname) ?? []), f]);
  assert.equal(
    [...byName.keys()],
    ['form1[0].page1[0].Name[0]', 'form1[0].page1[0].Notes[0]', 'form1[0].page1[0].Agree[0]', 'form1[0].page1[0].Colour[0]', 'form1[0].page1[0].Country[0]'],
  );
  const one = (n: string) => byName.get(`form1[0].page1[0].${n}[0]`)!;
  assert.is(one('Name')[0].fieldtype, '/Tx');
  assert.is(one('Name')[0].value, 'u:Ada Lovelace');
  assert.is(one('Notes')[0].value, 'u:First line Ελένη');
  assert.is(one('Agree')[0].fieldtype, '/Btn');
  assert.is(one('Agree')[0].value, '/Yes');
  // The exclusion group is one radio field with a widget per button; the second (blue) is on.
  const colour = one('Colour');
  assert.is(colour.length, 2);
  assert.equal(
    colour.map((w) => w.annotation.appearancestate === '/Off'),
    [true, false],
  );
  assert.is(one('Country')[0].fieldtype, '/Ch');
  assert.is(one('Country')[0].value, 'u:Germany');
  // The field dictionaries: the choice's options (/Opt, as [export, shown] pairs) and the multiline flag (bit 13 of /Ff).
  const dicts = Object.values(JSON.parse(tool('qpdf', ['--json', '--json-key=qpdf', out])).qpdf[1] as Record<string, { value?: Record<string, unknown> }>)
    .map((o) => o.value)
    .filter((v): v is Record<string, unknown> => !!v && typeof v === 'object' && '/T' in v);
  const dict = (t: string) => dicts.find((d) => d['/T'] === `u:${t}[0]`)!;
  assert.equal((dict('Country')['/Opt'] as unknown[]).flat(), ['u:France', 'u:France', 'u:Germany', 'u:Germany', 'u:Italy', 'u:Italy']);
  assert.ok((Number(dict('Notes')['/Ff']) & 4096) !== 0);
  assert.ok((Number(dict('Name')['/Ff'] ?? 0) & 4096) === 0);
  assert.equal(dict('Colour')['/Opt'], ['u:red', 'u:blue']);
  // Labels and values are on the page (values drawn by the widgets' appearances).
  const text = tool('pdftotext', ['-layout', out, '-']);
  // Ελένη is beyond Helvetica's WinAnsi: drawn with the shared font model.
  for (const word of ['Full name', 'Notes', 'I agree', 'Red', 'Blue', 'Country', 'Ada Lovelace', 'Germany', 'Ελένη']) assert.ok(text.includes(word), word);
  // The original's title and attachment survive; the XFA does not.
  assert.match(tool('pdfinfo', [out]), /Title:\s+Quire XFA title/);
  assert.match(tool('qpdf', ['--list-attachments', out]), /note\.txt/);
  assert.is(catalogOf(out).acro['/XFA'], undefined);
});

test('an encrypted form that opens without a password keeps its encryption', async () => {
  const enc = join(tmp, 'owner-only.pdf');
  execFileSync('qpdf', ['--encrypt', '', 'owner-secret', '256', '--', SIMPLE, enc]);
  const out = await download(await post('/pdf-with-acroforms', { file: { file: enc } }));
  assert.match(tool('pdfinfo', [out]), /Encrypted:\s+yes .*AES-256/);
  assert.match(tool('pdfinfo', [out]), /Form:\s+AcroForm/);
  assert.equal(
    fieldsOf(out).map((f) => f.fullname),
    ['form1[0].TextField1[0]', 'form1[0].TextField11[0]'],
  );
});

test('a value filled into the XFA data survives /pdf-with-acroforms and /exported-form-data', async () => {
  const xdp =
    '<?xml version="1.0"?><xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data><form1><TextField1>Quire XFA value</TextField1><TextField11>Second</TextField11></form1></xfa:data></xfa:datasets></xdp:xdp>';
  const filled = await post('/pdf-with-imported-form-data', { file: { file: SIMPLE }, data_file: { bytes: Buffer.from(xdp), name: 'data.xdp' } });
  const converted = await post('/pdf-with-acroforms', { id: filled.outputId });
  const out = await download(converted);
  const values = new Map(fieldsOf(out).map((f) => [f.fullname, f.value]));
  assert.is(values.get('form1[0].TextField1[0]'), 'u:Quire XFA value');
  assert.is(values.get('form1[0].TextField11[0]'), 'u:Second');
  const exported = await post('/exported-form-data', { id: converted.outputId, data_format: 'xfdf' });
  const xfdf = readFileSync(await download(exported), 'utf8');
  assert.match(xfdf, /<field name="TextField1\[0\]">\s*<value>Quire XFA value<\/value>/);
  assert.match(xfdf, /<field name="form1\[0\]">/);
});

test('/png, /extracted-text, /flattened-forms-pdf and /rasterized-pdf read a dynamic XFA form as laid out, saying so', async () => {
  const png = await post('/png', { file: { file: EMAIL }, resolution: '200', color_model: 'gray' });
  assert.match(png.warning!, /dynamic XFA form/);
  const image = await t.download(String((png.outputUrl as string[])[0]));
  const ocr = execFileSync('tesseract', [image, '-'], {
    encoding: 'utf8',
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.match(ocr, /Text Field/);
  assert.not.match(ocr, /Please wait/);

  const text = await post('/extracted-text', { file: { file: EMAIL } });
  assert.match(text.warning!, /dynamic XFA form/);
  assert.match(text.fullText!, /Text Field/);
  assert.match(text.fullText!, /E-Mail/);
  assert.not.match(text.fullText!, /Please wait/);

  const form = dynamicForm('flatten-me.pdf', ALL_TYPES, ALL_DATA);
  const flat = await post('/flattened-forms-pdf', { file: { file: form } });
  assert.match(flat.warning!, /dynamic XFA form/);
  const out = await download(flat);
  const flatText = tool('pdftotext', ['-layout', out, '-']);
  for (const word of ['Full name', 'Ada Lovelace', 'Germany', 'I agree']) assert.ok(flatText.includes(word), word);
  assert.match(tool('pdfinfo', [out]), /Form:\s+none/);

  // /rasterized-pdf bakes the laid-out page, not the placeholder, into its image.
  const raster = await post('/rasterized-pdf', { file: { file: EMAIL } });
  assert.match(raster.warning!, /dynamic XFA form/);
  const page = join(tmp, 'raster');
  tool('pdftoppm', ['-png', '-r', '150', '-gray', '-f', '1', '-l', '1', '-singlefile', await download(raster), page]);
  const rasterOcr = execFileSync('tesseract', [`${page}.png`, '-'], {
    encoding: 'utf8',
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.match(rasterOcr, /Text Field/);
  assert.not.match(rasterOcr, /Please wait/);

  // An ordinary PDF is read as it is, without the warning.
  const plain = await post('/extracted-text', { file: { file: corpus('pdf/text-minimal-pdflatex.pdf') } });
  assert.not.match(plain.warning ?? '', /XFA/);
});

const TWO_PAGES = `<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1" layout="tb">
<pageSet><pageArea name="Page1"><contentArea x="0.25in" y="0.25in" w="8in" h="10.5in"/><medium stock="letter" short="8.5in" long="11in"/></pageArea></pageSet>
<subform name="first" w="8in" h="8in"><field name="A" x="0.5in" y="0.5in" w="3in" h="0.4in"><ui><textEdit/></ui><caption reserve="1in"><value><text>First page</text></value></caption></field></subform>
<subform name="second" w="8in" h="8in"><field name="B" x="0.5in" y="0.5in" w="3in" h="0.4in"><ui><textEdit/></ui><caption reserve="1in"><value><text>Second page</text></value></caption></field></subform>
</subform></template>`;

test('a form laid out over two pages: fields on their pages, the root subform one instance across both; HTML_MAX_PAGES applies (422)', async () => {
  const form = dynamicForm('two-pages.pdf', TWO_PAGES);
  const out = await download(await post('/pdf-with-acroforms', { file: { file: form } }));
  assert.equal(
    fieldsOf(out).map((f) => [f.fullname, f.pageposfrom1]),
    [
      ['form1[0].first[0].A[0]', 1],
      ['form1[0].second[0].B[0]', 2],
    ],
  );
  assert.equal(
    tool('pdftotext', [out, '-'])
      .split('\f')
      .map((p) => p.trim())
      .filter(Boolean),
    ['First page', 'Second page'],
  );
  const strict = await startApp({ HTML_MAX_PAGES: '1' });
  try {
    const res = await strict.form('/pdf-with-acroforms', { file: { file: form } });
    const body = (await res.json()) as Body;
    assert.is(res.status, 422, JSON.stringify(body));
    assert.match(body.error!, /HTML_MAX_PAGES=1/);
  } finally {
    await strict.close();
  }
});

test('an XFA template the layout cannot handle: 400 naming the XFA layout, never 5xx', async () => {
  const broken = dynamicForm('broken.pdf', '<template xmlns="http://www.xfa.org/schema/xfa-template/3.3/"><subform name="form1"><pageSet>');
  const body = await post('/pdf-with-acroforms', { file: { file: broken } }, 400);
  assert.match(body.error!, /XFA form could not be laid out/);
  const png = await post('/png', { file: { file: broken } }, 400);
  assert.match(png.error!, /XFA form could not be laid out/);
});

test.run();
