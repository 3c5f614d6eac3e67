import t from 'tap';
import { ChatbotStore } from '../../src/store/chatbot-store.ts';
import { createLogger } from '../../src/logger.ts';
import { AccountStore } from '../../src/store/account-store.ts';
import { ConversationStore } from '../../src/store/conversation-store.ts';
import { DeliveryStore } from '../../src/store/delivery-store.ts';
import { LeadStore } from '../../src/store/lead-store.ts';
import { PendingEventStore } from '../../src/store/pending-event-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { WebhookStore } from '../../src/store/webhook-store.ts';
import { EventRelay } from '../../src/webhooks/event-relay.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { WebhookOutbox } from '../../src/webhooks/webhook-outbox.ts';
import { startRedis } from '../support/redis-server.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';

// A process records what happened together with a pending entry of its events, then writes the
// deliveries. These tests stop "processes" between the two steps and check that nothing is lost and
// nothing is delivered twice.

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  await server.stop();
});
const clock = new SimulatedClock();
const GRACE_MS = 10_000;
const keys = new RedisKeys('sb:');
const webhooks = new WebhookStore(redis, keys, clock, true);
const deliveries = new DeliveryStore(redis, keys, clock, 30);
const outbox = new WebhookOutbox(webhooks, deliveries, [60, 300, 900]);
const pending = new PendingEventStore(redis, keys, clock, GRACE_MS);
const conversations = new ConversationStore(redis, keys, clock, pending);
/** Two gateways' relays over the same Redis. */
const relays = [0, 1].map(() => new EventRelay(pending, outbox, createLogger('silent'), clock));
const owner = await new AccountStore(redis, keys, clock, ['scale']).create('relay@example.com', 'scale');
const chatbots = new ChatbotStore(redis, keys, clock);
const limits = { rateLimit: 1000, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 };

async function hookedBot(name: string) {
  const bot = await chatbots.create(owner.id, { name });
  const hook = await webhooks.create(bot.id, 'http://127.0.0.1:9/hook', [
    'conversation.started',
    'message.received',
    'conversation.escalated',
    'lead.captured',
  ]);
  return { bot, hook };
}

/** Every delivery of the webhook: event and body, oldest first. */
async function delivered(webhookId: string) {
  const views = await deliveries.log(webhookId, { limit: 1000 });
  const shard = keys.deliveryShard((await redis.get(keys.webhookOwner(webhookId)))!);
  const bodies = await Promise.all(
    views.map(async (view) => JSON.parse((await redis.hGet(keys.delivery(shard, view.id), 'body'))!)),
  );
  // The simulated clock stands still, so the log's order among one instant is by id: order by the
  // events' own times, then as a conversation's events follow each other.
  const rank = ['conversation.started', 'message.received', 'conversation.escalated', 'lead.captured'];
  return bodies.sort((a, b) => a.timestamp.localeCompare(b.timestamp) || rank.indexOf(a.event) - rank.indexOf(b.event));
}

/** A turn that a process began and died in: the message is stored, its deliveries never written. */
async function abandonedTurn(chatbotId: string, sessionId: string, content: string) {
  await pending.register(chatbotId);
  const start = await conversations.beginTurn(chatbotId, sessionId, { content, source: 'api' }, limits);
  if (start.kind !== 'started') throw new Error(start.kind);
  return start;
}

t.test('the same event emitted twice under one key is one delivery', async (t) => {
  const { bot, hook } = await hookedBot('Twice');
  const start = await abandonedTurn(bot.id, 'api-twice', 'hello');
  const entries = [start.entry!];
  t.same(await Promise.all([relays[0]!.deliver(bot.id, entries), relays[1]!.deliver(bot.id, entries)]), [1, 1]);
  await relays[0]!.deliver(bot.id, entries);
  t.same(
    (await delivered(hook.id)).map((body) => body.event),
    ['conversation.started', 'message.received'],
  );
});

t.test('a sweep writes what a dead process left pending, once, however many gateways sweep', async (t) => {
  const { bot, hook } = await hookedBot('Abandoned');
  const start = await abandonedTurn(bot.id, 'api-dead', 'Are you open on Sunday?');
  t.same(await Promise.all(relays.map((relay) => relay.sweep())), [0, 0], 'nothing is overdue yet');
  await clock.advance(GRACE_MS + 0.001);
  const relayed = await Promise.all(relays.map((relay) => relay.sweep()));
  t.equal(relayed[0]! + relayed[1]!, 1, 'one gateway took the entry');
  const bodies = await delivered(hook.id);
  t.same(
    bodies.map((body) => [body.event, body.data.session_id]),
    [
      ['conversation.started', 'api-dead'],
      ['message.received', 'api-dead'],
    ],
  );
  t.same(bodies[1].data, {
    conversation_id: start.conversationId,
    session_id: 'api-dead',
    content: 'Are you open on Sunday?',
    source: 'api',
  });
  t.equal(bodies[1].timestamp, start.createdAt, 'the event keeps the time it happened');
  t.equal(await pending.hasEntries(bot.id), false, 'the entry is acknowledged');
  await relays[0]!.sweep();
  t.notOk((await pending.quietChatbots(100)).includes(bot.id), 'a chatbot with nothing pending is forgotten');
  t.equal((await delivered(hook.id)).length, 2);
});

t.test("a busy chatbot's next turn takes over the entries a dead process left", async (t) => {
  const { bot, hook } = await hookedBot('Busy');
  const dead = await abandonedTurn(bot.id, 'api-a', 'first');
  await clock.advance(GRACE_MS + 0.001);
  await pending.register(bot.id);
  t.same(await pending.quietChatbots(100).then((ids) => ids.includes(bot.id)), false, 'busy: not for the sweeper');
  const next = await conversations.beginTurn(bot.id, 'api-b', { content: 'second', source: 'api' }, limits);
  if (next.kind !== 'started') throw new Error(next.kind);
  t.same(
    next.overdue.map((entry) => entry.id),
    [dead.entry!.id],
  );
  await relays[0]!.deliver(bot.id, next.overdue);
  await relays[0]!.deliver(bot.id, [next.entry!]);
  await conversations.endTurn(bot.id, 'api-b', next.token, null);
  t.same(
    (await delivered(hook.id)).map((body) => [body.event, body.data.session_id]),
    [
      ['conversation.started', 'api-a'],
      ['message.received', 'api-a'],
      ['conversation.started', 'api-b'],
      ['message.received', 'api-b'],
    ],
  );
  t.equal(await pending.hasEntries(bot.id), false, 'both entries are acknowledged');
});

t.test('a turn that records no events leaves the entries a dead process left to the sweeper', async (t) => {
  // No webhook listens any more: the turn records nothing and registers nothing, so the chatbot goes
  // quiet and the sweeper relays what was left (a turn claims overdue entries only where it records).
  const { bot, hook } = await hookedBot('Unheard');
  await abandonedTurn(bot.id, 'api-a', 'first');
  await clock.advance(GRACE_MS + 0.001);
  const next = await conversations.beginTurn(bot.id, 'api-b', { content: 'second', source: 'api' }, limits, {
    recordEvents: false,
  });
  if (next.kind !== 'started') throw new Error(next.kind);
  t.same(next.overdue, [], 'not taken by the turn');
  await conversations.endTurn(bot.id, 'api-b', next.token, null);
  t.ok((await pending.quietChatbots(100)).includes(bot.id), 'quiet: for the sweeper');
  t.equal(await relays[0]!.sweep(), 1);
  t.same(await pending.hasEntries(bot.id), false);
  t.same(
    (await delivered(hook.id)).map((body) => [body.event, body.data.session_id]),
    [
      ['conversation.started', 'api-a'],
      ['message.received', 'api-a'],
    ],
  );
});

t.test('escalations and leads left pending are relayed too', async (t) => {
  const { bot, hook } = await hookedBot('Others');
  await pending.register(bot.id);
  const escalation = await conversations.escalate(bot.id, 'embed-visitor', { source: 'embed' });
  if (!escalation.first) throw new Error('not first');
  const lead = {
    lead_id: crypto.randomUUID(),
    chatbot_id: bot.id,
    session_id: 'embed-visitor',
    name: 'Ada',
    email: 'ada@example.com',
    phone: '',
    custom_data: {},
    created_at: '',
  };
  const now = clock.nowMicros();
  await new LeadStore(redis, keys).save(lead, now, {
    id: crypto.randomUUID(),
    json: JSON.stringify({
      kind: 'lead',
      at: String(now),
      lead: { lead_id: lead.lead_id, name: 'Ada', email: 'ada@example.com', phone: '', custom_data: {} },
    }),
    dueAt: pending.dueAt(now),
  });
  await clock.advance(GRACE_MS + 0.001);
  t.equal(await relays[1]!.sweep(), 2);
  const bodies = await delivered(hook.id);
  t.same(
    bodies.map((body) => body.event),
    ['conversation.escalated', 'lead.captured'],
  );
  t.same(bodies[0].data, {
    conversation_id: escalation.conversation.conversation_id,
    session_id: 'embed-visitor',
    channel: 'web',
    escalated_at: escalation.escalatedAt,
    message_count: 0,
  });
  t.same(bodies[1].data, { lead_id: lead.lead_id, name: 'Ada', email: 'ada@example.com', phone: '', custom_data: {} });
});

t.test(
  'takeovers and releases left pending are relayed once per change, to the webhooks that select them',
  async (t) => {
    const { bot, hook } = await hookedBot('Holds');
    const lifecycle = await webhooks.create(bot.id, 'http://127.0.0.1:9/hook', [
      'conversation.taken_over',
      'conversation.released',
    ]);
    const sessionId = 'wa_4915112345678@s.whatsapp.net';
    const turn = await abandonedTurn(bot.id, sessionId, 'hello');
    await conversations.endTurn(bot.id, sessionId, turn.token, null);
    await clock.advance(1);
    const takenAt = clock.nowMicros();
    const taken = await conversations.takeOver(bot.id, sessionId, 'Alice');
    t.ok(taken.entry, 'the takeover recorded its entry');
    await clock.advance(1);
    t.equal((await conversations.takeOver(bot.id, sessionId, 'Alice')).entry, undefined, 'the holder again: none');
    const releasedAt = clock.nowMicros();
    const released = await conversations.release(bot.id, sessionId, '');
    t.equal(released.conversation.taken_over_by, null);
    t.ok(released.entry, 'the release recorded its entry');
    t.equal((await conversations.release(bot.id, sessionId, '')).entry, undefined, 'nobody holds it: none');
    await clock.advance(GRACE_MS + 0.001);
    t.equal(await relays[0]!.sweep(), 3, "the turn's entry and the two changes'");
    const conversationId = turn.conversationId;
    t.same(await delivered(lifecycle.id), [
      {
        event: 'conversation.taken_over',
        chatbot_id: bot.id,
        timestamp: formatTimestamp(takenAt),
        data: {
          conversation_id: conversationId,
          session_id: sessionId,
          channel: 'whatsapp',
          agent: 'Alice',
          taken_over_at: formatTimestamp(takenAt),
        },
      },
      {
        event: 'conversation.released',
        chatbot_id: bot.id,
        timestamp: formatTimestamp(releasedAt),
        data: {
          conversation_id: conversationId,
          session_id: sessionId,
          channel: 'whatsapp',
          agent: 'Alice',
          released_at: formatTimestamp(releasedAt),
        },
      },
    ]);
    t.same(
      (await delivered(hook.id)).map((body) => body.event),
      ['conversation.started', 'message.received'],
      "a webhook of SPEC's four events gets neither",
    );
  },
);

t.test(
  'a change recorded after a message but written first by another gateway is still delivered after it',
  async (t) => {
    const bot = await chatbots.create(owner.id, { name: 'Overtaken' });
    const hook = await webhooks.create(bot.id, 'http://127.0.0.1:9/hook', [
      'message.received',
      'conversation.taken_over',
    ]);
    // Gateway A stores a message and is slow to write its deliveries; an agent on gateway B takes the
    // conversation over meanwhile, and B writes the takeover's deliveries at once.
    const slow = await abandonedTurn(bot.id, 'api-slow', 'Anyone there?');
    await conversations.endTurn(bot.id, 'api-slow', slow.token, null);
    const unrelated = await abandonedTurn(bot.id, 'api-other', 'Another conversation');
    await clock.advance(1);
    const taken = await conversations.takeOver(bot.id, 'api-slow', 'Alice');
    t.equal(await relays[1]!.deliverNew(bot.id, taken.entry!), 2, "A's entry, then its own");
    const isPending = async (id: string) => (await redis.hExists(keys.pendingEvents(bot.id), id)) === 1;
    t.equal(await isPending(slow.entry!.id), false, "B wrote and acknowledged A's entry before its own");
    t.equal(await isPending(unrelated.entry!.id), true, "another conversation's entry is left to its writer");
    t.equal(await relays[0]!.deliverNew(bot.id, slow.entry!), 1, "A's own write is a repeat");
    // The dispatcher sends one conversation's deliveries in the order they were written: the first
    // claim gets the message only, the takeover waits for its first attempt.
    const claimed = await deliveries.claim(100, 60_000, 'claim-order');
    t.same(
      claimed.filter((delivery) => delivery.webhookId === hook.id).map((delivery) => delivery.event),
      ['message.received'],
    );
    t.same(
      (await delivered(hook.id)).map((body) => body.event),
      ['message.received', 'conversation.taken_over'],
      'each event once',
    );
    await relays[0]!.deliver(bot.id, [unrelated.entry!]);
  },
);

t.test('a registration lasts a quarter of the grace period, then is written again', async (t) => {
  const chatbotId = crypto.randomUUID();
  const score = () => redis.zScore(keys.pendingEventBots(), chatbotId);
  await pending.register(chatbotId);
  const first = await score();
  t.equal(first, clock.nowMicros());
  await clock.advance(GRACE_MS / 8);
  await pending.register(chatbotId);
  t.equal(await score(), first, 'still fresh: not written again');
  await clock.advance(GRACE_MS / 4);
  await pending.register(chatbotId);
  t.equal(await score(), clock.nowMicros(), 'written again once a quarter of the grace period passed');
});

t.test('an entry this version cannot read is logged and dropped, and does not hold up the others', async (t) => {
  const { bot, hook } = await hookedBot('Unreadable');
  const good = await abandonedTurn(bot.id, 'api-good', 'still delivered');
  const entries = [
    { id: 'not-json', json: '{"kind":' },
    { id: 'future', json: '{"kind":"teleport","at":"1"}' },
    good.entry!,
  ];
  t.equal(await relays[0]!.deliver(bot.id, entries), 3, 'all three acknowledged');
  t.same(
    (await delivered(hook.id)).map((body) => body.event),
    ['conversation.started', 'message.received'],
  );
});

t.test('a started relay sweeps every half grace period on its clock, until stopped', async (t) => {
  const relay = new EventRelay(pending, outbox, createLogger('silent'), clock);
  const sweeps: Array<Promise<number>> = [];
  const sweep = relay.sweep.bind(relay);
  relay.sweep = () => {
    const swept = sweep();
    sweeps.push(swept);
    return swept;
  };
  const { bot, hook } = await hookedBot('Swept');
  await abandonedTurn(bot.id, 'api-swept', 'left pending');
  // Started a millisecond after the entry, so the second sweep is the first after it is overdue.
  await clock.advance(1);
  relay.start();
  t.teardown(() => relay.stop());
  await clock.advance(GRACE_MS / 2 - 1);
  t.equal(sweeps.length, 0, 'no sweep before half a grace period');
  await clock.advance(1);
  t.equal(sweeps.length, 1);
  await Promise.all(sweeps);
  await clock.advance(GRACE_MS / 2 - 1);
  t.same(await delivered(hook.id), [], 'not overdue at the first sweep');
  await clock.advance(1);
  t.equal(sweeps.length, 2);
  await Promise.all(sweeps);
  t.same(
    (await delivered(hook.id)).map((body) => [body.event, body.data.session_id]),
    [
      ['conversation.started', 'api-swept'],
      ['message.received', 'api-swept'],
    ],
    'written by the sweep once overdue',
  );
  await relay.stop();
  await clock.advance(GRACE_MS * 2);
  t.equal(sweeps.length, 2, 'no sweep once stopped');
});
