import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { normalName } from '../app/forms/index.js';
import { corpus, type FormValue, pdfText, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const F = (name: string) => corpus(`forms/${name}`);
const PATH = '/pdf-with-imported-form-data';
type Body = { outputUrl?: string; outputId?: string; inputId?: string[]; error?: string; warning?: string };

const data = (text: string, name: string): FormValue => ({ bytes: Buffer.from(text, 'utf8'), name });

async function fill(pdf: string, dataFile: FormValue, status = 200): Promise<{ body: Body; file: string }> {
  const res = await t.form(PATH, { file: { file: pdf }, data_file: dataFile });
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, file: status === 200 ? await t.download(body.outputUrl!) : '' };
}

interface Widget {
  value: unknown;
  state: string;
}

/** Field values and widget states as qpdf reads them from the output (qpdf --json, acroform). */
function fields(file: string): Map<string, Widget[]> {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=acroform', file]));
  const out = new Map<string, Widget[]>();
  for (const f of json.acroform.fields as { fullname: string; value: unknown; annotation: { appearancestate: string } }[]) {
    const list = out.get(f.fullname) ?? out.set(f.fullname, []).get(f.fullname)!;
    list.push({ value: f.value, state: f.annotation.appearancestate });
  }
  return out;
}
const value = (file: string, name: string) => fields(file).get(name)?.[0]?.value;
const states = (file: string, name: string) =>
  fields(file)
    .get(name)!
    .map((w) => w.state);

/** The XFA packets of a PDF by name, read with qpdf. */
function xfaPackets(file: string): Map<string, string> {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=qpdf', file]));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const root = objects[`obj:${(objects.trailer.value as Record<string, string>)['/Root']}`].value!;
  const acro = (typeof root['/AcroForm'] === 'string' ? objects[`obj:${root['/AcroForm']}`].value : root['/AcroForm']) as Record<string, unknown>;
  const parts = acro['/XFA'] as string[];
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length; i += 2) {
    out.set(parts[i].replace(/^u:/, ''), tool('qpdf', [`--show-object=${parts[i + 1].replace(/ 0 R$/, '')}`, '--filtered-stream-data', file]));
  }
  return out;
}

test('FDF: the corpus pair fills both fields, values and appearances', async () => {
  const { body, file } = await fill(F('simple-form-2-fields.pdf'), { file: F('simple-form-2-fields.fdf') });
  assert.is(body.warning, undefined);
  assert.is(body.inputId!.length, 2);
  assert.is(value(file, 'Field1'), 'u:Test1');
  assert.is(value(file, 'Field2'), 'u:Test2');
  // The appearance streams show the values (pdftotext reads the widgets' appearances).
  assert.match(pdfText(file), /Test1[\s\S]*Test2/);
});

const XFDF = `<?xml version="1.0" encoding="UTF-8"?>
<xfdf xmlns="http://ns.adobe.com/xfdf/" xml:space="preserve"><fields>
<field name="TextField"><value>Hello &amp; welcome</value></field>
<field name="Checkbox"><value>Yes</value></field>
<field name="Checkbox-DefaultValue"><value>Off</value></field>
<field name="RadioButtonGroup"><value>RadioButton02</value></field>
<field name="ComboBox-DefaultValue"><value>Opt03</value></field>
<field name="ListBox-DefaultValue"><value>Opt02</value></field>
<field name="CheckboxGroup"><value>Option2</value></field>
<field name="NoSuchField"><value>x</value></field>
<field name="PushButton"><value>x</value></field>
</fields></xfdf>`;

test('XFDF: text, check boxes on and off, radio, combo, list and check box group; unknown names reported', async () => {
  const src = F('acroform-basic-fields-all-types.pdf');
  assert.is(value(src, 'Checkbox-DefaultValue'), '/Yes');
  const { body, file } = await fill(src, data(XFDF, 'values.xfdf'));
  assert.is(value(file, 'TextField'), 'u:Hello & welcome');
  assert.equal(states(file, 'Checkbox'), ['/Yes']);
  assert.is(value(file, 'Checkbox-DefaultValue'), '/Off');
  assert.equal(states(file, 'Checkbox-DefaultValue'), ['/Off']);
  assert.is(value(file, 'RadioButtonGroup'), '/RadioButton02');
  assert.equal(states(file, 'RadioButtonGroup'), ['/Off', '/RadioButton02']);
  assert.is(value(file, 'ComboBox-DefaultValue'), 'u:Opt03');
  assert.is(value(file, 'ListBox-DefaultValue'), 'u:Opt02');
  assert.equal(states(file, 'CheckboxGroup'), ['/Off', '/Option2', '/Off', '/Off']);
  // Untouched fields keep their values.
  assert.is(value(file, 'TextField-DefaultValue'), 'u:DefaultValue');
  assert.match(body.warning!, /NoSuchField \(not in the form\)/);
  assert.match(body.warning!, /PushButton/);
  assert.match(pdfText(file), /Hello & welcome/);
});

test('AcroForm XML (xfdf:original names), non-Latin text, radio by state name', async () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<fields xmlns:xfdf="http://ns.adobe.com/xfdf-transition/">
  <First_Name xfdf:original="First Name">Carol</First_Name>
  <gdpr>Yes</gdpr>
  <female>2</female>
  <Nationality>French</Nationality>
</fields>`;
  const { body, file } = await fill(F('libreoffice-form.pdf'), data(xml, 'export.xml'));
  assert.is(body.warning, undefined);
  assert.is(value(file, 'First Name'), 'u:Carol');
  assert.is(value(file, 'First Name_2'), 'u:Bob', 'other fields kept');
  assert.equal(states(file, 'gdpr'), ['/Yes']);
  assert.equal(states(file, 'female'), ['/Off', '/2']);
  assert.is(value(file, 'Nationality'), 'u:French');

  const xfdf = `<?xml version="1.0"?><xfdf xmlns="http://ns.adobe.com/xfdf/"><fields>
<field name="Text Box 2"><value>salade πʬ ÿ</value></field><field name="r1"><value>2</value></field>
<field name="Check Box 2"><value>Off</value></field><field name="Check Box 3"><value>true</value></field></fields></xfdf>`;
  const acrobat = await fill(F('qpdf-form-filled-by-acrobat.pdf'), data(xfdf, 'acrobat.xfdf'));
  assert.is(value(acrobat.file, 'Text Box 2'), 'u:salade πʬ ÿ');
  // Its appearance too (qpdf alone draws "salade ?? ÿ"): drawn with embedded fonts, read back by Poppler.
  assert.match(pdfText(acrobat.file), /salade πʬ ÿ/);
  assert.is(value(acrobat.file, 'r1'), '/2');
  assert.equal(states(acrobat.file, 'Check Box 2'), ['/Off']);
  assert.equal(states(acrobat.file, 'Check Box 3'), ['/Yes']);
  assert.is(value(acrobat.file, 'Text Box 1'), 'u:abc potato');
});

const XDP = `<?xml version="1.0" encoding="UTF-8"?>
<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>
<form1><TextField1>Quire XFA value</TextField1><TextField11>Second &amp; last</TextField11></form1>
</xfa:data></xfa:datasets></xdp:xdp>`;

test('XFA: the data becomes the datasets packet (replacing none, inserted before the postamble)', async () => {
  const src = F('xfa-pdfium-simple.pdf');
  assert.not.ok(xfaPackets(src).has('datasets'));
  const { body, file } = await fill(src, data(XDP, 'data.xdp'));
  assert.is(body.warning, undefined);
  const packets = xfaPackets(file);
  assert.equal([...packets.keys()], ['preamble', 'config', 'template', 'localeSet', 'datasets', 'postamble']);
  assert.match(packets.get('datasets')!, /<TextField1>Quire XFA value<\/TextField1>/);
  assert.match(packets.get('datasets')!, /^<xfa:datasets xmlns:xfa="http:\/\/www\.xfa\.org\/schema\/xfa-data\/1\.0\/"/);
  // Bare XFA data (.xml whose root is the form's subform) is wrapped into a datasets packet.
  const bare = await fill(src, data('<form1><TextField1>bare</TextField1></form1>', 'data.xml'));
  assert.match(xfaPackets(bare.file).get('datasets')!, /<xfa:data><form1><TextField1>bare<\/TextField1><\/form1><\/xfa:data>/);
  // Filling again replaces the packet instead of adding a second one.
  const again = await fill(file, data('<form1><TextField1>third</TextField1></form1>', 'data.xfd'));
  const p = xfaPackets(again.file);
  assert.is([...p.keys()].filter((k) => k === 'datasets').length, 1);
  assert.match(p.get('datasets')!, /third/);
  // XFA data whose names are not in this form's template is the wrong data.
  const wrong = await fill(src, data('<order><Customer>x</Customer></order>', 'other.xml'), 400);
  assert.match(wrong.body.error!, /filled correctly/);
});

test('wrong form, non-form PDF, bad data files -> 400; encrypted -> 401', async () => {
  const wrong = await fill(F('pdflatex-forms.pdf'), { file: F('simple-form-2-fields.fdf') }, 400);
  assert.match(wrong.body.error!, /filled correctly/);
  assert.match(wrong.body.error!, /Field1/);
  assert.match((await fill(corpus('pdf/text-minimal-pdflatex.pdf'), { file: F('simple-form-2-fields.fdf') }, 400)).body.error!, /no form fields/);
  assert.match((await fill(F('xfa-claimed-needsrendering-minimal.pdf'), data(XDP, 'd.xdp'), 400)).body.error!, /no form fields/);
  assert.match((await fill(F('simple-form-2-fields.pdf'), data('%FDF-1.2\nthis is not FDF at all', 'bad.fdf'), 400)).body.error!, /not a valid FDF/);
  assert.match((await fill(F('simple-form-2-fields.pdf'), data('<xfdf><fields><field name="a">', 'bad.xfdf'), 400)).body.error!, /not a valid XFDF/);
  assert.match((await fill(F('simple-form-2-fields.pdf'), { file: F('annotations.xfdf') }, 400)).body.error!, /no <fields> element/);
  assert.is((await fill(F('simple-form-2-fields.pdf'), data('Field1=x', 'data.txt'), 400)).body.error !== undefined, true);
  const res = await t.form(PATH, { file: { file: F('simple-form-2-fields.pdf') } });
  assert.is(res.status, 400);
  assert.match(((await res.json()) as Body).error!, /data_file/);
  assert.match(
    (await fill(corpus('encrypted/rc4-128-user-view-owner-master.pdf'), { file: F('simple-form-2-fields.fdf') }, 401)).body.error!,
    /password protected/,
  );
});

test('JSON body with resource ids', async () => {
  const first = await fill(F('simple-form-2-fields.pdf'), { file: F('simple-form-2-fields.fdf') });
  const res = await t.json(PATH, { id: first.body.inputId![0], data_file_id: first.body.inputId![1], output: 'filled' });
  const body = (await res.json()) as Body;
  assert.is(res.status, 200, JSON.stringify(body));
  const info = (await (await t.request(`/resource/${body.outputId}?format=info`)).json()) as { name: string };
  assert.is(info.name, 'filled.pdf');
  assert.is(value(await t.download(body.outputUrl!), 'Field2'), 'u:Test2');
});

test('name matching ignores XFA indices and unnamed levels', () => {
  assert.is(normalName('form1[0].#subform[0].TextField1[0]'), 'form1.TextField1');
});

test.run();
