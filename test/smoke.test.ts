import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startApp } from './helpers.js';

test('up', async () => {
  const t = await startApp();
  const res = await t.request('/up');
  assert.is(res.status, 200);
  await t.close();
});
test.run();
