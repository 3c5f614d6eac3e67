import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { DeliveryStore } from '../../src/store/delivery-store.ts';
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
