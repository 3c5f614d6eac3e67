import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { createServices } from '../../src/services.ts';
import { parseTimestamp } from '../../src/timestamp.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { spawnGateway } from '../support/gateway-process.ts';
import { startRedis } from '../support/redis-server.ts';
import { outboxSettled } from '../support/outbox-settled.ts';
import { until } from '../support/until.ts';

const STALLED = path.resolve(import.meta.dirname, '../support/stalled-hold-change.ts');

// The process that takes a conversation over (or releases it) is SIGKILLed after the change and
// before it wrote the webhook deliveries: the event was recorded with the change, and a gateway's
// sweep delivers it, once.
t.test('SIGKILL between a takeover or release and its deliveries loses no event', async (t) => {
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
    WEBHOOK_POLL_MS: '50',
    PENDING_EVENT_GRACE_MS: '1000',
    LOG_LEVEL: 'warn',
  };
  const services = createServices(redis, loadConfig(env), systemClock, createLogger('silent'));
  const keys = new RedisKeys(loadConfig(env).REDIS_PREFIX);
  const account = await services.accounts.create('crash@example.com', 'scale');
  const bot = await services.chatbots.create(account.id, { name: 'Crash' });
  const hook = await services.webhooks.create(bot.id, receiver.url, [
    'conversation.taken_over',
    'conversation.released',
  ]);
  receiver.secrets.push(hook.secret);
  const session = 'embed-crash';
  const { conversation } = await services.control.escalate(bot.id, session, { source: 'embed' });

  const gateway = await spawnGateway(env);
  t.teardown(async () => {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  });

  /** Runs the change in its own process and SIGKILLs it once it is about to write the deliveries. */
  const killedMidway = async (change: 'takeover' | 'release', agent = '') => {
    const child = spawn(process.execPath, [STALLED, change, bot.id, session, agent], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await until(() => out.includes('writing ') || err, 'the change', 15_000);
    t.equal(err, '', 'no error in the process');
    child.kill('SIGKILL');
    t.equal(await exited, 'SIGKILL');
    return out.trim();
  };

  const before = Date.now() * 1000;
  t.equal(await killedMidway('takeover', 'Alice'), 'writing conversation.taken_over');
  t.equal((await services.conversations.get(bot.id, session)).taken_over_by, 'Alice', 'the change is made');
  t.equal(await redis.hLen(keys.pendingEvents(bot.id)), 1, 'its event is pending');
  t.same(await services.deliveries.log(hook.id), [], 'no delivery was written');
  const taken = await until(() => receiver.received[0], 'the sweep delivering it');
  t.equal(await killedMidway('release'), 'writing conversation.released');
  t.equal((await services.conversations.get(bot.id, session)).taken_over_by, null);
  const released = await until(() => receiver.received[1], 'the sweep delivering the release');
  const after = Date.now() * 1000;
  // Both entries acknowledged and every delivery finished: an entry left to be swept again keeps this
  // waiting until it is, and a delivery sent again is in its due queue until its attempt is recorded.
  await until(() => outboxSettled(services, bot.id), 'the outbox settled');

  t.equal(receiver.received.length, 2, 'each event once');
  t.same(taken.body, {
    event: 'conversation.taken_over',
    chatbot_id: bot.id,
    timestamp: taken.body.timestamp,
    data: {
      conversation_id: conversation.conversation_id,
      session_id: session,
      channel: 'web',
      agent: 'Alice',
      taken_over_at: taken.body.timestamp,
    },
  });
  t.same(released.body, {
    event: 'conversation.released',
    chatbot_id: bot.id,
    timestamp: released.body.timestamp,
    data: {
      conversation_id: conversation.conversation_id,
      session_id: session,
      channel: 'web',
      agent: 'Alice',
      released_at: released.body.timestamp,
    },
  });
  for (const request of [taken, released]) {
    t.equal(request.signatureValid, true);
    t.equal(request.headers['x-switchboard-event'], request.body.event);
    t.equal(request.headers['x-switchboard-attempt'], '1');
    const at = parseTimestamp(request.body.timestamp)!;
    t.ok(at >= before && at <= after, 'the time of the change, not of the sweep');
  }
  t.ok(
    parseTimestamp(taken.body.timestamp)! < parseTimestamp(released.body.timestamp)!,
    'the takeover before the release',
  );
  t.equal(await redis.hLen(keys.pendingEvents(bot.id)), 0, 'nothing left pending');
  t.same(
    (await services.deliveries.log(hook.id)).map((d) => [d.event, d.status]),
    [
      ['conversation.released', 'delivered'],
      ['conversation.taken_over', 'delivered'],
    ],
  );
});
