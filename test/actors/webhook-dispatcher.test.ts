import t from 'tap';
import { WebhookDispatcher } from '../../src/actors/webhook-dispatcher.ts';
import { conversationStarted } from '../../src/events/webhook-event.ts';
import { createLogger } from '../../src/logger.ts';
import { DeliveryStore } from '../../src/store/delivery-store.ts';
import { connectRedis } from '../../src/store/redis-client.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { WebhookStore } from '../../src/store/webhook-store.ts';
import { WebhookOutbox } from '../../src/webhooks/webhook-outbox.ts';
import { WebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { startRedis } from '../support/redis-server.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
const receiver = await new WebhookReceiver().start();
t.teardown(async () => {
  await redis.close();
  await server.stop();
  await receiver.stop();
});

t.test('the default schedule on a simulated clock: retries at +1, +5 and +15 minutes, then failed', async (t) => {
  let now = 1_800_000_000_000_000;
  const clock = { nowMicros: () => now };
  const keys = new RedisKeys('sb:');
  const webhooks = new WebhookStore(redis, keys, clock, true);
  const deliveries = new DeliveryStore(redis, keys, clock, 30);
  const delays = [60, 300, 900];
  const outbox = new WebhookOutbox(webhooks, deliveries, delays);
  const dispatcher = new WebhookDispatcher(
    {
      deliveries,
      webhooks,
      sender: new WebhookSender({ timeoutMs: 2000, allowPrivate: true }),
      clock,
      logger: createLogger('silent'),
    },
    // Polls only when kicked: the test moves time.
    { retryDelays: delays, concurrency: 8, destinationConcurrency: 8, timeoutMs: 2000, pollMs: 1_000_000_000 },
  );
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  receiver.answer = () => ({ status: 503, body: 'busy' });
  const chatbotId = crypto.randomUUID();
  const hook = await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  await outbox.emit(
    conversationStarted(chatbotId, { conversation_id: crypto.randomUUID(), session_id: 'api-x', source: 'api' }, now),
  );
  const t0 = now;
  const attempts = async (n: number) => {
    for (let i = 0; i < 200; i += 1) {
      const [entry] = await deliveries.log(hook.id);
      if (entry && entry.attempts.length >= n) return entry;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no attempt ${n}`);
  };
  dispatcher.kick();
  let entry = await attempts(1);
  const offsets = [60, 360, 1260];
  for (const [i, offset] of offsets.entries()) {
    t.equal(entry.status, 'pending');
    t.equal(entry.next_attempt_at, new Date((t0 + offset * 1_000_000) / 1000).toISOString().replace('Z', '000+00:00'));
    now = t0 + offset * 1_000_000 - 1000;
    dispatcher.kick();
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal(receiver.received.length, i + 1, `nothing before +${offset} s`);
    now = t0 + offset * 1_000_000;
    dispatcher.kick();
    entry = await attempts(i + 2);
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
  now += 10_000_000_000;
  dispatcher.kick();
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(receiver.received.length, 4, 'a failed delivery is never attempted again by itself');
  t.equal(await deliveries.pendingCount(), 0);
});

// Issue 18: an error reading the webhook was read as "deleted", failing the delivery for good.
t.test('a passing error reading the webhook retries the delivery; only a deleted webhook fails it', async (t) => {
  let now = 1_800_000_000_000_000;
  const clock = { nowMicros: () => now };
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
    { retryDelays: [60], concurrency: 8, destinationConcurrency: 8, timeoutMs: 2000, pollMs: 1_000_000_000 },
  );
  dispatcher.start();
  t.teardown(() => dispatcher.stop());
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const chatbotId = crypto.randomUUID();
  const hook = await webhooks.create(chatbotId, receiver.url, ['conversation.started']);
  receiver.secrets.push(hook.secret);
  const received = receiver.received.length;
  const emit = () =>
    outbox.emit(
      conversationStarted(chatbotId, { conversation_id: crypto.randomUUID(), session_id: 'api-x', source: 'api' }, now),
    );
  const entryWhen = async (ready: (entry: Awaited<ReturnType<typeof deliveries.log>>[number]) => boolean) => {
    for (let i = 0; i < 200; i += 1) {
      const [entry] = await deliveries.log(hook.id);
      if (entry && ready(entry)) return entry;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the delivery did not get there');
  };
  await emit();
  dispatcher.kick();
  // Released unattempted, due again at the next poll (pollMs later).
  const nextPoll = now + 1_000_000_000_000;
  const released = await entryWhen(() => true);
  for (let i = 0; i < 200 && (await redis.zScore(keys.deliveriesDue(), released.id)) !== nextPoll; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.equal(await redis.zScore(keys.deliveriesDue(), released.id), nextPoll);
  t.equal(released.status, 'pending');
  t.same((await deliveries.log(hook.id))[0]!.attempts, []);
  t.equal(failures, 0);
  now = nextPoll;
  dispatcher.kick();
  const delivered = await entryWhen((entry) => entry.status === 'delivered');
  t.same(
    delivered.attempts.map((a) => [a.attempt, a.status_code]),
    [[1, 200]],
  );
  t.equal(receiver.received.length, received + 1);

  await emit();
  await webhooks.delete(hook.id);
  dispatcher.kick();
  const gone = await entryWhen((entry) => entry.status === 'failed');
  t.same(
    gone.attempts.map((a) => [a.attempt, a.status_code, a.error]),
    [[1, null, 'webhook was deleted']],
  );
});
