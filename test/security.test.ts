import { execFileSync, spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { permissionsFrom } from '../app/document/index.js';
import { corpus, expectError, expectOk, startApp, type TestApp } from './helpers.js';

let t: TestApp;
const PLAIN = corpus('pdf/text-minimal-pdflatex.pdf');
const ENC = (f: string) => corpus(`encrypted/${f}`);

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const ok = async (res: Response) => t.download((await expectOk(res)).outputUrl as string);
const fails = expectError;

/** `qpdf --show-encryption` as a map of its lines (independent reader). */
function encryption(path: string, password?: string): Record<string, string> {
  const r = spawnSync('qpdf', [...(password === undefined ? [] : [`--password=${password}`]), '--show-encryption', path], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 3) throw new Error(`qpdf --show-encryption: ${r.stderr}`);
  const map: Record<string, string> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([^:=]+?)\s*[:=]\s*(.*)$/.exec(line.trim());
    if (m) map[m[1]] = m[2];
  }
  if (/File is not encrypted/.test(r.stdout)) map.encrypted = 'no';
  return map;
}
const needsPassword = (path: string) => spawnSync('qpdf', ['--requires-password', path]).status === 0;
const opensWith = (path: string, pw: string) => spawnSync('qpdf', [`--password=${pw}`, '--check', path]).status !== 2;
const text = (path: string, pw?: string) => execFileSync('pdftotext', [...(pw ? ['-upw', pw] : []), path, '-'], { encoding: 'utf8' });

test('restrictions map to the permission bits', () => {
  assert.equal(permissionsFrom([]), { print: 'full', assemble: true, form: true, annotate: true, modifyOther: true, extract: true, accessibility: true });
  assert.is(permissionsFrom(['print_high']).print, 'low');
  assert.is(permissionsFrom(['print_low']).print, 'none');
});

test('encrypt: AES-256 open password, output opens only with it', async () => {
  const out = await ok(await t.form('/encrypted-pdf', { file: { file: PLAIN }, new_open_password: 'sécret pw --x' }));
  assert.ok(needsPassword(out));
  const e = encryption(out, 'sécret pw --x');
  assert.is(e.R, '6');
  assert.is(e['file encryption method'], 'AESv3');
  assert.is(e['modify anything'], 'allowed');
  assert.match(text(out, 'sécret pw --x'), /\S/);
});

test('encrypt: password length 6-128, required', async () => {
  await fails(await t.form('/encrypted-pdf', { file: { file: PLAIN }, new_open_password: '12345' }), 400, /new_open_password/);
  await fails(await t.form('/encrypted-pdf', { file: { file: PLAIN }, new_open_password: 'x'.repeat(129) }), 400, /new_open_password/);
  await fails(await t.form('/encrypted-pdf', { file: { file: PLAIN } }), 400, /new_open_password/);
});

test('encrypt: change an existing open password with the current one; wrong/missing current -> 401', async () => {
  const f = ENC('rc4-128-user-and-owner-test.pdf');
  const out = await ok(await t.form('/encrypted-pdf', { file: { file: f }, current_open_password: 'test', new_open_password: 'newpass1' }));
  assert.ok(opensWith(out, 'newpass1'));
  assert.not.ok(opensWith(out, 'test'));
  assert.is(encryption(out, 'newpass1').R, '6');
  await fails(await t.form('/encrypted-pdf', { file: { file: f }, new_open_password: 'newpass1' }), 401, /password protected/);
  await fails(await t.form('/encrypted-pdf', { file: { file: f }, current_open_password: 'nope', new_open_password: 'newpass1' }), 401, /password-protected/);
});

test('encrypt: a restricted input keeps its permissions password and restrictions; without it -> 400', async () => {
  const f = ENC('rc4-128-user-view-owner-master.pdf');
  const out = await ok(
    await t.form('/encrypted-pdf', { file: { file: f }, current_open_password: 'view', current_permissions_password: 'master', new_open_password: 'potato1' }),
  );
  assert.ok(opensWith(out, 'potato1'));
  const e = encryption(out, 'master');
  assert.match(spawnSync('qpdf', ['--password=master', '--show-encryption', out], { encoding: 'utf8' }).stdout, /Supplied password is owner password/);
  assert.is(e['print high resolution'], 'not allowed');
  assert.is(e['modify other'], 'not allowed');
  await fails(await t.form('/encrypted-pdf', { file: { file: f }, current_open_password: 'view', new_open_password: 'potato1' }), 400, /permissions password/);
  await fails(
    await t.form('/encrypted-pdf', { file: { file: f }, current_open_password: 'view', current_permissions_password: 'wrong!', new_open_password: 'potato1' }),
    400,
    /permissions password/,
  );
});

test('decrypt: every legacy scheme in the corpus', async () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['rc4-40-user-view-owner-master.pdf', { current_open_password: 'view', current_permissions_password: 'master' }, /Potato 0/],
    ['rc4-128-user-view-owner-master.pdf', { current_open_password: 'view', current_permissions_password: 'master' }, /Potato 0/],
    ['rc4-128-user-and-owner-test.pdf', { current_open_password: 'test' }, /Backup4all/],
    [
      'rc4-128-libreoffice-user-openpassword-owner-permissionpassword.pdf',
      { current_open_password: 'openpassword', current_permissions_password: 'permissionpassword' },
      /Lorem ipsum/,
    ],
    ['aes-256-user-view-owner-master.pdf', { current_open_password: 'view', current_permissions_password: 'master' }, /Potato 0/],
    ['aes-256-user-view-attachments-cleartext-metadata.pdf', { current_open_password: 'view' }, /Potato 0/],
    ['rc4-128-owner-master-no-user-password.pdf', { current_open_password: '', current_permissions_password: 'master' }, /Potato 0/],
  ];
  for (const [file, fields, expect] of cases) {
    const out = await ok(await t.form('/decrypted-pdf', { file: { file: ENC(file) }, ...fields }));
    assert.is(encryption(out).encrypted, 'no', file);
    assert.match(text(out), expect);
  }
});

test('decrypt errors: missing/wrong open password 401; restricted without permissions password 400; broken 400', async () => {
  const f = ENC('aes-256-user-view-owner-master.pdf');
  await fails(await t.form('/decrypted-pdf', { file: { file: f }, current_open_password: 'wrong' }), 401, /password-protected/);
  await fails(await t.form('/decrypted-pdf', { file: { file: f } }), 401, /password protected/);
  await fails(await t.form('/decrypted-pdf', { file: { file: f }, current_open_password: 'view' }), 400, /permissions password/);
  await fails(
    await t.form('/decrypted-pdf', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') }, current_open_password: 'x' }),
    400,
    /not valid input/,
  );
});

test('restrict: each restriction sets its permission bit, AES-256, opens without password', async () => {
  const expect: Record<string, [string, string]> = {
    print_low: ['print low resolution', 'not allowed'],
    print_high: ['print high resolution', 'not allowed'],
    edit_document_assembly: ['modify document assembly', 'not allowed'],
    edit_fill_and_sign_form_fields: ['modify forms', 'not allowed'],
    edit_annotations: ['modify annotations', 'not allowed'],
    edit_content: ['modify other', 'not allowed'],
    copy_content: ['extract for any purpose', 'not allowed'],
    accessibility_off: ['extract for accessibility', 'not allowed'],
  };
  for (const [r, [line, value]] of Object.entries(expect)) {
    const out = await ok(await t.form('/restricted-pdf', { file: { file: PLAIN }, new_permissions_password: 'owner-pw', 'restrictions[]': [r] }));
    assert.not.ok(needsPassword(out), r);
    const e = encryption(out);
    assert.is(e.R, '6', r);
    assert.is(e[line], value, r);
    const others = Object.entries(expect).filter(([k]) => k !== r && !(r === 'print_low' && k === 'print_high'));
    for (const [, [l]] of others) assert.is(e[l], 'allowed', `${r}: ${l}`);
  }
  // All together, as a JSON array and as a comma list
  const id = ((await (await t.form('/upload', { file: { file: PLAIN } })).json()) as { files: { id: string }[] }).files[0].id;
  for (const out of [
    await ok(await t.json('/restricted-pdf', { id, new_permissions_password: 'owner-pw', restrictions: Object.keys(expect) })),
    await ok(await t.form('/restricted-pdf', { file: { file: PLAIN }, new_permissions_password: 'owner-pw', restrictions: Object.keys(expect).join(',') })),
  ]) {
    const e = encryption(out);
    for (const [line] of Object.values(expect)) assert.is(e[line], 'not allowed', line);
  }
});

test('restrict: no restrictions -> permissions password alone; keeps the open password with current_open_password', async () => {
  let out = await ok(await t.form('/restricted-pdf', { file: { file: PLAIN }, new_permissions_password: 'owner-pw' }));
  assert.match(spawnSync('qpdf', ['--password=owner-pw', '--show-encryption', out], { encoding: 'utf8' }).stdout, /Supplied password is owner password/);
  const f = ENC('rc4-128-user-and-owner-test.pdf');
  out = await ok(
    await t.form('/restricted-pdf', {
      file: { file: f },
      current_open_password: 'test',
      new_permissions_password: 'perm-pw',
      'restrictions[]': ['copy_content'],
    }),
  );
  assert.ok(needsPassword(out));
  assert.ok(opensWith(out, 'test'));
  assert.is(encryption(out, 'test')['extract for any purpose'], 'not allowed');
  // Without current_open_password the open password is dropped (the owner password still opens the input).
  out = await ok(await t.form('/restricted-pdf', { file: { file: f }, current_permissions_password: 'test', new_permissions_password: 'perm-pw' }));
  assert.not.ok(needsPassword(out));
});

test('restrict: changing an existing permissions password needs the current one', async () => {
  const f = ENC('rc4-128-owner-master-no-user-password.pdf');
  await fails(await t.form('/restricted-pdf', { file: { file: f }, new_permissions_password: 'other-pw' }), 400, /permissions password/);
  await fails(
    await t.form('/restricted-pdf', { file: { file: f }, current_permissions_password: 'wrong', new_permissions_password: 'other-pw' }),
    400,
    /permissions password/,
  );
  const out = await ok(
    await t.form('/restricted-pdf', {
      file: { file: f },
      current_permissions_password: 'master',
      new_permissions_password: 'other-pw',
      'restrictions[]': ['print_high'],
    }),
  );
  assert.match(spawnSync('qpdf', ['--password=other-pw', '--show-encryption', out], { encoding: 'utf8' }).stdout, /Supplied password is owner password/);
  assert.is(encryption(out)['print high resolution'], 'not allowed');
  await fails(
    await t.form('/restricted-pdf', { file: { file: PLAIN }, new_permissions_password: 'owner-pw', 'restrictions[]': ['print_everything'] }),
    400,
    /restriction/,
  );
});

test('unrestrict: permissions password required; removes all security, or keeps the open password', async () => {
  const f = ENC('rc4-128-user-view-owner-master.pdf');
  let out = await ok(await t.form('/unrestricted-pdf', { file: { file: f }, current_permissions_password: 'master' }));
  assert.is(encryption(out).encrypted, 'no');
  assert.match(text(out), /Potato 0/);
  out = await ok(await t.form('/unrestricted-pdf', { file: { file: f }, current_open_password: 'view', current_permissions_password: 'master' }));
  assert.ok(needsPassword(out));
  const e = encryption(out, 'view');
  assert.is(e.R, '6');
  for (const l of ['print high resolution', 'modify other', 'extract for any purpose', 'modify document assembly']) assert.is(e[l], 'allowed', l);
  await fails(await t.form('/unrestricted-pdf', { file: { file: f }, current_open_password: 'view' }), 400, /current_permissions_password/);
  await fails(
    await t.form('/unrestricted-pdf', { file: { file: f }, current_open_password: 'view', current_permissions_password: 'view' }),
    400,
    /permissions password/,
  );
  await fails(
    await t.form('/unrestricted-pdf', { file: { file: ENC('aes-256-owner-only-acrobat.pdf') }, current_permissions_password: 'guess1' }),
    400,
    /permissions password/,
  );
});

test('security endpoints: password-protected input without a password -> 401 with the spec text', async () => {
  const f = ENC('aes-256-user-view-owner-master.pdf');
  const spec = /The input file is password protected and cannot be processed/;
  await fails(await t.form('/encrypted-pdf', { file: { file: f }, new_open_password: 'abcdef' }), 401, spec);
  await fails(await t.form('/restricted-pdf', { file: { file: f }, new_permissions_password: 'abcdef' }), 401, spec);
});

test.run();
