import t from 'tap';
import type { ChunkRecord } from '../../src/rag/chunk.ts';
import { InProcessSearchEngine } from '../../src/rag/in-process-search-engine.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { RRF_K } from '../../src/rag/reciprocal-rank-fusion.ts';

const embedder = new LocalEmbedder();

/** A chunk embedded with the local embedder (title + content, as ingestion would). */
function chunk(chatbotId: string, sourceId: string, position: number, content: string, title = ''): ChunkRecord {
  return {
    id: `${sourceId}:${position}`,
    chatbotId,
    sourceId,
    position,
    title,
    url: `https://example.com/${sourceId}`,
    content,
    embedding: embedder.embedOne(`${title}\n${content}`),
  };
}

/** The engine as the gateway builds it for the local embedder, its vector index approximate from the start. */
function localEngine(): InProcessSearchEngine {
  return new InProcessSearchEngine({
    dimensions: embedder.dimensions,
    vectorIndex: { method: embedder.vectorSearch, exactBelow: 0 },
  });
}

async function search(engine: InProcessSearchEngine, chatbotId: string, text: string, k = 10) {
  return engine.search({ chatbotId, text, embedding: embedder.embedOne(text), k });
}

function ids(hits: Array<{ chunk: ChunkRecord }>): string[] {
  return hits.map((hit) => hit.chunk.id);
}

t.test('is named in-process', async (t) => {
  t.equal(localEngine().name, 'in-process');
});

t.test('a chatbot never sees another chatbot’s chunks', async (t) => {
  const engine = localEngine();
  await engine.upsert([
    chunk('bot-a', 'src-a', 0, 'Refunds are issued within 14 days of the return.'),
    chunk('bot-a', 'src-a', 1, 'Our office is open Monday to Friday.'),
    chunk('bot-b', 'src-b', 0, 'Refunds are issued within 14 days of the return.'),
  ]);
  const forA = await search(engine, 'bot-a', 'refund return days');
  const forB = await search(engine, 'bot-b', 'refund return days');
  t.same(ids(forA), ['src-a:0', 'src-a:1']);
  t.same(ids(forB), ['src-b:0']);
  t.same(await search(engine, 'bot-c', 'refund'), []);
});

t.test('removeSource removes every chunk of the source from both methods at once', async (t) => {
  const engine = localEngine();
  await engine.upsert([
    chunk('bot', 'manual', 0, 'Reset the router by holding the reset button.'),
    chunk('bot', 'manual', 1, 'The router reset takes two minutes.'),
    chunk('bot', 'faq', 0, 'Billing questions go to the billing team.'),
  ]);
  t.same(ids(await search(engine, 'bot', 'router reset')), ['manual:0', 'manual:1', 'faq:0']);
  await engine.removeSource('bot', 'manual');
  t.equal(engine.size('bot'), 1);
  const hits = await search(engine, 'bot', 'router reset');
  t.same(ids(hits), ['faq:0'], 'only the other source, and only through vector search');
  t.equal(hits[0]!.text, undefined);
  await engine.removeSource('bot', 'manual');
  await engine.removeSource('nobody', 'manual');
  await engine.removeSource('bot', 'faq');
  t.equal(engine.size('bot'), 0);
  t.same(await search(engine, 'bot', 'billing'), []);
});

t.test('upsert replaces a chunk with the same id, in its chatbot or another', async (t) => {
  const engine = localEngine();
  await engine.upsert([chunk('bot', 'page', 0, 'Old text about alpacas.'), chunk('bot', 'page', 1, 'Llamas.')]);
  await engine.upsert([chunk('bot', 'page', 0, 'New text about zebras.')]);
  t.equal(engine.size('bot'), 2);
  const alpacas = await search(engine, 'bot', 'alpacas');
  t.same(
    alpacas.map((hit) => hit.text),
    [undefined, undefined],
    'the old text is gone from BM25',
  );
  const zebras = await search(engine, 'bot', 'zebras', 1);
  t.equal(zebras[0]!.chunk.content, 'New text about zebras.');
  t.same(zebras[0]!.text?.rank, 1);
  t.same(zebras[0]!.vector?.rank, 1);
  await engine.upsert([chunk('other-bot', 'page', 0, 'Moved text about zebras.')]);
  t.equal(engine.size('bot'), 1);
  t.same(ids(await search(engine, 'bot', 'zebras')), ['page:1']);
  t.same(ids(await search(engine, 'other-bot', 'zebras')), ['page:0']);
});

/**
 * Hand-built: with no title, A is "alpha alpha gamma", B "alpha delta", C "epsilon" — the BM25
 * example of bm25-index.test.ts (N = 3, avgdl = 2). Embeddings put C, B, A in that order for the
 * query vector. Fused (k = 60): A = 1/61 + 1/63 = 0.0322665, B = 1/62 + 1/62 = 0.0322581,
 * C = 1/61 = 0.0163934 (BM25 does not return C).
 */
t.test('fuses both lists with RRF (k = 60) and reports each method’s rank and score', async (t) => {
  const engine = new InProcessSearchEngine({ dimensions: 2 });
  const record = (name: string, content: string, embedding: number[]): ChunkRecord => ({
    id: `doc:${name}`,
    chatbotId: 'bot',
    sourceId: 'doc',
    position: name.charCodeAt(0),
    title: '',
    url: '',
    content,
    embedding: Float32Array.from(embedding),
  });
  await engine.upsert([
    record('A', 'alpha alpha gamma', [0, 1]),
    record('B', 'alpha delta', [0.6, 0.8]),
    record('C', 'epsilon', [1, 0]),
  ]);
  const hits = await engine.search({ chatbotId: 'bot', text: 'alpha', embedding: Float32Array.from([1, 0]), k: 3 });
  t.same(ids(hits), ['doc:A', 'doc:B', 'doc:C']);
  t.equal(RRF_K, 60);
  t.same(
    hits.map((hit) => hit.score),
    [1 / 61 + 1 / 63, 1 / 62 + 1 / 62, 1 / 61],
  );
  t.same(hits[0]!.vector, { rank: 3, score: 0 });
  t.same(hits[1]!.vector, { rank: 2, score: Math.fround(0.6) });
  t.same(hits[2]!.vector, { rank: 1, score: 1 });
  t.equal(hits[0]!.text?.rank, 1);
  t.ok(Math.abs(hits[0]!.text!.score - (Math.log(1.6) * 4.4) / 3.65) < 1e-12);
  t.equal(hits[1]!.text?.rank, 2);
  t.ok(Math.abs(hits[1]!.text!.score - Math.log(1.6)) < 1e-12);
  t.equal(hits[2]!.text, undefined);
  const top = await engine.search({ chatbotId: 'bot', text: 'alpha', embedding: Float32Array.from([1, 0]), k: 1 });
  t.same(ids(top), ['doc:A']);
});

t.test('hybrid hits carry each method’s rank and score on a real corpus', async (t) => {
  const engine = localEngine();
  const texts = [
    'To reset your password, open Settings and choose Reset password.',
    'Passwords must have twelve characters.',
    'Shipping is free for orders over fifty euros.',
    'Orders ship within two business days.',
    'Contact support by email at any time.',
  ];
  await engine.upsert(texts.map((text, i) => chunk('bot', 'help', i, text, 'Help centre')));
  const hits = await search(engine, 'bot', 'how do I reset my password', 5);
  t.equal(hits.length, 5);
  t.equal(hits[0]!.chunk.id, 'help:0');
  t.same(hits[0]!.text?.rank, 1);
  t.same(hits[0]!.vector?.rank, 1);
  t.ok(hits[0]!.text!.score > 0 && hits[0]!.vector!.score > 0);
  for (const hit of hits) {
    const expected = (hit.text ? 1 / (60 + hit.text.rank) : 0) + (hit.vector ? 1 / (60 + hit.vector.rank) : 0);
    t.equal(hit.score, expected, `${hit.chunk.id} fused from its ranks`);
  }
  t.ok(
    hits.every((hit, i) => i === 0 || hits[i - 1]!.score >= hit.score),
    'ordered by fused score',
  );
});

t.test('dimensions and k are validated', async (t) => {
  const engine = new InProcessSearchEngine({ dimensions: 2 });
  const bad: ChunkRecord = { ...chunk('bot', 's', 0, 'x'), embedding: Float32Array.from([1, 0, 0]) };
  const good: ChunkRecord = { ...chunk('bot', 's', 1, 'y'), embedding: Float32Array.from([1, 0]) };
  await t.rejects(engine.upsert([good, bad]), new RangeError('chunk s:0 has 3 dimensions, expected 2'));
  t.equal(engine.size('bot'), 0, 'a batch with a bad embedding is not applied at all');
  const query = { chatbotId: 'bot', text: 'x', embedding: Float32Array.from([1, 0]) };
  await t.rejects(engine.search({ ...query, k: 0 }), new RangeError('k must be a positive integer, got 0'));
  await t.rejects(
    engine.search({ ...query, embedding: Float32Array.from([1]), k: 1 }),
    new RangeError('the query embedding has 1 dimensions, expected 2'),
  );
  t.throws(
    () => new InProcessSearchEngine({ dimensions: 0 }),
    new RangeError('dimensions must be a positive integer, got 0'),
  );
});
