import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import type { Embedder } from '../../src/rag/embedder.ts';
import { LocalEmbedder } from '../../src/rag/local-embedder.ts';
import { QueryEmbedder } from '../../src/rag/query-embedder.ts';
import { chunkRelevance } from '../../src/rag/relevance-floor.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { UnansweredStore } from '../../src/store/unanswered-store.ts';
import { GROUPING_THRESHOLDS } from '../../src/unanswered/grouping-threshold.ts';
import { questionKey } from '../../src/unanswered/question-key.ts';
import { turnReason, UnansweredRecorder } from '../../src/unanswered/unanswered-recorder.ts';
import type { TurnMetrics } from '../../src/metrics/turn-metrics.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { LogCapture } from '../support/log-capture.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { until } from '../support/until.ts';

const { server, redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const clock = new SimulatedClock();
const local = new LocalEmbedder();
const logs = new LogCapture();
const logger = createLogger('info', logs);

/** Occurrences that RECORD answered `retry` (a writer matched against embeddings that changed meanwhile). */
let retries = 0;
/** RECORD scripts run. */
let scripts = 0;

/** A gateway's recorder: its own store (and cache of embeddings) over the given client. */
function recorder(client = redis, embedder: Embedder = local) {
  const store = new UnansweredStore(client, keys, clock);
  const record = store.record.bind(store);
  store.record = async (...args) => {
    const replies = await record(...args);
    scripts += 1;
    retries += replies.filter((reply) => reply[0] === 'retry').length;
    return replies;
  };
  const recording = new UnansweredRecorder({
    store,
    conversations: { recentMessages: async () => [] },
    logger,
    clock,
    embedder: async () => new QueryEmbedder(embedder),
  });
  return { store, recorder: recording };
}

const { store, recorder: gateway } = recorder();
let asked = 1_800_000_000_000_000;
/** A visitor message's time: each call a new one. */
const at = () => (asked += 1_000_000);

t.test('the exact-text key ignores case, accents, spacing and the punctuation at either end', async (t) => {
  t.equal(questionKey('  Do you ship to  Canada?! '), 'do you ship to canada');
  t.equal(questionKey('¿Dónde está mi pedido?'), 'donde esta mi pedido');
  t.equal(questionKey("Where's my order…"), "where's my order");
  t.equal(questionKey('?!'), '');
});

t.test('turns that go to the inbox, and why', async (t) => {
  const metrics = {} as TurnMetrics;
  const reply = { kind: 'reply' as const, text: 'x', citations: [], metrics };
  t.equal(turnReason({ ...reply, grounded: true }, false), undefined);
  t.equal(turnReason({ ...reply, grounded: false }, false), 'low_relevance');
  t.equal(turnReason({ ...reply, grounded: true }, true), 'fallback');
  t.equal(turnReason({ ...reply, grounded: false }, true), 'fallback');
  t.equal(turnReason({ kind: 'llm-failed', error: new Error('x'), partial: '', metrics }, true), 'fallback');
  t.equal(turnReason({ kind: 'ungrounded', metrics }, true), 'sources_only');
});

t.test('the same text asked again joins its group, counted and dated', async (t) => {
  const bot = crypto.randomUUID();
  const first = at();
  const second = at();
  const created = await gateway.record(bot, 'embed-a', 'Do you ship to Canada?', first, 'fallback');
  const joined = await gateway.record(bot, 'embed-b', 'do you ship to canada', second, 'thumbs_down');
  t.same(created?.[0], 'created');
  t.same(joined, ['joined', created![1]]);
  t.same(await store.list(bot, 'open'), [
    {
      id: created![1],
      question: 'Do you ship to Canada?',
      count: 2,
      first_seen_at: '2027-01-15T08:00:01.000000+00:00',
      last_seen_at: '2027-01-15T08:00:02.000000+00:00',
      reasons: { fallback: 1, thumbs_down: 1 },
      examples: ['Do you ship to Canada?'],
      session_id: 'embed-b',
      status: 'open',
    },
  ]);
});

t.test('a paraphrase joins the nearest group; a question about something else starts its own', async (t) => {
  const bot = crypto.randomUUID();
  const threshold = GROUPING_THRESHOLDS[local.space]!;
  const [a, b, c] = await local.embed([
    'How do I delete my account?',
    'I want to delete my account, how?',
    'How do I create an account?',
  ]);
  t.ok(chunkRelevance(a!, { embedding: b! }) >= threshold, 'the paraphrase is near');
  t.ok(chunkRelevance(a!, { embedding: c! }) < threshold, 'the near miss is not');
  const created = await gateway.record(bot, 'embed-a', 'How do I delete my account?', at(), 'fallback');
  t.same(await gateway.record(bot, 'embed-b', 'I want to delete my account, how?', at(), 'escalated'), [
    'joined',
    created![1],
  ]);
  t.equal((await gateway.record(bot, 'embed-c', 'How do I create an account?', at(), 'fallback'))?.[0], 'created');
  // The paraphrase's text is now indexed to the group too.
  t.same(await gateway.record(bot, 'embed-d', 'I want to delete my account, how', at(), 'fallback'), [
    'joined',
    created![1],
  ]);
  const groups = await store.list(bot, 'open');
  t.same(
    groups.map((group) => [group.question, group.count, group.examples, group.reasons]),
    [
      [
        'How do I delete my account?',
        3,
        ['How do I delete my account?', 'I want to delete my account, how?'],
        { fallback: 2, escalated: 1 },
      ],
      ['How do I create an account?', 1, ['How do I create an account?'], { fallback: 1 }],
    ],
  );
});

t.test('one visitor message counts once, whatever the number of reasons it gives', async (t) => {
  const bot = crypto.randomUUID();
  const message = at();
  const created = await gateway.record(bot, 'embed-a', 'Is there a student discount?', message, 'fallback');
  t.same(await gateway.record(bot, 'embed-a', 'Is there a student discount?', message, 'thumbs_down'), [
    'joined',
    created![1],
  ]);
  t.same(await gateway.record(bot, 'embed-a', 'Is there a student discount?', message, 'thumbs_down'), [
    'duplicate',
    created![1],
  ]);
  t.same(await gateway.record(bot, 'embed-a', 'Is there a student discount?', message, 'escalated'), [
    'joined',
    created![1],
  ]);
  const [group] = await store.list(bot, 'open');
  t.same([group!.count, group!.reasons], [1, { fallback: 1, thumbs_down: 1, escalated: 1 }]);
});

t.test('a space without a measured threshold groups by exact text only', async (t) => {
  const bot = crypto.randomUUID();
  const other: Embedder = { space: 'openai-text-embedding-3-small', dimensions: 3, embed: async () => [] };
  const { recorder: elsewhere } = recorder(redis, other);
  await elsewhere.record(bot, 'embed-a', 'How do I delete my account?', at(), 'fallback');
  await elsewhere.record(bot, 'embed-b', 'I want to delete my account, how?', at(), 'fallback');
  await elsewhere.record(bot, 'embed-c', 'how do I delete my account', at(), 'fallback');
  t.same(
    (await store.list(bot, 'open')).map((group) => [group.question, group.count]),
    [
      ['How do I delete my account?', 2],
      ['I want to delete my account, how?', 1],
    ],
  );
  t.same(await redis.hLen(keys.unansweredVectors(bot)), 0, 'no embedding is kept');
});

t.test('an embedder that fails leaves the question grouped by its text, and says so', async (t) => {
  const bot = crypto.randomUUID();
  const broken: Embedder = {
    space: local.space,
    dimensions: 384,
    embed: () => Promise.reject(new Error('embedding service down')),
  };
  const { recorder: failing } = recorder(redis, broken);
  const before = logs.lines.length;
  t.equal((await failing.record(bot, 'embed-a', 'Where is my order?', at(), 'fallback'))?.[0], 'created');
  const lines = logs.lines.slice(before).map(({ level, msg, chatbot_id, err }) => ({
    level,
    msg,
    chatbot_id,
    message: (err as { message: string }).message,
  }));
  t.same(lines, [
    {
      level: 40,
      msg: 'unanswered question not embedded: grouped by its text',
      chatbot_id: bot,
      message: 'embedding service down',
    },
  ]);
});

// Several gateways on one Redis: each its own client, store and cache, all recording at once. Each
// family's questions are near each other (every pair at or above the threshold) and far from the other
// families', so whichever question of a family comes first, the others must join it.
const FAMILIES = [
  ['How do I delete my account?', 'I want to delete my account, how?', 'how can I delete my account'],
  [
    'Can I change my delivery address?',
    'How do I change the address for delivery?',
    'can i change the delivery address',
  ],
  ['What is the warranty on the battery?', 'How long is the battery warranty?', 'what is the battery warranty'],
];

t.test('the families are what the concurrency test needs', async (t) => {
  const threshold = GROUPING_THRESHOLDS[local.space]!;
  const vectors = await Promise.all(FAMILIES.map((family) => local.embed(family)));
  for (const [f, family] of vectors.entries()) {
    for (const [g, other] of vectors.entries()) {
      for (const a of family) {
        for (const b of other) {
          if (a === b) continue;
          const near = chunkRelevance(a, { embedding: b }) >= threshold;
          t.equal(near, f === g, `${FAMILIES[f]![0]} / ${FAMILIES[g]![0]}`);
        }
      }
    }
  }
});

t.test('gateways recording at once put each family in one group, and count every question', async (t) => {
  const bot = crypto.randomUUID();
  const gateways = await Promise.all(
    [1, 2, 3, 4].map(async () => {
      const client = await connectRedis({ url: server.url }, createLogger('silent'));
      t.teardown(() => client.close());
      return recorder(client).recorder;
    }),
  );
  const writes = [];
  for (let round = 0; round < 10; round++) {
    for (const [g, gw] of gateways.entries()) {
      for (const family of FAMILIES) {
        const question = family[(round + g) % family.length]!;
        writes.push(gw.record(bot, `embed-${g}-${round}`, question, at(), 'fallback'));
      }
    }
  }
  const before = retries;
  const replies = await Promise.all(writes);
  t.equal(replies.filter((reply) => reply?.[0] === 'created').length, 3, 'three groups created');
  t.ok(retries > before, `writers that matched against older embeddings matched again (${retries - before})`);
  const groups = await store.list(bot, 'open');
  t.equal(groups.length, 3);
  t.same(
    groups.map((group) => FAMILIES.findIndex((family) => family.includes(group.question))).sort(),
    [0, 1, 2],
    'one group per family',
  );
  for (const group of groups) {
    const family = FAMILIES.find((f) => f.includes(group.question))!;
    t.equal(group.count, 40, `${group.question}: every question counted`);
    t.same(group.reasons, { fallback: 40 });
    t.same([...group.examples].sort(), [...family].sort(), `${group.question}: its three questions`);
  }
  const texts = await redis.hGetAll(keys.unansweredTexts(bot));
  t.equal(Object.keys(texts).length, 9, 'every question text indexed once');
  t.equal(await redis.hLen(keys.unansweredVectors(bot)), 3, 'one embedding per group');
});

t.test('the same new question from many gateways at once makes one group', async (t) => {
  const bot = crypto.randomUUID();
  const gateways = await Promise.all(
    [1, 2, 3].map(async () => {
      const client = await connectRedis({ url: server.url }, createLogger('silent'));
      t.teardown(() => client.close());
      return recorder(client).recorder;
    }),
  );
  const replies = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      gateways[i % 3]!.record(bot, `embed-${i}`, 'Can I pay in instalments?', at(), 'low_relevance'),
    ),
  );
  t.equal(replies.filter((reply) => reply?.[0] === 'created').length, 1);
  const [group] = await store.list(bot, 'open');
  t.same([group!.count, group!.reasons], [30, { low_relevance: 30 }]);
});

t.test('note… calls return at once; settled() waits for what they started', async (t) => {
  const bot = crypto.randomUUID();
  gateway.noteThumbsDown(bot, 'embed-z', 'Do you sell gift cards?', at());
  gateway.noteTurn({
    chatbotId: bot,
    sessionId: 'embed-y',
    question: 'Do you sell gift cards',
    askedAt: '2027-01-15T09:00:00.000000+00:00',
    generation: { kind: 'ungrounded', metrics: {} as TurnMetrics },
    fallback: true,
  });
  gateway.noteTurn({
    chatbotId: bot,
    sessionId: 'embed-x',
    question: 'Thanks!',
    askedAt: '2027-01-15T09:00:01.000000+00:00',
    generation: { kind: 'reply', text: 'You are welcome.', citations: [], grounded: true, metrics: {} as TurnMetrics },
    fallback: false,
  });
  t.same(await store.list(bot, 'open'), [], 'nothing recorded yet');
  await gateway.settled();
  const [group] = await store.list(bot, 'open');
  t.same(
    [group!.count, group!.reasons, group!.last_seen_at],
    [2, { thumbs_down: 1, sources_only: 1 }, '2027-01-15T09:00:00.000000+00:00'],
  );
});

t.test("a chatbot's noted questions are written together: after 50 ms, or at once when 50 wait", async (t) => {
  const bot = crypto.randomUUID();
  const count = async () => (await store.list(bot, 'open'))[0]?.count ?? 0;
  const before = scripts;
  for (let i = 0; i < 3; i++) gateway.noteThumbsDown(bot, `embed-${i}`, 'Do you sell gift cards?', at());
  await clock.advance(49);
  t.equal(await count(), 0, 'nothing written before 50 ms');
  await clock.advance(1);
  await until(async () => (await count()) === 3, 'the batch written');
  t.equal(scripts - before, 1, 'in one script');
  for (let i = 0; i < 50; i++) gateway.noteThumbsDown(bot, `embed-${i}`, 'Do you sell gift cards?', at());
  await until(async () => (await count()) === 53, 'the full batch written');
  t.equal(scripts - before, 2, 'in one script, the clock standing still');
});

t.test('beyond 1,000 questions waiting in a process, the next is dropped and said so', async (t) => {
  const bot = crypto.randomUUID();
  const before = logs.lines.length;
  for (let i = 0; i < 1001; i++) gateway.noteThumbsDown(bot, `embed-${i}`, 'Can I return a gift?', at());
  await gateway.settled();
  t.equal((await store.list(bot, 'open'))[0]?.count, 1000);
  t.same(
    logs.lines.slice(before).map(({ level, msg, chatbot_id }) => ({ level, msg, chatbot_id })),
    [{ level: 40, msg: 'unanswered question not recorded: too many recordings under way', chatbot_id: bot }],
  );
  gateway.noteThumbsDown(bot, 'embed-late', 'Can I return a gift?', at());
  await gateway.settled();
  t.equal((await store.list(bot, 'open'))[0]?.count, 1001, 'room again once they are written');
});
