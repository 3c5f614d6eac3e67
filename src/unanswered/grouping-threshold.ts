/**
 * When two visitor questions are near-duplicates by their embeddings: the cosine similarity at or
 * above which a question joins the open group whose representative is nearest (docs/decisions.md,
 * "Unanswered questions and improved answers").
 */

import { chunkRelevance } from '../rag/relevance-floor.ts';

/**
 * The threshold of each embedding space that has been measured (`node scripts/unanswered-threshold.ts`
 * on test/fixtures/unanswered/question-pairs.json): the lowest, in steps of 0.01, that no near-miss or
 * unrelated pair of the tuning half reaches. Keyed by space, as the relevance floor is: cosines are
 * not comparable across models.
 */
export const GROUPING_THRESHOLDS: Readonly<Record<string, number>> = {
  'local-v2-384': 0.84,
};

/**
 * The threshold of a space, or undefined where none was measured: questions then group by their
 * exact text only (a guessed threshold could merge different questions, and an answer written for one
 * would resolve the other).
 */
export function groupingThreshold(space: string): number | undefined {
  return Object.hasOwn(GROUPING_THRESHOLDS, space) ? GROUPING_THRESHOLDS[space] : undefined;
}

/**
 * The group whose representative embedding is nearest to `vector` (cosine, as retrieval's relevance
 * measures it), when it reaches `threshold`; ties go to the group listed first.
 */
export function nearestGroup(
  vector: Float32Array,
  candidates: ReadonlyMap<string, Float32Array>,
  threshold: number,
): string | undefined {
  let best: string | undefined;
  let bestScore = threshold;
  for (const [id, other] of candidates) {
    if (other.length !== vector.length) continue;
    const score = chunkRelevance(vector, { embedding: other });
    if (score >= bestScore && (best === undefined || score > bestScore)) {
      best = id;
      bestScore = score;
    }
  }
  return best;
}
