/**
 * How relevant a retrieved passage is to the question, on an absolute scale, and the floor below
 * which a chatbot should not answer from its sources (docs/decisions.md, "The relevance floor").
 *
 * A fused RRF score says only where a passage ranked; relevance says how close it is: the cosine
 * similarity of the question's and the passage's embeddings, clamped to [0, 1]. Both search
 * engines compute it alike, from the query embedding and the chunk's stored embedding (the Redis
 * engine reads every hit's hash, embedding included), so a hit found by BM25 alone has one too.
 */

import type { ChunkRecord } from './chunk.ts';

/**
 * The floor of each embedding space that has been calibrated on the eval (`npm run eval`): the
 * highest that keeps at least 95 % of the answerable questions whose answer reaches the prompt, in
 * each eval set's dev half. Keyed by space, so a space whose vectors change (a new local embedder
 * is a new space) is uncalibrated until measured again.
 */
export const RELEVANCE_FLOORS: Readonly<Record<string, number>> = {
  'local-v2-384': 0.26,
};

/**
 * The floor of a space nobody has calibrated: 0, never refuse. Cosines are not comparable across
 * embedding models (one model's unrelated pairs score what another's related ones do), so any other
 * value would be a guess that could silence answers the sources hold.
 */
export const UNCALIBRATED_RELEVANCE_FLOOR = 0;

/**
 * The relevance below which a turn's best passage should not be answered from, for the embedding
 * space the chatbot's chunks are in (`Embedder.space`, e.g. `local-v2-384`).
 */
export function relevanceFloor(space: string): number {
  return Object.hasOwn(RELEVANCE_FLOORS, space) ? RELEVANCE_FLOORS[space]! : UNCALIBRATED_RELEVANCE_FLOOR;
}

/**
 * A chunk's relevance to a query: the cosine similarity of their embeddings, negative values as 0.
 * Computed in float64 from the float32 vectors, with the norms divided out, so that the same two
 * vectors give the same number whichever engine returned the chunk. 0 for a zero vector.
 */
export function chunkRelevance(queryEmbedding: Float32Array, chunk: Pick<ChunkRecord, 'embedding'>): number {
  const other = chunk.embedding;
  if (other.length !== queryEmbedding.length) {
    throw new RangeError(`the chunk has ${other.length} dimensions, the query ${queryEmbedding.length}`);
  }
  let dot = 0;
  let queryNorm = 0;
  let chunkNorm = 0;
  for (let i = 0; i < other.length; i++) {
    const q = queryEmbedding[i]!;
    const c = other[i]!;
    dot += q * c;
    queryNorm += q * q;
    chunkNorm += c * c;
  }
  if (queryNorm === 0 || chunkNorm === 0) return 0;
  return Math.min(1, Math.max(0, dot / Math.sqrt(queryNorm * chunkNorm)));
}

/** The best relevance among passages, 0 when there are none. */
export function bestRelevance(passages: ReadonlyArray<{ relevance: number }>): number {
  return passages.reduce((best, passage) => Math.max(best, passage.relevance), 0);
}
