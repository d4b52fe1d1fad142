// The offline AI text operations.
// 1. Language detectors (franc, eld, tinyld) on the corpus's texts, read as the endpoints read them (paragraphs
//    and pages of German, French, Arabic, Chinese, Japanese, English... documents): accuracy and time.
// 2. The extractive summary of the 15-page Federal Register issue (goal < 1 s), against reading its text alone.
// 3. Offline translation (Apertium en->es, Markdown kept) of the same document vs bare `apertium eng-spa` on its
//    pdftotext text.
// Run: npx tsx scripts/bench/ai.bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { detectLanguages, documentText, extractiveSummary, offlinePair, textDetector, translateOffline } from '../../app/ai/index.js';

const CORPUS = process.env.QUIRE_CORPUS ?? resolve(import.meta.dirname, '../../../shared/corpus');
const dir = mkdtempSync(join(tmpdir(), 'quire-bench-ai-'));
const ctx = { cwd: dir, signal: new AbortController().signal, timeoutMs: 120_000 };
const read = async (path: string) => (await documentText({ name: path, type: 'application/pdf', path: join(CORPUS, path) }, '1-last', ctx)).blocks;

interface Sample {
  what: string;
  lang: string;
  text: string;
}

async function samples(): Promise<Sample[]> {
  const out: Sample[] = [];
  const add = (what: string, lang: string, text: string) => out.push({ what, lang, text });
  // Eurotext's ground truth: one sentence per language, cut across lines as printed.
  const euro = readFileSync(join(CORPUS, 'scans/tesseract-eurotext-multilingual.expected.txt'), 'utf8').replace(/\s+/g, ' ');
  const sentences: [string, RegExp][] = [
    ['en', /The \(quick\).*?is spam\./],
    ['de', /Der „schnelle”.*?Hund\./],
    ['fr', /Le renard.*?paresseux\./],
    ['it', /La volpe.*?pigro\./],
    ['es', /El zorro.*?perezoso\./],
    ['pt', /A raposa.*?preguiçoso\./],
  ];
  for (const [lang, re] of sentences) add(`eurotext ${lang} sentence`, lang, re.exec(euro)![0]);
  const manifest = readFileSync(join(CORPUS, 'MANIFEST.md'), 'utf8');
  add('french-diacritics-scan pangram', 'fr', /'(Portez ce vieux[^']*)'/.exec(manifest)![1]);
  add('tagged-word365 page', 'fr', (await read('pdf/tagged-word365.pdf')).join('\n'));
  add('rtl-arabic-weasyprint page', 'ar', (await read('pdf/rtl-arabic-weasyprint.pdf')).join('\n'));
  add('cjk-chinese-gbk page', 'zh', (await read('pdf/cjk-chinese-gbk-nonembedded.pdf')).join('\n'));
  add('cjk-japanese-vertical pages', 'ja', (await read('pdf/cjk-japanese-vertical-3-pages.pdf')).join('\n'));
  const slide = execFileSync('unzip', ['-p', join(CORPUS, 'office/poi-with_japanese.pptx'), 'ppt/slides/slide1.xml'], { encoding: 'utf8' });
  const ja = /<a:t>([^<]*ゾルゲ[^<]*)<\/a:t>/.exec(slide);
  if (ja) add('poi-with_japanese slide line', 'ja', ja[1]);
  add('cups-testfile', 'en', readFileSync(join(CORPUS, 'text/cups-testfile.txt'), 'utf8').slice(0, 2000));
  // English paragraphs of real documents (prose blocks of 80+ characters), and the Federal Register page by page.
  for (const f of ['pdf/text-4-pages-pdflatex.pdf', 'pdf/google-docs-export.pdf']) {
    const paras = (await read(f)).filter((b) => b.length >= 80 && !/^[#|]/.test(b));
    paras.slice(0, 20).forEach((p, i) => add(`${f.slice(4)} paragraph ${i + 1}`, 'en', p));
  }
  for (let page = 1; page <= 15; page++) {
    const blocks = (await documentText({ name: 'fr.pdf', type: 'application/pdf', path: join(CORPUS, 'pdf/federal-register-15-pages.pdf') }, String(page), ctx))
      .blocks;
    add(`federal-register page ${page}`, 'en', blocks.join('\n\n'));
  }
  // Markdown markup is no language: every detector gets the text without it.
  return out.map((s) => ({ ...s, text: s.text.replace(/[|#*_`]|-{3,}/g, ' ') }));
}

// franc and tinyld lost (see README) and are not dependencies: they are compared when installed for the run
// (`npm install --no-save franc@6.2.0 tinyld@1.3.4`), skipped otherwise. The specifiers are variables so that
// TypeScript does not look for their types.
const optional = async (name: string): Promise<any> => import(name).catch(() => undefined);
const francLib = await optional(['franc'][0]);
const tinyld = await optional(['tinyld'][0]);
const large = (await import('eld/large')).eld;
const medium = (await import('eld/medium')).eld;
const small = (await import('eld/small')).eld;
// franc answers ISO 639-3; the ones the corpus has, for a fair comparison.
const FRANC_1: Record<string, string> = { eng: 'en', deu: 'de', fra: 'fr', ita: 'it', spa: 'es', por: 'pt', arb: 'ar', cmn: 'zh', jpn: 'ja' };
const franc = (t: string): string => francLib.franc(t, { minLength: 1 });
const detectors: Record<string, (t: string) => string | Promise<string>> = {
  ...(francLib ? { franc: (t: string) => FRANC_1[franc(t)] ?? franc(t) } : {}),
  'eld large': (t) => large.detect(t).language,
  'eld medium': (t) => medium.detect(t).language,
  'eld small': (t) => small.detect(t).language,
  ...(tinyld ? { tinyld: (t: string) => tinyld.detect(t) } : {}),
  'Quire (eld medium per paragraph, by script, main language)': async (t) => (await detectLanguages(t.split(/\n\s*\n/)))[0] ?? '',
};

if (!francLib || !tinyld) console.log('(franc / tinyld not installed: `npm install --no-save franc@6.2.0 tinyld@1.3.4` to compare them)');
const set = await samples();
console.log(`Language detection: ${set.length} texts (${[...new Set(set.map((s) => s.lang))].join(', ')}), as the endpoints read them`);
console.log('| detector | right | wrong (text: answer) | ms for all texts x20 |');
console.log('|---|---|---|---|');
for (const [name, detect] of Object.entries(detectors)) {
  const answers = await Promise.all(set.map((s) => detect(s.text)));
  const wrong = set.map((s, i) => ({ ...s, got: answers[i] })).filter((s) => s.got !== s.lang);
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) for (const s of set) await detect(s.text);
  const ms = performance.now() - t0;
  console.log(`| ${name} | ${set.length - wrong.length}/${set.length} | ${wrong.map((s) => `${s.what}: ${s.got || '?'}`).join('; ')} | ${ms.toFixed(0)} |`);
}
console.log(`(detector in use: ${textDetector})`);

// ---------------------------------------------------------------- extractive summary
const fr = join(CORPUS, 'pdf/federal-register-15-pages.pdf');
const time = async (fn: () => Promise<unknown>, runs = 3) => {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[Math.floor(runs / 2)];
};
const readMs = await time(() => documentText({ name: 'fr.pdf', type: 'application/pdf', path: fr }, '1-last', ctx));
const blocks = (await documentText({ name: 'fr.pdf', type: 'application/pdf', path: fr }, '1-last', ctx)).blocks;
const tables = (await documentText({ name: 'fr.pdf', type: 'application/pdf', path: fr }, '1-last', ctx)).tables;
const scoreMs = await time(async () => extractiveSummary(blocks, { targetWords: 400, format: 'overview' }, tables));
const totalMs = await time(async () => {
  const d = await documentText({ name: 'fr.pdf', type: 'application/pdf', path: fr }, '1-last', ctx);
  return extractiveSummary(d.blocks, { targetWords: 400, format: 'overview' }, d.tables);
});
console.log(
  `\nExtractive summary, federal-register-15-pages.pdf, 400 words (median of 3): reading the text ${readMs.toFixed(0)} ms, sentence scoring ${scoreMs.toFixed(0)} ms, together ${totalMs.toFixed(0)} ms (goal < 1000 ms)`,
);

const pair = await offlinePair('en', 'es');
const oursMs = await time(() => translateOffline(blocks.join('\n\n'), pair, ctx), 1);
const plain = join(dir, 'fr.txt');
execFileSync('pdftotext', [fr, plain]);
const bareMs = await time(async () => execFileSync('apertium', ['-u', 'eng-spa', plain, join(dir, 'fr.es.txt')]), 1);
console.log(
  `Offline translation en->es, federal-register-15-pages.pdf text: ours (Markdown kept, html-noent) ${oursMs.toFixed(0)} ms vs bare \`apertium -u eng-spa\` on pdftotext's text ${bareMs.toFixed(0)} ms (${(oursMs / bareMs).toFixed(2)}x)`,
);
rmSync(dir, { recursive: true, force: true });
