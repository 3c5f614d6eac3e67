import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { messageReceived } from '../../src/webhooks/webhook-event.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices } from '../../src/services.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { spawnGateway } from '../support/gateway-process.ts';
import { startRedis } from '../support/redis-server.ts';

const COUNT = 200;

t.test('SIGKILL in the middle of the schedule loses no delivery', async (t) => {
  const redisServer = await startRedis();
  const redis = await connectRedis({ url: redisServer.url }, createLogger('silent'));
  const receiver = await new WebhookReceiver().start();
  t.teardown(async () => {
    await redis.close();
    await redisServer.stop();
    await receiver.stop();
  });
  const env = {
    REDIS_URL: redisServer.url,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_DELAYS: '1,1,1',
    // The default 10 s timeout: with 1 s, a CI run (beside another test file) recorded 8 of the second
    // gateway's attempts without an answer, though every answer comes within 20 ms; a timeout here
    // measures the machine's load, not the delivery.
    WEBHOOK_POLL_MS: '100',
    LOG_LEVEL: 'info',
  };
  const services = createServices(redis, loadConfig(env), systemClock, createLogger('silent'));
  const chatbotId = crypto.randomUUID();
  const hook = await services.webhooks.create(chatbotId, receiver.url, ['message.received']);
  receiver.secrets.push(hook.secret);
  // The first two attempts of every delivery fail; each answer takes a moment, so attempts are in
  // flight when the kill comes.
  receiver.answer = (request) =>
    Number(request.headers['x-switchboard-attempt']) <= 2 ? { status: 500, delayMs: 20 } : { status: 200, delayMs: 20 };

  for (let i = 0; i < COUNT; i += 1) {
    const data = { conversation_id: crypto.randomUUID(), session_id: `api-${i}`, content: `m${i}`, source: 'api' };
    await services.outbox.emit(messageReceived(chatbotId, data, systemClock.nowMicros()));
  }
  t.equal(
    await services.deliveries.pendingCount(),
    COUNT,
    'all 200 deliveries are in the outbox before any gateway runs',
  );

  const first = await spawnGateway(env);
  const secondAttempts = () => receiver.received.filter((r) => r.headers['x-switchboard-attempt'] === '2').length;
  while (secondAttempts() < COUNT / 2) await new Promise((resolve) => setTimeout(resolve, 10));
  first.child.kill('SIGKILL');
  const killed = await first.exited;
  t.equal(killed.signal, 'SIGKILL');
  const seenAtKill = receiver.received.length;
  t.ok(seenAtKill < COUNT * 3, `killed in the middle of the schedule (${seenAtKill} requests so far)`);

  const second = await spawnGateway(env);
  t.teardown(async () => {
    second.child.kill('SIGTERM');
    await second.exited;
  });
  const deadline = Date.now() + 60_000;
  let log = await services.deliveries.log(hook.id, { limit: 1000 });
  while (Date.now() < deadline && !(log.length === COUNT && log.every((d) => d.status === 'delivered'))) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    log = await services.deliveries.log(hook.id, { limit: 1000 });
  }
  t.equal(log.length, COUNT);
  t.equal(log.filter((d) => d.status === 'delivered').length, COUNT, 'every delivery was delivered');
  t.equal(await services.deliveries.pendingCount(), 0);
  const delivered = new Set(
    receiver.received
      .filter((r) => r.signatureValid && r.headers['x-switchboard-attempt'] === '3')
      .map((r) => r.headers['x-switchboard-delivery']),
  );
  t.equal(delivered.size, COUNT, 'the receiver got a third, successful attempt of each delivery');
  for (const delivery of log) {
    const numbers = delivery.attempts.map((a) => a.attempt);
    const statuses = delivery.attempts.map((a) => a.status_code);
    // At least once: an attempt in flight at the kill was never recorded and is made again.
    t.same([numbers.at(-1), statuses.at(-1)], [3, 200], delivery.id);
    t.same(
      statuses.slice(0, -1).filter((s) => s !== 500),
      [],
      delivery.id,
    );
    const times = delivery.attempts.map((a) => Date.parse(a.at.replace(/(\.\d{3})\d{3}/, '$1')));
    for (let i = 1; i < times.length; i += 1) {
      t.ok(times[i]! - times[i - 1]! >= 950, `${delivery.id}: retry ${i} kept its schedule`);
    }
  }
});
