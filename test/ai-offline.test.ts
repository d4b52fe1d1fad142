import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countWords, detectLanguages, documentText } from '../app/ai/index.js';
import { corpus, type FormValue, startApp, type TestApp, tool } from './helpers.js';

/** The AI endpoints on a server without LLM_URL: extractive summaries, Apertium translation, language detection. */

let t: TestApp;
let dir: string;
test.before(async () => {
  t = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'quire-ai-offline-'));
});
test.after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The document text as the endpoints read it. */
const read = async (pdf: string, pages = '1-last') =>
  (
    await documentText({ name: 'a.pdf', type: 'application/pdf', path: corpus(pdf) }, pages, {
      cwd: dir,
      signal: new AbortController().signal,
      timeoutMs: 60_000,
    })
  ).blocks;

async function call(path: string, fields: Record<string, FormValue | FormValue[]>, status = 200) {
  const res = await t.form(path, fields);
  const body = (await res.json()) as Record<string, any>;
  assert.is(res.status, status, JSON.stringify(body));
  return body;
}

/** pdftotext's text with whitespace collapsed and line-end hyphenation undone, as a reader would quote it. */
const normalised = (s: string) => s.replace(/\s+/g, ' ').replace(/(\p{Ll})- (\p{Ll})/gu, '$1$2');
const docText = (pdf: string) => normalised(tool('pdftotext', [corpus(pdf), '-']));
const items = (summary: string) =>
  summary
    .split('\n')
    .map((l) => l.replace(/^\s*(-|\d+\.)\s+/, '').trim())
    .filter(Boolean);

test("extractive overview and lists: only the document's sentences, in its order, within the word count; engine named", async () => {
  for (const [pdf, words] of [
    ['pdf/google-docs-export.pdf', 60],
    ['pdf/text-4-pages-pdflatex.pdf', 45],
  ] as const) {
    const text = docText(pdf);
    for (const format of ['overview', 'bullet_points', 'numbered_list', 'highlight']) {
      const body = await call('/summarized-pdf-text', { file: { file: corpus(pdf) }, summary_format: format, target_word_count: String(words) });
      assert.is(body.engine, 'extractive');
      assert.match(body.warning, /without a language model \(LLM_URL is not set\)/);
      const summary: string = body.summary;
      assert.ok(countWords(summary.replace(/^\s*(-|\d+\.)\s/gm, '')) <= words, `${format}: ${countWords(summary)} words`);
      assert.ok(countWords(summary) >= words / 3, `${format} uses its budget: ${summary}`);
      const sentences = format === 'overview' ? summary.split(/\n\n|(?<=[.!?])\s+(?=\p{Lu})/u) : items(summary);
      let at = -1;
      for (const s of sentences) {
        const i = text.indexOf(s.trim());
        assert.ok(i >= 0, `${pdf} ${format}: "${s}" is a sentence of the document`);
        // Repeated blind text may occur again earlier; the first occurrence after the previous one must exist.
        assert.ok(text.indexOf(s.trim(), at + 1) > at, `${format}: in document order`);
        at = text.indexOf(s.trim(), at + 1);
      }
      if (format === 'bullet_points' || format === 'highlight')
        assert.ok(
          summary.split('\n').every((l) => l.startsWith('- ')),
          summary,
        );
      if (format === 'numbered_list') summary.split('\n').forEach((l, i) => assert.ok(l.startsWith(`${i + 1}. `), l));
      if (format === 'overview') assert.not.match(summary, /^\s*(-|\d+\.)\s/m);
    }
  }
});

test('the 15-page Federal Register (three-column pages): every summary sentence is one of its sentences', async () => {
  // pdftotext undoes line-end hyphens itself and the page model keeps them: compare without spaces and hyphens.
  const squeeze = (x: string) => x.replace(/[\s\-‐–]+/g, '');
  const text = squeeze(tool('pdftotext', [corpus('pdf/federal-register-15-pages.pdf'), '-']));
  const body = await call('/summarized-pdf-text', { file: { file: corpus('pdf/federal-register-15-pages.pdf') }, target_word_count: '400' });
  assert.ok(countWords(body.summary) <= 400 && countWords(body.summary) >= 250, `${countWords(body.summary)} words`);
  const sentences = (body.summary as string).split(/\n\n|(?<=[.!?])\s+(?=\p{Lu})/u);
  assert.ok(sentences.length >= 4);
  // pdftotext reads some column ends elsewhere (after the next page's running head), so a sentence may be found
  // in two pieces; text mixed from neighbouring columns would break it into many.
  const found = (s: string) => {
    const w = s.split(/\s+/);
    return w.some((_, k) => text.includes(squeeze(w.slice(0, k + 1).join(' '))) && (k + 1 === w.length || text.includes(squeeze(w.slice(k + 1).join(' ')))));
  };
  for (const s of sentences) assert.ok(found(s), s);
});

test("table_of_contents and outline come from the headings, in the order of the PDF's own bookmarks", async () => {
  const pdf = corpus('pdf/outline-bookmarks-links.pdf');
  const bookmarks = [...tool('mutool', ['show', pdf, 'outline']).matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.is(bookmarks.length, 9);
  const toc = await call('/summarized-pdf-text', { file: { file: pdf }, summary_format: 'table_of_contents', output_format: 'plaintext' });
  const lines: string[] = toc.summary.split('\n');
  assert.ok(
    lines.every((l) => /^\s*- \S/.test(l)),
    toc.summary,
  );
  const titled = lines.filter((l) => /^- \d+ /.test(l)).map((l) => l.replace(/^- \d+ /, ''));
  assert.equal(titled, bookmarks);
  // pages select the text: page 4 holds the last two bookmarks.
  const last = await call('/summarized-pdf-text', { file: { file: pdf }, summary_format: 'table_of_contents', pages: '4' });
  assert.is(last.summary, `- 8 ${bookmarks[7]}\n- 9 ${bookmarks[8]}`);
  const outline = await call('/summarized-pdf-text', { file: { file: pdf }, summary_format: 'outline', target_word_count: '80' });
  const out: string[] = outline.summary.split('\n');
  assert.ok(out.filter((l) => /^- \d+ (Foo|Bar|Baz)$/.test(l)).length === 9, outline.summary);
  const nested = out.filter((l) => l.startsWith('  - '));
  assert.ok(nested.length >= 1, outline.summary);
  const text = docText('pdf/outline-bookmarks-links.pdf');
  for (const l of nested) assert.ok(text.includes(l.slice(4)), l);
  assert.ok(countWords(out.map((l) => l.replace(/^\s*- /, '')).join(' ')) <= 80);
  // A document without headings has nothing to list.
  await call('/summarized-pdf-text', { file: { file: corpus('pdf/google-docs-export.pdf') }, pages: '1', summary_format: 'table_of_contents' }, 200);
  const none = await call('/summarized-pdf-text', { file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') }, summary_format: 'table_of_contents' }, 400);
  assert.match(none.error, /no headings/);
});

test('formats that need writing answer 503 naming LLM_URL; output_type=file keeps engine', async () => {
  for (const format of ['abstract', 'question_answer', 'action_items']) {
    const body = await call('/summarized-pdf-text', { file: { file: corpus('pdf/google-docs-export.pdf') }, summary_format: format }, 503);
    assert.match(body.error, new RegExp(`summary_format ${format} needs a language model.*LLM_URL.*overview, highlight, bullet_points`));
  }
  // A target shorter than any sentence: the best one's first words, marked as cut.
  const tiny = await call('/summarized-pdf-text', { file: { file: corpus('pdf/text-4-pages-pdflatex.pdf') }, target_word_count: '3' });
  assert.is(countWords(tiny.summary), 3);
  assert.ok(tiny.summary.endsWith('…') && docText('pdf/text-4-pages-pdflatex.pdf').includes(tiny.summary.slice(0, -1)), tiny.summary);
  const body = await call('/summarized-pdf-text', { file: { file: corpus('pdf/google-docs-export.pdf') }, output_type: 'file', target_word_count: '30' });
  assert.is(body.engine, 'extractive');
  assert.ok(countWords(readFileSync(await t.download(body.outputUrl), 'utf8')) <= 30);
});

test('an English PDF translates to Spanish offline: Spanish function words, no English ones, headings kept', async () => {
  const body = await call('/translated-pdf-text', { file: { file: corpus('pdf/federal-register-15-pages.pdf') }, output_language: 'es', pages: '1-3' });
  assert.is(body.engine, 'apertium');
  assert.is(body.output_language, 'es');
  assert.equal(body.source_languages, ['en']);
  assert.match(body.warning, /Apertium's rule-based en->es pair/);
  const out: string = body.translated_text;
  const words = new Set(out.toLowerCase().match(/\p{L}+/gu));
  for (const w of ['el', 'la', 'de', 'que']) assert.ok(words.has(w), `Spanish "${w}"`);
  for (const w of ['the', 'and', 'of']) assert.not.ok(words.has(w), `English "${w}" left`);
  assert.not.match(out, /\*\p{L}/u, 'no unknown-word marks');
  const titled = await call('/translated-pdf-text', { file: { file: corpus('pdf/outline-bookmarks-links.pdf') }, output_language: 'es', pages: '2-3' });
  const headings = (titled.translated_text as string).split('\n').filter((l) => /^#{1,6} /.test(l));
  const source = (await read('pdf/outline-bookmarks-links.pdf', '2-3')).filter((b) => /^#{1,6} /.test(b));
  assert.is(headings.length, source.length);
  assert.ok(
    headings.some((h) => /^# \d+ (Foo|Bar|Baz)$/.test(h)),
    headings.join('|'),
  );
  // Plain text: the same translation without Markdown marks.
  const plain = await call('/translated-pdf-text', {
    file: { file: corpus('pdf/outline-bookmarks-links.pdf') },
    output_language: 'es-419',
    pages: '2',
    output_format: 'plaintext',
  });
  assert.not.match(plain.translated_text, /^#/m);
  assert.match(plain.translated_text, /\bque\b/);
});

test('Markdown structure survives offline translation: lists, tables, emphasis, links, code', async () => {
  const md =
    '# Annual report\n\nThe house of the city is **very big** and the *old* town is small. See [the website](https://example.com/a_b) and run `npm start`.\n\n- First item of the list\n- Second item\n\n| Name | Description |\n| --- | --- |\n| House | The red house |\n\n```\nthe code stays\n```\n';
  const body = await call('/translated-pdf-text', { file: { bytes: Buffer.from(md), name: 'report.md' }, output_language: 'es' });
  const out: string = body.translated_text;
  assert.match(out, /^# \S/);
  assert.match(out, /\*\*muy grande\*\*/);
  assert.match(out, /\[[^\]]+\]\(https:\/\/example\.com\/a_b\)/);
  assert.match(out, /`npm start`/);
  assert.match(out, /\n- \S[^\n]*\n- \S/);
  assert.match(out, /\n\| [^|]+ \| [^|]+ \|\n\| --- \| --- \|\n\| [^|]+ \| [^|]*casa[^|]* \|/);
  assert.match(out, /```\nthe code stays\n```/);
});

test('a long text is translated in parts, read back in order: 4,500 paragraphs, each its own number and translated', async () => {
  const n = 4500;
  const md = Array.from({ length: n }, (_, i) => `The house number ${i + 1} of the city is red.`).join('\n\n');
  const body = await call('/translated-pdf-text', { file: { bytes: Buffer.from(md), name: 'long.md' }, output_language: 'es' });
  const paragraphs = (body.translated_text as string).split(/\n\n/);
  assert.is(paragraphs.length, n);
  paragraphs.forEach((p, i) => {
    assert.ok(new RegExp(`\\b${i + 1}\\b`).test(p) && /\bcasa\b/.test(p) && !/\bhouse\b/.test(p), `paragraph ${i + 1}: ${p}`);
  });
});

test('pairs Apertium lacks answer 503 naming LLM_URL and listing the offline pairs', async () => {
  const body = await call('/translated-pdf-text', { file: { file: corpus('pdf/google-docs-export.pdf') }, output_language: 'ja' }, 503);
  assert.match(body.error, /LLM_URL/);
  assert.match(body.error, /from en to ja/);
  assert.match(body.error, /Offline pairs \(Apertium\): .*en->es/);
  const zh = await call('/translated-pdf-text', { file: { file: corpus('pdf/cjk-chinese-gbk-nonembedded.pdf') }, output_language: 'en' }, 503);
  assert.match(zh.error, /from zh to en/);
  // Already in the asked language: the text as it is, said so.
  const same = await call('/translated-pdf-text', { file: { file: corpus('text/cups-testfile.txt') }, output_language: 'en-GB' });
  assert.is(same.engine, 'none');
  assert.match(same.warning, /already in en/);
  assert.ok(same.translated_text.startsWith('All work and no play makes Johhny a dull boy.'), same.translated_text.slice(0, 80));
});

test("detection names the language of the corpus's German, French, Arabic, Chinese and Japanese texts", async () => {
  const euro = readFileSync(corpus('scans/tesseract-eurotext-multilingual.expected.txt'), 'utf8').replace(/\s+/g, ' ');
  assert.equal(await detectLanguages([/Der „schnelle”.*?Hund\./.exec(euro)![0]]), ['de']);
  assert.equal(await detectLanguages([/Le renard.*?paresseux\./.exec(euro)![0]]), ['fr']);
  assert.equal(await detectLanguages(await read('pdf/tagged-word365.pdf')), ['fr']);
  // Arabic beside a Latin transliteration, Japanese under an ASCII line, four words of Chinese.
  assert.equal(await detectLanguages(await read('pdf/rtl-arabic-weasyprint.pdf')), ['ar']);
  assert.equal(await detectLanguages(await read('pdf/cjk-japanese-sjis-cmap.pdf')), ['ja']);
  assert.equal(await detectLanguages(await read('pdf/cjk-japanese-vertical-3-pages.pdf')), ['ja']);
  assert.equal(await detectLanguages(await read('pdf/cjk-chinese-gbk-nonembedded.pdf')), ['zh']);
  assert.equal(await detectLanguages(await read('pdf/federal-register-15-pages.pdf')), ['en']);
  // Several languages by share: an English paragraph and a German one of similar length.
  const en = /The \(quick\).*?is spam\./.exec(euro)![0];
  const de = `${/Der „schnelle”.*?Hund\./.exec(euro)![0]} Er läuft dann schnell über die Wiese und durch den Wald.`;
  assert.equal((await detectLanguages([en, de])).sort(), ['de', 'en']);
});

test.run();
