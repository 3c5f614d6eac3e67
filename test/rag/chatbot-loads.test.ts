import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import type { ChunkRecord } from '../../src/rag/chunk.ts';
import { ChatbotLoads } from '../../src/rag/chatbot-loads.ts';
import { InProcessSearchEngine } from '../../src/rag/in-process-search-engine.ts';
import { RetrievalIndex } from '../../src/rag/retrieval-index.ts';
import { ChunkStore } from '../../src/store/chunk-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SignalBus } from '../../src/redis/signal-bus.ts';
import { LoadGate } from '../support/load-gate.ts';
import { LogCapture } from '../support/log-capture.ts';
import { startRedis } from '../support/redis-server.ts';

// The in-process index loads in the background, chatbot by chatbot, in batches (two chunks each
// here). A gate between batches holds the load at an exact point, so changes and searches are
// interleaved with a load in progress deterministically.

const redis = await startRedis();
t.teardown(() => redis.stop());
const client = await connectRedis({ url: redis.url }, createLogger('silent'));
t.teardown(() => client.close());
const DIMENSIONS = 4;
const QUERY = new Float32Array([1, 0, 0, 0]);

function chunk(chatbotId: string, sourceId: string, position: number, dimensions = DIMENSIONS): ChunkRecord {
  const embedding = new Float32Array(dimensions);
  embedding[position % dimensions] = 1;
  return {
    id: `${sourceId}:${position}`,
    chatbotId,
    sourceId,
    position,
    title: `${sourceId} ${position}`,
    url: '',
    content: `Passage ${position} of ${sourceId}.`,
    embedding,
  };
}

/** A gateway's index over its own engine, on a fresh key prefix, and what it logged. */
function gatewayIndex(keys: RedisKeys, gate?: LoadGate) {
  const logs = new LogCapture();
  const logger = createLogger('info', logs);
  const engine = new InProcessSearchEngine({ dimensions: DIMENSIONS });
  const chunks = new ChunkStore(client, keys, 'test-4');
  const index = new RetrievalIndex(engine, chunks, new SignalBus(client, keys, logger), logger, {
    batchSize: 2,
    pace: gate?.pace,
  });
  const ids = async (chatbotId: string) =>
    (await index.search({ chatbotId, text: 'passage', embedding: QUERY, k: 50 })).map((hit) => hit.chunk.id).sort();
  return { index, engine, chunks, logs, ids };
}

/** Whether a promise has settled, after Redis has answered a round trip (so queued work had its chance). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await client.ping();
  await client.ping();
  return done;
}

const noBadSources = async () => {
  throw new Error('no source is bad here');
};

t.test('changes that arrive while their chatbot loads wait for the load, then apply Redis as it is', async (t) => {
  const keys = new RedisKeys(`loads-${crypto.randomUUID().slice(0, 8)}:`);
  const gate = new LoadGate(1);
  const here = gatewayIndex(keys, gate);
  const elsewhere = gatewayIndex(keys);
  // Listed in key order: [s1:0, s1:1] [s1:2, s2:0] [s2:1, s2:2].
  await here.chunks.save([0, 1, 2].flatMap((i) => [chunk('bot', 's1', i), chunk('bot', 's2', i)]));

  const loading = here.index.load(noBadSources);
  await gate.reached();
  t.same(here.index.progress, { loaded: 2, total: 6, done: false }, 'held after the first batch');
  t.equal(here.engine.size('bot'), 2);

  // Another gateway removes s1:0 (already in this engine) and adds s1:3 (listed nowhere); this
  // process hears of it as the signal routing does. And this gateway itself removes source s2,
  // whose s2:0 is in the batch the gate holds.
  await elsewhere.index.updateSource('bot', 's1', [chunk('bot', 's1', 3)], ['s1:0']);
  const reloaded = here.index.reloadSource('bot', 's1');
  const removed = here.index.removeSource('bot', 's2');
  const searched = here.ids('bot');
  t.equal(await settled(reloaded), false, 'the reload waits for the load');
  t.equal(await settled(removed), false, 'the removal from the engine waits for the load');
  t.equal(await settled(searched), false, 'a search of a chatbot being loaded waits for its load');
  t.same(await here.chunks.ids('bot', 's2'), [], 'the removal is in Redis already');

  gate.open();
  // s1:0 and s1:1, then s1:2: the held batch, read after the changes, found s2:0 gone.
  t.equal(await loading, 3);
  // The waiting search is answered from the loaded chatbot (its whole listing, as Redis held it when
  // read); the changes queued behind the load follow it.
  t.same(await searched, ['s1:0', 's1:1', 's1:2']);
  await Promise.all([reloaded, removed]);
  t.same(await here.ids('bot'), ['s1:1', 's1:2', 's1:3']);
  t.same(await elsewhere.ids('bot'), ['s1:1', 's1:2', 's1:3'], 'the other gateway holds the same');
  t.same(here.index.progress, { loaded: 6, total: 6, done: true });
  t.same(here.logs.withMessage('in-process search index loaded'), [
    { level: 30, chunks: 3, skipped_sources: 0, msg: 'in-process search index loaded' },
  ]);
});

t.test('a search of a chatbot not loaded yet loads it first; concurrent searches share one load', async (t) => {
  const keys = new RedisKeys(`loads-${crypto.randomUUID().slice(0, 8)}:`);
  const gate = new LoadGate(0);
  const here = gatewayIndex(keys, gate);
  await here.chunks.save([0, 1, 2, 3, 4, 5].map((i) => chunk('a-big', 'docs', i)));
  await here.chunks.save([0, 1, 2].map((i) => chunk('b-small', 'faq', i)));

  const loading = here.index.load(noBadSources);
  await gate.reached();
  t.same(here.index.progress, { loaded: 0, total: 9, done: false }, 'held before the first batch of a-big');
  const big = here.ids('a-big');
  const [first, second] = await Promise.all([here.ids('b-small'), here.ids('b-small')]);
  t.same(first, ['faq:0', 'faq:1', 'faq:2']);
  t.same(second, ['faq:0', 'faq:1', 'faq:2']);
  t.same(here.index.progress, { loaded: 3, total: 9, done: false }, 'b-small read once, past the gate');
  t.same(await here.ids('no-chunks'), [], 'a chatbot without chunks is answered at once, empty');
  t.equal(await settled(big), false, 'a-big waits for its load, held at the gate');

  gate.open();
  t.equal(await loading, 9);
  t.same(await big, ['docs:0', 'docs:1', 'docs:2', 'docs:3', 'docs:4', 'docs:5']);
  t.same(here.index.progress, { loaded: 9, total: 9, done: true });
});

t.test('chunks of the wrong size are skipped and logged, their source failed once', async (t) => {
  const keys = new RedisKeys(`loads-${crypto.randomUUID().slice(0, 8)}:`);
  const here = gatewayIndex(keys);
  await here.chunks.save([chunk('bot', 'good', 0), chunk('bot', 'bad', 0, 3), chunk('bot', 'bad', 1, 3)]);
  const failed: string[][] = [];
  const count = await here.index.load(async (chatbotId, sourceId, reason) => {
    failed.push([chatbotId, sourceId, reason]);
  });
  t.equal(count, 1);
  const reason = 'a stored chunk has 3 dimensions, expected 4; sync the source again';
  t.same(failed, [['bot', 'bad', reason]]);
  t.same(here.logs.withMessage('stored chunk skipped'), [
    { level: 50, chunk_id: 'bad:0', chatbot_id: 'bot', reason, msg: 'stored chunk skipped' },
    { level: 50, chunk_id: 'bad:1', chatbot_id: 'bot', reason, msg: 'stored chunk skipped' },
  ]);
  t.same(here.logs.withMessage('in-process search index loaded'), [
    { level: 30, chunks: 1, skipped_sources: 1, msg: 'in-process search index loaded' },
  ]);
  t.same(await here.ids('bot'), ['good:0']);
});

t.test(
  'a listing that failed is tried again; a search meanwhile waits for it, and is not answered empty',
  async (t) => {
    const keys = new RedisKeys(`loads-${crypto.randomUUID().slice(0, 8)}:`);
    const store = new ChunkStore(client, keys, 'test-4');
    await store.save([chunk('bot', 'docs', 0), chunk('bot', 'docs', 1)]);
    let outages = 2;
    const chunks = {
      keysByChatbot: () =>
        outages-- > 0 ? Promise.reject(new Error('Redis is not reachable')) : store.keysByChatbot(),
      load: (chunkKeys: string[]) => store.load(chunkKeys),
    };
    const engine = new InProcessSearchEngine({ dimensions: DIMENSIONS });
    const failures: Array<[string, number]> = [];
    const retries = new LoadGate(0);
    const loads = new ChatbotLoads(
      { engine, chunks, usable: (batch) => batch },
      {
        batchSize: 2,
        onListingFailed: (error, attempt) => failures.push([(error as Error).message, attempt]),
        retryDelay: () => retries.pace(),
      },
    );
    const loading = loads.loadAll();
    const search = loads.ready('bot').then(() => engine.size('bot'));
    t.equal(await settled(search), false, 'the search waits while the listing is retried');
    retries.open();
    t.same(await loading, { chunks: 2, bad: [], stopped: false });
    t.equal(await search, 2, 'answered from every chunk of the chatbot');
    t.same(failures, [
      ['Redis is not reachable', 1],
      ['Redis is not reachable', 2],
    ]);
  },
);
