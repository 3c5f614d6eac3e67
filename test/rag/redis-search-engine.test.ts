// The exact commands the Redis query-engine engine sends, built by node-redis's own command
// definitions from the engine's options: no Redis with the query engine can run here, so the
// arguments are pinned by these tests and the behaviour by the contract suite when REDIS_QUERY_URL is set.
import { BasicCommandParser } from '@redis/client/dist/lib/client/parser.js';
import HYBRID from '@redis/search/dist/lib/commands/HYBRID.js';
import SEARCH from '@redis/search/dist/lib/commands/SEARCH.js';
import t from 'tap';
import {
  chatbotFilter,
  createIndexArgs,
  createSearchIndex,
  dropSearchIndex,
  escapeTag,
  hybridOptions,
  knnSearch,
  textQuery,
  textSearch,
} from '../../src/rag/redis-search-engine.ts';
import { float32Bytes } from '../../src/store/chunk-store.ts';
import { connectRedis } from '../../src/store/redis-client.ts';
import { createLogger } from '../../src/logger.ts';
import { startRedis } from '../support/redis-server.ts';

const chatbotId = '6f1c2a8e-4b7d-4e1a-9c3f-0a1b2c3d4e5f';
const embedding = Float32Array.from([0.6, 0.8, 0]);
const query = { chatbotId, text: 'How do I return shoes? (fast!) ', embedding, k: 5 };

const args = (parse: (parser: BasicCommandParser) => void) => {
  const parser = new BasicCommandParser();
  parse(parser);
  return parser.redisArgs.map((a) => (Buffer.isBuffer(a) ? `<${a.toString('hex')}>` : a));
};

t.test('tags are escaped; the text query keeps only words; the chatbot filter is always there', async (t) => {
  t.equal(escapeTag(chatbotId), '6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f');
  t.equal(chatbotFilter(chatbotId), '@chatbot_id:{6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f}');
  t.equal(
    textQuery(chatbotId, query.text),
    '@chatbot_id:{6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f} @title|content:(how|do|i|return|shoes|fast)',
  );
  t.equal(textQuery(chatbotId, '*** ???'), '@chatbot_id:{6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f}');
  t.equal(textQuery(chatbotId, 'Ünïcode déjà'), `${chatbotFilter(chatbotId)} @title|content:(ünïcode|déjà)`);
});

t.test('FT.CREATE: TAG chatbot_id and source_id, TEXT title and content, VECTOR HNSW FLOAT32 COSINE', async (t) => {
  t.same(createIndexArgs('sb:idx:local-384', 'sb:chunk:local-384:', 384), [
    'FT.CREATE', 'sb:idx:local-384', 'ON', 'HASH', 'PREFIX', '1', 'sb:chunk:local-384:',
    'SCHEMA', 'chatbot_id', 'TAG', 'source_id', 'TAG', 'title', 'TEXT', 'WEIGHT', '2', 'content', 'TEXT',
    'embedding', 'VECTOR', 'HNSW', '6', 'TYPE', 'FLOAT32', 'DIM', '384', 'DISTANCE_METRIC', 'COSINE',
  ]); // prettier-ignore
});

t.test('FT.HYBRID on 8.4+: BM25STD search, KNN 50 filtered to the chatbot, RRF with k = 60', async (t) => {
  const vector = `<${float32Bytes(embedding).toString('hex')}>`;
  t.equal(vector, '<9a99193fcdcc4c3f00000000>', 'little-endian FLOAT32 bytes');
  t.same(args((p) => HYBRID.default.parseCommand(p, 'sb:idx:local-384', hybridOptions(query))), [
    'FT.HYBRID', 'sb:idx:local-384',
    'SEARCH', textQuery(chatbotId, query.text), 'SCORER', 'BM25STD', 'YIELD_SCORE_AS', 'text_score',
    'VSIM', '@embedding', '$vector', 'KNN', '2', 'K', '50', 'FILTER', chatbotFilter(chatbotId),
    'YIELD_SCORE_AS', 'vector_score',
    'COMBINE', 'RRF', '6', 'WINDOW', '50', 'CONSTANT', '60', 'YIELD_SCORE_AS', 'score',
    'LOAD', '4', '@__key', '@text_score', '@vector_score', '@score',
    'LIMIT', '0', '5',
    'PARAMS', '2', 'vector', vector,
  ]); // prettier-ignore
});

t.test('before 8.4: a KNN FT.SEARCH and a BM25STD FT.SEARCH, fused in code', async (t) => {
  const knn = knnSearch(query);
  const vector = `<${float32Bytes(embedding).toString('hex')}>`;
  t.same(args((p) => SEARCH.default.parseCommand(p, 'idx', knn.query, knn.options)), [
    'FT.SEARCH', 'idx', `(${chatbotFilter(chatbotId)})=>[KNN 50 @embedding $vector AS vector_distance]`,
    'RETURN', '1', 'vector_distance', 'SORTBY', 'vector_distance', 'ASC', 'LIMIT', '0', '50',
    'PARAMS', '2', 'vector', vector, 'DIALECT', '2',
  ]); // prettier-ignore
  const text = textSearch(query);
  t.same(args((p) => SEARCH.default.parseCommand(p, 'idx', text.query, text.options)), [
    'FT.SEARCH', 'idx', textQuery(chatbotId, query.text),
    'WITHSCORES', 'RETURN', '0', 'SCORER', 'BM25STD', 'LIMIT', '0', '50', 'DIALECT', '2',
  ]); // prettier-ignore
});

t.test(
  'dropping a space index on a server without the query engine is nothing to do; creating one is an error',
  async (t) => {
    const redis = await startRedis();
    const client = await connectRedis({ url: redis.url }, createLogger('silent'));
    t.teardown(async () => {
      await client.close();
      await redis.stop();
    });
    await dropSearchIndex(client, 'idx:gone');
    await t.rejects(createSearchIndex(client, 'idx:new', 'chunk:new:', 3), { message: /unknown command 'FT\.CREATE'/ });
  },
);
