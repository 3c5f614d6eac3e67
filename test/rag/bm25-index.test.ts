import t from 'tap';
import { Bm25Index, type ScoredId } from '../../src/rag/bm25-index.ts';

/** Ids and scores to 12 significant digits: the index sums in another order than the hand computation. */
function rounded(hits: ScoredId[]): Array<[string, string]> {
  return hits.map((hit) => [hit.id, hit.score.toPrecision(12)]);
}

/**
 * Hand-computed example. N = 3, |d1| = 3, |d2| = 2, |d3| = 1, avgdl = 2; k1 = 1.2, b = 0.75.
 * cat:  n = 2, idf = ln(1 + 1.5 / 2.5) = ln 1.6
 *       d1: tf 2, K = 1.2 · (0.25 + 0.75 · 3/2) = 1.65 → ln 1.6 · 2 · 2.2 / 3.65 = 0.566579...
 *       d2: tf 1, K = 1.2 · (0.25 + 0.75 · 2/2) = 1.2  → ln 1.6 · 2.2 / 2.2     = 0.470003...
 * bird: n = 1, idf = ln(1 + 2.5 / 1.5) = ln(8/3)
 *       d3: tf 1, K = 1.2 · (0.25 + 0.75 · 1/2) = 0.75 → ln(8/3) · 2.2 / 1.75  = 1.233042...
 */
function handExample(): Bm25Index {
  const index = new Bm25Index();
  index.add('d1', ['cat', 'cat', 'dog']);
  index.add('d2', ['cat', 'mouse']);
  index.add('d3', ['bird']);
  return index;
}

t.test('scores match the hand-computed BM25STD example', async (t) => {
  const index = handExample();
  t.equal(index.size, 3);
  t.same(
    rounded(index.search(['cat'], 10)),
    rounded([
      { id: 'd1', score: (Math.log(1.6) * 4.4) / 3.65 },
      { id: 'd2', score: Math.log(1.6) },
    ]),
  );
  t.same(
    rounded(index.search(['cat', 'bird', 'cat'], 10)),
    rounded([
      { id: 'd3', score: (Math.log(8 / 3) * 2.2) / 1.75 },
      { id: 'd1', score: (Math.log(1.6) * 4.4) / 3.65 },
      { id: 'd2', score: Math.log(1.6) },
    ]),
  );
  t.equal(index.search(['cat', 'bird'], 10)[0]!.score.toFixed(6), '1.233042');
  t.same(rounded(index.search(['bird', 'cat'], 1)), rounded([{ id: 'd3', score: (Math.log(8 / 3) * 2.2) / 1.75 }]));
  t.same(index.search(['unicorn'], 10), []);
  t.same(index.search([], 10), []);
});

t.test('removal and replacement change N, n(t) and avgdl', async (t) => {
  const index = handExample();
  t.equal(index.remove('d3'), true);
  t.equal(index.remove('d3'), false);
  t.equal(index.has('d3'), false);
  // N = 2, avgdl = 2.5, cat: n = 2, idf = ln(1 + 0.5 / 2.5) = ln 1.2.
  // d1: K = 1.2 · (0.25 + 0.75 · 3/2.5) = 1.38; d2: K = 1.2 · (0.25 + 0.75 · 2/2.5) = 1.02.
  t.same(
    rounded(index.search(['cat'], 10)),
    rounded([
      { id: 'd1', score: (Math.log(1.2) * 4.4) / 3.38 },
      { id: 'd2', score: (Math.log(1.2) * 2.2) / 2.02 },
    ]),
  );
  t.same(index.search(['bird'], 10), []);
  index.add('d1', ['bird']);
  t.equal(index.size, 2);
  // N = 2, avgdl = 1.5; cat now only in d2: idf = ln(1 + 1.5 / 1.5) = ln 2, K = 1.2 · (0.25 + 0.75 · 2/1.5) = 1.5.
  t.same(rounded(index.search(['cat'], 10)), rounded([{ id: 'd2', score: (Math.log(2) * 2.2) / 2.5 }]));
});

t.test('equal scores are ordered by id', async (t) => {
  const index = new Bm25Index();
  for (const id of ['c', 'a', 'b']) index.add(id, ['same', 'words']);
  t.same(
    index.search(['same'], 2).map((hit) => hit.id),
    ['a', 'b'],
  );
});

t.test('parameters and k are validated', async (t) => {
  t.throws(() => new Bm25Index({ b: 1.5 }), new RangeError('b must be between 0 and 1, got 1.5'));
  t.throws(() => new Bm25Index({ k1: 0 }), new RangeError('k1 must be a finite number > 0, got 0'));
  t.throws(() => handExample().search(['cat'], 0), new RangeError('k must be a positive integer, got 0'));
  t.equal(new Bm25Index().search(['cat'], 3).length, 0);
});

/** A tiny deterministic PRNG for the randomized comparison. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
}

/** Scores every document the slow way, straight from the formula. */
function bruteForce(documents: Map<string, string[]>, query: string[], k: number): ScoredId[] {
  const all = [...documents.values()];
  const averageLength = all.reduce((sum, tokens) => sum + tokens.length, 0) / all.length;
  const terms = [...new Set(query)];
  const idfs = terms.map((term) => {
    const n = all.filter((other) => other.includes(term)).length;
    return Math.log(1 + (all.length - n + 0.5) / (n + 0.5));
  });
  const hits: ScoredId[] = [];
  for (const [id, tokens] of documents) {
    let score = 0;
    for (const [i, term] of terms.entries()) {
      const tf = tokens.filter((token) => token === term).length;
      if (tf === 0) continue;
      const idf = idfs[i]!;
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * tokens.length) / averageLength));
    }
    if (score > 0) hits.push({ id, score });
  }
  return hits.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, k);
}

t.test('MaxScore pruning returns exactly the brute-force top k, through removals and compaction', async (t) => {
  const random = lcg(7);
  const word = () => `t${Math.floor(300 * random() ** 3)}`;
  const tokens = () => Array.from({ length: 1 + Math.floor(random() * 30) }, word);
  const documents = new Map<string, string[]>();
  const index = new Bm25Index();
  const put = (id: string) => {
    const doc = tokens();
    documents.set(id, doc);
    index.add(id, doc);
  };
  for (let i = 0; i < 3000; i++) put(`d${i}`);
  // More than half removed: the posting lists get compacted and the slots renumbered.
  for (let i = 0; i < 2000; i++) {
    const id = `d${i}`;
    documents.delete(id);
    index.remove(id);
  }
  for (let i = 0; i < 500; i++) put(`d${Math.floor(random() * 3000)}`);
  t.equal(index.size, documents.size);
  let mismatches = 0;
  for (let q = 0; q < 200; q++) {
    const query = Array.from({ length: 1 + Math.floor(random() * 5) }, word);
    const expected = bruteForce(documents, query, 10);
    const actual = index.search(query, 10);
    const same =
      actual.length === expected.length &&
      actual.every((hit, i) => hit.id === expected[i]!.id && Math.abs(hit.score - expected[i]!.score) < 1e-9);
    if (!same) {
      mismatches += 1;
      t.comment(JSON.stringify({ query, actual, expected }));
    }
  }
  t.equal(mismatches, 0);
});
