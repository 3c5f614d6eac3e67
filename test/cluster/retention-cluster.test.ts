import t from 'tap';
import type { Chatbot } from '../../src/chatbots/chatbot.ts';
import { fixedTimeClock, systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { createServices } from '../../src/services.ts';
import { spawnGateway, type GatewayProcess } from '../support/gateway-process.ts';
import { startRedis } from '../support/redis-server.ts';
import { turn } from '../support/full-conversation.ts';
import { until } from '../support/until.ts';

// Retention sweeps across gateway processes on one Redis: each due chatbot is swept by exactly one
// of them; a gateway SIGKILLed in the middle of a sweep leaves its claim to lapse, and another one
// finishes the sweep.
const DAY_MS = 24 * 3600 * 1000;
const redis = await startRedis();
const env = {
  REDIS_URL: redis.url,
  LOG_LEVEL: 'info',
  RETENTION_POLL_MS: '100',
  RETENTION_LEASE_MS: '1500',
};
const client = await connectRedis({ url: redis.url }, createLogger('silent'));
const config = loadConfig(env);
const services = createServices(client, config, systemClock, createLogger('silent'));
/** The same service layer, 40 days ago: it writes conversations that are old by now. */
const past = createServices(
  client,
  config,
  fixedTimeClock(() => systemClock.nowMicros() - 40 * DAY_MS * 1000),
  createLogger('silent'),
);
const gateways: GatewayProcess[] = [];
/** This process's own connections to Redis. */
const own = (await client.clientList()).length;
/** Resolves once Redis has closed every connection of the gateways killed (it runs what they sent first). */
const gatewaysGone = () =>
  until(async () => (await client.clientList()).length === own, 'the gateways’ connections gone');
t.teardown(async () => {
  for (const gateway of gateways) if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
  await Promise.all(gateways.map((gateway) => gateway.exited));
  await client.close();
  await redis.stop();
});

async function start(extra: Record<string, string> = {}): Promise<GatewayProcess> {
  const gateway = await spawnGateway({ ...env, ...extra });
  gateways.push(gateway);
  return gateway;
}

/** A chatbot with `old` conversations inactive for 40 days and one from today. */
async function chatbotWith(owner: string, name: string, old: number) {
  const bot = await services.chatbots.create(owner, { name });
  for (let i = 0; i < old; i += 100) {
    const batch = Array.from({ length: Math.min(100, old - i) }, (_, n) => `api-old-${i + n}`);
    await Promise.all(batch.map((session) => turn(past, bot.id, session, 'Hi', 'Hello!')));
  }
  await turn(services, bot.id, 'api-today', 'Hi', 'Hello!');
  return bot;
}

/** The sweeps a gateway logged: chatbot id and what it deleted. */
function sweeps(gateway: GatewayProcess): Array<{ chatbot_id: string; deleted: unknown }> {
  return gateway
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"retention sweep"'))
    .map((line) => JSON.parse(line) as { chatbot_id: string; deleted: unknown })
    .map(({ chatbot_id, deleted }) => ({ chatbot_id, deleted }));
}

t.test('three gateways: each chatbot due is swept exactly once', async (t) => {
  const trio = await Promise.all([start(), start(), start()]);
  // Stopped however this test ends: a sweeping gateway left running would sweep the next test's chatbot.
  t.teardown(async () => {
    for (const gateway of trio) gateway.child.kill('SIGKILL');
    await Promise.all(trio.map((gateway) => gateway.exited));
    await gatewaysGone();
  });
  const owner = await services.accounts.create('trio@example.com', 'scale');
  const bots: Chatbot[] = [];
  for (let i = 0; i < 9; i += 1) bots.push(await chatbotWith(owner.id, `Trio ${i}`, 20));
  for (const bot of bots) await services.chatbots.configure(bot.id, { retention: { conversations_days: 30 } });
  await until(
    async () => (await Promise.all(bots.map((bot) => services.conversations.count(bot.id)))).every((n) => n === 1),
    'the sweeps',
  );
  // Every sweep ended (no claim left) and logged, and every chatbot's next sweep an hour on: no
  // gateway can sweep one again, so the logs are final. Which gateways did the sweeps is left to
  // timing (all three look every 100 ms; one whose sweeps are quick can claim all nine before the
  // others look): that each was swept once is the point.
  await until(async () => {
    if ((await client.hLen(services.keys.retentionClaims())) > 0) return false;
    const due = await Promise.all(bots.map((bot) => services.retention.dueAt(bot.id)));
    const inAnHour = systemClock.nowMicros() + 3500 * 1_000_000;
    return due.every((at) => at !== undefined && at > inAnHour) && trio.flatMap(sweeps).length >= bots.length;
  }, 'every sweep ended and logged');
  const logged = trio.flatMap(sweeps).sort((a, b) => a.chatbot_id.localeCompare(b.chatbot_id));
  t.same(
    logged,
    bots
      .map((bot) => ({ chatbot_id: bot.id, deleted: { conversations: 20, messages: 40, leads: 0 } }))
      .sort((a, b) => a.chatbot_id.localeCompare(b.chatbot_id)),
    'one sweep per chatbot across the three gateways',
  );
  for (const bot of bots) t.equal(await services.conversations.exists(bot.id, 'api-today'), true);
});

t.test('a gateway SIGKILLed mid-sweep: its claim lapses and another finishes the sweep', async (t) => {
  const owner = await services.accounts.create('killed@example.com', 'scale');
  const total = 3000;
  const bot = await chatbotWith(owner.id, 'Killed', total);
  // One conversation a batch: the sweep takes long enough to be cut in the middle.
  const victim = await start({ RETENTION_BATCH: '1' });
  await services.chatbots.configure(bot.id, { retention: { conversations_days: 30 } });
  await until(async () => (await services.conversations.count(bot.id)) < total + 1, 'the sweep to start');
  victim.child.kill('SIGKILL');
  await victim.exited;
  await gatewaysGone();
  const left = (await services.conversations.count(bot.id)) - 1;
  t.ok(left > 0 && left < total, `killed with ${left} of ${total} old conversations left`);
  t.same(sweeps(victim), [], 'the killed gateway never finished a sweep');
  t.ok(await client.hGet(services.keys.retentionClaims(), bot.id), 'its claim is still recorded');

  const survivor = await start({ RETENTION_BATCH: '100' });
  await until(async () => (await services.conversations.count(bot.id)) === 1, 'the sweep to be finished', 20_000);
  await until(() => sweeps(survivor).length > 0, 'the survivor to log its sweep');
  t.same(sweeps(survivor), [{ chatbot_id: bot.id, deleted: { conversations: left, messages: 2 * left, leads: 0 } }]);
  t.equal(await services.conversations.exists(bot.id, 'api-today'), true);
  t.equal(await client.hGet(services.keys.retentionClaims(), bot.id), null, 'the claim ended');
  const next = await services.retention.dueAt(bot.id);
  t.ok(next && next > systemClock.nowMicros() + 3500 * 1_000_000, 'the next sweep in an hour');
});
