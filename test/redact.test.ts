import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findSpans, type Preset } from '../app/redact/index.js';
import { corpus, imageColumnsDiff, nearColour, pixelAt as pagePixel, pdfText, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
const scratch = mkdtempSync(join(tmpdir(), 'quire-redact-'));
test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(scratch, { recursive: true, force: true });
});

const GDOCS = corpus('pdf/google-docs-export.pdf'); // A4, 'Beautiful is better than ugly.' ...
const FEDREG = corpus('pdf/federal-register-15-pages.pdf');
const ROTATION = corpus('pdf/rotation-2-pages.pdf'); // page 2 /Rotate 90
const JPEG = corpus('pdf/image-jpeg-dct.pdf'); // A4, text + a 300x200 JPEG at x 147.6-447.6, y 412.6-612.6
const LOCKED = corpus('encrypted/rc4-128-user-view-owner-master.pdf');

type Body = { outputUrl?: string; outputId?: string; inputId?: string; error?: string; warning?: string };

async function post(path: string, fields: Record<string, string | { file: string }>, status = 200): Promise<{ body: Body; file: string }> {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Body;
  assert.is(res.status, status, JSON.stringify(body));
  return { body, file: status === 200 ? await t.download(body.outputUrl!) : '' };
}

const preview = (file: string, redactions: unknown, status = 200) =>
  post('/pdf-with-redacted-text-preview', { file: { file }, redactions: typeof redactions === 'string' ? redactions : JSON.stringify(redactions) }, status);
const apply = (file: string, fields: Record<string, string> = {}, status = 200) =>
  post('/pdf-with-redacted-text-applied', { file: { file }, ...fields }, status);

interface Annot {
  page: number;
  subtype: string;
  contents: string;
  rect: number[];
  quads: number[];
  hasAppearance: boolean;
}

/** Every annotation by page, read with qpdf's JSON (not with MuPDF, which wrote them). */
function annotations(file: string): Annot[] {
  const json = JSON.parse(tool('qpdf', ['--json', '--json-key=pages', '--json-key=qpdf', file]));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const get = (v: unknown): unknown => (typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]?.value : v);
  const out: Annot[] = [];
  (json.pages as { object: string }[]).forEach((p, i) => {
    const page = get(p.object) as Record<string, unknown>;
    for (const ref of (get(page['/Annots']) as string[] | undefined) ?? []) {
      const a = get(ref) as Record<string, unknown>;
      out.push({
        page: i + 1,
        subtype: String(a['/Subtype']),
        contents: String(a['/Contents'] ?? '').replace(/^u:/, ''),
        rect: (get(a['/Rect']) as number[]) ?? [],
        quads: (get(a['/QuadPoints']) as number[]) ?? [],
        hasAppearance: !!a['/AP'],
      });
    }
  });
  return out;
}

/**
 * Word boxes from pdftotext -bbox: `shown` as displayed (x right, y down from the top-left, /Rotate applied),
 * `rect` in PDF user space for an unrotated page of the given height, or a /Rotate 90 page (x = shown y, y = shown x).
 */
function words(file: string, page: number, opts: { height: number; rotate90?: boolean }): { text: string; shown: number[]; rect: number[] }[] {
  const xml = tool('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), file, '-']);
  return [...xml.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => {
    const [x0, y0, x1, y1] = m.slice(1, 5).map(Number);
    return { text: m[5], shown: [x0, y0, x1, y1], rect: opts.rotate90 ? [y0, x0, y1, x1] : [x0, opts.height - y1, x1, opts.height - y0] };
  });
}

/** `outer` holds `inner` (with a tolerance in points), and not much more. */
function covers(outer: number[], inner: number[], what: string) {
  const tol = 3; // MuPDF and Poppler measure glyph boxes a little differently
  assert.ok(
    outer[0] <= inner[0] + tol && outer[1] <= inner[1] + tol && outer[2] >= inner[2] - tol && outer[3] >= inner[3] - tol,
    `${what}: ${outer} should cover ${inner}`,
  );
  assert.ok(outer[0] >= inner[0] - 6 && outer[2] <= inner[2] + 6, `${what}: ${outer} is much wider than ${inner}`);
}

const union = (rects: number[][]) => [
  Math.min(...rects.map((r) => r[0])),
  Math.min(...rects.map((r) => r[1])),
  Math.max(...rects.map((r) => r[2])),
  Math.max(...rects.map((r) => r[3])),
];
const quadBox = (q: number[]) =>
  union(
    [q.slice(0, 8)].map((p) => [
      Math.min(p[0], p[2], p[4], p[6]),
      Math.min(p[1], p[3], p[5], p[7]),
      Math.max(p[0], p[2], p[4], p[6]),
      Math.max(p[1], p[3], p[5], p[7]),
    ]),
  );

const pixelAt = (file: string, page: number, x: number, y: number) => pagePixel(file, page, x, y, scratch);
const near = nearColour;

// ---------------------------------------------------------------- matching (pure)

test('presets find what they name and leave look-alikes', () => {
  const hits = (preset: Preset, text: string) => findSpans(text, { type: 'preset', value: preset }).map((s) => text.slice(s.start, s.end));
  assert.equal(hits('email', 'write to jane.doe+x@mail.example.org, or to 9-FAA-AD-Inquiry@\nfaa.gov.'), [
    'jane.doe+x@mail.example.org',
    '9-FAA-AD-Inquiry@\nfaa.gov',
  ]);
  assert.equal(hits('url', 'see https://www.regulations.gov. And www.faa.gov/x?y=1) or https://\nexample.com/a'), [
    'https://www.regulations.gov',
    'www.faa.gov/x?y=1',
    'https://\nexample.com/a',
  ]);
  assert.equal(hits('phone_number', 'call (555) 123-4567, 562–797–1717 or +44 20 7946 0958; not 2020 or 12345'), [
    '(555) 123-4567',
    '562–797–1717',
    '+44 20 7946 0958',
  ]);
  assert.equal(hits('date', 'On August 6, 2020 and 6 Aug 2020, 2020-08-06, 08/06/2020, 6.8.2020; not 18.10.35 or 7/8/8200'), [
    'August 6, 2020',
    '6 Aug 2020',
    '2020-08-06',
    '08/06/2020',
    '6.8.2020',
  ]);
  assert.equal(hits('us_ssn', 'SSN 123-45-6789; not 000-12-3456 nor 123-45-67890'), ['123-45-6789']);
  assert.equal(hits('credit_card', 'card 4111 1111 1111 1111 or 5500-0000-0000-0004, not 1234 5678 9012 3456'), ['4111 1111 1111 1111', '5500-0000-0000-0004']);
  assert.equal(hits('credit_debit_pin', 'PIN: 4821, pin number 90210; in 2020 we had 1234'), ['4821', '90210']);
  assert.equal(hits('bank_routing_number', 'ABA 011000015 and 021000021; not 123456789'), ['011000015', '021000021']);
  assert.equal(hits('international_bank_account_number', 'IBAN GB82 WEST 1234 5698 7654 32 or DE89370400440532013000; not GB00 WEST 1234 5698 7654 32'), [
    'GB82 WEST 1234 5698 7654 32',
    'DE89370400440532013000',
  ]);
  assert.equal(hits('swift_bic_number', 'BIC DEUTDEFF or NWBKGB2LXXX; not ANALYSIS or CONTINUED'), ['DEUTDEFF', 'NWBKGB2LXXX']);
  assert.equal(hits('ipv4', 'hosts 192.168.0.1 and 10.0.0.255; not 999.1.1.1 or 1.2.3.4.5'), ['192.168.0.1', '10.0.0.255']);
  assert.equal(hits('ipv6', 'hosts 2001:db8::1 and fe80:0:0:0:202:b3ff:fe1e:8329; not 10:30:00'), ['2001:db8::1', 'fe80:0:0:0:202:b3ff:fe1e:8329']);
});

test('literal white space matches any white space; regex runs in RE2', () => {
  const text = 'The Boeing\nCompany and the boeing company';
  assert.equal(
    findSpans(text, { type: 'literal', value: 'Boeing Company' }).map((s) => text.slice(s.start, s.end)),
    ['Boeing\nCompany'],
  );
  assert.equal(findSpans(text, { type: 'regex', value: '(?i)boeing\\s+company' }).length, 2);
  // A pattern that backtracks for ever in a backtracking engine is linear in RE2.
  assert.equal(findSpans(`${'a'.repeat(5000)}!`, { type: 'regex', value: '(a+)+$' }), []);
});

// ---------------------------------------------------------------- preview

test('preview: one /Redact annotation per match, over the matched words; the text is still there', async () => {
  const { file } = await preview(GDOCS, [
    { type: 'literal', value: 'Beautiful is better' },
    { type: 'regex', value: 'implicit' },
  ]);
  const redacts = annotations(file).filter((a) => a.subtype === '/Redact');
  assert.is(redacts.length, 2, JSON.stringify(redacts));
  const w = words(GDOCS, 1, { height: 842 });
  const first = redacts.find((a) => a.contents === 'Beautiful is better')!;
  assert.ok(first?.hasAppearance, 'annotation with an appearance');
  const expected = union(
    w
      .filter((x) => ['Beautiful', 'is', 'better'].includes(x.text))
      .slice(0, 3)
      .map((x) => x.rect),
  );
  covers(first.rect, expected, 'Beautiful is better');
  covers(quadBox(first.quads), expected, 'QuadPoints');
  // "implicit." matched without its full stop: the box ends before the word's end.
  const second = redacts.find((a) => a.contents === 'implicit')!;
  const word = w.find((x) => x.text === 'implicit.')!.rect;
  assert.ok(second.rect[2] < word[2] - 1 && second.rect[0] <= word[0] + 1, `${second.rect} vs ${word}`);
  assert.match(pdfText(file), /Beautiful is better than ugly\.\s+Explicit is better than implicit\./);
  // The preview draws red: the middle of "Beautiful" is reddish, not black on white.
  const [r, g, b] = await pixelAt(file, 1, 90, 842 - (expected[1] + expected[3]) / 2);
  assert.ok(r > g + 40 && r > b + 40, `red overlay: ${[r, g, b]}`);
});

test('preview on a /Rotate 90 page: marks in user space where pdftotext sees the words', async () => {
  const { file } = await preview(ROTATION, [{ type: 'literal', value: 'second page' }]);
  const redacts = annotations(file).filter((a) => a.subtype === '/Redact');
  assert.is(redacts.length, 1);
  assert.is(redacts[0].page, 2);
  const w = words(ROTATION, 2, { height: 792, rotate90: true });
  const i = w.findIndex((x) => x.text === 'second');
  covers(redacts[0].rect, union([w[i].rect, w[i + 1].rect]), 'second page');
  const { file: applied } = await apply(file, { rgb_color: '255, 0, 128' });
  assert.not.match(pdfText(applied), /second page/);
  assert.match(pdfText(applied), /This is my/);
  const r = w[i].shown;
  near(await pixelAt(applied, 2, (r[0] + r[2]) / 2, (r[1] + r[3]) / 2), [255, 0, 128], 'fill on the rotated page');
});

test('preview: nothing matched -> the file unchanged with a warning', async () => {
  const { body, file } = await preview(GDOCS, [{ type: 'literal', value: 'no such words here' }]);
  assert.match(body.warning!, /Nothing .* matched/);
  assert.is(annotations(file).filter((a) => a.subtype === '/Redact').length, 0);
});

test('text MuPDF cannot decode (non-embedded Shift-JIS CMap) is found through Poppler and removed', async () => {
  const SJIS = corpus('pdf/cjk-japanese-sjis-cmap.pdf'); // 'Hello ASCII' and '日本語テスト' (MANIFEST)
  const { file } = await preview(SJIS, [{ type: 'literal', value: '日本語' }]);
  assert.is(annotations(file).filter((a) => a.subtype === '/Redact').length, 1);
  const { file: done } = await apply(file);
  const text = pdfText(done);
  assert.match(text, /Hello ASCII/);
  // MuPDF removes glyphs by its own (wrong, single-byte) reading of the codes, so a neighbouring character may be
  // cut too (テ here): more is removed, never less.
  assert.not.match(text, /日本語/);
});

// ---------------------------------------------------------------- apply

test('apply on a 15-page document: presets, literal and regex values are gone, the rest of the text stays', async () => {
  const { file: marked, body } = await preview(
    FEDREG,
    JSON.stringify([
      { type: 'preset', value: 'email' },
      { type: 'preset', value: 'url' },
      { type: 'preset', value: 'date' },
      { type: 'literal', value: 'Boeing Company' },
      { type: 'regex', value: 'Docket No\\. FAA[–-]\\d{4}[–-]\\d{4}' },
    ]),
  );
  assert.is(body.warning, undefined);
  const redacts = annotations(marked).filter((a) => a.subtype === '/Redact');
  const values = new Set(redacts.map((a) => a.contents));
  for (const v of ['https://www.regulations.gov', 'August 6, 2020', 'Boeing Company', 'doug.rudolph@faa.gov'])
    assert.ok(values.has(v), `${v} marked: ${[...values].slice(0, 20)}`);
  assert.ok(
    [...values].some((v) => /^Docket No\. FAA.2020.\d{4}$/.test(v)),
    'regex marked',
  );
  const before = pdfText(FEDREG);
  assert.match(before, /August 6, 2020/);
  const { file } = await apply(marked, { rgb_color: '255,0,128' });
  const after = pdfText(file).replace(/\s+/g, ' ');
  for (const v of values) assert.not.ok(after.includes(v.replace(/\s+/g, ' ')), `${v} still in the text`);
  for (const v of ['regulations.gov', '@faa.gov', 'August 6, 2020', 'Boeing Company']) assert.not.ok(after.includes(v), v);
  for (const v of ['Federal Register', 'Proposed Rules', 'Boeing Model 737', 'Follow the']) assert.ok(after.includes(v), `${v} kept`);
  assert.is(annotations(file).filter((a) => a.subtype === '/Redact').length, 0, 'marks consumed');
  // The box is painted in rgb_color where "Boeing Company" was on page 1.
  const w = words(FEDREG, 1, { height: 792 });
  const i = w.findIndex((x, k) => x.text === 'Boeing' && w[k + 1]?.text === 'Company');
  const r = w[i].rect;
  near(await pixelAt(file, 1, (r[0] + r[2]) / 2, 792 - (r[1] + r[3]) / 2), [255, 0, 128], 'rgb_color box');
  // Removed for good: no earlier revision or unused object keeps it.
  assert.not.match(tool('qpdf', ['--qdf', '--object-streams=disable', file, '-']), /regulations\.gov/);
});

test('apply: image pixels under a redaction area are replaced, the rest of the image is kept', async () => {
  // A /Redact annotation from another tool (no preview needed to test the images): the left half of the picture.
  const doc = await PDFDocument.load(readFileSync(JPEG));
  const page = doc.getPage(0);
  const annot = doc.context.register(
    doc.context.obj({ Type: 'Annot', Subtype: 'Redact', Rect: [140, 400, 297, 620], QuadPoints: [140, 620, 297, 620, 140, 400, 297, 400] }),
  );
  page.node.addAnnot(annot);
  const marked = join(scratch, 'jpeg-marked.pdf');
  writeFileSync(marked, await doc.save());
  const { file } = await apply(marked, { rgb_color: '0, 0, 255' });
  const diff = await imageColumnsDiff(JPEG, file, scratch);
  assert.ok(diff(0, 140) > 30, `left half replaced: ${diff(0, 140)}`);
  assert.ok(diff(160, 300) < 5, `right half kept: ${diff(160, 300)}`);
  assert.match(pdfText(file), /Lorem ipsum/);
  near(await pixelAt(file, 1, 200, 842 - 500), [0, 0, 255], 'rgb_color over the image');
});

test('apply: a PDF without redaction annotations -> 400 pointing to the preview', async () => {
  const { body } = await apply(GDOCS, {}, 400);
  assert.match(body.error!, /no redaction annotations.*pdf-with-redacted-text-preview/);
});

// ---------------------------------------------------------------- bad input

test('bad redactions and rgb_color -> 400 naming the parameter; encrypted -> 401', async () => {
  assert.match((await preview(GDOCS, '[{"type": "literal", "value": "x"', 400)).body.error!, /JSON data provided is not properly formatted/);
  assert.match((await preview(GDOCS, [{ type: 'wildcard', value: 'x' }], 400)).body.error!, /redactions\[0\]\.type/);
  assert.match(
    (await preview(GDOCS, [{ type: 'preset', value: 'zip_code' }], 400)).body.error!,
    /zip_code is not within the acceptable range for redactions\[0\]\.value/,
  );
  assert.match((await preview(GDOCS, [{ type: 'regex', value: 'a(b' }], 400)).body.error!, /not a valid regular expression for redactions\[0\]\.value/);
  assert.match((await preview(GDOCS, [], 400)).body.error!, /redactions/);
  assert.match((await post('/pdf-with-redacted-text-preview', { file: { file: GDOCS } }, 400)).body.error!, /redactions is required/);
  assert.match((await apply(GDOCS, { rgb_color: '300, 0, 0' }, 400)).body.error!, /300, 0, 0 is not within the acceptable range for rgb_color/);
  assert.match((await apply(GDOCS, { rgb_color: 'red' }, 400)).body.error!, /rgb_color/);
  assert.match((await preview(LOCKED, [{ type: 'literal', value: 'Potato' }], 401)).body.error!, /password protected/);
  assert.match((await apply(LOCKED, {}, 401)).body.error!, /password protected/);
});

test('JSON body: id input and redactions as real JSON, values as loose types', async () => {
  const first = await preview(GDOCS, [{ type: 'literal', value: 'ugly' }]);
  const res = await t.json('/pdf-with-redacted-text-preview', {
    id: first.body.inputId,
    redactions: [
      { type: 'preset', value: 'EMAIL' },
      { type: 'literal', value: 453 },
    ],
  });
  const body = (await res.json()) as Body;
  assert.is(res.status, 200, JSON.stringify(body));
  const marks = annotations(await t.download(body.outputUrl!)).filter((a) => a.subtype === '/Redact');
  assert.equal(
    marks.map((m) => m.contents),
    ['453'],
  );
  const applied = await t.json('/pdf-with-redacted-text-applied', { id: first.body.outputId, rgb_color: [0, 128, 0] });
  assert.is(applied.status, 200, await applied.clone().text());
  assert.not.match(pdfText(await t.download(((await applied.json()) as Body).outputUrl!)), /ugly/);
});

test.run();

test('a text redaction keeps the letters of a tightly set neighbouring line, except over an image (scans: pixels first)', async () => {
  // rotation-2-pages.pdf sets its two lines so close that their font boxes overlap: a full-height mark of the second
  // line took "This is my first page w" of the first.
  const { file: marked } = await preview(ROTATION, [{ type: 'literal', value: 'This is the second line' }]);
  const { file } = await apply(marked);
  const text = pdfText(file);
  assert.match(text, /This is my first page with normal layout\./);
  assert.not.match(text, /second line/);
  assert.match(text, /on the page\./);

  // The same two lines over a picture: the mark keeps the characters' whole height, so no strip of the redacted
  // words' pixels survives (the neighbour's overlapping letters go with it, the safe side).
  const lines = async (withImage: boolean) => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([300, 200]);
    if (withImage) page.drawImage(await doc.embedJpg(readFileSync(corpus('images/hopper.jpg'))), { x: 0, y: 0, width: 300, height: 200 });
    const font = await doc.embedFont(StandardFonts.Helvetica);
    page.drawText('Upper line of text', { x: 20, y: 110, size: 20, font });
    page.drawText('Lower secret words', { x: 20, y: 93, size: 20, font });
    const path = join(scratch, `tight-${withImage}.pdf`);
    writeFileSync(path, await doc.save());
    const { file: m } = await preview(path, [{ type: 'literal', value: 'Lower secret words' }]);
    const [mark] = annotations(m).filter((a) => a.subtype === '/Redact');
    const box = quadBox(mark.quads);
    return { height: box[3] - box[1], text: pdfText((await apply(m)).file) };
  };
  const plain = await lines(false);
  assert.match(plain.text, /Upper line of text/);
  assert.not.match(plain.text, /secret/);
  const scan = await lines(true);
  assert.not.match(scan.text, /secret/);
  assert.ok(scan.height > plain.height + 2, `full height over the image: ${scan.height} vs ${plain.height}`);
});
