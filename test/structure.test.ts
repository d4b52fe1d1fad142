import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freeKey, pdfaPart } from '../app/rewrite/index.js';
import { corpus, expectError, expectOk, pdfText, startApp, type TestApp, tool, uploadId } from './helpers.js';

let t: TestApp;
const PLAIN = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 page A4
const ROT = corpus('pdf/rotation-2-pages.pdf');
const FED = corpus('pdf/federal-register-15-pages.pdf');

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
});

const okBody = expectOk;
const ok = async (res: Response) => t.download((await expectOk(res)).outputUrl as string);
const fails = expectError;
const upload = (path: string) => uploadId(t, path);

/** `pdfinfo -box` for every page: page -> box name -> [x0, y0, x1, y1]. */
function boxes(path: string): Record<number, Record<string, number[]>> {
  const out = tool('pdfinfo', ['-box', '-f', '1', '-l', '9999', path]);
  const r: Record<number, Record<string, number[]>> = {};
  for (const m of out.matchAll(/^Page\s+(\d+)\s+(\w+Box):\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)/gm)) {
    (r[Number(m[1])] ??= {})[m[2]] = [m[3], m[4], m[5], m[6]].map(Number);
  }
  return r;
}

test('linearize: output passes qpdf --check-linearization, same text', async () => {
  const out = await ok(await t.form('/linearized-pdf', { file: { file: FED } }));
  const r = spawnSync('qpdf', ['--check-linearization', out], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /no linearization errors/);
  assert.equal(pdfText(out), pdfText(FED));
});

test('linearize errors: password 401, broken 400', async () => {
  await fails(await t.form('/linearized-pdf', { file: { file: corpus('encrypted/rc4-40-user-view-owner-master.pdf') } }), 401, /password protected/);
  await fails(await t.form('/linearized-pdf', { file: { file: corpus('malformed/invalid-header-then-eof.pdf') } }), 400, /not valid input/);
});

test('pdfaPart and freeKey', () => {
  assert.is(pdfaPart('<rdf:Description pdfaid:part="2" pdfaid:conformance="B"/>'), 2);
  assert.is(pdfaPart('<pdfaid:part>1</pdfaid:part>'), 1);
  assert.is(pdfaPart('<x/>'), null);
  assert.is(freeKey('foo.txt', new Set(['foo.txt', 'foo (2).txt'])), 'foo (3).txt');
});

test('attachment: embedded with name and MIME type (pdfdetach), inputId [pdf, attachment]', async () => {
  const body = await okBody(await t.form('/pdf-with-added-attachment', { file: { file: PLAIN }, file_to_attach: { file: corpus('images/hopper.png') } }));
  assert.is(body.inputId.length, 2);
  const out = await t.download(body.outputUrl);
  assert.match(tool('pdfdetach', ['-list', out]), /1 embedded files\n1: hopper\.png/);
  assert.match(tool('qpdf', ['--list-attachments', '--verbose', out]), /mime type: image\/png/);
  const saved = `${out}.png`;
  tool('pdfdetach', ['-save', '1', '-o', saved, out]);
  assert.is(tool('cmp', [saved, corpus('images/hopper.png')]), '');
  const info = await okBody(await t.request(`/resource/${body.outputId}?format=info`));
  assert.is(info.name, 'text-minimal-pdflatex_service_pdf-with-added-attachment.pdf');
});

test('attachment: by ids, existing attachments kept, same name twice kept apart', async () => {
  const pdf = await upload(corpus('attachments/file-attachment-libreoffice.pdf'));
  const att = await upload(corpus('text/cups-testfile.txt'));
  const body = await okBody(await t.json('/pdf-with-added-attachment', { id: pdf, id_to_attach: att }));
  assert.equal(body.inputId, [pdf, att]);
  const out = await t.download(body.outputUrl);
  const list = tool('pdfdetach', ['-list', out]);
  assert.match(list, /2 embedded files/);
  assert.match(list, /foo\.txt/);
  assert.match(list, /cups-testfile\.txt/);
  assert.match(tool('qpdf', ['--list-attachments', '--verbose', out]), /mime type: text\/plain/);
});

test('attachment errors: PDF/A-1 and -2 refused, PDF/A-3 accepted, password 401, broken 400, both inputs 400', async () => {
  const TEXT = /The input PDF claims conformance to a PDF\/A version that prohibits file attachments/;
  const att = { file: corpus('text/cups-testfile.txt') };
  await fails(await t.form('/pdf-with-added-attachment', { file: { file: corpus('pdfa/crazyones-pdfa-1b-ghostscript.pdf') }, file_to_attach: att }), 400, TEXT);
  await fails(
    await t.form('/pdf-with-added-attachment', { file: { file: corpus('pdfa/verapdf-pdfa2b-6-1-2-t02-pass-a.pdf') }, file_to_attach: att }),
    400,
    TEXT,
  );
  const out = await ok(
    await t.form('/pdf-with-added-attachment', { file: { file: corpus('pdfa/verapdf-pdfa3b-6-8-t02-pass-a-embedded-file.pdf') }, file_to_attach: att }),
  );
  assert.match(tool('pdfdetach', ['-list', out]), /cups-testfile\.txt/);
  await fails(
    await t.form('/pdf-with-added-attachment', { file: { file: corpus('encrypted/aes-256-user-view-owner-master.pdf') }, file_to_attach: att }),
    401,
    /password protected/,
  );
  await fails(
    await t.form('/pdf-with-added-attachment', { file: { file: corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf') }, file_to_attach: att }),
    400,
    /not valid input/,
  );
  const id = await upload(corpus('images/hopper.png'));
  await fails(await t.form('/pdf-with-added-attachment', { file: { file: PLAIN }, file_to_attach: att, id_to_attach: id }), 400, /not both/);
});

test('page boxes: margins inward from the media box per range (pdfinfo -box)', async () => {
  const spec = [
    { box: 'crop', pages: [{ range: 'all', top: 10, bottom: 20, left: 30, right: 40 }] },
    { box: 'trim', pages: [{ range: 'even', top: '5', bottom: '5', left: '5', right: '5' }] },
    { box: 'art', pages: [{ range: 'last', top: 1, bottom: 2, left: 3, right: 4 }] },
    { box: 'bleed', pages: [{ range: '1', top: 0, bottom: 0, left: 0, right: 0 }] },
  ];
  const out = await ok(await t.form('/pdf-with-page-boxes-set', { file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') }, boxes: JSON.stringify(spec) }));
  const b = boxes(out);
  const before = boxes(corpus('pdf/text-4-pages-pdflatex.pdf'));
  const [x0, y0, x1, y1] = before[1].MediaBox;
  for (const p of [1, 2, 3, 4]) {
    assert.equal(b[p].MediaBox, before[p].MediaBox);
    assert.equal(b[p].CropBox, [x0 + 30, y0 + 20, x1 - 40, y1 - 10]);
  }
  assert.equal(b[2].TrimBox, [x0 + 5, y0 + 5, x1 - 5, y1 - 5]);
  assert.equal(b[4].TrimBox, [x0 + 5, y0 + 5, x1 - 5, y1 - 5]);
  assert.equal(b[3].TrimBox, b[3].CropBox); // unset: defaults to the crop box
  assert.equal(b[4].ArtBox, [x0 + 3, y0 + 2, x1 - 4, y1 - 1]);
  assert.equal(b[1].BleedBox, before[1].MediaBox);
  assert.equal(pdfText(out), pdfText(corpus('pdf/text-4-pages-pdflatex.pdf')));
});

test('page boxes: negative media margins enlarge; wrapped {"boxes"}; odd and 2-last ranges', async () => {
  const spec = {
    boxes: [
      {
        box: 'media',
        pages: [
          { range: 'odd', top: -10, bottom: -10, left: -10, right: -10 },
          { range: '2-last', top: 0, bottom: 0, left: 0, right: 100 },
        ],
      },
    ],
  };
  const before = boxes(ROT);
  const out = await ok(await t.json('/pdf-with-page-boxes-set', { id: await upload(ROT), boxes: JSON.stringify(spec) }));
  const b = boxes(out);
  const [a0, a1, a2, a3] = before[1].MediaBox;
  assert.equal(b[1].MediaBox, [a0 - 10, a1 - 10, a2 + 10, a3 + 10]);
  const [c0, c1, c2, c3] = before[2].MediaBox;
  assert.equal(b[2].MediaBox, [c0, c1, c2 - 100, c3]);
  assert.match(tool('pdfinfo', [out]), /Pages:\s+2/);
});

test('page boxes errors: negative non-media, bad range, page outside, bad JSON, password, broken', async () => {
  const send = (boxes: unknown, file = PLAIN) =>
    t.form('/pdf-with-page-boxes-set', { file: { file }, boxes: typeof boxes === 'string' ? boxes : JSON.stringify(boxes) });
  const one = (range: string, box = 'crop', m = 10) => [{ box, pages: [{ range, top: m, bottom: m, left: m, right: m }] }];
  await fails(await send(one('all', 'crop', -5)), 400, /boxes\[0\]\.pages\[0\]\.top/);
  await fails(await send(one('2')), 400, /range/);
  await fails(await send(one('0')), 400, /range/);
  await fails(await send(one('1-x')), 400, /range/);
  await fails(await send(one('all', 'crop', 400)), 400, /boxes/);
  await fails(await send(one('all', 'sleeve')), 400, /box/);
  await fails(await send('{not json'), 400, /JSON/);
  await fails(await send(one('all'), corpus('encrypted/rc4-128-user-view-owner-master.pdf')), 401, /password protected/);
  await fails(await send(one('all'), corpus('malformed/truncated-no-xref-pdfjs-bug1020226.pdf')), 400, /not valid input/);
});

test.run();
