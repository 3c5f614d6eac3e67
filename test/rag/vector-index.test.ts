import t from 'tap';
import { exactNearest, VectorIndex } from '../../src/rag/vector-index.ts';

/** Deterministic random unit vectors (mulberry32). */
function randomUnitVectors(count: number, dimensions: number, seed: number): Float32Array[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), state | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  return Array.from({ length: count }, () => {
    const vector = Float32Array.from({ length: dimensions }, random);
    const norm = Math.hypot(...vector);
    return vector.map((value) => value / norm);
  });
}

function unit(...values: number[]): Float32Array {
  return Float32Array.from(values);
}

t.test('HNSW recall@10 against exact search on random data is at least 0.95', async (t) => {
  const dimensions = 32;
  const index = new VectorIndex({ dimensions, exactBelow: 0, initialCapacity: 64 });
  randomUnitVectors(5000, dimensions, 1).forEach((vector, i) => index.add(`v${i}`, vector));
  t.equal(index.size, 5000);
  let found = 0;
  const queries = randomUnitVectors(100, dimensions, 2);
  for (const query of queries) {
    const approximate = new Set(index.searchApproximate(query, 10).map((hit) => hit.id));
    const exact = index.searchExact(query, 10);
    t.equal(exact.length, 10);
    found += exact.filter((hit) => approximate.has(hit.id)).length;
  }
  const recall = found / (queries.length * 10);
  t.ok(recall >= 0.95, `recall@10 ${recall}`);
});

t.test('scores are cosine similarities, best first', async (t) => {
  const index = new VectorIndex({ dimensions: 2, exactBelow: 0 });
  index.add('same', unit(1, 0));
  index.add('near', unit(0.6, 0.8));
  index.add('orthogonal', unit(0, 1));
  index.add('opposite', unit(-1, 0));
  const expected = [
    { id: 'same', score: 1 },
    { id: 'near', score: Math.fround(0.6) },
    { id: 'orthogonal', score: 0 },
  ];
  t.same(index.searchExact(unit(1, 0), 3), expected);
  t.same(index.searchApproximate(unit(1, 0), 3), expected);
  t.same(index.search(unit(1, 0), 10).length, 4, 'k larger than the index returns everything');
});

t.test('removed and replaced vectors are never returned; the graph grows past its capacity', async (t) => {
  const vectors = randomUnitVectors(300, 8, 3);
  const index = new VectorIndex({ dimensions: 8, initialCapacity: 4, exactBelow: 0 });
  vectors.forEach((vector, i) => index.add(`v${i}`, vector));
  for (let i = 0; i < 300; i += 2) t.equal(index.remove(`v${i}`), true);
  t.equal(index.remove('v0'), false);
  // Re-added ids take the deleted slots; v1 moves to where v0 was.
  for (let i = 0; i < 100; i++) index.add(`w${i}`, vectors[i * 2]!);
  index.add('v1', vectors[0]!);
  t.equal(index.size, 250);
  const hits = index.searchApproximate(vectors[0]!, 250);
  t.equal(hits.length, 250);
  t.equal(hits.filter((hit) => /^v\d*[02468]$/.test(hit.id)).length, 0, 'no removed id');
  t.same(new Set(hits.map((hit) => hit.id)).size, 250, 'no duplicate');
  t.same(
    index.searchExact(vectors[0]!, 2).map((hit) => hit.id),
    ['v1', 'w0'],
  );
});

t.test('search is exact below exactBelow vectors', async (t) => {
  const vectors = randomUnitVectors(50, 16, 4);
  const index = new VectorIndex({ dimensions: 16, exactBelow: 51 });
  vectors.forEach((vector, i) => index.add(`v${i}`, vector));
  t.same(index.search(vectors[7]!, 5), index.searchExact(vectors[7]!, 5));
  t.same(new VectorIndex({ dimensions: 16 }).search(vectors[0]!, 5), []);
});

t.test('exactNearest orders equal scores by id and keeps the k best', async (t) => {
  const entries: Array<[string, Float32Array]> = [
    ['b', unit(1, 0)],
    ['a', unit(1, 0)],
    ['c', unit(0, 1)],
    ['d', unit(0.6, 0.8)],
  ];
  t.same(
    exactNearest(entries, unit(1, 0), 3).map((hit) => hit.id),
    ['a', 'b', 'd'],
  );
});

t.test('dimensions, k and options are validated', async (t) => {
  const index = new VectorIndex({ dimensions: 3 });
  t.throws(() => index.add('x', unit(1, 0)), new RangeError('expected a vector of 3 dimensions, got 2'));
  t.throws(() => index.search(unit(1, 0, 0), 0), new RangeError('k must be an integer ≥ 1, got 0'));
  t.throws(() => new VectorIndex({ dimensions: 0 }), new RangeError('dimensions must be an integer ≥ 1, got 0'));
  t.throws(() => new VectorIndex({ dimensions: 3, m: 1 }), new RangeError('m must be an integer ≥ 2, got 1'));
});
