import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { DeliveryStore } from '../../src/store/delivery-store.ts';
import type { ClaimedDelivery } from '../../src/webhooks/delivery.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { startRedis } from '../support/redis-server.ts';

const server = await startRedis();
// Two processes' clients, each with its own client-side cache: one reads, the other records attempts.
const reader = await connectRedis({ url: server.url }, createLogger('silent'));
const writer = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await reader.close();
  await writer.close();
  await server.stop();
});

const keys = new RedisKeys('sb:');
const clock = { nowMicros: () => Date.now() * 1000 };
const reading = new DeliveryStore(reader, keys, clock, 30);
const writing = new DeliveryStore(writer, keys, clock, 30);

t.test('a delivery is read whole: never a finished status beside an attempt list from before it', async (t) => {
  // The race: the reader has the attempt list cached and the record not (a claim changed it), and the
  // attempt that finishes the delivery lands between its two reads.
  let torn = 0;
  const rounds = 300;
  for (let i = 0; i < rounds; i += 1) {
    const webhookId = crypto.randomUUID();
    const id = await writing.enqueue({
      id: crypto.randomUUID(),
      webhookId,
      chatbotId: crypto.randomUUID(),
      event: 'message.received',
      body: '{}',
      maxAttempts: 4,
      orderKey: `${webhookId}:${i}`,
    });
    await reading.get(id);
    const [claimed] = await writing.claim(1, 10_000, 'token');
    t.equal(claimed?.id, id);
    await reader.ping(); // the reader has now seen the claim's invalidation
    const finishing = writing.complete([
      {
        delivery: claimed!,
        attempt: {
          attempt: 1,
          atMicros: clock.nowMicros(),
          status_code: 200,
          error: null,
          duration_ms: 1,
          response_body: '',
        },
        verdict: { kind: 'delivered' },
      },
    ]);
    const view = await reading.get(id);
    await finishing;
    if (view.status === 'delivered' && view.attempts.length !== 1) torn += 1;
    if (view.status === 'pending' && view.attempts.length !== 0) torn += 1;
  }
  t.equal(torn, 0, `${rounds} reads racing the finishing attempt, none torn`);
});

t.test(
  "one conversation's deliveries to a webhook are first attempted one after another, by any claimer",
  async (t) => {
    let now = Date.now() * 1000;
    const store = new DeliveryStore(writer, new RedisKeys('ordered:'), { nowMicros: () => now }, 30);
    const webhookId = crypto.randomUUID();
    const chatbotId = crypto.randomUUID();
    const shard = new RedisKeys('ordered:').deliveryShard(chatbotId);
    const orderKey = `${webhookId}/${crypto.randomUUID()}`;
    const enqueue = (event: string, key = orderKey) => {
      now += 1;
      return store.enqueue({
        id: crypto.randomUUID(),
        webhookId,
        chatbotId,
        event,
        body: JSON.stringify({ event }),
        maxAttempts: 4,
        orderKey: key,
      });
    };
    const claim = (token: string) => store.claim(10, 10_000, token);
    const events = (claimed: ClaimedDelivery[]) => claimed.map((d) => d.event);
    /** Records the attempt: answered 200, or 500 and a retry a minute later. */
    const finish = async (delivery: ClaimedDelivery, answered = true) => {
      const attempt = { attempt: delivery.attempt, atMicros: now, error: null, duration_ms: 1, response_body: '' };
      await store.complete([
        {
          delivery,
          attempt: { ...attempt, status_code: answered ? 200 : 500 },
          verdict: answered ? { kind: 'delivered' } : { kind: 'retry', atMicros: now + 60_000_000 },
        },
      ]);
    };
    await enqueue('taken_over');
    await enqueue('released');
    await enqueue('taken_over again');
    await enqueue('another conversation', `${webhookId}/${crypto.randomUUID()}`);
    const first = await claim('gateway A');
    t.same(events(first), ['taken_over', 'another conversation'], 'the first of each conversation');
    now += 1;
    t.same(await claim('gateway B'), [], 'another gateway does not take the next while the first is out');
    for (const delivery of first) await finish(delivery);
    const second = await claim('gateway B');
    t.same(events(second), ['released'], 'the next is due at once after the first attempt');
    await finish(second[0]!, false);
    const third = await claim('gateway A');
    t.same(events(third), ['taken_over again'], 'a first attempt that failed does not hold the next up');
    await finish(third[0]!);
    t.same(await claim('gateway A'), [], 'nothing before the retry');
    now += 60_000_000;
    const retry = await claim('gateway A');
    t.same(
      retry.map((d) => [d.event, d.attempt]),
      [['released', 2]],
      'the retry at its time',
    );
    await finish(retry[0]!);
    t.equal(await writer.exists(`ordered:{${shard}}:order:${orderKey}`), 0, 'the line is gone once each was attempted');

    // An earlier delivery that is no longer there (removed by hand) holds nothing up.
    const lost = await enqueue('lost');
    await enqueue('after the lost one');
    await writer.del(`ordered:{${shard}}:delivery:${lost}`);
    t.same(events(await claim('gateway A')), ['after the lost one']);
  },
);

t.test('the outbox is spread over shards by chatbot; a claim over every shard finds each delivery once', async (t) => {
  const keys = new RedisKeys(`spread-${crypto.randomUUID().slice(0, 8)}:`);
  const store = new DeliveryStore(writer, keys, clock, 30);
  const chatbots = Array.from({ length: 64 }, () => crypto.randomUUID());
  const ids = await Promise.all(
    chatbots.map((chatbotId) =>
      store.enqueue({
        id: crypto.randomUUID(),
        webhookId: crypto.randomUUID(),
        chatbotId,
        event: 'message.received',
        body: '{}',
        maxAttempts: 4,
        orderKey: chatbotId,
      }),
    ),
  );
  const shards = new Set(chatbots.map((chatbotId) => keys.deliveryShard(chatbotId)));
  t.ok(shards.size >= 12, `64 chatbots over ${shards.size} of the 16 shards`);
  t.equal(await store.pendingCount(), 64);
  const only = await store.claim(100, 10_000, 'one', { shards: [keys.deliveryShard(chatbots[0]!)] });
  t.same(
    only.every((d) => d.shard === keys.deliveryShard(chatbots[0]!)),
    true,
    "a chatbot's kick looks in its shard only",
  );
  const rest = await store.claim(100, 10_000, 'all');
  t.same([...only, ...rest].map((d) => d.id).sort(), [...ids].sort(), 'every delivery claimed once');
  t.same(await store.claim(100, 10_000, 'again'), []);
});

t.test('deliveries written before the outbox was sharded are claimed, found and listed', async (t) => {
  const prefix = `legacy-${crypto.randomUUID().slice(0, 8)}:`;
  const keys = new RedisKeys(prefix);
  let now = Date.now() * 1000;
  const store = new DeliveryStore(writer, keys, { nowMicros: () => now }, 30);
  const chatbotId = crypto.randomUUID();
  const webhookId = crypto.randomUUID();
  await writer.set(keys.webhookOwner(webhookId), chatbotId);
  // As the unsharded outbox wrote it: every key under the one {wh} tag.
  const old = crypto.randomUUID();
  await writer.hSet(`${prefix}{wh}:delivery:${old}`, {
    id: old,
    webhook_id: webhookId,
    chatbot_id: chatbotId,
    event: 'conversation.started',
    body: '{"event":"conversation.started"}',
    status: 'pending',
    attempts: 0,
    max_attempts: 4,
    next_at: now,
    created_at: now,
    order_key: `${webhookId}/old`,
    claim: '',
  });
  await writer.zAdd(`${prefix}{wh}:due`, { score: now, value: old });
  await writer.zAdd(`${prefix}{wh}:log:${webhookId}`, { score: now, value: old });
  now += 1;
  const fresh = await store.enqueue({
    id: crypto.randomUUID(),
    webhookId,
    chatbotId,
    event: 'message.received',
    body: '{}',
    maxAttempts: 4,
    orderKey: `${webhookId}/new`,
  });
  t.equal(await store.chatbotOf(old), chatbotId);
  t.same(
    (await store.log(webhookId)).map((d) => [d.id, d.event]),
    [
      [fresh, 'message.received'],
      [old, 'conversation.started'],
    ],
    'one log, newest first',
  );
  t.same(
    (await store.log(webhookId, { offset: 1, limit: 1 })).map((d) => d.id),
    [old],
    'paged across both',
  );
  const claimed = await store.claim(10, 10_000, 'token');
  t.same(
    claimed.map((d) => [d.id, d.shard]).sort(),
    [
      [fresh, keys.deliveryShard(chatbotId)],
      [old, 'wh'],
    ].sort(),
  );
  const attempt = { attempt: 1, atMicros: now, status_code: 200, error: null, duration_ms: 1, response_body: '' };
  t.same(await store.complete(claimed.map((delivery) => ({ delivery, attempt, verdict: { kind: 'delivered' } }))), [
    'delivered',
    'delivered',
  ]);
  t.equal((await store.get(old)).status, 'delivered');
  t.equal((await store.redeliver(old)).status, 'pending', 'redelivered where it is');
  t.equal(await writer.zScore(`${prefix}{wh}:due`, old), now);
  await t.rejects(store.get(crypto.randomUUID()), { message: 'Delivery not found.' });
});
