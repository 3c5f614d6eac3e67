/**
 * The retrieval benchmark's synthetic data, generated from a seed so every run indexes the same
 * chunks and asks the same questions: a text corpus, also used by the vector index's recall test,
 * that reads like text to the tokenizer and the local embedder (English words of the embedder's
 * word table drawn by their frequency rank, Zipf-like, among English function words, a topic per
 * source), and embedding-like vectors.
 */

import type { ChunkRecord } from '../src/rag/chunk.ts';
import { wordVectors } from '../src/rag/word-vectors.ts';

/** Embedding-like vectors: points around LATENT_CENTRES centres in a latent space, projected. */
export const LATENT_DIMENSIONS = 32;
const LATENT_CENTRES = 200;

/** The chatbot every synthetic chunk belongs to. */
export const CHATBOT_ID = 'bench-chatbot';
const VOCABULARY_SIZE = 30_000;
/** Content words start below the function words in Zipf's ranking. */
const ZIPF_OFFSET = 30;
const CHUNKS_PER_SOURCE = 20;
const TOPIC_WORDS = 40;
const TOPIC_MIN_RANK = 200;
/** Of the content words, the share drawn from the source's topic. */
const TOPIC_SHARE = 0.4;
const FUNCTION_WORD_SHARE = 0.35;
const FUNCTION_WORDS =
  'the of and to in is for that with on as by at from this be are or an it was which we can you'.split(' ');

/**
 * Deterministic text-like chunks and queries. Content words, the VOCABULARY_SIZE most frequent words
 * of the local embedder's table, follow Zipf's law below the function words (word i of the
 * vocabulary is drawn with probability ∝ 1/(i + 30), the function words taking the top ranks), and every source has a topic, a few dozen words its chunks keep coming back to,
 * so chunks of one source resemble each other as they do in real documents.
 */
export class SyntheticCorpus {
  readonly #vocabulary: string[];
  readonly #cdf: Float64Array;
  readonly #seed: number;

  constructor(seed: number) {
    this.#seed = seed;
    this.#vocabulary = wordVectors().words.slice(0, VOCABULARY_SIZE);
    this.#cdf = new Float64Array(VOCABULARY_SIZE);
    let total = 0;
    for (let i = 0; i < VOCABULARY_SIZE; i++) this.#cdf[i] = total += 1 / (i + ZIPF_OFFSET);
    for (let i = 0; i < VOCABULARY_SIZE; i++) this.#cdf[i]! /= total;
  }

  /** Chunk i: a title of 3–6 words and 6–10 sentences of 8–20 words, in its source's topic. */
  chunk(i: number): Omit<ChunkRecord, 'embedding'> {
    const source = Math.floor(i / CHUNKS_PER_SOURCE);
    const topic = this.#topic(source);
    const random = mulberry32(this.#seed ^ Math.imul(i + 1, 0x9e3779b1));
    const title = this.#words(random, topic, 3 + Math.floor(random() * 4), 0).join(' ');
    const sentences: string[] = [];
    const count = 6 + Math.floor(random() * 5);
    for (let s = 0; s < count; s++) {
      const words = this.#words(random, topic, 8 + Math.floor(random() * 13), FUNCTION_WORD_SHARE);
      sentences.push(`${words.join(' ')}.`);
    }
    const sourceId = `source-${source}`;
    const position = i % CHUNKS_PER_SOURCE;
    const url = `https://example.com/${sourceId}`;
    return {
      id: `${sourceId}:${position}`,
      chatbotId: CHATBOT_ID,
      sourceId,
      position,
      title,
      url,
      content: sentences.join(' '),
    };
  }

  /** Query q: 2–5 content words of one of the first `chunks` chunks, as a visitor might ask. */
  query(q: number, chunks: number): string {
    const random = mulberry32(~this.#seed ^ Math.imul(q + 1, 0x85ebca6b));
    const source = this.chunk(Math.floor(random() * chunks));
    const words = source.content
      .replace(/\./g, '')
      .split(' ')
      .filter((word) => !FUNCTION_WORDS.includes(word));
    const picked = Array.from(
      { length: 2 + Math.floor(random() * 4) },
      () => words[Math.floor(random() * words.length)]!,
    );
    return `how ${picked.join(' ')}?`;
  }

  /** A source's topic: TOPIC_WORDS words of the vocabulary's middle ranks, fixed by the source. */
  #topic(source: number): string[] {
    const random = mulberry32(this.#seed ^ Math.imul(source + 1, 0xc2b2ae35));
    const span = VOCABULARY_SIZE - TOPIC_MIN_RANK;
    return Array.from({ length: TOPIC_WORDS }, () => this.#vocabulary[TOPIC_MIN_RANK + Math.floor(random() * span)]!);
  }

  #words(random: () => number, topic: string[], count: number, functionShare: number): string[] {
    return Array.from({ length: count }, () => {
      if (random() < functionShare) return FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)]!;
      if (random() < TOPIC_SHARE) return topic[Math.floor(random() * topic.length)]!;
      return this.#vocabulary[this.#zipfRank(random())]!;
    });
  }

  #zipfRank(u: number): number {
    let low = 0;
    let high = VOCABULARY_SIZE - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.#cdf[mid]! < u) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** A small, fast, seedable PRNG (mulberry32) returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Vectors shaped like a neural model's embeddings: clustered, of low intrinsic dimension (Gaussian
 * clusters in a LATENT_DIMENSIONS space, randomly projected to `dimensions`, plus noise), unit length.
 */
export function embeddingLikeSampler(random: () => number, dimensions: number): () => Float32Array {
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const projection = Array.from({ length: LATENT_DIMENSIONS }, () => Float32Array.from({ length: dimensions }, gauss));
  const centres = Array.from({ length: LATENT_CENTRES }, () => Array.from({ length: LATENT_DIMENSIONS }, gauss));
  return () => {
    const centre = centres[Math.floor(random() * LATENT_CENTRES)]!;
    const vector = Float32Array.from({ length: dimensions }, () => 0.5 * gauss());
    centre.forEach((value, j) => {
      const z = value + 0.5 * gauss();
      for (let i = 0; i < dimensions; i++) vector[i]! += z * projection[j]![i]!;
    });
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  };
}
