// Issue 18: a turn cut off by a Redis outage could not release its conversation's lease, and every
// later message of the conversation waited for it to lapse (30 s by default): REST calls hung and the
// widget stayed silent after Redis was back.
import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { ConversationStore } from '../../src/store/conversation-store.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const pending = new PendingEventStore(redis, keys, systemClock, 10_000);
/** Two gateway processes' stores. */
const here = new ConversationStore(redis, keys, systemClock, pending);
const there = new ConversationStore(redis, keys, systemClock, pending);
const chatbotId = '6f1c2a9e-3b7d-4c1e-9a5f-2d8b7e4c1a30';
const limits = { rateLimit: 100, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 };
const begin = (store: ConversationStore, content: string) =>
  store.beginTurn(chatbotId, 'api-lease', { content, source: 'api' }, limits);

t.test("a lease the process's own cut-off turn left is taken over; another process's is waited for", async (t) => {
  // Its script ran, its release never did: this process has no turn of the conversation in flight.
  const cut = await begin(here, 'asked as Redis went away');
  if (cut.kind !== 'started') throw new Error(cut.kind);
  t.same(await begin(there, 'asked at another gateway'), { kind: 'leased' }, 'another process waits');
  const next = await begin(here, 'asked after the outage');
  if (next.kind !== 'started') throw new Error(next.kind);
  t.not(next.token, cut.token, 'a new fencing token');
  t.same(next.history, [{ role: 'user', content: 'asked as Redis went away', created_at: cut.createdAt }]);
  t.match(await here.endTurn(chatbotId, 'api-lease', cut.token, null), { outcome: 'lost-lease' }, 'the old one fenced');
  t.match(await here.endTurn(chatbotId, 'api-lease', next.token, null), { outcome: 'stored' });
  t.match(await begin(there, 'asked at another gateway'), { kind: 'started' }, 'released for everyone');
});

t.test("releaseOwnLease lets go of this process's lease only", async (t) => {
  const session = 'api-lease-own';
  const lease = keys.conversationLease(chatbotId, session);
  const cut = await here.beginTurn(chatbotId, session, { content: 'asked as Redis went away', source: 'api' }, limits);
  if (cut.kind !== 'started') throw new Error(cut.kind);
  t.equal(await there.releaseOwnLease(chatbotId, session), false, "another process's release leaves it alone");
  t.equal(await redis.get(lease), cut.token);
  t.equal(await here.releaseOwnLease(chatbotId, session), true, 'its own process releases it');
  t.equal(await redis.exists(lease), 0);
  t.equal(await here.releaseOwnLease(chatbotId, session), false, 'none left to release');
  const next = await there.beginTurn(
    chatbotId,
    session,
    { content: 'asked at another gateway', source: 'api' },
    limits,
  );
  t.equal(next.kind, 'started', 'another process begins its turn at once');
  if (next.kind !== 'started') return;
  t.match(await here.endTurn(chatbotId, session, cut.token, null), { outcome: 'lost-lease' }, 'the cut turn fenced');
  t.equal(await redis.get(lease), next.token, "and the new turn's lease kept");
});

t.test('a message refused by the rate limit takes no lease, and leaves a held one alone', async (t) => {
  const session = 'api-lease-limited';
  const lease = keys.conversationLease(chatbotId, session);
  const once = { ...limits, rateLimit: 1 };
  const first = await here.beginTurn(chatbotId, session, { content: 'first', source: 'api' }, once);
  if (first.kind !== 'started') throw new Error(first.kind);
  t.same(await there.beginTurn(chatbotId, session, { content: 'while held', source: 'api' }, once), { kind: 'leased' });
  t.equal(await redis.get(lease), first.token, 'the holder keeps its lease');
  t.match(await here.endTurn(chatbotId, session, first.token, null), { outcome: 'stored' });
  t.same(await there.beginTurn(chatbotId, session, { content: 'second', source: 'api' }, once), {
    kind: 'rate-limited',
  });
  t.equal(await redis.exists(lease), 0, 'no lease left behind');
});

t.test('a turn begun before its conversation was erased writes nothing into the one begun after', async (t) => {
  // The new conversation counts its turns from the start again: the old turn's token must still differ.
  const session = 'api-lease-erased';
  const old = await here.beginTurn(chatbotId, session, { content: 'asked before', source: 'api' }, limits);
  if (old.kind !== 'started') throw new Error(old.kind);
  await redis.del([
    keys.conversation(chatbotId, session),
    keys.conversationLease(chatbotId, session),
    keys.conversationMessages(chatbotId, session),
  ]);
  const next = await there.beginTurn(chatbotId, session, { content: 'asked after', source: 'api' }, limits);
  if (next.kind !== 'started') throw new Error(next.kind);
  const reply = { role: 'assistant' as const, content: 'a late answer' };
  t.match(await here.endTurn(chatbotId, session, old.token, reply), { outcome: 'lost-lease' });
  t.match(await there.endTurn(chatbotId, session, next.token, { role: 'assistant', content: 'Hi' }), {
    outcome: 'stored',
  });
  t.same(
    (await redis.lRange(keys.conversationMessages(chatbotId, session), 0, -1)).map((raw) => JSON.parse(raw).content),
    ['asked after', 'Hi'],
  );
});

t.test('a turn whose lease lapsed while no other turn began still stores its reply', async (t) => {
  const session = 'api-lease-lapsed';
  const turn = await here.beginTurn(chatbotId, session, { content: 'asked', source: 'api' }, limits);
  if (turn.kind !== 'started') throw new Error(turn.kind);
  await redis.del(keys.conversationLease(chatbotId, session)); // lapsed
  t.match(await here.endTurn(chatbotId, session, turn.token, { role: 'assistant', content: 'answered' }), {
    outcome: 'stored',
  });
  t.equal((await here.transcript(chatbotId, session)).messages.length, 2);
});
