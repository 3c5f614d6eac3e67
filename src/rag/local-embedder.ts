/**
 * The `local` embedder: a deterministic, offline embedding by signed feature hashing. Each text's
 * features — its stems (from the shared tokenizer) and the character trigrams of each stem — are
 * hashed into 384 buckets with a hashed sign, weighted by sublinear term frequency and L2-normalised. Texts that share stems land close; texts whose words share
 * only parts (`generous`, `generosity`) still overlap through the trigrams. It knows no synonyms.
 */

import type { Embedder } from './embedder.ts';
import { tokenize } from './text-tokenizer.ts';

const DIMENSIONS = 384;
/**
 * Weight of one stem; its trigrams share TRIGRAM_WEIGHT (in L2 terms). Trigrams stay light: they
 * recur across many unrelated words, and every extra feature adds hashing noise that blurs the
 * contrast between related and unrelated texts. Pairs of adjacent stems were tried and left out:
 * on the labelled eval set (scripts/retrieval-eval.ts) they lowered recall@5 and nDCG@10.
 */
const STEM_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;
/** The feature of a text without any token, so that every text still gets a unit vector. */
const EMPTY_TEXT_FEATURE = '\u0000empty';

/** Embeds texts into the `local-384` space with no network and no model. */
export class LocalEmbedder implements Embedder {
  readonly space = 'local-384';
  readonly dimensions = DIMENSIONS;

  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((text) => this.embedOne(text)));
  }

  /** The embedding of one text, synchronously. */
  embedOne(text: string): Float32Array {
    const vector = hashFeatures(textFeatures(tokenize(text)));
    // No token, or opposite signs that cancelled every bucket: the empty text's unit vector.
    return normalise(vector) ?? normalise(hashFeatures(new Map([[fnv1a(EMPTY_TEXT_FEATURE, STEM_BASIS), 1]])))!;
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
 * Every feature of a token sequence, by its 32-bit hash, with its weight: the mean weight of one
 * occurrence times 1 + ln(occurrences), so that a word repeated ten times does not drown the rest.
 * Features are hashed straight from the tokens' characters, without building feature strings.
 */
function textFeatures(tokens: readonly string[]): Map<number, number> {
  const tallies = new Map<number, Tally>();
  const add = (feature: number, weight: number) => {
    const tally = tallies.get(feature);
    if (tally === undefined) tallies.set(feature, { occurrences: 1, total: weight });
    else {
      tally.occurrences += 1;
      tally.total += weight;
    }
  };
  for (const token of tokens) {
    add(fnv1a(token, STEM_BASIS), STEM_WEIGHT);
    addTrigrams(token, add);
  }
  const weights = new Map<number, number>();
  for (const [feature, { occurrences, total }] of tallies) {
    weights.set(feature, (total / occurrences) * (1 + Math.log(occurrences)));
  }
  return weights;
}

/**
 * The trigrams of `<token>`, with boundary marks so that prefixes and suffixes count (`<ru`, `run`,
 * `un>`); together they weigh TRIGRAM_WEIGHT in L2 terms.
 */
function addTrigrams(token: string, add: (feature: number, weight: number) => void): void {
  const marked = token.length + 2;
  const count = marked - 2;
  const weight = TRIGRAM_WEIGHT / Math.sqrt(count);
  const code = (i: number) => (i === 0 ? WORD_START : i === marked - 1 ? WORD_END : token.charCodeAt(i - 1));
  for (let i = 0; i < count; i++) {
    add(fnv1aStep(fnv1aStep(fnv1aStep(TRIGRAM_BASIS, code(i)), code(i + 1)), code(i + 2)), weight);
  }
}

/** Signed feature hashing: each feature adds ± its weight to one of the buckets. */
function hashFeatures(features: ReadonlyMap<number, number>): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  for (const [hash, weight] of features) {
    // The sign comes from other bits than the bucket, so that collisions cancel out on average.
    const sign = (mix(hash) & 1) === 0 ? 1 : -1;
    vector[hash % DIMENSIONS]! += sign * weight;
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

/** Scales the vector to unit length in place; undefined when it is all zeros. */
function normalise(vector: Float32Array): Float32Array | undefined {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return undefined;
  const norm = Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}
