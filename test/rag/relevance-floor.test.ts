import t from 'tap';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import {
  bestRelevance,
  chunkRelevance,
  RELEVANCE_FLOORS,
  relevanceFloor,
  UNCALIBRATED_RELEVANCE_FLOOR,
} from '../../src/rag/relevance-floor.ts';

const chunk = (...values: number[]) => ({ embedding: Float32Array.from(values) });

t.test('relevance is the cosine of the two embeddings, clamped to [0, 1]', async (t) => {
  const query = Float32Array.from([1, 0, 0]);
  t.equal(chunkRelevance(query, chunk(1, 0, 0)), 1);
  t.equal(chunkRelevance(query, chunk(0, 0, 1)), 0);
  t.equal(chunkRelevance(query, chunk(3, 4, 0)), 0.6, 'the norms are divided out');
  t.equal(chunkRelevance(query, chunk(-3, 4, 0)), 0, 'an obtuse angle: 0, not negative');
  t.equal(chunkRelevance(query, chunk(0, 0, 0)), 0, 'a zero vector');
  t.throws(() => chunkRelevance(query, chunk(1, 0)), new RangeError('the chunk has 2 dimensions, the query 3'));
});

t.test('with the local embedder: the passage that answers scores above an unrelated one', async (t) => {
  const embedder = new LocalEmbedder();
  const [question, returns, weather] = await embedder.embed([
    'How do I return my shoes?',
    'Returns\nUnworn shoes can be returned within 30 days for a full refund.',
    'Weather\nThe forecast says rain over the mountains tomorrow.',
  ]);
  const answering = chunkRelevance(question!, { embedding: returns! });
  const unrelated = chunkRelevance(question!, { embedding: weather! });
  t.ok(answering > relevanceFloor(embedder.space), `answering ${answering.toFixed(3)}`);
  t.ok(unrelated < relevanceFloor(embedder.space), `unrelated ${unrelated.toFixed(3)}`);
});

t.test('the floor: calibrated for local-v2-384 only, never refusing elsewhere', async (t) => {
  t.same(RELEVANCE_FLOORS, { 'local-v2-384': 0.26 });
  t.equal(relevanceFloor('local-v2-384'), 0.26);
  t.equal(UNCALIBRATED_RELEVANCE_FLOOR, 0);
  for (const space of ['local-384', 'openai-text-embedding-3-small', 'gemini-text-embedding-004', 'constructor']) {
    t.equal(relevanceFloor(space), 0, space);
  }
});

t.test('the best relevance of passages, 0 for none', async (t) => {
  t.equal(bestRelevance([]), 0);
  t.equal(bestRelevance([{ relevance: 0.2 }, { relevance: 0.41 }, { relevance: 0.3 }]), 0.41);
});
