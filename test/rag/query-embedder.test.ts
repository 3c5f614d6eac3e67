import t from 'tap';
import type { Embedder } from '../../src/rag/embedder.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { QueryEmbedder } from '../../src/rag/query-embedder.ts';

/** The local embedder, with every call it is given written down; texts in `failing` make a call fail. */
function recordingEmbedder(failing = new Set<string>()): Embedder & { calls: string[][] } {
  const local = new LocalEmbedder();
  const calls: string[][] = [];
  return {
    space: local.space,
    dimensions: local.dimensions,
    calls,
    async embed(texts) {
      calls.push(texts);
      // Answered a moment later, as a provider would, so that overlapping requests can meet.
      await new Promise((resolve) => setImmediate(resolve));
      const failed = texts.find((text) => failing.has(text));
      if (failed !== undefined) throw new Error(`could not embed ${failed}`);
      return local.embed(texts);
    },
  };
}

t.test('a question asked again is not embedded again, and gets the same vector', async (t) => {
  const inner = recordingEmbedder();
  const queries = new QueryEmbedder(inner);
  t.equal(queries.space, 'local-v2-384');
  t.equal(queries.dimensions, 384);
  const [first] = await queries.embed(['Do you ship to Canada?']);
  const [again] = await queries.embed(['Do you ship to Canada?']);
  await queries.embed(['do you ship to canada']);
  t.same(inner.calls, [['Do you ship to Canada?'], ['do you ship to canada']], 'only an exact repeat is remembered');
  t.equal(again, first, 'the very vector');
  t.same(Array.from(first!), Array.from(new LocalEmbedder().embedOne('Do you ship to Canada?')));
});

t.test('questions asked at once share one embedding call each', async (t) => {
  const inner = recordingEmbedder();
  const queries = new QueryEmbedder(inner);
  const results = await Promise.all([
    queries.embed(['opening hours']),
    queries.embed(['opening hours']),
    queries.embed(['opening hours', 'returns']),
  ]);
  t.same(inner.calls, [['opening hours'], ['returns']]);
  t.equal(results[0][0], results[1][0]);
  t.equal(results[0][0], results[2][0]);
  t.same(Array.from(results[2][1]!), Array.from(new LocalEmbedder().embedOne('returns')));
});

t.test('a failed embedding is not kept: the next request tries again', async (t) => {
  const failing = new Set(['flaky']);
  const inner = recordingEmbedder(failing);
  const queries = new QueryEmbedder(inner);
  await t.rejects(Promise.all([queries.embed(['flaky']), queries.embed(['flaky'])]), {
    message: 'could not embed flaky',
  });
  t.same(inner.calls, [['flaky']], 'the two requests shared the failed call');
  failing.clear();
  const [vector] = await queries.embed(['flaky']);
  t.same(Array.from(vector!), Array.from(new LocalEmbedder().embedOne('flaky')));
  t.same(inner.calls, [['flaky'], ['flaky']]);
});

t.test('an embedder that returns no vector is an error, not an undefined vector', async (t) => {
  const queries = new QueryEmbedder({ space: 'empty', dimensions: 3, embed: () => Promise.resolve([]) });
  await t.rejects(queries.embed(['anything']), { message: 'the empty embedder returned no vector' });
});

t.test('what it keeps is bounded in bytes: the least recently asked question is let go', async (t) => {
  const inner = recordingEmbedder();
  // Room for two 384-dimension vectors (1,536 bytes each, with their texts), not three.
  const queries = new QueryEmbedder(inner, 2 * (1536 + 2 * 3 + 64));
  await queries.embed(['one']);
  await queries.embed(['two']);
  await queries.embed(['one']);
  await queries.embed(['six']);
  await queries.embed(['one']);
  await queries.embed(['two']);
  t.same(inner.calls, [['one'], ['two'], ['six'], ['two']], '"two" was the least recently asked when "six" came');
});

t.test('a question pushed out of the cache while it is being embedded is still answered', async (t) => {
  const local = new LocalEmbedder();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow: Embedder = {
    space: local.space,
    dimensions: local.dimensions,
    async embed(texts) {
      if (texts[0] === 'slow one') await gate;
      return local.embed(texts);
    },
  };
  // Room for one vector: the two quick questions push the slow one's entry out while it waits.
  const queries = new QueryEmbedder(slow, 1536 + 2 * 8 + 64);
  const pending = queries.embed(['slow one']);
  await queries.embed(['quick']);
  await queries.embed(['quicker']);
  release();
  const [vector] = await pending;
  t.same(Array.from(vector!), Array.from(local.embedOne('slow one')));
});
