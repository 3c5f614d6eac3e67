/**
 * The `local` embedder: deterministic, offline, no model to download. A text's 384 dimensions are
 * two blocks of equal weight:
 *
 * - lexical (284): the stems of its words and their character trigrams, hashed into buckets with a
 *   hashed sign (feature hashing), as BM25 sees words, but with identifiers also split into their
 *   words (`createReadStream` → create, read, stream), so that a question in plain words meets the
 *   API names the documentation uses;
 * - semantic (100): the weighted mean of its words' GloVe vectors (word-vectors.ts), so that texts
 *   about the same thing in other words (`folder`, `directory`) still land near each other.
 *
 * Words are weighted by how rare they are in general English, never by the indexed corpus, so a
 * text's vector does not depend on what else is indexed: SIF weights (Arora et al., ICLR 2017)
 * a / (a + p(w)) with a = 1e-3 and p(w) from the word's frequency rank by Zipf's law, 0.1 / rank.
 * Words outside the table (rarer than the 100,000 most frequent, or identifiers) weigh 1.
 */

import type { Embedder } from './embedder.ts';
import type { VectorSearchMethod } from './vector-index.ts';
import { splitWords, stem } from './text-tokenizer.ts';
import { wordVectors, type WordVectors } from './word-vectors.ts';

const DIMENSIONS = 384;
const SEMANTIC_DIMENSIONS = 100;
const LEXICAL_DIMENSIONS = DIMENSIONS - SEMANTIC_DIMENSIONS;
/** Each block's share of the vector's squared length: cosine = ½ lexical cosine + ½ semantic cosine. */
const BLOCK_WEIGHT = Math.SQRT1_2;
/**
 * Weight of one stem; its trigrams share TRIGRAM_WEIGHT (in L2 terms). Trigrams stay light: they
 * recur across many unrelated words, and every extra feature adds hashing noise.
 */
const STEM_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;
/** SIF: a / (a + p) with p = ZIPF / (rank + 1) is (rank + 1) / (rank + 1 + ZIPF / a). */
const SIF_A = 1e-3;
const ZIPF = 0.1;
/** The feature of a text without any word, so that every text still gets a unit vector. */
const EMPTY_TEXT_FEATURE = '\u0000empty';

/** Embeds texts into the `local-v2-384` space with no network and no model. */
export class LocalEmbedder implements Embedder {
  // v2: the semantic block and the weights changed every vector; another space keeps old and new
  // vectors of the same text out of one index.
  readonly space = 'local-v2-384';
  readonly dimensions = DIMENSIONS;
  // A question sets a few dozen of the 284 hashed dimensions; an HNSW graph misses many of its
  // nearest neighbours (recall@10 0.59 at 100k), a column scan over those dimensions does not.
  readonly vectorSearch: VectorSearchMethod = 'scan';
  readonly #words: WordVectors;

  constructor(words: WordVectors = wordVectors()) {
    if (words.dimensions !== SEMANTIC_DIMENSIONS) {
      throw new RangeError(`word vectors have ${words.dimensions} dimensions, expected ${SEMANTIC_DIMENSIONS}`);
    }
    this.#words = words;
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }

  /** The embedding of one text, synchronously. */
  embedOne(text: string): Float32Array {
    const weighted = splitWords(text).map((word) => ({ word, weight: this.#weight(word) }));
    const lexical = normalise(hashFeatures(lexicalFeatures(weighted), LEXICAL_DIMENSIONS));
    const semantic = normalise(this.#semantic(weighted));
    const vector = new Float32Array(DIMENSIONS);
    if (lexical === undefined && semantic === undefined) {
      vector.set(normalise(hashFeatures(new Map([[fnv1a(EMPTY_TEXT_FEATURE, STEM_BASIS), 1]]), DIMENSIONS))!);
      return vector;
    }
    // A text with words of only one kind (all unknown to the table, say) puts its whole length there.
    const both = lexical !== undefined && semantic !== undefined;
    if (lexical !== undefined) setScaled(vector, 0, lexical, both ? BLOCK_WEIGHT : 1);
    if (semantic !== undefined) setScaled(vector, LEXICAL_DIMENSIONS, semantic, both ? BLOCK_WEIGHT : 1);
    return vector;
  }

  /** SIF weight of a word by its frequency rank; words outside the table are rare. */
  #weight(word: string): number {
    const rank = this.#words.rank(word);
    return rank === undefined ? 1 : (rank + 1) / (rank + 1 + ZIPF / SIF_A);
  }

  /** The SIF-weighted sum of the words' vectors, every occurrence counted. */
  #semantic(weighted: ReadonlyArray<{ word: string; weight: number }>): Float32Array {
    const sum = new Float64Array(SEMANTIC_DIMENSIONS);
    for (const { word, weight } of weighted) this.#words.addTo(sum, word, weight);
    return this.#words.scale(sum);
  }
}

/** How often a feature occurred and the sum of the weights of its occurrences. */
interface Tally {
  occurrences: number;
  total: number;
}

// Each kind of feature hashes from its own FNV-1a basis, so `run` the stem and `run` the trigram
// are different features.
const STEM_BASIS = 0x811c9dc5;
const TRIGRAM_BASIS = 0x050c5d1f;
const WORD_START = 0x3c; // '<'
const WORD_END = 0x3e; // '>'

/**
 * Every lexical feature of the words, by its 32-bit hash, with its weight: the mean weight of one
 * occurrence times 1 + ln(occurrences), so that a word repeated ten times does not drown the rest.
 * Features are hashed straight from the stems' characters, without building feature strings.
 */
function lexicalFeatures(weighted: ReadonlyArray<{ word: string; weight: number }>): Map<number, number> {
  const tallies = new Map<number, Tally>();
  const add = (feature: number, weight: number) => {
    const tally = tallies.get(feature);
    if (tally === undefined) tallies.set(feature, { occurrences: 1, total: weight });
    else {
      tally.occurrences += 1;
      tally.total += weight;
    }
  };
  for (const { word, weight } of weighted) {
    const stemmed = stem(word);
    add(fnv1a(stemmed, STEM_BASIS), STEM_WEIGHT * weight);
    addTrigrams(stemmed, weight, add);
  }
  const weights = new Map<number, number>();
  for (const [feature, { occurrences, total }] of tallies) {
    weights.set(feature, (total / occurrences) * (1 + Math.log(occurrences)));
  }
  return weights;
}

/**
 * The trigrams of `<token>`, with boundary marks so that prefixes and suffixes count (`<ru`, `run`,
 * `un>`); together they weigh TRIGRAM_WEIGHT × weight in L2 terms.
 */
function addTrigrams(token: string, weight: number, add: (feature: number, weight: number) => void): void {
  const marked = token.length + 2;
  const count = marked - 2;
  const each = (TRIGRAM_WEIGHT * weight) / Math.sqrt(count);
  const code = (i: number) => (i === 0 ? WORD_START : i === marked - 1 ? WORD_END : token.charCodeAt(i - 1));
  for (let i = 0; i < count; i++) {
    add(fnv1aStep(fnv1aStep(fnv1aStep(TRIGRAM_BASIS, code(i)), code(i + 1)), code(i + 2)), each);
  }
}

/** Signed feature hashing: each feature adds ± its weight to one of the buckets. */
function hashFeatures(features: ReadonlyMap<number, number>, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  for (const [hash, weight] of features) {
    // The sign comes from other bits than the bucket, so that collisions cancel out on average.
    const sign = (mix(hash) & 1) === 0 ? 1 : -1;
    vector[hash % dimensions]! += sign * weight;
  }
  return vector;
}

/** 32-bit FNV-1a over the UTF-16 code units, continuing from `basis`. */
function fnv1a(text: string, basis: number): number {
  let hash = basis;
  for (let i = 0; i < text.length; i++) hash = fnv1aStep(hash, text.charCodeAt(i));
  return hash;
}

function fnv1aStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193) >>> 0;
}

/** murmur3's 32-bit finaliser: spreads every input bit over every output bit. */
function mix(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Scales the vector to unit length in place; undefined when it is (numerically) all zeros. */
function normalise(vector: Float32Array): Float32Array | undefined {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (!(sum > 1e-24)) return undefined;
  const norm = Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/** Writes `factor` times `block` into `vector` from `offset` (a loop: TypedArray.map's callback cost 2%). */
function setScaled(vector: Float32Array, offset: number, block: Float32Array, factor: number): void {
  for (let i = 0; i < block.length; i++) vector[offset + i] = block[i]! * factor;
}
