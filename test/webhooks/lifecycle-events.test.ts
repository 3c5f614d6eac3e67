import { createHmac } from 'node:crypto';
import t from 'tap';
import { SPEC_EVENT_NAMES } from '../../src/contract/webhook.ts';
import { parseTimestamp } from '../../src/timestamp.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { FakeWhatsApp, textMessage } from '../fakes/fake-whatsapp.ts';
import { WebhookReceiver, type ReceivedWebhook } from '../fakes/webhook-receiver.ts';
import { runCli, runCliJson } from '../support/cli.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { outboxSettled } from '../support/outbox-settled.ts';
import { until } from '../support/until.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// conversation.taken_over and conversation.released, beyond SPEC and opt-in, at a real receiver: a
// gateway with its dispatcher, deliveries signed and retried like SPEC's events.

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'AI here' });
const receiver = await new WebhookReceiver().start();
const whatsapp = new FakeWhatsApp();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_DELAYS: '0.2,0.4,0.6',
    WEBHOOK_TIMEOUT_MS: '600',
    WEBHOOK_POLL_MS: '50',
  },
  { whatsappSockets: whatsapp.factory, whatsappReconnectMs: 50 },
);
t.teardown(async () => {
  await gw.stop();
  await Promise.all([openai.stop(), receiver.stop()]);
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const { key } = await services.apiKeys.create(owner.id, 'lifecycle');
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '', WEBHOOK_ALLOW_PRIVATE: '1' };
const LIFECYCLE = ['conversation.taken_over', 'conversation.released'];
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

async function chat(chatbotId: string, message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: (await res.json()) as { response: string } };
}

/** A chatbot with a webhook to the receiver selecting `events`. */
async function hooked(name: string, events: string[]) {
  const bot = await services.chatbots.create(owner.id, { name });
  return { bot, hook: await hookFor(bot.id, events) };
}

async function hookFor(chatbotId: string, events: string[]) {
  const hook = await services.webhooks.create(chatbotId, receiver.url, events);
  receiver.secrets.push(hook.secret);
  return hook;
}

/** What the receiver got for a webhook (told apart by its secret), oldest first. */
function requestsFor(hook: { secret: string }): ReceivedWebhook[] {
  return receiver.received.filter(
    (request) =>
      createHmac('sha256', hook.secret).update(request.raw).digest('hex') ===
      request.headers['x-switchboard-signature'],
  );
}

/** First attempts to the webhook, as [event, agent] pairs, oldest first. */
function changes(hook: { secret: string }, sessionId: string) {
  return requestsFor(hook)
    .filter((r) => r.headers['x-switchboard-attempt'] === '1' && r.body.data.session_id === sessionId)
    .map((r) => [r.body.event, r.body.data.agent]);
}

const settled = (chatbotId: string) => () => outboxSettled(services, chatbotId);

t.test('taken over and released: exact bodies and headers, signed over the raw bytes, only if selected', async (t) => {
  receiver.answer = () => ({ status: 200, body: 'ok' });
  const { bot, hook } = await hooked('Bodies', LIFECYCLE);
  const spec = await hookFor(bot.id, [...SPEC_EVENT_NAMES]);
  t.equal((await chat(bot.id, 'hello', 'embed-bodies')).status, 200);
  const { conversation_id } = await services.control.show(bot.id, 'embed-bodies');
  const before = Date.now() * 1000;
  await services.control.takeOver(bot.id, 'embed-bodies', 'Alice');
  await services.control.release(bot.id, 'embed-bodies', 'Alice');
  const after = Date.now() * 1000;
  const got = await until(() => requestsFor(hook).length >= 2 && requestsFor(hook), 'two deliveries');
  const [taken, released] = got as [ReceivedWebhook, ReceivedWebhook];
  t.same(taken.body, {
    event: 'conversation.taken_over',
    chatbot_id: bot.id,
    timestamp: taken.body.timestamp,
    data: {
      conversation_id,
      session_id: 'embed-bodies',
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
      conversation_id,
      session_id: 'embed-bodies',
      channel: 'web',
      agent: 'Alice',
      released_at: released.body.timestamp,
    },
  });
  for (const request of got) {
    t.same(Object.keys(request.body), ['event', 'chatbot_id', 'timestamp', 'data'], 'the envelope in order');
    t.equal(request.raw.toString('utf8'), JSON.stringify(request.body), 'compact JSON, as signed');
    t.equal(request.signatureValid, true, 'the receiver verified the signature over the raw body');
    t.match(request.body.timestamp, TIMESTAMP);
    const at = parseTimestamp(request.body.timestamp)!;
    t.ok(at >= before && at <= after, 'the time of the change');
    t.same(request.rawHeaderNames.sort(), [
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-switchboard-attempt',
      'x-switchboard-delivery',
      'x-switchboard-event',
      'x-switchboard-signature',
    ]);
    t.equal(request.headers['content-type'], 'application/json');
    t.equal(request.headers['user-agent'], 'Switchboard-Webhook/1.0');
    t.equal(request.headers['x-switchboard-event'], request.body.event);
    t.equal(request.headers['x-switchboard-attempt'], '1');
  }
  t.same(Object.keys(taken.body.data), ['conversation_id', 'session_id', 'channel', 'agent', 'taken_over_at']);
  t.same(Object.keys(released.body.data), ['conversation_id', 'session_id', 'channel', 'agent', 'released_at']);
  const log = await until(async () => {
    const entries = await services.deliveries.log(hook.id);
    return entries.length === 2 && entries.every((e) => e.status === 'delivered') && entries;
  }, 'the delivery log');
  t.same(
    log.map((d) => [d.event, d.id]),
    [
      ['conversation.released', released.headers['x-switchboard-delivery']],
      ['conversation.taken_over', taken.headers['x-switchboard-delivery']],
    ],
    'logged, newest first, under the delivery ids the receiver saw',
  );
  await until(settled(bot.id), 'the outbox settled');
  // First attempts: a receiver slower than WEBHOOK_TIMEOUT_MS on a loaded machine gets a retry.
  const events = (webhook: { secret: string }) =>
    requestsFor(webhook)
      .filter((r) => r.headers['x-switchboard-attempt'] === '1')
      .map((r) => r.body.event);
  t.same(events(spec), ['conversation.started', 'message.received'], "a webhook of SPEC's four events gets neither");
  t.same(
    events(hook),
    ['conversation.taken_over', 'conversation.released'],
    "and the lifecycle webhook none of SPEC's",
  );
});

t.test('once per change; the operator releases whoever holds it and the event names them', async (t) => {
  receiver.answer = () => ({ status: 204 });
  const { bot, hook } = await hooked('Once', LIFECYCLE);
  const session = 'tg_4242';
  await chat(bot.id, 'hi', session);
  await services.control.release(bot.id, session);
  await services.control.takeOver(bot.id, session, 'Alice');
  await services.control.takeOver(bot.id, session, 'Alice');
  await t.rejects(services.control.takeOver(bot.id, session, 'Bob'), { name: 'ConflictError' });
  await t.rejects(services.control.release(bot.id, session, 'Bob'), { name: 'ConflictError' });
  // The CLI is another process: its changes' deliveries are written there and sent by the gateway.
  const released = await runCliJson(['conversation', 'release', '--bot', bot.id, '--session', session], cliEnv);
  t.equal(released.taken_over_by, null);
  await runCliJson(['conversation', 'release', '--bot', bot.id, '--session', session], cliEnv);
  await runCliJson(['conversation', 'takeover', '--bot', bot.id, '--session', session, '--agent', 'Bob'], cliEnv);
  // The dashboard's release is the operator's too.
  const dashboard = await DashboardClient.signIn(gw.baseUrl, owner);
  const path = `/dashboard/api/chatbots/${bot.id}/conversations/${session}`;
  t.equal((await dashboard.post(`${path}/release`)).status, 200);
  t.equal((await dashboard.post(`${path}/release`)).status, 200);
  t.equal((await dashboard.post(`${path}/takeover`, {})).body.taken_over_by, 'operator');
  await until(() => changes(hook, session).length >= 5, 'five deliveries');
  await until(settled(bot.id), 'the outbox settled');
  t.same(changes(hook, session), [
    ['conversation.taken_over', 'Alice'],
    ['conversation.released', 'Alice'],
    ['conversation.taken_over', 'Bob'],
    ['conversation.released', 'Bob'],
    ['conversation.taken_over', 'operator'],
  ]);
  t.ok(
    requestsFor(hook).every((r) => r.body.data.channel === 'telegram'),
    'channel telegram from the tg_ prefix',
  );
  await chat(bot.id, 'hi', 'api-channel');
  await services.control.takeOver(bot.id, 'api-channel', 'Alice');
  const api = await until(() => requestsFor(hook).find((r) => r.body.data.session_id === 'api-channel'), 'api-');
  t.equal(api.body.data.channel, 'unknown', 'an api- session is of no channel conversation.escalated names');
});

t.test('in order at the receiver: takeover, release, takeover, release, with messages between', async (t) => {
  // The receiver answers each request after its own short delay, so nothing but the dispatcher
  // keeps one conversation's deliveries in order.
  receiver.answer = () => ({ status: 200, delayMs: Math.floor(Math.random() * 15) });
  const { bot, hook } = await hooked('Order', [...LIFECYCLE, 'message.received']);
  const sessions = Array.from({ length: 8 }, (_, i) => `embed-order-${i}`);
  await Promise.all(
    sessions.map(async (session) => {
      await chat(bot.id, 'one', session);
      await services.control.takeOver(bot.id, session, 'Alice');
      await chat(bot.id, 'two', session);
      await services.control.release(bot.id, session, 'Alice');
      await services.control.takeOver(bot.id, session, 'Bob');
      await services.control.release(bot.id, session);
    }),
  );
  const expected = [
    ['message.received', 'one'],
    ['conversation.taken_over', 'Alice'],
    ['message.received', 'two'],
    ['conversation.released', 'Alice'],
    ['conversation.taken_over', 'Bob'],
    ['conversation.released', 'Bob'],
  ];
  const seen = (session: string) =>
    requestsFor(hook)
      .filter((r) => r.body.data.session_id === session)
      .map((r) => [r.body.event, r.body.data.agent ?? r.body.data.content]);
  await until(() => sessions.every((s) => seen(s).length >= expected.length), 'every delivery', 20_000);
  await until(settled(bot.id), 'the outbox settled');
  for (const session of sessions) t.same(seen(session), expected, session);
});

t.test('retries at the configured delays, then failed; redelivery sends the same bytes again', async (t) => {
  receiver.answer = (request) =>
    request.headers['x-switchboard-event'] === 'conversation.taken_over'
      ? { status: 503, body: 'busy' }
      : { status: 200 };
  const { bot, hook } = await hooked('Retries', LIFECYCLE);
  await chat(bot.id, 'hi', 'embed-retry');
  await services.control.takeOver(bot.id, 'embed-retry', 'Alice');
  await services.control.release(bot.id, 'embed-retry', 'Alice');
  const failed = await until(async () => {
    const entry = (await services.deliveries.log(hook.id)).find((d) => d.event === 'conversation.taken_over');
    return entry?.status === 'failed' && entry;
  }, 'the permanent failure');
  t.same(
    failed.attempts.map((a) => [a.attempt, a.status_code, a.response_body]),
    [
      [1, 503, 'busy'],
      [2, 503, 'busy'],
      [3, 503, 'busy'],
      [4, 503, 'busy'],
    ],
  );
  const tries = requestsFor(hook).filter((r) => r.body.event === 'conversation.taken_over');
  t.same(
    tries.map((r) => r.headers['x-switchboard-attempt']),
    ['1', '2', '3', '4'],
  );
  t.same(new Set(tries.map((r) => r.headers['x-switchboard-delivery'])), new Set([failed.id]), 'one delivery id');
  t.equal(new Set(tries.map((r) => r.raw.toString('hex'))).size, 1, 'the same bytes every time');
  const gaps = tries.slice(1).map((r, i) => r.at - tries[i]!.at);
  [200, 400, 600].forEach((delay, i) => t.ok(gaps[i]! >= delay - 20, `retry ${i + 1} after ${gaps[i]} ms`));
  t.same(
    requestsFor(hook)
      .filter((r) => r.body.event === 'conversation.released')
      .map((r) => r.headers['x-switchboard-attempt']),
    ['1'],
    'the release went out after the first failed attempt, without waiting for the retries',
  );

  // Answered a while after the attempt starts, so that the delivery the CLI reads back right after
  // requeueing it is still pending, however soon the gateway's dispatcher takes it.
  receiver.answer = () => ({ status: 200, body: 'got it', delayMs: 300 });
  const again = await runCliJson(['webhook', 'redeliver', '--delivery', failed.id], cliEnv);
  t.equal(again.status, 'pending');
  const delivered = await until(async () => {
    const entry = (await services.deliveries.log(hook.id)).find((d) => d.id === failed.id);
    return entry?.status === 'delivered' && entry;
  }, 'the redelivery');
  t.same(
    delivered.attempts.map((a) => [a.attempt, a.status_code]),
    [
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
      [5, 200],
    ],
  );
  const last = requestsFor(hook).at(-1)!;
  t.equal(last.headers['x-switchboard-delivery'], failed.id);
  t.equal(last.headers['x-switchboard-attempt'], '5');
  t.equal(last.raw.toString('hex'), tries[0]!.raw.toString('hex'), 'the same bytes');
  t.equal(last.signatureValid, true);
});

t.test('the owner answering on WhatsApp takes the conversation over: conversation.taken_over, once', async (t) => {
  receiver.answer = () => ({ status: 200 });
  const { bot, hook } = await hooked('Phone', LIFECYCLE);
  const before = whatsapp.sockets.length;
  await services.whatsapp.requestLink(bot.id, null);
  await services.signals.publish({ kind: 'channel', chatbot_id: bot.id, channel: 'whatsapp' });
  const socket = await whatsapp.socket(before);
  socket.open('4930000099:7@s.whatsapp.net');
  await until(async () => (await services.whatsapp.get(bot.id)).state === 'linked', 'linked');
  const visitor = '4915112345678@s.whatsapp.net';
  const session = `wa_${visitor}`;
  socket.receive([textMessage(visitor, 'Is the shop open?')]);
  await until(() => socket.sent.length === 1, 'the AI answer');
  socket.receive([textMessage(visitor, 'Yes, until 6pm!', { fromMe: true })]);
  socket.receive([textMessage(visitor, 'And on Sundays until 2pm.', { fromMe: true })]);
  await until(async () => (await services.control.show(bot.id, session)).messages.length === 4, 'stored');
  t.equal((await services.conversations.get(bot.id, session)).taken_over_by, 'owner');
  await services.control.release(bot.id, session);
  await until(() => changes(hook, session).length >= 2, 'two deliveries');
  await until(settled(bot.id), 'the outbox settled');
  t.same(changes(hook, session), [
    ['conversation.taken_over', 'owner'],
    ['conversation.released', 'owner'],
  ]);
  const { conversation_id } = await services.control.show(bot.id, session);
  const [taken] = requestsFor(hook);
  t.same(taken!.body.data, {
    conversation_id,
    session_id: session,
    channel: 'whatsapp',
    agent: 'owner',
    taken_over_at: taken!.body.timestamp,
  });
});

t.test('the dashboard and the CLI select them; the test event sends a sample of each', async (t) => {
  receiver.answer = () => ({ status: 200 });
  const bot = await services.chatbots.create(owner.id, { name: 'Forms' });
  const dashboard = await DashboardClient.signIn(gw.baseUrl, owner);
  const created = await dashboard.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: ['conversation.released', 'conversation.taken_over'],
  });
  t.equal(created.status, 201);
  t.same(created.body.events, ['conversation.released', 'conversation.taken_over']);
  receiver.secrets.push(created.body.secret);
  const refused = await dashboard.post(`/dashboard/api/chatbots/${bot.id}/webhooks`, {
    url: receiver.url,
    events: ['conversation.handed_over'],
  });
  t.same(
    [refused.status, refused.body],
    [
      400,
      {
        detail:
          'Unknown event conversation.handed_over; events are: lead.captured, conversation.started, message.received, conversation.escalated, conversation.taken_over, conversation.released.',
      },
    ],
  );
  for (const event of LIFECYCLE) {
    const sent = await dashboard.post(`/dashboard/api/webhooks/${created.body.id}/test`, { event });
    t.equal(sent.status, 201);
    const request = await until(
      () => receiver.received.find((r) => r.headers['x-switchboard-delivery'] === sent.body.id),
      `the test ${event}`,
    );
    const at = event === 'conversation.taken_over' ? 'taken_over_at' : 'released_at';
    t.same(request.body.data, {
      conversation_id: request.body.data.conversation_id,
      session_id: request.body.data.session_id,
      channel: 'web',
      agent: 'Test Agent',
      [at]: request.body.timestamp,
      test: true,
    });
    t.equal(request.headers['x-switchboard-event'], event);
  }
  const cli = await runCli(
    ['webhook', 'create', '--bot', bot.id, '--url', receiver.url, '--events', 'conversation.taken_over'],
    cliEnv,
  );
  t.equal(cli.code, 0, cli.stderr);
  t.same(JSON.parse(cli.stdout).events, ['conversation.taken_over']);
});
