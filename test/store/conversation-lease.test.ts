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
