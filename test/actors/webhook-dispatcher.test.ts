import t from 'tap';
import { WebhookDispatcher } from '../../src/actors/webhook-dispatcher.ts';
import { conversationStarted } from '../../src/webhooks/webhook-event.ts';
import { createLogger } from '../../src/logger.ts';
import { DeliveryStore } from '../../src/store/delivery-store.ts';
import type { ClaimedDelivery } from '../../src/webhooks/delivery.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { WebhookStore } from '../../src/store/webhook-store.ts';
import { WebhookOutbox } from '../../src/webhooks/webhook-outbox.ts';
import { WebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startRedis } from '../support/redis-server.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { until } from '../support/until.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
const receiver = await new WebhookReceiver().start();
t.teardown(async () => {
  await redis.close();
  await server.stop();
  await receiver.stop();
});

/** A delivery store that keeps what each of the dispatcher's claims answered, in order. */
function recordingClaims(deliveries: DeliveryStore): { store: DeliveryStore; claims: ClaimedDelivery[][] } {
  const claims: ClaimedDelivery[][] = [];
  const store = Object.create(deliveries) as DeliveryStore;
  store.claim = async (limit, claimMs, token, scope) => {
    const claimed = await deliveries.claim(limit, claimMs, token, scope);
    claims.push(claimed);
    return claimed;
  };
  return { store, claims };
}

t.test('the default schedule on a simulated clock: retries at +1, +5 and +15 minutes, then failed', async (t) => {
  const clock = new SimulatedClock();
  const keys = new RedisKeys('sb:');
  const webhooks = new WebhookStore(redis, keys, clock, true);
  const deliveries = new DeliveryStore(redis, keys, clock, 30);
  const { store, claims } = recordingClaims(deliveries);
  const delays = [60, 300, 900];
  const outbox = new WebhookOutbox(webhooks, deliveries, delays);
  const dispatcher = new WebhookDispatcher(
    {
      deliveries: store,
      webhooks,
      sender: new WebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      clock,
      logger: createLogger('silent'),
    },
    // Polls only when kicked: the test moves time.
    { retryDelays: delays, concurrency: 8, destinationConcurrency: 8, timeoutMs: 2000, pollMs: 1_000_000_000 },
  );
  // Every poll claims once, and so does every recorded attempt: the nth claim's answer, once given.
  let seen = 0;
  const nextClaim = async () => {
    seen += 1;
    return until(() => claims[seen - 1], `claim ${seen}`);
  };
  const poll = () => {
    dispatcher.kick();
    return nextClaim();
  };
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  t.same(await nextClaim(), [], 'the poll at start');
  receiver.answer = () => ({ status: 503, body: 'busy' });
  const chatbotId = crypto.randomUUID();
  const hook = await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  const t0 = clock.nowMicros();
  await outbox.emit(
    conversationStarted(chatbotId, { conversation_id: crypto.randomUUID(), session_id: 'api-x', source: 'api' }, t0),
  );
  /** The delivery once its nth attempt is recorded, and the claim that recording made answered. */
  const attempted = async (n: number) => {
    const entry = await until(async () => {
      const [logged] = await deliveries.log(hook.id);
      return logged && logged.attempts.length >= n && logged;
    }, `attempt ${n}`);
    t.same(await nextClaim(), [], `nothing else due after attempt ${n}`);
    return entry;
  };
  t.equal((await poll()).length, 1);
  let entry = await attempted(1);
  const offsets = [60, 360, 1260];
  for (const [i, offset] of offsets.entries()) {
    t.equal(entry.status, 'pending');
    t.equal(entry.next_attempt_at, new Date((t0 + offset * 1_000_000) / 1000).toISOString().replace('Z', '000+00:00'));
    await clock.advance((t0 + offset * 1_000_000 - clock.nowMicros()) / 1000 - 1);
    t.same(await poll(), [], `nothing claimed a millisecond before +${offset} s`);
    t.equal(receiver.received.length, i + 1, `nothing sent before +${offset} s`);
    await clock.advance(1);
    t.equal((await poll()).length, 1, `claimed at +${offset} s`);
    entry = await attempted(i + 2);
  }
  t.equal(entry.status, 'failed');
  t.equal(entry.next_attempt_at, null);
  t.same(
    entry.attempts.map((a) => [a.attempt, a.status_code, a.response_body]),
    [
      [1, 503, 'busy'],
      [2, 503, 'busy'],
      [3, 503, 'busy'],
      [4, 503, 'busy'],
    ],
  );
  await clock.advance(10_000_000);
  t.same(await poll(), [], 'a failed delivery is never claimed again');
  t.equal(receiver.received.length, 4, 'nor attempted');
  t.equal(await deliveries.pendingCount(), 0);
});

// Issue 18: an error reading the webhook was read as "deleted", failing the delivery for good.
t.test('a passing error reading the webhook retries the delivery; only a deleted webhook fails it', async (t) => {
  const POLL_MS = 60_000;
  const clock = new SimulatedClock();
  const keys = new RedisKeys(`wd-${crypto.randomUUID().slice(0, 8)}:`);
  const webhooks = new WebhookStore(redis, keys, clock, true);
  const deliveries = new DeliveryStore(redis, keys, clock, 30);
  const outbox = new WebhookOutbox(webhooks, deliveries, [60]);
  let failures = 1;
  const flaky = Object.create(webhooks) as WebhookStore;
  flaky.get = async (webhookId: string) => {
    if (failures > 0) {
      failures -= 1;
      throw new Error('Socket closed unexpectedly');
    }
    return webhooks.get(webhookId);
  };
  const dispatcher = new WebhookDispatcher(
    {
      deliveries,
      webhooks: flaky,
      sender: new WebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      clock,
      logger: createLogger('silent'),
    },
    { retryDelays: [60], concurrency: 8, destinationConcurrency: 8, timeoutMs: 2000, pollMs: POLL_MS },
  );
  const t0 = clock.nowMicros();
  /** When (ms from the start) the dispatcher looked for due deliveries: at start, then every poll. */
  const looked: number[] = [];
  const kick = dispatcher.kick.bind(dispatcher);
  dispatcher.kick = () => {
    looked.push((clock.nowMicros() - t0) / 1000);
    kick();
  };
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const chatbotId = crypto.randomUUID();
  const hook = await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  const received = receiver.received.length;
  const emit = () =>
    outbox.emit(
      conversationStarted(
        chatbotId,
        { conversation_id: crypto.randomUUID(), session_id: 'api-x', source: 'api' },
        clock.nowMicros(),
      ),
    );
  const entryWhen = (what: string, ready: (entry: Awaited<ReturnType<typeof deliveries.log>>[number]) => boolean) =>
    until(async () => {
      const [entry] = await deliveries.log(hook.id);
      return entry && ready(entry) && entry;
    }, what);
  await emit();
  dispatcher.kick();
  // Released unattempted, due again at the next poll (pollMs later).
  const nextPoll = t0 + POLL_MS * 1000;
  const released = await entryWhen('the delivery', () => true);
  await until(
    async () => (await redis.zScore(keys.deliveriesDue(keys.deliveryShard(chatbotId)), released.id)) === nextPoll,
    'the release',
  );
  t.equal(released.status, 'pending');
  t.same((await deliveries.log(hook.id))[0]!.attempts, []);
  t.equal(failures, 0);
  await clock.advance(POLL_MS - 1);
  t.same(looked, [0, 0], 'at start and when kicked; no poll yet');
  await clock.advance(1);
  t.same(looked, [0, 0, POLL_MS], 'the poll, pollMs after the start');
  const delivered = await entryWhen('the delivery by the poll', (entry) => entry.status === 'delivered');
  t.same(
    delivered.attempts.map((a) => [a.attempt, a.status_code]),
    [[1, 200]],
  );
  t.equal(receiver.received.length, received + 1);
  await emit();
  // Read by id: the log of a deleted webhook is not listed (its chatbot, which names the shard, is gone).
  const pending = await entryWhen('the second delivery', (entry) => entry.id !== delivered.id);
  await webhooks.delete(hook.id);
  dispatcher.kick();
  const gone = await until(async () => {
    const entry = await deliveries.get(pending.id);
    return entry.status === 'failed' && entry;
  }, 'the failed delivery');
  t.same(
    gone.attempts.map((a) => [a.attempt, a.status_code, a.error]),
    [[1, null, 'webhook was deleted']],
  );
  await clock.advance(2 * POLL_MS);
  t.same(looked, [0, 0, POLL_MS, POLL_MS, 2 * POLL_MS, 3 * POLL_MS], 'kicked, then every pollMs');
  await dispatcher.stop();
  await clock.advance(2 * POLL_MS);
  t.equal(looked.length, 6, 'no poll once stopped');
  t.equal(clock.pending, 0);
});

t.test('a round to one busy receiver reads its webhook once and puts back together what cannot start', async (t) => {
  const clock = new SimulatedClock();
  const keys = new RedisKeys(`round-${crypto.randomUUID()}:`);
  const webhooks = new WebhookStore(redis, keys, clock, true);
  let reads = 0;
  const counted = Object.create(webhooks) as WebhookStore;
  counted.get = (id) => {
    reads += 1;
    return webhooks.get(id);
  };
  const deliveries = new DeliveryStore(redis, keys, clock, 30);
  const { store, claims } = recordingClaims(deliveries);
  const outbox = new WebhookOutbox(webhooks, deliveries, [60]);
  const POLL_MS = 1_000_000_000;
  const dispatcher = new WebhookDispatcher(
    {
      deliveries: store,
      webhooks: counted,
      sender: new WebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      clock,
      logger: createLogger('silent'),
    },
    { retryDelays: [60], concurrency: 8, destinationConcurrency: 2, timeoutMs: 2000, pollMs: POLL_MS },
  );
  // The receiver holds every request: the two attempts the destination allows stay in flight.
  receiver.answer = () => 'hang';
  const received = receiver.received.length;
  const chatbotId = crypto.randomUUID();
  await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  const t0 = clock.nowMicros();
  for (let i = 0; i < 10; i += 1) {
    await outbox.emit(
      conversationStarted(
        chatbotId,
        { conversation_id: crypto.randomUUID(), session_id: `api-${i}`, source: 'api' },
        t0,
      ),
    );
  }
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  await until(() => receiver.received.length === received + 2, 'two attempts in flight');
  t.equal(claims[0]!.length, 8, 'the round claimed as many as the total concurrency allows');
  t.equal(reads, 1, 'the webhook was read once for the round');
  const due = await redis.zRangeWithScores(keys.deliveriesDue(keys.deliveryShard(chatbotId)), 0, -1);
  const CLAIM_MS = 2000 + 5000;
  t.same(
    due.map((entry) => entry.score),
    [t0, t0, ...Array<number>(2).fill(t0 + CLAIM_MS * 1000), ...Array<number>(6).fill(t0 + POLL_MS * 1000)],
    'two never claimed, two claimed for their attempt, six put back for the next poll',
  );
});

t.test('stop waits for the round under way: what it claims is attempted and recorded first', async (t) => {
  const clock = new SimulatedClock();
  const keys = new RedisKeys(`stop-${crypto.randomUUID().slice(0, 8)}:`);
  const webhooks = new WebhookStore(redis, keys, clock, true);
  const deliveries = new DeliveryStore(redis, keys, clock, 30);
  // The round's claim (one shard after another) is held open until the test lets it go on.
  let letGo: () => void = () => {};
  let claiming = false;
  const slow = Object.create(deliveries) as DeliveryStore;
  slow.claim = async (limit, claimMs, token, scope) => {
    claiming = true;
    await new Promise<void>((resolve) => (letGo = resolve));
    return deliveries.claim(limit, claimMs, token, scope);
  };
  const dispatcher = new WebhookDispatcher(
    {
      deliveries: slow,
      webhooks,
      sender: new WebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      clock,
      logger: createLogger('silent'),
    },
    { retryDelays: [60], concurrency: 8, destinationConcurrency: 8, timeoutMs: 2000, pollMs: 1_000_000_000 },
  );
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const chatbotId = crypto.randomUUID();
  const hook = await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  await new WebhookOutbox(webhooks, deliveries, [60]).emit(
    conversationStarted(chatbotId, { conversation_id: crypto.randomUUID(), session_id: 'api-s', source: 'api' }, 0),
  );
  dispatcher.start();
  await until(() => claiming, 'the round claiming');
  let stopped = false;
  const stopping = dispatcher.stop().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(stopped, false, 'stop waits while the round claims');
  letGo();
  await stopping;
  const [entry] = await deliveries.log(hook.id);
  t.same(
    [entry!.status, entry!.attempts.map((attempt) => attempt.status_code)],
    ['delivered', [200]],
    'the delivery the round claimed was attempted and recorded before stop returned',
  );
});
