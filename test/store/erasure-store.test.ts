import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices } from '../../src/services.ts';
import { formatTimestamp } from '../../src/timestamp.ts';
import { SimulatedClock } from '../support/simulated-clock.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { fullConversation, turn } from '../support/full-conversation.ts';

// Deleting a conversation takes every key it has with it (and nothing of its neighbours'); with a
// cutoff, only a conversation inactive since before it and not in a turn now.
const { redis } = await connectedRedis(t);
const clock = new SimulatedClock();
const s = createServices(redis, loadConfig({}), clock, createLogger('silent'));
const owner = await s.accounts.create('erasure@example.com', 'scale');
const DAY_MS = 24 * 3600 * 1000;

/** The chatbot's keys that name the session, and the index entries that do. */
async function traces(chatbotId: string, sessionId: string) {
  const keys = (await redis.keys(`sb:{b:${chatbotId}}:*`)).filter((key) => key.includes(sessionId)).sort();
  const indexed = await redis.zScore(s.keys.conversationsOf(chatbotId), sessionId);
  const ids = Object.values(await redis.hGetAll(s.keys.conversationIds(chatbotId))).filter((v) => v === sessionId);
  const previews = await redis.sIsMember(s.keys.previewSessions(chatbotId), sessionId);
  const groups = (await s.unanswered.list(chatbotId, 'open')).filter((group) => group.session_id === sessionId);
  return { keys, indexed, ids: ids.length, previews, groups: groups.length };
}

t.test('an erasure deletes everything keyed by the conversation, its lead, and nothing of another', async (t) => {
  const bot = await s.chatbots.create(owner.id, { name: 'Erase' });
  const session = await s.previews.open(bot.id);
  const { lead, messages } = await fullConversation(s, bot, session);
  await turn(s, bot.id, 'embed-neighbour', 'Hi', 'Hello!');
  const neighbour = await s.leadCapture.capture(bot, 'embed-neighbour', { email: 'grace@example.com' });
  const before = await traces(bot.id, session);
  t.same(
    before.keys.map((key) => key.slice(`sb:{b:${bot.id}}:`.length)),
    [
      `conv:${session}`,
      `conv:${session}:discarded`,
      `conv:${session}:failures`,
      `conv:${session}:feedback`,
      `conv:${session}:msgs`,
      `conv:${session}:rl`,
      `conv:${session}:unanswered`,
      `lead-of-session:${session}`,
      `widget-session:${session}`,
    ],
    'the conversation has every kind of key',
  );
  t.match(before, { ids: 1, previews: true, groups: 1 });
  t.equal(await redis.get(s.keys.previewSession(bot.id)), session);

  t.same(await s.conversationErasure.erase(bot.id, session), {
    chatbot_id: bot.id,
    session_id: session,
    deleted: { conversation: true, messages, lead: true },
  });
  t.same(await traces(bot.id, session), { keys: [], indexed: null, ids: 0, previews: false, groups: 0 });
  t.equal(await redis.get(s.keys.previewSession(bot.id)), null, 'the preview starts a new conversation');
  t.equal(await redis.exists(s.keys.lead(bot.id, lead.lead_id)), 0);
  t.same(
    (await s.leads.list(bot.id)).map((row) => row.lead_id),
    [neighbour.lead_id],
  );
  const [group] = await s.unanswered.list(bot.id, 'open');
  t.match(group, { question: 'And to Iceland?', session_id: '' }, 'the question stays, without who asked it');
  t.same(await s.conversations.recent(bot.id, 10), [
    {
      ...(await s.conversations.get(bot.id, 'embed-neighbour')),
      last_message: { role: 'assistant', content: 'Hello!', created_at: clockTime() },
      last_activity_at: clockTime(),
    },
  ]);
  t.same(await s.feedback.counts(bot.id, isoMonth()), { up: 0, down: 1 }, 'monthly rating counts are aggregates');

  await t.rejects(s.conversationErasure.erase(bot.id, session), {
    name: 'NotFoundError',
    detail: 'Conversation not found.',
  });
  await t.rejects(s.conversationErasure.erase(bot.id, 'embed-never'), {
    name: 'NotFoundError',
    detail: 'Conversation not found.',
  });
});

t.test('a WhatsApp Cloud API chat: its customer-service window, named by the number, goes too', async (t) => {
  const bot = await s.chatbots.create(owner.id, { name: 'Cloud' });
  const session = 'wa_15551234567';
  t.equal(await s.whatsappCloud.takeIn(bot.id, session, 'wamid.erase', clock.nowMicros() / 1000), true);
  await turn(s, bot.id, session, 'Hi', 'Hello!');
  t.same(
    (await traces(bot.id, session)).keys.map((key) => key.slice(`sb:{b:${bot.id}}:`.length)),
    [`conv:${session}`, `conv:${session}:msgs`, `conv:${session}:rl`, `whatsapp:cloud:window:${session}`],
  );
  t.same(await s.conversationErasure.erase(bot.id, session), {
    chatbot_id: bot.id,
    session_id: session,
    deleted: { conversation: true, messages: 2, lead: false },
  });
  t.same(await traces(bot.id, session), { keys: [], indexed: null, ids: 0, previews: false, groups: 0 });
  t.equal(await s.whatsappCloud.lastInbound(bot.id, session), undefined);
});

t.test('a session whose conversation is gone but whose lead is left: the lead is erased', async (t) => {
  const bot = await s.chatbots.create(owner.id, { name: 'Lead only' });
  await turn(s, bot.id, 'embed-l', 'Hi', 'Hello!');
  await s.leadCapture.capture(bot, 'embed-l', { email: 'ada@example.com' });
  t.match(await s.erasure.deleteConversation(bot.id, 'embed-l'), { kind: 'deleted', messages: 2, existed: true });
  t.same(await s.conversationErasure.erase(bot.id, 'embed-l'), {
    chatbot_id: bot.id,
    session_id: 'embed-l',
    deleted: { conversation: false, messages: 0, lead: true },
  });
  t.same(await s.leads.list(bot.id), []);
});

t.test('with a cutoff: only a conversation inactive since before it, and not in a turn', async (t) => {
  const bot = await s.chatbots.create(owner.id, { name: 'Cutoff' });
  await turn(s, bot.id, 'api-old', 'Hi', 'Hello!');
  const oldAt = clock.nowMicros();
  await clock.advance(DAY_MS);
  await turn(s, bot.id, 'api-new', 'Hi', 'Hello!');
  const cutoff = clock.nowMicros();
  t.same(await s.erasure.inactiveSessions(bot.id, cutoff, 10), ['api-old']);
  t.same(await s.erasure.inactiveSessions(bot.id, oldAt, 10), [], 'strictly before the cutoff');
  t.same(await s.erasure.deleteConversation(bot.id, 'api-new', cutoff), { kind: 'active' });

  // The sweep read the index; the visitor wrote again before the deletion ran: kept.
  await clock.advance(DAY_MS);
  await turn(s, bot.id, 'api-old', 'Back again', 'Welcome back!');
  t.same(await s.erasure.deleteConversation(bot.id, 'api-old', cutoff), { kind: 'active' });
  t.equal((await s.conversations.transcript(bot.id, 'api-old')).messages.length, 4);

  // A turn in flight holds the conversation: kept, whatever its age.
  const started = await s.conversations.beginTurn(
    bot.id,
    'api-old',
    { content: 'Still there?', source: 'api' },
    { rateLimit: 100, rateWindowMs: 60_000, leaseMs: 30_000, historySize: 10 },
  );
  if (started.kind !== 'started') throw new Error(started.kind);
  await clock.advance(10 * DAY_MS);
  t.same(await s.erasure.deleteConversation(bot.id, 'api-old', clock.nowMicros()), { kind: 'active' });
  // An erasure request does not wait: the turn finds its lease gone and writes nothing.
  t.match(await s.erasure.deleteConversation(bot.id, 'api-old'), { kind: 'deleted', messages: 5 });
  t.match(await s.conversations.endTurn(bot.id, 'api-old', started.token, { role: 'assistant', content: 'Yes' }), {
    outcome: 'lost-lease',
  });
  t.equal(await s.conversations.exists(bot.id, 'api-old'), false);
  t.same(await s.erasure.deleteConversation(bot.id, 'api-old'), { kind: 'missing' });
});

t.test('leads: before the cutoff only, the session pointer cleared with its own lead', async (t) => {
  const bot = await s.chatbots.create(owner.id, { name: 'Leads' });
  const old = await s.leadCapture.capture(bot, 'embed-1', { email: 'old@example.com' });
  await clock.advance(DAY_MS);
  const recent = await s.leadCapture.capture(bot, 'embed-2', { email: 'new@example.com' });
  const cutoff = clock.nowMicros();
  t.same(await s.erasure.leadsBefore(bot.id, cutoff, 10), [old.lead_id]);
  t.equal(await s.erasure.deleteLead(bot.id, recent.lead_id, cutoff), false);
  t.equal(await s.erasure.deleteLead(bot.id, old.lead_id, cutoff), true);
  t.equal(await s.erasure.leadOfSession(bot.id, 'embed-1'), undefined);
  t.equal(await s.erasure.leadOfSession(bot.id, 'embed-2'), recent.lead_id);
  t.same(
    (await s.leads.list(bot.id)).map((lead) => lead.lead_id),
    [recent.lead_id],
  );
  t.equal(await s.erasure.deleteLead(bot.id, old.lead_id), false, 'gone already');
});

function clockTime(): string {
  return formatTimestamp(clock.nowMicros());
}

function isoMonth(): string {
  return new Date(clock.nowMicros() / 1000).toISOString().slice(0, 7);
}
