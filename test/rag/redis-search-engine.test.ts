// The exact commands the Redis query-engine engine sends, and how it reads the replies: no Redis
// with the query engine can run here, so the arguments and the reply shapes (RediSearch's own test
// suite's, tests/pytests/test_resp3.py and test_aggregate.py) are pinned by these tests, and the
// behaviour by the contract suite when REDIS_QUERY_URL is set.
import { BasicCommandParser } from '@redis/client/dist/lib/client/parser.js';
import SEARCH from '@redis/search/dist/lib/commands/SEARCH.js';
import t from 'tap';
import {
  chatbotFilter,
  createIndexArgs,
  createSearchIndex,
  dropSearchIndex,
  escapeTag,
  hybridHits,
  knnSearch,
  parseKnnReply,
  parseTextAggregateReply,
  textAggregateArgs,
  textQuery,
  textTerms,
} from '../../src/rag/redis-search-engine.ts';
import type { ChunkRecord } from '../../src/rag/chunk.ts';
import { InProcessSearchEngine } from '../../src/rag/in-process-search-engine.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { reciprocalRankFusion } from '../../src/rag/reciprocal-rank-fusion.ts';
import { chunkRelevance } from '../../src/rag/relevance-floor.ts';
import { float32Bytes } from '../../src/store/chunk-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
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

t.test('tags are escaped; the text query keeps only words, and is none without words', async (t) => {
  t.equal(escapeTag(chatbotId), '6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f');
  t.equal(chatbotFilter(chatbotId), '@chatbot_id:{6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f}');
  t.same(textTerms('Shoes, shoes & SHOES 2x'), ['shoes', '2x']);
  t.equal(textTerms(Array.from({ length: 70 }, (_, i) => `w${i}`).join(' ')).length, 64);
  t.equal(textQuery(query.text), '@title|content:(how|do|i|return|shoes|fast)');
  t.equal(textQuery('*** ???'), undefined);
  t.equal(textQuery('Ünïcode déjà'), '@title|content:(ünïcode|déjà)');
});

t.test('FT.CREATE: TAG chatbot_id and source_id, TEXT title and content, VECTOR HNSW FLOAT32 COSINE', async (t) => {
  t.same(createIndexArgs('sb:idx:local-384', 'sb:chunk:local-384:', 384), [
    'FT.CREATE', 'sb:idx:local-384', 'ON', 'HASH', 'PREFIX', '1', 'sb:chunk:local-384:',
    'SCHEMA', 'chatbot_id', 'TAG', 'source_id', 'TAG', 'title', 'TEXT', 'WEIGHT', '2', 'content', 'TEXT',
    'embedding', 'VECTOR', 'HNSW', '6', 'TYPE', 'FLOAT32', 'DIM', '384', 'DISTANCE_METRIC', 'COSINE',
  ]); // prettier-ignore
});

t.test('the vector half: a KNN 50 FT.SEARCH pre-filtered to the chatbot', async (t) => {
  const knn = knnSearch(query);
  const vector = `<${float32Bytes(embedding).toString('hex')}>`;
  t.equal(vector, '<9a99193fcdcc4c3f00000000>', 'little-endian FLOAT32 bytes');
  t.same(args((p) => SEARCH.default.parseCommand(p, 'idx', knn.query, knn.options)), [
    'FT.SEARCH', 'idx', '(@chatbot_id:{6f1c2a8e\\-4b7d\\-4e1a\\-9c3f\\-0a1b2c3d4e5f})=>[KNN 50 @embedding $vector AS vector_distance]',
    'RETURN', '1', 'vector_distance', 'SORTBY', 'vector_distance', 'ASC', 'LIMIT', '0', '50',
    'PARAMS', '2', 'vector', vector, 'DIALECT', '2',
  ]); // prettier-ignore
});

t.test('the text half: BM25STD over the words alone, the chatbot kept by FILTER after scoring', async (t) => {
  t.same(textAggregateArgs('sb:idx:local-384', query), [
    'FT.AGGREGATE', 'sb:idx:local-384', '@title|content:(how|do|i|return|shoes|fast)',
    'ADDSCORES', 'SCORER', 'BM25STD',
    'LOAD', '2', '@__key', '@chatbot_id',
    'FILTER', "@chatbot_id=='6f1c2a8e-4b7d-4e1a-9c3f-0a1b2c3d4e5f'",
    'SORTBY', '2', '@__score', 'DESC',
    'LIMIT', '0', '50',
    'DIALECT', '2',
  ]); // prettier-ignore
  t.equal(textAggregateArgs('idx', { ...query, text: '?!' }), undefined, 'no words: no text half');
  for (const bad of ["x' || 1 == 1 || '", '6f1c2a8e-4b7d-4e1a-9c3f-0a1b2c3d4e5f ', '']) {
    t.throws(() => textAggregateArgs('idx', { ...query, chatbotId: bad }), {
      name: 'RangeError',
      message: `chatbot id must be a UUID, got ${JSON.stringify(bad)}`,
    });
  }
});

t.test('the text aggregate reply, RESP3 (map) and RESP2 (array)', async (t) => {
  const key = (n: number) => `sb:chunk:local-384:{b:${chatbotId}}:src:${n}`;
  const resp3 = {
    attributes: [],
    format: 'STRING',
    total_results: 2,
    warning: [],
    results: [
      { extra_attributes: { __key: key(1), chatbot_id: chatbotId, __score: '27.0912' }, values: [] },
      { extra_attributes: { __key: key(0), chatbot_id: chatbotId, __score: '1.19' }, values: [] },
    ],
  };
  const expected = [
    { key: key(1), score: 27.0912 },
    { key: key(0), score: 1.19 },
  ];
  t.same(parseTextAggregateReply(resp3), expected);
  t.same(
    parseTextAggregateReply(
      new Map<string, unknown>([
        ['total_results', 2],
        [
          'results',
          resp3.results.map((row) => new Map([['extra_attributes', new Map(Object.entries(row.extra_attributes))]])),
        ],
      ]),
    ),
    expected,
    'RESP3 decoded as Maps',
  );
  t.same(
    parseTextAggregateReply([
      2,
      ['__key', key(1), 'chatbot_id', chatbotId, '__score', '27.0912'],
      ['__score', '1.19', '__key', key(0), 'chatbot_id', chatbotId],
    ]),
    expected,
    'RESP2',
  );
  t.same(
    parseTextAggregateReply([
      1,
      [Buffer.from('__key'), Buffer.from(key(1)), Buffer.from('__score'), Buffer.from('27.0912')],
      ['__score', '3.5'],
    ]),
    [{ key: key(1), score: 27.0912 }],
    'blob strings as bytes; a row without a key is left out',
  );
  t.same(parseTextAggregateReply({ total_results: 0, results: [], warning: [] }), []);
  t.same(parseTextAggregateReply([0]), []);
  t.throws(() => parseTextAggregateReply('OK'), { message: 'unexpected FT.AGGREGATE reply: "OK"' });
});

t.test('the KNN reply: each document key with its COSINE distance', async (t) => {
  t.same(
    parseKnnReply({
      documents: [
        { id: 'k:1', value: { vector_distance: '0.25' } },
        { id: 'k:0', value: { vector_distance: Buffer.from('1.5') } },
      ],
    }),
    [
      { key: 'k:1', distance: 0.25 },
      { key: 'k:0', distance: 1.5 },
    ],
  );
});

// Issue 21: the hits the Redis engine builds from its two replies carry the relevance the in-process
// engine gives the same chunks, computed from the chunk's stored embedding: also for a chunk that
// only the text half returned, and whatever the KNN reply's rounding of the distance.
t.test("the engine's hits: relevance as the in-process engine computes it, for a text-only hit too", async (t) => {
  const embedder = new LocalEmbedder();
  const texts: Array<[string, string]> = [
    ['Returns', 'Unworn shoes can be returned within 30 days for a full refund.'],
    ['Shipping', 'Orders ship within two business days from our warehouse.'],
    ['Warranty', 'Every jacket has a two-year warranty against manufacturing defects.'],
  ];
  const vectors = await embedder.embed(texts.map(([title, content]) => `${title}\n${content}`));
  const chunks: ChunkRecord[] = texts.map(([title, content], position) => ({
    id: `src:${position}`,
    chatbotId,
    sourceId: 'src',
    position,
    title,
    url: '',
    content,
    embedding: vectors[position]!,
  }));
  const question = 'Can I return shoes for a refund?';
  const [embedding] = await embedder.embed([question]);
  const inProcess = new InProcessSearchEngine({ dimensions: embedder.dimensions });
  await inProcess.upsert(chunks);
  const expected = await inProcess.search({ chatbotId, text: question, embedding: embedding!, k: 5 });

  // What Redis would answer: the chunk hashes' keys, BM25STD scores for the two chunks sharing words,
  // COSINE distances (as text, to 6 digits) for two; the hashes read back as ChunkStore decodes them.
  const key = (n: number) => `sb:chunk:local-v2-384:{b:${chatbotId}}:src:${n}`;
  const textRows = parseTextAggregateReply([
    2,
    ['__key', key(0), '__score', '4.2'],
    ['__key', key(1), '__score', '0.7'],
  ]);
  const cosine = (n: number) => expected.find((hit) => hit.chunk.id === `src:${n}`)!.relevance;
  const vectorRows = parseKnnReply({
    documents: [0, 2].map((n) => ({ id: key(n), value: { vector_distance: (1 - cosine(n)).toFixed(6) } })),
  });
  const fused = reciprocalRankFusion([textRows.map((row) => row.key), vectorRows.map((row) => row.key)]);
  const stored = (n: number) => {
    const bytes = float32Bytes(chunks[n]!.embedding);
    const read = new Float32Array(bytes.byteLength / 4).map((_, j) => bytes.readFloatLE(j * 4));
    return { ...chunks[n]!, embedding: read };
  };
  const records = fused.map((entry) => stored(Number(entry.id.slice(-1))));
  const hits = hybridHits({ embedding: embedding! }, { textRows, vectorRows, fused, records });

  t.same(
    hits.map((hit) => [hit.chunk.id, hit.text?.rank ?? null, hit.vector?.rank ?? null]),
    [
      ['src:0', 1, 1],
      ['src:1', 2, null],
      ['src:2', null, 2],
    ],
    'src:1 comes from the text half alone',
  );
  for (const hit of hits) {
    const same = expected.find((other) => other.chunk.id === hit.chunk.id)!;
    t.equal(hit.relevance, same.relevance, `${hit.chunk.id}: the in-process engine's relevance`);
    t.equal(hit.relevance, chunkRelevance(embedding!, chunks[hit.chunk.position]!));
  }
  t.ok(hits[1]!.relevance > 0, 'the text-only hit has its relevance');
  t.equal(hits[2]!.vector!.score, 1 - Number((1 - cosine(2)).toFixed(6)), "the vector half's score is 1 - distance");
  t.same(
    hybridHits(
      { embedding: embedding! },
      { textRows, vectorRows, fused, records: [undefined, ...records.slice(1)] },
    ).map((hit) => hit.chunk.id),
    ['src:1', 'src:2'],
    'a chunk deleted since the search is left out',
  );
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
