import t from 'tap';
import { SyntheticCorpus } from '../../bench/synthetic-corpus.ts';
import { exactNearest } from '../../src/rag/exact-nearest.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { VectorIndex, type VectorIndexOptions } from '../../src/rag/vector-index.ts';

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

for (const method of ['hnsw', 'scan'] as const) {
  t.test(`${method}: scores are cosine similarities, best first`, async (t) => {
    const index = new VectorIndex({ dimensions: 2, exactBelow: 0, method, scanCandidates: 1 });
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
}

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
  t.throws(
    () => new VectorIndex({ dimensions: 3, method: 'ivf' as never }),
    new RangeError('method must be hnsw or scan, got ivf'),
  );
  t.throws(
    () => new VectorIndex({ dimensions: 3, method: 'scan', scanDimensions: 0 }),
    new RangeError('scanDimensions must be an integer ≥ 1, got 0'),
  );
  t.throws(
    () => new VectorIndex({ dimensions: 3, method: 'scan', scanCandidates: 1.5 }),
    new RangeError('scanCandidates must be an integer ≥ 1, got 1.5'),
  );
  const scan = new VectorIndex({ dimensions: 3, method: 'scan', exactBelow: 0 });
  t.equal(scan.method, 'scan');
  t.throws(() => scan.searchApproximate(unit(1, 0), 1), new RangeError('expected a vector of 3 dimensions, got 2'));
  t.same(scan.searchApproximate(unit(1, 0, 0), 3), []);
});

/** recall@10 of the index's approximate search against its exact search. */
function recallAt10(index: VectorIndex, queries: Float32Array[]): number {
  let found = 0;
  for (const query of queries) {
    const approximate = new Set(index.searchApproximate(query, 10).map((hit) => hit.id));
    found += index.searchExact(query, 10).filter((hit) => approximate.has(hit.id)).length;
  }
  return found / (queries.length * 10);
}

t.test('column scan: recall@10 against exact search on local embeddings of a fixed corpus', async (t) => {
  const embedder = new LocalEmbedder();
  const corpus = new SyntheticCorpus(7);
  const count = 5000;
  const texts = Array.from({ length: count }, (_, i) => corpus.chunk(i)).map((c) => `${c.title}\n${c.content}`);
  const vectors = await embedder.embed(texts);
  const queries = Array.from({ length: 100 }, (_, q) => embedder.embedOne(corpus.query(q, count)));
  const recallWith = (options: Partial<VectorIndexOptions>) => {
    const index = new VectorIndex({ dimensions: embedder.dimensions, method: 'scan', exactBelow: 0, ...options });
    vectors.forEach((vector, i) => index.add(`c${i}`, vector));
    return recallAt10(index, queries);
  };
  t.equal(recallWith({}), 1, 'the defaults: 40 dimensions, 100 candidates');
  t.equal(recallWith({ scanDimensions: 24, scanCandidates: 30 }), 0.84, 'fewer dimensions and candidates miss some');
  t.equal(recallWith({ scanDimensions: 4, scanCandidates: 30 }), 0.421, 'fewer still miss more');
});

t.test('column scan: removals, replacements and growth past a block, checked against exact search', async (t) => {
  // With every dimension scanned the partial score is the whole score, so the approximate search
  // must agree with the exact one whatever slots moved.
  const vectors = randomUnitVectors(9000, 16, 5);
  const index = new VectorIndex({
    dimensions: 16,
    method: 'scan',
    exactBelow: 0,
    scanDimensions: 16,
    scanCandidates: 20,
  });
  vectors.forEach((vector, i) => index.add(`v${i}`, vector));
  t.equal(index.size, 9000);
  for (let i = 0; i < 9000; i += 2) index.remove(`v${i}`);
  t.equal(index.remove('v8999'), true, 'the last slot');
  t.equal(index.remove('v8999'), false);
  for (let i = 0; i < 100; i++) index.add(`w${i}`, vectors[i * 2]!);
  index.add('v1', vectors[0]!);
  t.equal(index.size, 4599);
  for (const query of [vectors[0]!, vectors[2]!, vectors[8998]!, ...randomUnitVectors(20, 16, 6)]) {
    t.same(index.searchApproximate(query, 10), index.searchExact(query, 10));
  }
  const [first, second] = index.searchApproximate(vectors[0]!, 2);
  t.same([first!.id, second!.id], ['v1', 'w0'], 'a moved id keeps its new vector, equal scores by id');
  for (let i = 1; i < 8999; i += 2) index.remove(`v${i}`);
  t.equal(index.size, 100);
  t.same(index.searchApproximate(vectors[4]!, 1), [{ id: 'w2', score: index.searchExact(vectors[4]!, 1)[0]!.score }]);
});

t.test('the approximate index is built at exactBelow, dropped below half that, rebuilt on demand', async (t) => {
  const idsOf = (hits: Array<{ id: string }>) => hits.map((hit) => hit.id);
  for (const method of ['hnsw', 'scan'] as const) {
    // Every dimension scanned: the column scan's answer is then the exact one.
    const index = new VectorIndex({ dimensions: 4, method, exactBelow: 10, scanDimensions: 4, scanCandidates: 2 });
    const vectors = randomUnitVectors(12, 4, 8);
    vectors.forEach((vector, i) => index.add(`v${i}`, vector));
    const query = vectors[3]!;
    t.same(idsOf(index.search(query, 3)), idsOf(index.searchExact(query, 3)), `${method}: built at 10`);
    for (let i = 0; i < 8; i++) index.remove(`v${i}`);
    t.equal(index.size, 4);
    const exact = idsOf(index.searchExact(query, 4));
    t.same(exact.toSorted(), ['v10', 'v11', 'v8', 'v9']);
    t.same(idsOf(index.searchApproximate(query, 4)), exact, `${method}: rebuilt from the 4 left`);
    index.add('v0', vectors[0]!);
    t.same(idsOf(index.searchApproximate(vectors[0]!, 1)), ['v0'], `${method}: later additions reach it`);
  }
});
