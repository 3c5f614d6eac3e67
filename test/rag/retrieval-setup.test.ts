import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { InProcessSearchEngine } from '../../src/rag/in-process-search-engine.ts';
import { openRetrieval, probeQueryEngine, queryEngineOfServer } from '../../src/rag/retrieval-setup.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SignalBus } from '../../src/redis/signal-bus.ts';
import { startRedis } from '../support/redis-server.ts';

const logger = createLogger('silent');
const server = await startRedis();
const redis = await connectRedis({ url: server.url }, logger);
t.teardown(async () => {
  await redis.close();
  await server.stop();
});

async function openInProcess(embeddings: string) {
  const keys = new RedisKeys(`retrieval-${crypto.randomUUID().slice(0, 8)}:`);
  const config = loadConfig({ SEARCH_ENGINE: 'in-process', EMBEDDINGS: embeddings, OPENAI_API_KEY: 'sk-test' });
  const { embedder, engine } = await openRetrieval(redis, keys, config, new SignalBus(redis, keys, logger), logger);
  if (!(engine instanceof InProcessSearchEngine)) throw new Error(`expected the in-process engine, got ${engine.name}`);
  return { space: embedder.space, dimensions: engine.dimensions, vectorSearch: engine.vectorSearch };
}

t.test('the in-process engine searches each embedding space with the method that suits it', async (t) => {
  t.same(await openInProcess('local'), { space: 'local-v2-384', dimensions: 384, vectorSearch: 'scan' });
  t.same(await openInProcess('openai:text-embedding-3-small'), {
    space: 'openai-text-embedding-3-small',
    dimensions: 1536,
    vectorSearch: 'hnsw',
  });
});

t.test('the Redis engine is used only where the query engine can serve it', async (t) => {
  t.same(await probeQueryEngine(redis), { usable: false, reason: 'this Redis has no query engine (FT._LIST failed)' });
  const keys = new RedisKeys(`retrieval-${crypto.randomUUID().slice(0, 8)}:`);
  const config = loadConfig({ SEARCH_ENGINE: 'redis' });
  await t.rejects(openRetrieval(redis, keys, config, new SignalBus(redis, keys, logger), logger), {
    name: 'SearchEngineUnavailableError',
    message: 'SEARCH_ENGINE=redis, but this Redis has no query engine (FT._LIST failed)',
  });
  // ADDSCORES, which the text half's FT.AGGREGATE needs, came with the query engine of Redis 7.4.
  t.same(queryEngineOfServer('# Server\r\nredis_version:7.2.5\r\n'), {
    usable: false,
    reason: 'this is Redis 7.2, whose query engine has no ADDSCORES (7.4 or later needed)',
  });
  t.same(queryEngineOfServer('redis_version:7.4.0\r\n'), { usable: true });
  t.same(queryEngineOfServer('redis_version:8.4.0\r\n'), { usable: true });
  t.same(queryEngineOfServer('redis_version:10.0.1\r\n'), { usable: true });
  t.equal(queryEngineOfServer('').usable, false);
});
