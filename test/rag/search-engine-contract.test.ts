// One contract for both SearchEngine adapters. The in-process engine runs always; the Redis
// query-engine engine runs when REDIS_QUERY_URL points at a Redis 7.4+ with the query engine (none
// can be installed on the machines this project is built on, so there it is skipped and says so).
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import type { ChunkRecord } from '../../src/rag/chunk.ts';
import { InProcessSearchEngine } from '../../src/rag/in-process-search-engine.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { RedisSearchEngine } from '../../src/rag/redis-search-engine.ts';
import { chunkRelevance } from '../../src/rag/relevance-floor.ts';
import { probeQueryEngine } from '../../src/rag/retrieval-setup.ts';
import { RetrievalIndex } from '../../src/rag/retrieval-index.ts';
import type { SearchEngine } from '../../src/rag/search-engine.ts';
import { ChunkStore } from '../../src/store/chunk-store.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SignalBus } from '../../src/redis/signal-bus.ts';
import { startRedis } from '../support/redis-server.ts';

const embedder = new LocalEmbedder();
const logger = createLogger('silent');

async function chunksOf(chatbotId: string, sourceId: string, texts: Array<[string, string]>): Promise<ChunkRecord[]> {
  const vectors = await embedder.embed(texts.map(([title, content]) => `${title}\n${content}`));
  return texts.map(([title, content], position) => ({
    id: `${sourceId}:${position}`,
    chatbotId,
    sourceId,
    position,
    title,
    url: `https://docs.example/${sourceId}/${position}`,
    content,
    embedding: vectors[position]!,
  }));
}

/** What the local embedder makes of the returns question and botA's three chunks, whichever engine searches. */
const RETURNS_RELEVANCE = { 'returns:0': '0.6235', 'returns:1': '0.1488', 'returns:2': '0.1354' };

type Opened = { engine: SearchEngine; redis: RedisClient; close: () => Promise<void> };

function contract(name: string, open: (keys: RedisKeys) => Promise<Opened>) {
  t.test(`${name} engine`, async (t) => {
    const keys = new RedisKeys(`contract-${crypto.randomUUID().slice(0, 8)}:`);
    const { engine, redis, close } = await open(keys);
    t.teardown(close);
    const index = new RetrievalIndex(
      engine,
      new ChunkStore(redis, keys, embedder.space),
      new SignalBus(redis, keys, logger),
      logger,
    );
    const botA = crypto.randomUUID();
    const botB = crypto.randomUUID();
    const search = async (chatbotId: string, text: string, k = 5) => {
      const [embedding] = await embedder.embed([text]);
      // The Redis engine indexes asynchronously; give it a moment to catch up.
      for (let i = 0; i < 20; i += 1) {
        const hits = await engine.search({ chatbotId, text, embedding: embedding!, k });
        if (hits.length > 0 || i === 19) return hits;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return [];
    };
    await index.replaceSource(botA, 'returns', await chunksOf(botA, 'returns', [
      ['Returns', 'Unworn shoes can be returned within 30 days for a full refund.'],
      ['Shipping', 'Orders ship within two business days from our warehouse.'],
      ['Warranty', 'Every jacket has a two-year warranty against manufacturing defects.'],
    ])); // prettier-ignore
    await index.replaceSource(botB, 'secret', await chunksOf(botB, 'secret', [
      ['Returns', 'Bot B: returns are never accepted, refunds are impossible.'],
    ])); // prettier-ignore

    t.test('the best match comes first, with both methods rank and score', async (t) => {
      const hits = await search(botA, 'how do I return my shoes for a refund');
      t.equal(hits[0]!.chunk.id, 'returns:0');
      t.equal(hits[0]!.chunk.title, 'Returns');
      t.equal(hits[0]!.chunk.url, 'https://docs.example/returns/0');
      t.ok(hits[0]!.text && hits[0]!.text.rank === 1 && hits[0]!.text.score > 0);
      t.ok(hits[0]!.vector && hits[0]!.vector.rank >= 1);
      t.ok(
        hits.every((hit, i) => i === 0 || hit.score <= hits[i - 1]!.score),
        'fused scores descend',
      );
      t.ok(hits.length <= 5);
    });

    // Issue 21: a relevance both engines compute alike, from the query embedding and the chunk's
    // stored one, so that one floor holds whichever engine a gateway runs.
    t.test("every hit's relevance: the cosine of query and chunk embeddings, the same in every engine", async (t) => {
      const text = 'how do I return my shoes for a refund';
      const [embedding] = await embedder.embed([text]);
      const hits = await search(botA, text, 10);
      t.same(
        hits.map((hit) => hit.chunk.id).sort(),
        ['returns:0', 'returns:1', 'returns:2'],
        'all three of its chunks',
      );
      for (const hit of hits) {
        t.equal(hit.relevance, chunkRelevance(embedding!, hit.chunk), `${hit.chunk.id}: from the stored embedding`);
        t.ok(hit.relevance >= 0 && hit.relevance <= 1, `${hit.chunk.id}: in [0, 1]`);
        t.ok(
          Math.abs(Math.max(0, hit.vector!.score) - hit.relevance) < 1e-5,
          `${hit.chunk.id}: the vector half's own similarity, ${hit.vector!.score}`,
        );
      }
      const relevance = Object.fromEntries(hits.map((hit) => [hit.chunk.id, hit.relevance.toFixed(4)]));
      t.same(relevance, RETURNS_RELEVANCE, 'the same figures in every engine');
    });

    t.test('a chatbot only ever retrieves its own chunks', async (t) => {
      const hits = await search(botA, 'returns never accepted refunds impossible', 10);
      t.ok(hits.length > 0);
      t.ok(hits.every((hit) => hit.chunk.chatbotId === botA));
      const theirs = await search(botB, 'shoes shipping warranty', 10);
      t.ok(theirs.every((hit) => hit.chunk.chatbotId === botB));
      t.same(await search(crypto.randomUUID(), 'returns'), []);
    });

    // Issue 26: with the chatbot's TAG intersected with the OR of the words, RediSearch scored each
    // chunk by its first matching word alone ("can" here), so the short chunks saying "can" twice
    // outranked the one that answers. Another chatbot's better match shows the filter is applied.
    t.test('the text half ranks by every matching word, within the chatbot', async (t) => {
      const botC = crypto.randomUUID();
      const botD = crypto.randomUUID();
      await index.replaceSource(botC, 'help-c', await chunksOf(botC, 'help-c', [
        ['Payments', 'Can I pay by card? Yes, you can pay by card.'],
        ['Orders', 'You can change an order until it ships.'],
        ['Accessibility', 'You can get the quick-start guide in Braille or in large print: ask support and we post it.'],
        ['Shipping', 'Orders ship within two business days.'],
      ])); // prettier-ignore
      await index.replaceSource(botD, 'help-d', await chunksOf(botD, 'help-d', [
        ['Accessibility', 'Quick-start guide in Braille, large print guide, Braille quick-start.'],
      ])); // prettier-ignore
      const hits = await search(botC, 'Can I get a quick-start guide in Braille or large print?', 10);
      const answer = hits.find((hit) => hit.chunk.id === 'help-c:2');
      t.equal(answer?.text?.rank, 1, 'the chunk matching most words is first for the text half');
      t.equal(hits[0]!.chunk.id, 'help-c:2');
      t.ok(
        hits.every((hit) => hit.chunk.chatbotId === botC),
        "no other chatbot's chunk",
      );
      const others = hits.filter((hit) => hit !== answer && hit.text);
      t.ok(
        others.every((hit) => hit.text!.score < answer!.text!.score),
        'its text score is above every other',
      );
    });

    t.test('replacing a source replaces its chunks; removing it removes them at once', async (t) => {
      await index.replaceSource(botA, 'returns', await chunksOf(botA, 'returns', [
        ['Returns', 'Returns now take 60 days and need a receipt.'],
      ])); // prettier-ignore
      const hits = await search(botA, 'warranty jacket defects', 10);
      t.notOk(
        hits.some((hit) => hit.chunk.content.includes('two-year warranty')),
        'old chunks are gone',
      );
      t.ok((await search(botA, 'returns receipt 60 days')).some((hit) => hit.chunk.content.includes('60 days')));
      await index.removeSource(botA, 'returns');
      t.same(
        await engine.search({
          chatbotId: botA,
          text: 'returns',
          embedding: (await embedder.embed(['returns']))[0]!,
          k: 5,
        }),
        [],
      );
    });
  });
}

// The in-process engine with each vector search method in use from the first vector (exactBelow 0):
// the column scan the gateway uses for the local embedder, and the HNSW graph.
for (const method of ['scan', 'hnsw'] as const) {
  contract(`in-process (${method})`, async () => {
    const server = await startRedis();
    const redis = await connectRedis({ url: server.url }, logger);
    return {
      engine: new InProcessSearchEngine({
        dimensions: embedder.dimensions,
        vectorIndex: { method, exactBelow: 0, scanCandidates: 1 },
      }),
      redis,
      close: async () => {
        await redis.close();
        await server.stop();
      },
    };
  });
}

const queryUrl = process.env.REDIS_QUERY_URL;
if (queryUrl) {
  contract('redis', async (keys) => {
    const redis = await connectRedis({ url: queryUrl }, logger);
    const probe = await probeQueryEngine(redis);
    if (!probe.usable) throw new Error(`REDIS_QUERY_URL ${queryUrl}: ${probe.reason}`);
    const chunks = new ChunkStore(redis, keys, embedder.space);
    return {
      engine: new RedisSearchEngine(redis, chunks, keys.searchIndex(embedder.space)),
      redis,
      close: () => redis.close(),
    };
  });
} else {
  t.test(
    'redis engine',
    { skip: 'REDIS_QUERY_URL is not set: no Redis with the query engine to test against' },
    () => {},
  );
}
