// A turn's stored messages are announced to the agents by the script that stores them (one round trip
// for both): published exactly when the message is stored, never for a turn that does not start or a
// reply that is not stored.
import { createClient } from 'redis';
import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { ConversationStore, type Announce } from '../../src/store/conversation-store.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { server, redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');
const store = new ConversationStore(redis, keys, systemClock, new PendingEventStore(redis, keys, systemClock, 10_000));
const chatbotId = '0b3f8c1e-6a2d-4f7e-9c1b-5d4e3a2f1b60';
const limits = { rateLimit: 2, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 };

const heard: string[] = [];
const subscriber = await createClient({ url: server.url }).connect();
await subscriber.subscribe('announced', (message) => heard.push(message));
t.teardown(() => subscriber.destroy());

/** Announces "<what> at <createdAt>" on the test's channel. */
const announce =
  (what: string): Announce =>
  (createdAt) =>
    Promise.resolve({ channel: 'announced', message: `${what} at ${createdAt}` });

/** Everything published so far, once a marker published after it has arrived. */
async function heardSoFar(): Promise<string[]> {
  const marker = `marker ${heard.length}-${Math.random()}`;
  await redis.publish('announced', marker);
  await until(() => heard.includes(marker), 'the marker');
  return heard.splice(0).filter((message) => message !== marker);
}

t.test('the visitor message and the reply are published as they are stored, each once', async (t) => {
  const start = await store.beginTurn(chatbotId, 'a', { content: 'hi', source: 'api' }, limits, {
    announce: announce('question'),
  });
  if (start.kind !== 'started') throw new Error(start.kind);
  t.equal(start.announced, true);
  const end = await store.endTurn(
    chatbotId,
    'a',
    start.token,
    { role: 'assistant', content: 'hello' },
    announce('reply'),
  );
  t.same([end.outcome, end.announced], ['stored', true]);
  t.same(await heardSoFar(), [`question at ${start.createdAt}`, `reply at ${end.createdAt}`]);
});

t.test('nothing is published for a turn refused, a reply discarded or a turn ended without one', async (t) => {
  const first = await store.beginTurn(chatbotId, 'b', { content: 'one', source: 'api' }, limits, {
    announce: announce('one'),
  });
  if (first.kind !== 'started') throw new Error(first.kind);
  const leased = await store.beginTurn(chatbotId, 'b', { content: 'meanwhile', source: 'api' }, limits, {
    announce: announce('meanwhile'),
  });
  // Another process's store: this one's own lease would be taken over (see BEGIN_TURN).
  const other = new ConversationStore(
    redis,
    keys,
    systemClock,
    new PendingEventStore(redis, keys, systemClock, 10_000),
  );
  const waiting = await other.beginTurn(chatbotId, 'b', { content: 'elsewhere', source: 'api' }, limits, {
    announce: announce('elsewhere'),
  });
  t.same(waiting, { kind: 'leased' });
  if (leased.kind !== 'started') throw new Error(leased.kind);
  // The conversation rate limit (2 a minute) refuses the third message.
  await store.endTurn(chatbotId, 'b', leased.token, null, announce('no reply'));
  const limited = await other.beginTurn(chatbotId, 'b', { content: 'three', source: 'api' }, limits, {
    announce: announce('three'),
  });
  t.same(limited, { kind: 'rate-limited' });
  t.same(await heardSoFar(), [`one at ${first.createdAt}`, `meanwhile at ${leased.createdAt}`]);

  const third = await store.beginTurn(chatbotId, 'c', { content: 'hi', source: 'api' }, limits);
  if (third.kind !== 'started') throw new Error(third.kind);
  t.equal(third.announced, false, 'no announce given');
  await store.takeOver(chatbotId, 'c', 'agent-1');
  const discarded = await store.endTurn(
    chatbotId,
    'c',
    third.token,
    { role: 'assistant', content: 'too late' },
    announce('discarded reply'),
  );
  t.same([discarded.outcome, discarded.announced], ['discarded', false]);
  t.same(await heardSoFar(), []);
});
