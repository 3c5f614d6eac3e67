import t from 'tap';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { UnansweredStore } from '../../src/store/unanswered-store.ts';
import type { UnansweredReason } from '../../src/contract/unanswered.ts';
import { questionKey } from '../../src/unanswered/question-key.ts';
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
  const reply = await store.record(bot, occurrence, { target, version: '', vector: '', force: false });
  return reply[1]!;
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
  t.same(await store.record(bot, occurrence, { target: id, version: '', vector: '', force: false }), ['retry']);
  const forced = await store.record(bot, occurrence, { target: id, version: '', vector: '', force: true });
  t.equal(forced[0], 'created');
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
