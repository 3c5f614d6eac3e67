/**
 * The text analysis both the in-process BM25 index and the local embedder share: Unicode word
 * segmentation (UAX #29 through `Intl.Segmenter`, with dictionary segmentation for scripts written
 * without spaces), lowercasing, diacritics folding, English stopwords and the Porter stemmer.
 */

import { stemmer } from 'stemmer';

/**
 * Redis's default stopword list, so that the in-process engine drops the same words as the query
 * engine's full-text index does.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'is',
  'the',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** Latin letters that carry no combining mark once decomposed, folded as ICU's folding does. */
const LETTER_FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
};
const UNFOLDED_LETTERS = /[ßæœøđðłþı]/g;
// Only the combining diacritics block: the vowel signs of Indic and other scripts are marks too,
// and removing them would change the words.
const COMBINING_DIACRITICS = /[\u0300-\u036f]/g;
const APOSTROPHES = /['’‘`]/g;
const POSSESSIVE = /['’]s$/;
const STEMMABLE = /^[a-z]+$/;

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Stems of recent words: the same few thousand words make up most text, and stemming is regex work. */
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

/**
 * Lowercases, decomposes compatibility forms (ligatures, full-width letters) and removes diacritics:
 * `Crème Brûlée` → `creme brulee`, `Straße` → `strasse`.
 */
export function foldText(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(COMBINING_DIACRITICS, '')
    .replace(UNFOLDED_LETTERS, (letter) => LETTER_FOLDS[letter] ?? letter)
    .normalize('NFC');
}

/** The Porter stem of an ASCII word; other words (numbers, other scripts) are their own stem. */
export function stem(word: string): string {
  if (!STEMMABLE.test(word)) return word;
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemmed = stemmer(word);
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/**
 * The index terms of a text, in order, repeats kept: folded, stopwords removed, stemmed.
 * `"The companies' running shoes"` → `["compani", "run", "shoe"]`.
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const segment of segmenter.segment(foldText(text))) {
    if (segment.isWordLike !== true) continue;
    const word = withoutApostrophes(segment.segment);
    if (word === '' || STOPWORDS.has(word)) continue;
    tokens.push(stem(word));
  }
  return tokens;
}

/** Where an identifier splits into words: dots, colons, underscores and camelCase humps. */
const IDENTIFIER_JOINTS = /[._:]+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/**
 * The words of a text, unstemmed, with every identifier also split into its words: the whole
 * identifier comes first, then its parts. Folded and stopword-free like `tokenize`'s terms.
 * `"Use fs.readFileSync"` → `["use", "fs.readfilesync", "fs", "read", "file", "sync"]`.
 */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  const push = (word: string) => {
    if (word !== '' && !STOPWORDS.has(word)) words.push(word);
  };
  for (const segment of segmenter.segment(text)) {
    if (segment.isWordLike !== true) continue;
    // Case marks the humps of camelCase, so identifiers are split before folding.
    const word = withoutApostrophes(segment.segment);
    const parts = word.split(IDENTIFIER_JOINTS);
    if (parts.length > 1) push(foldText(word));
    for (const part of parts) push(foldText(part));
  }
  return words;
}

function withoutApostrophes(word: string): string {
  return word.replace(POSSESSIVE, '').replace(APOSTROPHES, '');
}
