import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { parsePages, resolvePages } from '../app/document/index.js';
import type { AppError } from '../app/errors.js';
import { int, json, list, oneOf, onOff, output, pageList, pages, trueFalse } from '../app/requests/fields.js';
import { sanitizeName } from '../app/store/names.js';

const rejects = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('did not throw');
};

test('page grammar: ranges, last, order kept', () => {
  assert.equal(resolvePages('1,3,5-7', 10), [1, 3, 5, 6, 7]);
  assert.equal(resolvePages('last', 4), [4]);
  assert.equal(resolvePages('2-last', 4), [2, 3, 4]);
  assert.equal(resolvePages(' 1 - 2 , 4 ', 4), [1, 2, 4]);
});

test('page grammar: reversed, last-N, even, odd only where allowed', () => {
  const g = { reverse: true, parity: true };
  assert.equal(resolvePages('9-7', 10, g), [9, 8, 7]);
  assert.equal(resolvePages('last-2', 4, g), [4, 3, 2]);
  assert.equal(resolvePages('even', 5, g), [2, 4]);
  assert.equal(resolvePages('odd', 5, g), [1, 3, 5]);
  for (const bad of ['9-7', 'last-1', 'even', 'odd']) assert.is(rejects(() => parsePages(bad)).message, `${bad} is not within the acceptable range for pages`);
});

test('page grammar: zero, outside the document and malformed ranges are 400 naming pages', () => {
  for (const bad of ['0', '1-0', '', 'a', '1-2-3', '-3', '3-', '1,,2', '1.5']) {
    const e = rejects(() => parsePages(bad));
    assert.is(e.status, 400);
    assert.match(e.message, /pages$/);
  }
  assert.match(rejects(() => resolvePages('5', 4)).message, /5 is not within the acceptable range for pages/);
  assert.match(rejects(() => resolvePages('2-9', 4)).message, /pages/);
});

test('coercion: numbers from strings and JSON numbers, switches from every spelling', () => {
  const s = z.object({ r: int(12, 2400, 300), q: onOff(false), b: trueFalse(true) });
  assert.equal(s.parse({ r: '150', q: 'on', b: 'false' }), { r: 150, q: true, b: false });
  assert.equal(s.parse({ r: 150, q: true, b: false }), { r: 150, q: true, b: false });
  assert.equal(s.parse({ r: ' 72 ', q: 'TRUE', b: '0' }), { r: 72, q: true, b: false });
  assert.equal(s.parse({}), { r: 300, q: false, b: true });
  assert.equal(s.parse({ r: ['600'] }), { r: 600, q: false, b: true });
  assert.not.ok(s.safeParse({ r: '5000' }).success);
  assert.not.ok(s.safeParse({ r: '12.5' }).success);
  assert.not.ok(s.safeParse({ q: 'maybe' }).success);
});

test('coercion: lists from JSON arrays, repeated fields, JSON strings and comma lists', () => {
  const r = list(['print_low', 'copy_content']);
  assert.equal(r.parse(['print_low', 'copy_content']), ['print_low', 'copy_content']);
  assert.equal(r.parse('print_low,copy_content'), ['print_low', 'copy_content']);
  assert.equal(r.parse('["copy_content"]'), ['copy_content']);
  const p = pageList({ reverse: true, parity: true });
  assert.equal(p.parse(['1-3', 'even']), ['1-3', 'even']);
  assert.equal(p.parse('["9-2"]'), ['9-2']);
  assert.equal(p.parse(3), ['3']);
  assert.not.ok(p.safeParse(['1-3', 'x']).success);
  assert.not.ok(pages().safeParse('even').success);
  assert.equal(pages().parse(undefined), '1-last');
});

test("structured JSON: object, JSON string, broken JSON has the clients' text", () => {
  const s = json(z.array(z.object({ box: oneOf(['media', 'crop']) })));
  assert.equal(s.parse('[{"box":"crop"}]'), [{ box: 'crop' }]);
  assert.equal(s.parse([{ box: 'media' }]), [{ box: 'media' }]);
  const e = rejects(() => s.parse('[{"box":'));
  assert.is(e.message, 'JSON data provided is not properly formatted');
  assert.is(e.status, 400);
});

test('names: separators, control characters and dot-prefixes are removed', () => {
  assert.is(sanitizeName('../../etc/passwd'), 'passwd');
  assert.is(sanitizeName('C:\\docs\\report.pdf'), 'report.pdf');
  assert.is(sanitizeName('a\u0000b\nc\u202e.pdf'), 'a_b_c\u202e.pdf'.replace('\u202e', '\u202e'));
  assert.is(sanitizeName('..hidden'), 'hidden');
  assert.is(sanitizeName('   '), 'file');
  assert.is(output().parse('my/out:name'), 'out_name');
  assert.is([...sanitizeName('x'.repeat(500))].length, 200);
});

test.run();
