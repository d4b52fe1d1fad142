/**
 * Source-language detection, offline, for every translation: eld (nitotm's Efficient Language Detector, medium
 * database: as right as the large one on the corpus at half its memory), chosen over franc and tinyld by
 * `scripts/bench/ai.bench.ts` on the corpus's texts (32/33 right against 29 and 30, and 5-10x faster).
 * CJK is told apart by script before eld sees a block (kana means Japanese, Hangul Korean, Han alone Chinese):
 * that holds for a few characters too, and an ASCII line above Japanese cannot decide the answer, as it can
 * for n-gram detectors judging the block as a whole. eld gets the letters of the other scripts; its answers on
 * very little text (under 20 letters, or not reliable by its own measure) count only when nothing reliable was
 * found.
 */

export const textDetector = 'eld 2.1.0 (medium)';

type Eld = typeof import('eld/medium')['eld'];
let loading: Promise<Eld> | undefined;
/** Loaded on first use: its n-gram tables take ~65 MB of heap that a server without translations never needs. */
const detector = () => (loading ??= import('eld/medium').then((m) => m.eld));

/** Share of the document's letters a language needs to be reported beside the main one. */
const MIN_SHARE = 0.1;

const HAN = /\p{Script=Han}/gu;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}ー]/gu;
const HANGUL = /\p{Script=Hangul}/gu;
/** Everything but letters of other scripts (and their combining marks) becomes a space. */
const NOT_OTHER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}ー]|[^\p{L}\p{M}]/gu;

/** Letters of each CJK script family in `text`, and the text of the others for the n-gram detector. */
const split = (text: string) => ({
  han: text.match(HAN)?.length ?? 0,
  kana: text.match(KANA)?.length ?? 0,
  hangul: text.match(HANGUL)?.length ?? 0,
  other: text.replace(NOT_OTHER, ' '),
});

/** Markdown markup, URLs, e-mail addresses and numbers say nothing about the language. */
const clean = (text: string) =>
  text
    .replace(/https?:\/\/\S+|www\.\S+|\S+@\S+\.\S+/g, ' ')
    .replace(/^\s*(#{1,6}|[-*+>]|\d+[.)])\s+/gm, ' ')
    .replace(/[|*_`#[\]()<>{}]|-{3,}/g, ' ');

/**
 * ISO 639-1 codes of the languages `blocks` are written in, the main one first; a language is listed when it
 * holds at least a tenth of the letters. Empty when nothing could be told.
 */
export async function detectLanguages(blocks: string[]): Promise<string[]> {
  const eld = await detector();
  const reliable = new Map<string, number>();
  const weak = new Map<string, number>();
  const add = (m: Map<string, number>, lang: string, n: number) => lang && n > 0 && m.set(lang, (m.get(lang) ?? 0) + n);
  for (const block of blocks) {
    const s = split(clean(block));
    if (s.kana) add(reliable, 'ja', s.han + s.kana);
    else add(reliable, 'zh', s.han);
    add(reliable, 'ko', s.hangul);
    const letters = s.other.replace(/[^\p{L}]/gu, '').length;
    if (!letters) continue;
    const r = eld.detect(s.other);
    add(r.isReliable() && letters >= 20 ? reliable : weak, r.language, letters);
  }
  const counts = reliable.size ? reliable : weak;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return [...counts]
    .filter(([, n]) => n / total >= MIN_SHARE)
    .sort((a, b) => b[1] - a[1])
    .map(([lang]) => lang);
}
