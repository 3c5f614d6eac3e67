/** Brute-force nearest neighbours by inner product: the reference every approximate method is measured by. */

/** A vector's id and its cosine similarity to the query (1 is identical). */
export interface VectorHit {
  id: string;
  score: number;
}

/**
 * Brute-force k nearest neighbours by inner product (cosine similarity for unit vectors), best
 * first; equal scores are ordered by id.
 */
export function exactNearest(vectors: Iterable<[string, Float32Array]>, query: Float32Array, k: number): VectorHit[] {
  const best: VectorHit[] = [];
  for (const [id, vector] of vectors) {
    const score = dot(vector, query);
    if (best.length === k && !outranks(score, id, best[k - 1]!)) continue;
    let i = best.length === k ? k - 1 : best.length;
    while (i > 0 && outranks(score, id, best[i - 1]!)) {
      best[i] = best[i - 1]!;
      i -= 1;
    }
    best[i] = { id, score };
  }
  return best;
}

function outranks(score: number, id: string, hit: VectorHit): boolean {
  return score > hit.score || (score === hit.score && id < hit.id);
}

/** Four running sums: independent additions pipeline, about twice as fast as one sum here. */
function dot(a: Float32Array, b: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const end = a.length - (a.length % 4);
  let i = 0;
  for (; i < end; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (; i < a.length; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + (s2 + s3);
}
