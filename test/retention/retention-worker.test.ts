import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import { RetentionWorker, type RetentionOptions } from '../../src/retention/retention-worker.ts';
import { createServices, type Services } from '../../src/services.ts';
import { ChatbotStore } from '../../src/store/chatbot-store.ts';
import { ErasureStore } from '../../src/store/erasure-store.ts';
import { LogCapture } from '../support/log-capture.ts';
import { startRedis } from '../support/redis-server.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { fullConversation, turn } from '../support/full-conversation.ts';

// The gateways' retention sweeps, on a simulated clock: when they run, what they delete, and that
// across several gateways on one Redis each due chatbot is swept by exactly one of them, by another
// once a dead one's claim lapses.
const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;
const OPTIONS: RetentionOptions = { pollMs: 60_000, leaseMs: 60_000, intervalMs: HOUR_MS, batch: 2 };

const server = await startRedis();
const clients: RedisClient[] = [];
t.teardown(async () => {
  for (const client of clients) await client.close();
  await server.stop();
});
// Each test starts from an empty Redis: another test's schedules would fall due on this one's clock.
t.beforeEach(async () => {
  const admin = await connectRedis({ url: server.url }, createLogger('silent'));
  await admin.flushAll();
  await admin.close();
});

/** One gateway's service layer on its own connection, its worker and what it logged. */
async function gateway(
  clock: SimulatedClock,
  options = OPTIONS,
  store?: (s: Services, redis: RedisClient) => ErasureStore,
) {
  const redis = await connectRedis({ url: server.url }, createLogger('silent'));
  clients.push(redis);
  const logs = new LogCapture();
  const logger = createLogger('debug', logs);
  const services = createServices(redis, loadConfig({}), clock, logger);
  const worker = new RetentionWorker(
    {
      schedule: services.retention,
      store: store?.(services, redis) ?? services.erasure,
      chatbots: services.chatbots,
      clock,
      logger,
    },
    options,
  );
  return { services, worker, logs, redis };
}

/** The retention sweeps that deleted something (logged at info), as `chatbot id: conversations/messages/leads`. */
function sweeps(logs: LogCapture): string[] {
  const info = logs.withMessage('retention sweep').filter((line) => line.level === 30);
  return info.map((line) => {
    const deleted = line.deleted as { conversations: number; messages: number; leads: number };
    return `${String(line.chatbot_id)}: ${deleted.conversations}/${deleted.messages}/${deleted.leads}`;
  });
}

t.test('a chatbot is swept hourly once it has a retention; what is older than its days goes', async (t) => {
  const clock = new SimulatedClock();
  // Polled hourly here, so that every sweep falls exactly on the hour (the gateways poll every minute).
  const { services: s, worker, logs, redis } = await gateway(clock, { ...OPTIONS, pollMs: HOUR_MS });
  const hours = async (n: number) => {
    for (let i = 0; i < n; i += 1) {
      await clock.advance(HOUR_MS);
      await worker.settled();
    }
  };
  const owner = await s.accounts.create('hourly@example.com', 'scale');
  const bot = await s.chatbots.create(owner.id, { name: 'Hourly' });
  // Day 0: a conversation with everything a conversation has, and its lead.
  const { messages } = await fullConversation(s, bot, 'embed-old');
  await clock.advance(10 * DAY_MS);
  await turn(s, bot.id, 'embed-recent', 'Hi', 'Hello!');
  await s.leadCapture.capture(bot, 'embed-recent', { email: 'recent@example.com' });
  worker.start();
  t.teardown(() => worker.stop());
  await clock.advance(0);
  t.equal(await s.retention.dueAt(bot.id), undefined, 'nothing to sweep without a retention');

  // Day 10: conversations inactive for more than 30 days go, leads left more than 15 days ago.
  await s.chatbots.configure(bot.id, { retention: { conversations_days: 30, leads_days: 15 } });
  t.equal(await s.retention.dueAt(bot.id), clock.nowMicros(), 'due at once');
  await hours(1);
  t.same(sweeps(logs), [], 'nothing was old enough: no info line');
  t.match(logs.withMessage('retention sweep'), [{ level: 20, deleted: { conversations: 0, messages: 0, leads: 0 } }]);
  t.equal(await s.retention.dueAt(bot.id), clock.nowMicros() + HOUR_MS * 1000, 'the next sweep an hour on');

  // Day 15: the old lead is exactly 15 days old and stays; an hour later it goes, the conversation stays.
  await hours(5 * 24 - 1);
  t.equal((await s.leads.list(bot.id)).length, 2);
  await hours(1);
  t.same(sweeps(logs), [`${bot.id}: 0/0/1`]);
  t.same(
    (await s.leads.list(bot.id)).map((lead) => lead.session_id),
    ['embed-recent'],
  );
  t.equal(await s.conversations.exists(bot.id, 'embed-old'), true);

  // Day 25: the recent lead's turn.
  await hours(10 * 24);
  t.same(await s.leads.list(bot.id), []);

  // Day 30: exactly 30 days inactive, the conversation stays; an hour later it is deleted.
  await hours(5 * 24 - 1);
  t.equal(await s.conversations.exists(bot.id, 'embed-old'), true);
  await hours(1);
  t.equal(await s.conversations.exists(bot.id, 'embed-old'), false);
  t.same(sweeps(logs), [`${bot.id}: 0/0/1`, `${bot.id}: 0/0/1`, `${bot.id}: 1/${messages}/0`]);
  t.same(await redis.keys(`sb:{b:${bot.id}}:*embed-old*`), [], 'nothing of it is left (its lead went before)');
  t.equal(await s.conversations.exists(bot.id, 'embed-recent'), true);
  t.same(Object.keys(logs.withMessage('retention sweep').at(-1)!).sort(), [
    'chatbot_id',
    'deleted',
    'level',
    'ms',
    'msg',
  ]);
  t.equal(logs.withMessage('retention sweep').length, 20 * 24 + 1, 'one sweep an hour');
});

t.test('turning retention off unschedules the chatbot; a deleted chatbot is unscheduled too', async (t) => {
  const clock = new SimulatedClock();
  const { services: s, worker } = await gateway(clock);
  const owner = await s.accounts.create('off@example.com', 'scale');
  const kept = await s.chatbots.create(owner.id, { name: 'Kept' });
  const gone = await s.chatbots.create(owner.id, { name: 'Gone' });
  await s.chatbots.configure(kept.id, { retention: { conversations_days: 7 } });
  await s.chatbots.configure(gone.id, { retention: { leads_days: 7 } });
  worker.start();
  t.teardown(() => worker.stop());
  await clock.advance(0);
  await worker.settled();
  t.ok(await s.retention.dueAt(kept.id));
  await s.chatbots.configure(kept.id, { retention: { conversations_days: null } });
  await s.chatbotDeletion.delete(gone.id);
  await clock.advance(HOUR_MS);
  await worker.settled();
  t.equal(await s.retention.dueAt(kept.id), undefined);
  t.equal(await s.retention.dueAt(gone.id), undefined);
  await s.chatbots.configure(kept.id, { retention: { conversations_days: 7 } });
  t.equal(await s.retention.dueAt(kept.id), clock.nowMicros(), 'scheduled again when turned on');
});

t.test('a sweep that looks between the scheduling and the settings write leaves the chatbot scheduled', async (t) => {
  // configure() schedules the chatbot, then writes its settings: a gateway polling in between finds no
  // retention yet, and unschedules it. The chatbot must still be swept (in a CI run it never was).
  const clock = new SimulatedClock();
  const { services: s, worker, redis } = await gateway(clock);
  const owner = await s.accounts.create('between@example.com', 'scale');
  const bot = await s.chatbots.create(owner.id, { name: 'Between' });
  worker.start();
  t.teardown(() => worker.stop());
  let polls = 0;
  const schedule = {
    ensure: async (chatbotId: string, atMicros: number) => {
      await s.retention.ensure(chatbotId, atMicros);
      if (polls > 0) return;
      polls += 1;
      worker.kick();
      await worker.settled();
      t.equal(await s.retention.dueAt(bot.id), undefined, 'the gateway let go of it');
    },
  };
  const chatbots = new ChatbotStore(redis, s.keys, clock, schedule);
  await chatbots.configure(bot.id, { retention: { conversations_days: 7 } });
  t.equal(polls, 1);
  t.equal(await s.retention.dueAt(bot.id), clock.nowMicros(), 'scheduled after the settings were written');
});

t.test('three gateways on one Redis: each due chatbot is swept exactly once', async (t) => {
  const clock = new SimulatedClock();
  const gateways = await Promise.all([gateway(clock), gateway(clock), gateway(clock)]);
  const s = gateways[0].services;
  const owner = await s.accounts.create('three@example.com', 'scale');
  const bots = [];
  for (let i = 0; i < 12; i += 1) {
    const bot = await s.chatbots.create(owner.id, { name: `Bot ${i}` });
    for (let n = 0; n < 3; n += 1) await turn(s, bot.id, `api-${n}`, 'Hi', 'Hello!');
    bots.push(bot);
  }
  await clock.advance(2 * DAY_MS);
  for (const bot of bots) await s.chatbots.configure(bot.id, { retention: { conversations_days: 1 } });
  // Every gateway looks at the same moment (and again once a minute).
  for (const { worker } of gateways) worker.start();
  t.teardown(() => Promise.all(gateways.map(({ worker }) => worker.stop())));
  const settled = () => Promise.all(gateways.map(({ worker }) => worker.settled()));
  await settled();
  const all = gateways.flatMap(({ logs }) => sweeps(logs)).sort();
  t.same(all, bots.map((bot) => `${bot.id}: 3/6/0`).sort(), 'one sweep per chatbot, across the three');
  t.ok(gateways.filter(({ logs }) => sweeps(logs).length > 0).length >= 2, 'shared between the gateways');
  t.same(
    gateways.flatMap(({ logs }) => logs.withMessage('retention lease lost')),
    [],
    'no claim was taken from another',
  );
  for (const bot of bots) t.equal(await s.conversations.count(bot.id), 0);
  await clock.advance(HOUR_MS - 1);
  await settled();
  t.equal(gateways.flatMap(({ logs }) => logs.withMessage('retention sweep')).length, 12, 'not before the hour');
  await clock.advance(1);
  await settled();
  const again = gateways.flatMap(({ logs }) => logs.withMessage('retention sweep'));
  t.equal(again.length, 24, 'an hour later, each once more (nothing left to delete)');
  t.same(
    again.map((line) => String(line.chatbot_id)).sort(),
    bots.flatMap((bot) => [bot.id, bot.id]).sort(),
    'twice each in all',
  );
});

t.test("a dead gateway's claim lapses and another sweeps the chatbot", async (t) => {
  const clock = new SimulatedClock();
  const { services: s, worker, logs } = await gateway(clock);
  const owner = await s.accounts.create('lapse@example.com', 'scale');
  const bot = await s.chatbots.create(owner.id, { name: 'Lapse' });
  await turn(s, bot.id, 'api-1', 'Hi', 'Hello!');
  await clock.advance(2 * DAY_MS);
  await s.chatbots.configure(bot.id, { retention: { conversations_days: 1 } });
  // A gateway claims the chatbot, then is SIGKILLed: its claim is never renewed nor ended.
  const [dead] = await s.retention.claim(1, clock.nowMicros(), OPTIONS.leaseMs);
  t.equal(dead?.chatbotId, bot.id);
  worker.start();
  t.teardown(() => worker.stop());
  await clock.advance(OPTIONS.leaseMs - 1);
  await worker.settled();
  t.same(sweeps(logs), [], 'not while the claim holds');
  await clock.advance(1);
  await clock.advance(OPTIONS.pollMs);
  await worker.settled();
  t.same(sweeps(logs), [`${bot.id}: 1/2/0`], 'swept once the claim lapsed');
  t.equal(await s.retention.finish(dead!, 0), false, "the dead claim cannot end the new one's schedule");
  t.equal(await s.retention.renew(dead!, clock.nowMicros(), OPTIONS.leaseMs), false);
});

t.test('a sweep that lost its lease stops at the next batch', async (t) => {
  const clock = new SimulatedClock();
  let steal: (() => Promise<void>) | undefined;
  class StolenAfterFirst extends ErasureStore {
    override async deleteConversation(...args: Parameters<ErasureStore['deleteConversation']>) {
      const outcome = await super.deleteConversation(...args);
      await steal?.();
      steal = undefined;
      return outcome;
    }
  }
  const {
    services: s,
    worker,
    logs,
    redis,
  } = await gateway(clock, { ...OPTIONS, batch: 1 }, (services, client) => new StolenAfterFirst(client, services.keys));
  const owner = await s.accounts.create('stolen@example.com', 'scale');
  const bot = await s.chatbots.create(owner.id, { name: 'Stolen' });
  for (let n = 0; n < 4; n += 1) await turn(s, bot.id, `api-${n}`, 'Hi', 'Hello!');
  await clock.advance(2 * DAY_MS);
  await s.chatbots.configure(bot.id, { retention: { conversations_days: 1 } });
  // Another process took the chatbot meanwhile (this one's lease had lapsed during a long batch).
  steal = async () => void (await redis.hSet(s.keys.retentionClaims(), bot.id, 'another-claim'));
  worker.start();
  await clock.advance(0);
  await worker.settled();
  t.equal(await s.conversations.count(bot.id), 3, 'one batch, then it stopped');
  t.match(logs.withMessage('retention lease lost'), [{ chatbot_id: bot.id }]);
  await worker.stop();
  t.same(sweeps(logs), []);
});

t.test('a gateway that stops mid-sweep hands the chatbot on at once', async (t) => {
  const clock = new SimulatedClock();
  let release: () => void = () => {};
  const paused = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  class PausesAtSecond extends ErasureStore {
    override async deleteConversation(...args: Parameters<ErasureStore['deleteConversation']>) {
      calls += 1;
      if (calls === 2) await paused;
      return super.deleteConversation(...args);
    }
  }
  const {
    services: s,
    worker,
    logs,
  } = await gateway(clock, { ...OPTIONS, batch: 1 }, (services, client) => new PausesAtSecond(client, services.keys));
  const owner = await s.accounts.create('handoff@example.com', 'scale');
  const bot = await s.chatbots.create(owner.id, { name: 'Handoff' });
  for (let n = 0; n < 3; n += 1) await turn(s, bot.id, `api-${n}`, 'Hi', 'Hello!');
  await clock.advance(2 * DAY_MS);
  await s.chatbots.configure(bot.id, { retention: { conversations_days: 1 } });
  worker.start();
  await clock.advance(0);
  while (calls < 2) await new Promise((resolve) => setImmediate(resolve));
  const stopping = worker.stop();
  release();
  await stopping;
  t.equal(await s.conversations.count(bot.id), 1, 'the batch under way ended, no other began');
  t.equal(await s.retention.dueAt(bot.id), clock.nowMicros(), 'due again now, for another gateway');
  t.same(sweeps(logs), []);
  t.same(logs.withMessage('retention lease lost'), []);
});
