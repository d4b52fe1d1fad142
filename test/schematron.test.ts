import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EngineError } from '../engines/errors.js';
import { checkSchematron } from '../engines/schematron.js';

/** The Schematron engine on its own: includes, lets, flags, reports, locations, a refused DOCTYPE, a broken XPath. */

const work = mkdtempSync(join(tmpdir(), 'quire-sch-test-'));
test.after(() => rmSync(work, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(work, name);
  writeFileSync(p, text);
  return p;
};

const SCH = 'http://purl.oclc.org/dsdl/schematron';
const schema = file(
  'main.sch',
  `<schema xmlns="${SCH}" queryBinding="xslt"><ns prefix="o" uri="urn:orders"/>
  <let name="limit" value="number(/o:order/@limit)"/><include href="part.sch"/></schema>`,
);
file(
  'part.sch',
  `<pattern xmlns="${SCH}" id="p">
    <rule context="/o:order/o:item">
      <let name="price" value="number(@price)"/>
      <assert id="R-1" flag="fatal" test="$price &lt;= $limit">[R-1] item <value-of select="@sku"/> costs <value-of select="$price"/>, over <value-of select="$limit"/>.</assert>
      <assert id="R-2" flag="warning" test="@sku">[R-2] an item should have a sku.</assert>
      <report id="R-3" flag="information" test="$price = 0">[R-3] a free item.</report>
    </rule>
  </pattern>`,
);
const ctx = { cwd: work, timeoutMs: 30_000 };

test('failed asserts and successful reports, with ids, flags, prefixed locations and filled-in values', async () => {
  const doc = file(
    'order.xml',
    `<?xml version="1.0"?>\n<!-- an order -->\n<order xmlns="urn:orders" limit="10"><item sku="a" price="5"/><item sku="b" price="12.5"/><item price="0"/></order>`,
  );
  const found = await checkSchematron(doc, schema, ctx);
  assert.equal(
    found.map((f) => [f.id, f.flag, f.text]),
    [
      ['R-1', 'fatal', '[R-1] item b costs 12.5, over 10.'],
      ['R-2', 'warning', '[R-2] an item should have a sku.'],
      ['R-3', 'information', '[R-3] a free item.'],
    ],
  );
  assert.equal(found[0].location, '/o:order/o:item[2]');
  assert.equal(await checkSchematron(file('ok.xml', '<order xmlns="urn:orders" limit="10"><item sku="a" price="5"/></order>'), schema, ctx), []);
});

test('a document with a DOCTYPE is refused before xsltproc reads it (it would expand file entities)', async () => {
  const secret = file('secret.txt', 'TOP-SECRET-VALUE');
  const doc = file(
    'xxe.xml',
    `<?xml version="1.0"?>\n<!DOCTYPE order [<!ENTITY x SYSTEM "file://${secret}">]>\n<order xmlns="urn:orders" limit="1"><item sku="&x;" price="5"/></order>`,
  );
  const err = await checkSchematron(doc, schema, ctx).catch((e: unknown) => e);
  assert.instance(err, EngineError);
  assert.match(String((err as Error).message), /DOCTYPE/);
  assert.not.match(String((err as Error).message), /TOP-SECRET/);
});

test('a schema with a broken XPath fails as an engine error naming the XPath error', async () => {
  const broken = file(
    'broken.sch',
    `<schema xmlns="${SCH}" queryBinding="xslt"><pattern><rule context="/r"><assert id="X" test="count(">x</assert></rule></pattern></schema>`,
  );
  const err = await checkSchematron(file('r.xml', '<r/>'), broken, ctx).catch((e: unknown) => e);
  assert.instance(err, EngineError);
  assert.match(String((err as EngineError).details.stderr), /XPath error/);
});

test.run();
