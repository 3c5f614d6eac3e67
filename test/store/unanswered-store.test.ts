import t from 'tap';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { UnansweredStore } from '../../src/store/unanswered-store.ts';
import type { UnansweredReason } from '../../src/contract/unanswered.ts';
import { questionKey } from '../../src/unanswered/question-key.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { commandsExecutedDuring } from '../support/commands-executed.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const clock = new SimulatedClock();
const limits = { open: 3, resolved: 2, examples: 2, keys: 3 };
const store = new UnansweredStore(redis, keys, clock, limits);
let asked = 1_800_000_000_000_000;

/** Records a question by its text alone (no embedding), asked now. */
async function ask(bot: string, question: string, reason: UnansweredReason = 'fallback', target = '') {
  asked += 1_000_000;
  const occurrence = { sessionId: `embed-${asked}`, question, key: questionKey(question), reason, askedAt: asked };
  const [reply] = await store.record(bot, [{ occurrence, match: { target, version: '', vector: '', force: false } }]);
  return reply![1]!;
}

t.test('beyond the cap of open groups, the least recently asked one is dropped', async (t) => {
  const bot = crypto.randomUUID();
  const hours = await ask(bot, 'What are your opening hours?');
  const canada = await ask(bot, 'Do you ship to Canada?');
  await ask(bot, 'Is there a student discount?');
  // Asked again: now the most recent, so Canada is the oldest.
  t.equal(await ask(bot, 'what are your opening hours'), hours);
  await ask(bot, 'Can I pay with PayPal?');
  t.same(
    (await store.list(bot, 'open')).map((group) => group.question),
    ['Can I pay with PayPal?', 'What are your opening hours?', 'Is there a student discount?'],
  );
  await t.rejects(store.get(bot, canada), { name: 'NotFoundError', detail: 'Question not found.' });
  t.equal(await redis.hGet(keys.unansweredTexts(bot), 'do you ship to canada'), null, 'its text left the index');
  t.not(await ask(bot, 'Do you ship to Canada?'), canada, 'asked again, it starts a new group');
});

t.test('examples and indexed texts are capped; more questions still count', async (t) => {
  const bot = crypto.randomUUID();
  const id = await ask(bot, 'How do I reset my password?');
  // Joined as the caller's nearest neighbour (a paraphrase), each a new text.
  for (const paraphrase of ['I forgot my password', 'Password reset?', 'Cannot log in, lost password', 'pw reset']) {
    t.equal(await ask(bot, paraphrase, 'thumbs_down', id), id);
  }
  const group = await store.get(bot, id);
  t.same(
    [group.count, group.examples, group.reasons],
    [5, ['How do I reset my password?', 'I forgot my password'], { fallback: 1, thumbs_down: 4 }],
  );
  t.same(Object.keys(await redis.hGetAll(keys.unansweredTexts(bot))).sort(), [
    'how do i reset my password',
    'i forgot my password',
    'password reset',
  ]);
});

t.test('a target group that was resolved meanwhile makes the writer match again', async (t) => {
  const bot = crypto.randomUUID();
  const id = await ask(bot, 'Do you deliver on Sundays?');
  await store.resolve(bot, id, 'dismissed');
  asked += 1_000_000;
  const occurrence = {
    sessionId: 'embed-late',
    question: 'Sunday delivery?',
    key: 'sunday delivery',
    reason: 'fallback' as const,
    askedAt: asked,
  };
  t.same(await store.record(bot, [{ occurrence, match: { target: id, version: '', vector: '', force: false } }]), [
    ['retry'],
  ]);
  const [forced] = await store.record(bot, [
    { occurrence, match: { target: id, version: '', vector: '', force: true } },
  ]);
  t.equal(forced![0], 'created');
});

t.test('answering resolves a group once; dismissing leaves a resolved group as it is', async (t) => {
  const bot = crypto.randomUUID();
  const id = await ask(bot, 'Do you have gift cards?');
  await clock.advance(60_000);
  const dismissed = await store.resolve(bot, id, 'dismissed');
  t.match(dismissed, { status: 'resolved', resolution: 'dismissed', resolved_at: /\+00:00$/ });
  t.same(await store.resolve(bot, id, 'dismissed'), dismissed, 'dismissing again changes nothing');
  const answered = await store.resolve(bot, id, 'answered', 'source-1');
  t.match(answered, { status: 'resolved', resolution: 'answered', source_id: 'source-1' });
  await t.rejects(store.resolve(bot, id, 'answered', 'source-2'), {
    name: 'ConflictError',
    detail: 'This question is answered already: change its source instead.',
  });
  await t.rejects(store.resolve(bot, id, 'dismissed'), { name: 'ConflictError' });
  await t.rejects(store.resolve(bot, crypto.randomUUID(), 'dismissed'), {
    name: 'NotFoundError',
    detail: 'Question not found.',
  });
  t.same(await store.list(bot, 'open'), []);
  t.same(
    (await store.list(bot, 'resolved')).map((group) => group.id),
    [id],
  );
});

t.test('beyond the cap of resolved groups, the oldest resolved one is dropped', async (t) => {
  const bot = crypto.randomUUID();
  const ids = [];
  for (const question of ['One?', 'Two?', 'Three?']) {
    const id = await ask(bot, question);
    await clock.advance(1000);
    await store.resolve(bot, id, 'dismissed');
    ids.push(id);
  }
  t.same(
    (await store.list(bot, 'resolved')).map((group) => group.question),
    ['Three?', 'Two?'],
  );
  await t.rejects(store.get(bot, ids[0]!), { name: 'NotFoundError', detail: 'Question not found.' });
  t.equal(await redis.zCard(keys.unansweredResolved(bot)), 2);
});

t.test("one chatbot's groups are not another's", async (t) => {
  const bot = crypto.randomUUID();
  const other = crypto.randomUUID();
  const id = await ask(bot, 'Where is my order?');
  t.not(await ask(other, 'Where is my order?'), id);
  await t.rejects(store.get(other, id), { name: 'NotFoundError', detail: 'Question not found.' });
  await t.rejects(store.resolve(other, id, 'dismissed'), { name: 'NotFoundError', detail: 'Question not found.' });
});

/** One occurrence of a batch: its question, session and reason, the time it was asked (an offset). */
interface Asked {
  question: string;
  session: string;
  at: number;
  reason?: UnansweredReason;
  /** The caller's nearest group, by its label in the replies so far. */
  target?: string;
}

/**
 * Records `asked` in `bot`, as one script or one script each, and describes the outcome with the group
 * ids replaced by labels in the order they first appear (two runs get different ids): the replies,
 * the open groups, the text index and every session's record of its messages.
 */
async function recordAndDescribe(bot: string, asked: Asked[], batched: boolean, base: number) {
  const labels = new Map<string, string>();
  const label = (id: string) => {
    if (!labels.has(id)) labels.set(id, `g${labels.size + 1}`);
    return labels.get(id)!;
  };
  const idOf = (name: string) => [...labels].find(([, l]) => l === name)![0];
  const entry = (a: Asked) => ({
    occurrence: {
      sessionId: a.session,
      question: a.question,
      key: questionKey(a.question),
      reason: a.reason ?? 'fallback',
      askedAt: base + a.at,
    },
    match: { target: a.target ? idOf(a.target) : '', version: '', vector: '', force: false },
  });
  const replies = [];
  // The first occurrence alone, so that a target can name its group.
  replies.push(...(await store.record(bot, [entry(asked[0]!)])));
  label(replies[0]![1]!);
  if (batched) replies.push(...(await store.record(bot, asked.slice(1).map(entry))));
  else for (const a of asked.slice(1)) replies.push(...(await store.record(bot, [entry(a)])));
  const described = replies.map((reply) => (reply[0] === 'retry' ? reply : [reply[0], label(reply[1])]));
  const open = (await store.list(bot, 'open')).map(({ id, ...group }) => ({ label: label(id), ...group }));
  const texts = Object.entries(await redis.hGetAll(keys.unansweredTexts(bot))).map(([k, id]) => [k, label(id)]);
  const sessions = [...new Set(asked.map((a) => a.session))];
  const seen = await Promise.all(
    sessions.map(async (session) =>
      Object.entries(await redis.hGetAll(keys.conversationUnanswered(bot, session))).map(([at, value]) => [
        Number(at) - base,
        value.replace(/^\S+/, (id) => label(id)),
      ]),
    ),
  );
  return { replies: described, open, texts: texts.sort(), seen, openSet: await redis.zCard(keys.unansweredOpen(bot)) };
}

t.test('a batch records each occurrence as if alone, in order, dropping groups beyond the cap', async (t) => {
  // The cap is 3 open groups. What each step exercises is on its line.
  const questions: Asked[] = [
    { question: 'How do I reset my password?', session: 's0', at: 0 }, // g1, alone
    { question: 'What are your opening hours?', session: 's1', at: 1 }, // creates g2
    { question: 'what are your opening hours', session: 's2', at: 2, reason: 'thumbs_down' }, // joins g2 by text
    { question: 'I forgot my password', session: 's3', at: 3, target: 'g1' }, // joins g1 as a paraphrase
    { question: 'I forgot my password', session: 's4', at: 4 }, // joins g1 by the text just indexed
    { question: 'What are your opening hours?', session: 's1', at: 1, reason: 'thumbs_down' }, // message 1 again
    { question: 'What are your opening hours?', session: 's1', at: 1, reason: 'thumbs_down' }, // a duplicate
    { question: 'Do you ship to Canada?', session: 's5', at: 5 }, // creates g3: three open
    { question: 'Is there a student discount?', session: 's2', at: 6 }, // g4 drops g2 (last asked at 2)
    { question: 'what are your opening hours?', session: 's6', at: 7 }, // g2 is gone: g5, dropping g1
    { question: 'I forgot my password', session: 's3', at: 3, reason: 'escalated' }, // its group is gone: g6
  ];
  const base = (asked += 100_000_000);
  const one = await recordAndDescribe(crypto.randomUUID(), questions, false, base);
  const batch = await recordAndDescribe(crypto.randomUUID(), questions, true, base);
  t.same(batch, one);
  t.same(one.replies, [
    ['created', 'g1'],
    ['created', 'g2'],
    ['joined', 'g2'],
    ['joined', 'g1'],
    ['joined', 'g1'],
    ['joined', 'g2'],
    ['duplicate', 'g2'],
    ['created', 'g3'],
    ['created', 'g4'],
    ['created', 'g5'],
    ['created', 'g6'],
  ]);
  t.same(
    one.open.map((group) => [group.label, group.question, group.count, group.reasons]),
    [
      ['g5', 'what are your opening hours?', 1, { fallback: 1 }],
      ['g4', 'Is there a student discount?', 1, { fallback: 1 }],
      ['g6', 'I forgot my password', 1, { escalated: 1 }],
    ],
  );
  t.equal(one.openSet, 3);
  t.same(one.texts, [
    ['i forgot my password', 'g6'],
    ['is there a student discount', 'g4'],
    ['what are your opening hours', 'g5'],
  ]);
});

t.test('a batch asking one question reads and writes its group once: one command more per question', async (t) => {
  const bot = crypto.randomUUID();
  const id = await ask(bot, 'What are your opening hours?');
  const occurrences = Array.from({ length: 20 }, () => {
    asked += 1_000_000;
    return {
      occurrence: {
        sessionId: `embed-${asked}`,
        question: 'What are your opening hours?',
        key: 'what are your opening hours',
        reason: 'fallback' as const,
        askedAt: asked,
      },
      match: { target: '', version: '', vector: '', force: false },
    };
  });
  const delta = await commandsExecutedDuring(redis, async () =>
    t.same(
      await store.record(bot, occurrences),
      Array.from({ length: 20 }, () => ['joined', id]),
    ),
  );
  t.same(delta, { evalsha: 1, hsetnx: 20, hget: 2, hset: 1, zadd: 1 });
  t.same([(await store.get(bot, id)).count, (await store.get(bot, id)).last_seen_at], [21, formatTimestamp(asked)]);
});

t.test("a text's embedding is sent once a batch, and a group created from a later copy keeps it", async (t) => {
  const bot = crypto.randomUUID();
  const entry = (question: string, vector: string) => {
    asked += 1_000_000;
    return {
      occurrence: {
        sessionId: `embed-${asked}`,
        question,
        key: questionKey(question),
        reason: 'fallback' as const,
        askedAt: asked,
      },
      match: { target: '', version: '', vector, force: true },
    };
  };
  // Three open groups at most: the first question's group is dropped by the next three, and its text,
  // asked again, makes a new group with the embedding sent with the first copy.
  const replies = await store.record(bot, [
    entry('Do you ship to Canada?', 'test first'),
    entry('Is there a student discount?', 'test a'),
    entry('Can I pay with PayPal?', 'test b'),
    entry('Where is my order?', 'test c'),
    entry('do you ship to canada', 'test second'),
  ]);
  t.same(
    replies.map((reply) => reply[0]),
    ['created', 'created', 'created', 'created', 'created'],
  );
  const created = replies[4]![1]!;
  t.equal(await redis.hGet(keys.unansweredVectors(bot), created), 'test first');
  t.same(
    (await store.list(bot, 'open')).map((group) => group.question),
    ['do you ship to canada', 'Where is my order?', 'Can I pay with PayPal?'],
  );
});
