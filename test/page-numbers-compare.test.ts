import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alignDocuments, alignWords, MAX_GAP_EDITS } from '../app/compare/index.js';
import { checkNumberTemplate, fillNumberTemplate } from '../app/compose/index.js';
import { corpus, pdfPages, pdfWords, startApp, type TestApp, tool } from './helpers.js';

let t: TestApp;
const ROTATED = corpus('pdf/rotation-2-pages.pdf'); // Letter; page 2 /Rotate 90 (792 x 612 as seen)
const TEX4 = corpus('pdf/text-4-pages-pdflatex.pdf'); // 4 pages A4
const ZEN = corpus('pdf/google-docs-export.pdf'); // 1 page A4: the Zen of Python, one sentence a line
const LOREM = corpus('pdf/text-minimal-pdflatex.pdf'); // 1 page A4 'Lorem ipsum ...'
const FED = corpus('pdf/federal-register-15-pages.pdf');
const tmp = mkdtempSync(join(tmpdir(), 'quire-numbers-compare-'));

test.before(async () => {
  t = await startApp();
});
test.after(async () => {
  await t.close();
  rmSync(tmp, { recursive: true, force: true });
});

const ok = async (res: Response) => {
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, 200, JSON.stringify(body));
  return body;
};
const refused = async (res: Response, status: number, pattern: RegExp) => {
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, status, JSON.stringify(body));
  assert.match(body.error, pattern);
};
const pageText = (pdf: string, page: number) => tool('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-']);
/** Displayed page sizes from pdfinfo (after /Rotate). */
const shownSize = (pdf: string, page: number) => {
  const info = tool('pdfinfo', ['-f', String(page), '-l', String(page), pdf]);
  const [, w, h] = /size:\s+([\d.]+) x ([\d.]+)/.exec(info)!.map(Number);
  const rot = Number(/rot:\s+(\d+)/.exec(info)![1]);
  return rot % 180 ? { width: h, height: w } : { width: w, height: h };
};
const near = (got: number, want: number, tol: number, what: string) =>
  assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} is not within ${tol} of ${want}`);

// ------------------------------------------------------------------------------------------- page numbers

test('templates: {page}, {pages}, zero padding; unknown placeholders and stray braces refused', () => {
  assert.is(fillNumberTemplate('Page {page} of {pages}', 3, 12), 'Page 3 of 12');
  assert.is(fillNumberTemplate('ABC-{page:06}/{pages:03}', 47, 1234), 'ABC-000047/1234');
  assert.throws(() => checkNumberTemplate('{pag}'), /\{pag\} is not within the acceptable range for text/);
  assert.throws(() => checkNumberTemplate('page }'), /acceptable range for text/);
  checkNumberTemplate('Seite {page} von {pages} {page:010}');
});

test('page numbers: bottom right within the margins on a rotated page, read back by pdftotext', async () => {
  const body = await ok(
    await t.form('/pdf-with-page-numbers', {
      file: { file: ROTATED },
      text: 'Page {page} of {pages}',
      horizontal_alignment: 'right',
      horizontal_margin: '36',
      vertical_margin: '24',
    }),
  );
  assert.is(typeof body.inputId, 'string');
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 2);
  assert.match(tool('pdfinfo', ['-f', '2', '-l', '2', out]), /Page\s+2 rot:\s+90/);
  for (const page of [1, 2]) {
    assert.match(pageText(out, page), new RegExp(`Page ${page} of 2`));
    const { width, height } = shownSize(out, page);
    const words = pdfWords(out, page);
    const last = words.filter((w) => w.text === '2' && w.yMin > height - 60).at(-1)!;
    assert.ok(last, `the number on page ${page}: ${words.map((w) => w.text).join(' ')}`);
    // pdftotext's box runs from the font's ascent to its descent, which is what the margins are measured to.
    near(last.xMax, width - 36, 1, `right edge on page ${page}`);
    near(last.yMax, height - 24, 1.5, `bottom edge on page ${page}`);
    const pageWord = words.find((w) => w.text === 'Page' && w.yMin > height - 60)!;
    assert.ok(pageWord.xMin > width / 2, 'the text runs left from the right margin');
  }
  // The original text is still there, on the page as it was.
  assert.match(pageText(out, 2), /This is my second page/);
});

test('page numbers: Bates numbers from start on a page subset, top left, JSON by id with loose values', async () => {
  const id = (await ok(await t.form('/upload', { file: { file: TEX4 } }))).files[0].id;
  const body = await ok(
    await t.json('/pdf-with-page-numbers', {
      id,
      text: 'ABC-{page:06}',
      start: '47698',
      pages: '2-3',
      horizontal_alignment: 'left',
      vertical_alignment: 'top',
      horizontal_margin: 50,
      vertical_margin: '30',
      text_color_rgb: '200,0,0',
      output: 'bates',
    }),
  );
  assert.is(body.inputId, id);
  const out = await t.download(body.outputUrl);
  assert.is((await ok(await t.request(`/resource/${body.outputId}?format=info`))).name, 'bates.pdf');
  assert.equal(
    [1, 2, 3, 4].map((p) => /ABC-\d+/.exec(pageText(out, p))?.[0] ?? null),
    [null, 'ABC-047698', 'ABC-047699', null],
  );
  const w = pdfWords(out, 2).find((x) => x.text === 'ABC-047698')!;
  near(w.xMin, 50, 0.5, 'left edge');
  near(w.yMin, 30, 1.5, 'top edge');
});

test('page numbers: a crop box offset from the media box; the number stays inside what is shown', async () => {
  // Crop 100 points off the left and 200 off the bottom: the visible page starts at (100, 200) of the media box.
  const cropped = await ok(
    await t.form('/pdf-with-page-boxes-set', {
      file: { file: TEX4 },
      boxes: JSON.stringify([{ box: 'crop', pages: [{ range: 'all', left: 100, bottom: 200, top: 0, right: 0 }] }]),
    }),
  );
  const body = await ok(
    await t.json('/pdf-with-page-numbers', { id: cropped.outputId, pages: 'odd', horizontal_alignment: 'left', horizontal_margin: 20, vertical_margin: 10 }),
  );
  const out = await t.download(body.outputUrl);
  const { width, height } = shownSize(out, 3);
  near(width, 595.276 - 100, 1, 'shown width');
  // pdftotext -bbox places words on the media box (origin top-left), which starts 100 points left of the crop box.
  const w = pdfWords(out, 3).find((x) => x.text === '2' && x.yMin > height - 40)!;
  assert.ok(
    w,
    pdfWords(out, 3)
      .map((x) => x.text)
      .join(' ')
      .slice(-200),
  );
  near(w.xMin, 100 + 20, 1, 'left edge in the crop box');
  near(w.yMax, height - 10, 1.5, 'bottom edge in the crop box');
  // Even pages are left without (page 2 keeps only LaTeX's own number, centred).
  assert.not.ok(
    pdfWords(out, 2).some((x) => Math.abs(x.xMin - 120) < 1 && Math.abs(x.yMax - (height - 10)) < 1.5),
    'no number on page 2',
  );

  // /compared-pdf gives its boxes on the page as seen too: the deleted pages 3-4 start 100 points further left.
  const firstTwo = join(tmp, 'cropped-first-two.pdf');
  execFileSync('qpdf', ['--empty', '--pages', out, '1-2', '--', firstTwo]);
  const compared = await ok(await t.form('/compared-pdf', { file: { file: out }, compare_file: { file: firstTwo } }));
  const deleted = (compared.differences as Record<string, any>[]).find((d) => d.kind === 'deleted' && d.page === 3)!;
  assert.ok(deleted, JSON.stringify(compared.differences).slice(0, 400));
  const words = pdfWords(out, 3);
  near(deleted.box.x, Math.min(...words.map((x) => x.xMin)) - 100, 1, 'deleted box x');
  near(deleted.box.y, height - Math.max(...words.map((x) => x.yMax)), 1, 'deleted box bottom');
});

test('page numbers: drawn into each page (one font file, not a stamp page per number); an encrypted file keeps its encryption', async () => {
  // Cyrillic needs an embedded font: its subset travels once, every page names it.
  const body = await ok(await t.form('/pdf-with-page-numbers', { file: { file: FED }, text: 'Стр. {page} из {pages}', pages: '1-3' }));
  const out = await t.download(body.outputUrl);
  assert.equal(
    [1, 2, 3, 4].map((p) => /Стр\. \d+ из 3/.exec(pageText(out, p))?.[0] ?? null),
    ['Стр. 1 из 3', 'Стр. 2 из 3', 'Стр. 3 из 3', null],
  );
  assert.is(pdfPages(out), 15);
  // No form XObject per page: the pages' added content is their own text.
  const objects = tool('qpdf', ['--json=2', '--json-key=qpdf', out]);
  assert.not.ok(objects.includes('QuireStamp'), 'no stamp form');
  assert.ok(objects.includes('/QuireQF1'), 'the font named in the pages');
  // Opens without a password, permissions withheld: the numbers are laid by qpdf, the encryption kept.
  const locked = await ok(
    await t.form('/pdf-with-page-numbers', {
      file: { file: corpus('encrypted/rc4-128-owner-master-no-user-password.pdf') },
      text: 'No. {page}',
      start: '7',
      pages: '2',
    }),
  );
  const lockedOut = await t.download(locked.outputUrl);
  assert.match(tool('qpdf', ['--show-encryption', lockedOut]), /P = -3104/);
  assert.match(pageText(lockedOut, 2), /No\. 7/);
  assert.not.match(pageText(lockedOut, 1), /No\./);
});

test('page numbers: the 400s name the field', async () => {
  const send = (fields: Record<string, string>) => t.form('/pdf-with-page-numbers', { file: { file: ROTATED }, ...fields });
  await refused(await send({ text: 'Page {pag}' }), 400, /\{pag\} is not within the acceptable range for text/);
  await refused(await send({ pages: '3' }), 400, /3 is not within the acceptable range for pages/);
  await refused(await send({ vertical_margin: '700' }), 400, /700 is not within the acceptable range for vertical_margin/);
  await refused(await send({ horizontal_alignment: 'left', horizontal_margin: '800' }), 400, /800 is not within the acceptable range for horizontal_margin/);
  await refused(await send({ vertical_alignment: 'middle' }), 400, /vertical_alignment/);
  await refused(await send({ start: '-1' }), 400, /start/);
  await refused(await send({ text_size: '500' }), 400, /text_size/);
  await refused(await send({ font: 'Nonesuch Sans' }), 400, /font was not found/);
  await refused(await send({ text_color_rgb: '0,0,0', text_color_cmyk: '0,0,0,100' }), 400, /cannot both be given/);
});

// ------------------------------------------------------------------------------------------------ compare

test("alignment: an inserted block far beyond one diff's edit bound is found whole between anchors", () => {
  const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i % 7 === 0 ? 'the' : i}`);
  const a = words(20_000, 'w');
  const b = [...a.slice(0, 9_000), ...words(3 * MAX_GAP_EDITS, 'new'), ...a.slice(9_000, 15_000), 'changed', ...a.slice(15_001)];
  assert.equal(alignWords(a, b), [
    { aFrom: 9_000, aTo: 9_000, bFrom: 9_000, bTo: 9_000 + 3 * MAX_GAP_EDITS },
    { aFrom: 15_000, aTo: 15_001, bFrom: 15_000 + 3 * MAX_GAP_EDITS, bTo: 15_001 + 3 * MAX_GAP_EDITS },
  ]);
  assert.equal(alignWords(a, a), []);
  // Repetitive text has no anchors: the pages inserted into it are still found, not the whole text replaced.
  const r = Array.from({ length: 20_000 }, (_, i) => `r${i % 50}`);
  const inserted = [...r.slice(0, 9_000), ...words(3 * MAX_GAP_EDITS, 'new'), ...r.slice(9_000)];
  assert.equal(alignWords(r, inserted), [{ aFrom: 9_000, aTo: 9_000, bFrom: 9_000, bTo: 9_000 + 3 * MAX_GAP_EDITS }]);
  // A text told twice has no word unique in the document, but its words are unique within the gap the first
  // telling makes: that gap, too different for one diff, is cut again there, not replaced whole.
  const told = Array.from({ length: 3_000 }, (_, i) => `p${i}`);
  const retold = ['first', ...told.slice(1, 1_500), ...words(1_500, 'new'), ...told.slice(1_500, 2_999), 'last'];
  assert.equal(alignWords([...told, ...told], [...retold, ...told]), [
    { aFrom: 0, aTo: 1, bFrom: 0, bTo: 1 },
    { aFrom: 1_500, aTo: 1_500, bFrom: 1_500, bTo: 3_000 },
    { aFrom: 2_999, aTo: 3_000, bFrom: 4_499, bTo: 4_500 },
  ]);
});

test('alignment: pages shared word for word are matched first, so a text repeated over and over keeps its changes small', () => {
  // 15 pages of 300 words told 10 times: no word is unique in the document. Page 20 is replaced by 1,500 new
  // words (more than one diff may find) and page 130 deleted; between them, 110 pages of the same repeated text.
  const page = (p: number) => Array.from({ length: 300 }, (_, i) => `w${(p * 37 + i) % 400}`);
  const pages = Array.from({ length: 150 }, (_, p) => page(p % 15));
  const edited = [...pages.slice(0, 19), Array.from({ length: 1_500 }, (_, i) => `new${i}`), ...pages.slice(20, 129), ...pages.slice(130)];
  const doc = (list: string[][], idOf: (w: string) => number) => {
    const starts = Int32Array.from([0, ...list.map((_, p) => list.slice(0, p + 1).reduce((n, l) => n + l.length, 0))]);
    return { ids: Int32Array.from(list.flat(), idOf), starts };
  };
  const ids = new Map<string, number>();
  const idOf = (w: string) => ids.get(w) ?? ids.set(w, ids.size).get(w)!;
  const [a, b] = [doc(pages, idOf), doc(edited, idOf)];
  assert.equal(alignDocuments(a, b), [
    { aFrom: 19 * 300, aTo: 20 * 300, bFrom: 19 * 300, bTo: 19 * 300 + 1_500 },
    { aFrom: 129 * 300, aTo: 130 * 300, bFrom: 128 * 300 + 1_500, bTo: 128 * 300 + 1_500 },
  ]);
  assert.equal(alignDocuments(a, a), []);
  // As one page each, the documents are one gap that differs too much and has no anchor: replaced whole.
  const whole = (d: typeof a) => ({ ids: d.ids, starts: Int32Array.of(0, d.ids.length) });
  assert.is(alignDocuments(whole(a), whole(b)).length, 1);
});

let edited = '';
/** The first document: the Zen of Python, then a Federal Register page. The second: a word changed, a sentence deleted, a page inserted. */
async function documents(): Promise<{ first: string; second: string }> {
  const first = join(tmp, 'first.pdf');
  execFileSync('qpdf', ['--empty', '--pages', ZEN, '1', FED, '1', '--', first]);
  if (edited) return { first, second: edited };
  const marked = await ok(
    await t.form('/pdf-with-redacted-text-preview', {
      file: { file: ZEN },
      redactions: JSON.stringify([
        { type: 'literal', value: 'Beautiful' },
        { type: 'literal', value: 'Flat is better than nested.' },
      ]),
    }),
  );
  const redacted = await ok(await t.json('/pdf-with-redacted-text-applied', { id: marked.outputId, rgb_color: '255,255,255' }));
  // 'Pretty' where 'Beautiful' was: its baseline is 842 - 118.6 (pdftotext's box bottom less the descent).
  const texted = await ok(
    await t.json('/pdf-with-added-text', { id: redacted.outputId, text_objects: [{ font: 'Arial', text: 'Pretty', text_size: 11, x: 72, y: 723.5, page: 1 }] }),
  );
  const zen2 = await t.download(texted.outputUrl);
  edited = join(tmp, 'second.pdf');
  execFileSync('qpdf', ['--empty', '--pages', zen2, '1', LOREM, '1', FED, '1', '--', edited]);
  return { first, second: edited };
}

test('compare: a changed word, a deleted sentence and an inserted page, on their pages; highlights on the changed word', async () => {
  const { first, second } = await documents();
  const body = await ok(await t.form('/compared-pdf', { file: { file: first }, compare_file: { file: second } }));
  assert.is(body.identical, false);
  assert.is((body.inputId as string[]).length, 2);
  const diffs = body.differences as Record<string, any>[];
  const summary = diffs.map(
    (d) => `${d.kind} p${d.page} (other p${d.other_page}): ${d.text.slice(0, 30)}${d.replaced_text !== undefined ? ` <- ${d.replaced_text}` : ''}`,
  );
  assert.equal(summary, [
    'changed p1 (other p1): Pretty <- Beautiful',
    'deleted p1 (other p1): Flat is better than nested.',
    'inserted p2 (other p2): Lorem ipsum dolor sit amet, co',
  ]);
  // Boxes on the page as seen, origin lower-left: where pdftotext finds the words (its origin is top-left).
  const pretty = pdfWords(second, 1).find((w) => w.text === 'Pretty')!;
  const box = diffs[0].box;
  near(box.x, pretty.xMin, 1, 'changed box x');
  near(box.y + box.height, 842 - pretty.yMin, 1.5, 'changed box top');
  const flat = pdfWords(first, 1).find((w) => w.text === 'Flat')!;
  near(diffs[1].box.x, flat.xMin, 1, 'deleted box x');
  near(diffs[1].box.y + diffs[1].box.height, 842 - flat.yMin, 1.5, 'deleted box top');
  assert.ok(diffs[2].box.height > 300, "the inserted page's text is one box");

  // The output is the second document, highlighted: yellow under 'Pretty', none under an unchanged line.
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 3);
  assert.match(pageText(out, 1), /Pretty/);
  const px = await render(out, 1);
  const yellowIn = (x0: number, y0: number, x1: number, y1: number) => {
    let n = 0;
    let all = 0;
    for (let y = Math.ceil(y0); y < y1; y++)
      for (let x = Math.ceil(x0); x < x1; x++, all++) {
        const [r, g, b] = px(x, y);
        if (r > 200 && g > 170 && b < 120) n++;
      }
    return n / all;
  };
  assert.ok(yellowIn(box.x, box.y, box.x + box.width, box.y + box.height) > 0.5, 'the changed word is highlighted');
  const explicit = pdfWords(second, 1).find((w) => w.text === 'Explicit')!;
  assert.is(yellowIn(explicit.xMin, 842 - explicit.yMax, explicit.xMax, 842 - explicit.yMin), 0, 'an unchanged word is not');
  const page2 = await render(out, 2);
  const [r, g, b] = page2(100, 842 - pdfWords(out, 2)[0].yMax + 2);
  assert.ok(g > 200 && r < 200 && b < 200, `the inserted page is green: ${[r, g, b]}`);
});

test('compare: identical texts give an empty list, by id; the 400s', async () => {
  const { first } = await documents();
  const id = (await ok(await t.form('/upload', { file: { file: first } }))).files[0].id;
  const body = await ok(await t.json('/compared-pdf', { id, compare_id: id, output: 'same' }));
  assert.equal(body.differences, []);
  assert.is(body.identical, true);
  const out = await t.download(body.outputUrl);
  assert.is(pdfPages(out), 2);
  assert.is(pageText(out, 1), pageText(first, 1));
  await refused(await t.json('/compared-pdf', { id }), 400, /compare_file|compare_id/);
  await refused(
    await t.form('/compared-pdf', { file: { file: first }, compare_file: { bytes: Buffer.from('not a pdf at all'), name: 'x.pdf' } }),
    400,
    /not valid input/,
  );
});

test('compare: a deleted rotated page, its box on the page as seen', async () => {
  const single = join(tmp, 'rotated-first-page.pdf');
  execFileSync('qpdf', ['--empty', '--pages', ROTATED, '1', '--', single]);
  const body = await ok(await t.form('/compared-pdf', { file: { file: ROTATED }, compare_file: { file: single } }));
  const diffs = body.differences as Record<string, any>[];
  assert.is(diffs.length, 1, JSON.stringify(diffs));
  assert.is(diffs[0].kind, 'deleted');
  assert.is(diffs[0].page, 2);
  assert.is(diffs[0].other_page, 1);
  assert.match(diffs[0].text, /^This is my second page\. It will have a landscape layout\./);
  // Page 2 is 792 x 612 as seen; pdftotext's boxes are in that frame with the origin at the top-left.
  const words = pdfWords(ROTATED, 2);
  const left = Math.min(...words.map((w) => w.xMin));
  const top = Math.min(...words.map((w) => w.yMin));
  near(diffs[0].box.x, left, 1, 'box x');
  near(diffs[0].box.y + diffs[0].box.height, 612 - top, 1, 'box top');
  assert.ok(diffs[0].box.width < 792 && diffs[0].box.width > 100, `box width ${diffs[0].box.width}`);
});

let renders = 0;
/** One page rendered at 72 dpi with pdftoppm; `px(x, y)` takes PDF coordinates (origin lower-left). */
async function render(pdf: string, page: number) {
  const prefix = join(tmp, `r${renders++}`);
  execFileSync('pdftoppm', ['-r', '72', '-png', '-singlefile', '-f', String(page), '-l', String(page), pdf, prefix]);
  const { data, info } = await sharp(`${prefix}.png`).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return (x: number, y: number) => {
    const i = ((info.height - 1 - Math.floor(y)) * info.width + Math.floor(x)) * 3;
    return [data[i], data[i + 1], data[i + 2]];
  };
}

test.run();
