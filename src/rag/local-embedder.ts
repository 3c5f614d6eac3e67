/**
 * The `local` embedder: a deterministic, offline embedding by signed feature hashing. Each text's
 * features — its stems (from the shared tokenizer), the character trigrams of each stem and the
 * pairs of adjacent stems — are hashed into 384 buckets with a hashed sign, weighted by sublinear
 * term frequency and L2-normalised. Texts that share stems land close; texts whose words share
 * only parts (`generous`, `generosity`) still overlap through the trigrams. It knows no synonyms.
 */

import type { Embedder } from './embedder.ts';
import { tokenize } from './text-tokenizer.ts';

const DIMENSIONS = 384;
/**
 * Weight of one stem; its trigrams share TRIGRAM_WEIGHT (in L2 terms), a stem pair gets BIGRAM_WEIGHT.
 * Trigrams and pairs stay light: trigrams recur across many unrelated words and every extra feature
 * adds hashing noise, which blurs the contrast between related and unrelated texts.
 */
const STEM_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;
const BIGRAM_WEIGHT = 0.25;
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
    return normalise(vector) ?? normalise(hashFeatures(new Map([[EMPTY_TEXT_FEATURE, 1]])))!;
  }
}

/** How often a feature occurred and the sum of the weights of its occurrences. */
interface Tally {
  occurrences: number;
  total: number;
}

/**
 * Every feature of a token sequence with its weight: the mean weight of one occurrence times
 * 1 + ln(occurrences), so that a word repeated ten times does not drown the rest.
 */
function textFeatures(tokens: readonly string[]): Map<string, number> {
  const tallies = new Map<string, Tally>();
  const add = (feature: string, weight: number) => {
    const tally = tallies.get(feature);
    if (tally === undefined) tallies.set(feature, { occurrences: 1, total: weight });
    else {
      tally.occurrences += 1;
      tally.total += weight;
    }
  };
  tokens.forEach((token, i) => {
    add(`w ${token}`, STEM_WEIGHT);
    const trigrams = charTrigrams(token);
    const trigramWeight = TRIGRAM_WEIGHT / Math.sqrt(trigrams.length);
    for (const trigram of trigrams) add(`c ${trigram}`, trigramWeight);
    const next = tokens[i + 1];
    if (next !== undefined) add(`b ${token} ${next}`, BIGRAM_WEIGHT);
  });
  const weights = new Map<string, number>();
  for (const [feature, { occurrences, total }] of tallies) {
    weights.set(feature, (total / occurrences) * (1 + Math.log(occurrences)));
  }
  return weights;
}

/** Signed feature hashing: each feature adds ± its weight to one of the buckets. */
function hashFeatures(features: ReadonlyMap<string, number>): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  for (const [feature, weight] of features) {
    const hash = fnv1a(feature);
    // The sign comes from other bits than the bucket, so that collisions cancel out on average.
    const sign = (mix(hash) & 1) === 0 ? 1 : -1;
    vector[hash % DIMENSIONS]! += sign * weight;
  }
  return vector;
}

/** Trigrams of `<token>` with boundary marks, so that prefixes and suffixes count: `<ru`, `run`, `un>`. */
function charTrigrams(token: string): string[] {
  const marked = `<${token}>`;
  const trigrams: string[] = [];
  for (let i = 0; i + 3 <= marked.length; i++) trigrams.push(marked.slice(i, i + 3));
  return trigrams;
}

/** 32-bit FNV-1a over the UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
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
