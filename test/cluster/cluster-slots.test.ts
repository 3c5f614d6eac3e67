import { createClient } from 'redis';
import t from 'tap';
import { LuaScript } from '../../src/redis/lua-script.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { FakeGraphWhatsApp, postWebhook, statusWebhook, textWebhook } from '../fakes/fake-graph-whatsapp.ts';
import { FakeWhatsApp, textMessage } from '../fakes/fake-whatsapp.ts';
import { FakeOpenAiEmbeddings } from '../fakes/fake-openai-embeddings.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { systemClock } from '../../src/clock.ts';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startClusterRedis } from '../support/redis-server.ts';
import { SlotMonitor } from '../support/slot-monitor.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Redis Cluster readiness. The gateway runs against a real Redis Cluster (one shard serving every
// slot, so one server is enough): the cluster itself refuses any script or transaction whose declared
// keys span hash slots (CROSSSLOT). A MONITOR of the server also sees the keys each script touches
// without declaring them, and the commands of every transaction; each group must stay in one slot.
// The walk through the product below runs every Lua script the gateway has.

t.test('every script and transaction keeps to one hash slot on a Redis Cluster', async (t) => {
  const redis = await startClusterRedis();
  const monitor = await SlotMonitor.start(redis.url);
  const openai = await fakeOpenAi().start();
  openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}`, delayMs: 250 });
  const receiver = await new WebhookReceiver().start();
  const whatsapp = new FakeWhatsApp();
  const graph = await new FakeGraphWhatsApp().start();
  const config = loadConfig({
    REDIS_URL: redis.url,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_POLL_MS: '50',
    CONVERSATION_RATE_LIMIT: '3',
    CONVERSATION_LEASE_MS: '600',
    PENDING_EVENT_GRACE_MS: '200',
    WHATSAPP_SOCKET_LEASE_MS: '600',
    GRAPH_API_BASE_URL: graph.url,
    CRAWL_ALLOW_PRIVATE: '1',
    SECRET_KEY: '1f'.repeat(32),
  });
  const app = await startApp(config, createLogger('silent'), {
    shutdownGraceMs: 500,
    whatsappSockets: whatsapp.factory,
  });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await app.stop();
    await monitor.stop();
    await receiver.stop();
    await openai.stop();
    await graph.stop();
    await redis.stop();
  });
  const s = app.services;
  const base = `http://127.0.0.1:${app.port}`;

  // Accounts, keys, chatbots, settings, webhooks.
  const owner = await s.accounts.create('cluster@example.com', 'scale');
  const key = await s.apiKeys.create(owner.id, 'cluster');
  const bot = await s.chatbots.create(owner.id, { name: 'Cluster Bot' });
  await s.chatbots.configure(bot.id, { lead_fields: [{ name: 'company', label: 'Company', required: false }] });
  const hook = await s.webhooks.create(bot.id, receiver.url, [
    'conversation.started',
    'message.received',
    'conversation.escalated',
    'lead.captured',
  ]);

  // Chat over the public API: the gateway's rate limit, the quota, turns with a lease renewed while
  // the LLM thinks, and the conversation limit (its refusal gives the quota back).
  const chat = (message: string) =>
    fetch(`${base}/api/v1/chatbots/${bot.id}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message, session_id: 'api-cluster' }),
    });
  const statuses = await Promise.all(['one', 'two', 'three', 'four'].map(async (m) => (await chat(m)).status));
  t.same(statuses.sort(), [200, 200, 200, 429]);
  // The gate without a message to count (the chat's gate counts its message in the same script).
  const listed = await fetch(`${base}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key.key}` } });
  t.equal(listed.status, 200);
  // A widget socket, its open counted per client address.
  const visitor = await WidgetClient.ready(base, { chatbot_id: bot.id });
  await visitor.client.close();

  // Escalation, takeover, an agent's reply, release; a lead and its update; a source ingested and deleted.
  await s.control.escalate(bot.id, 'api-cluster');
  await s.control.takeOver(bot.id, 'api-cluster', 'Alice');
  await s.control.reply(bot.id, 'api-cluster', 'Alice', 'Hello from Alice');
  await s.control.release(bot.id, 'api-cluster');
  // A reply rated down; the unanswered inbox (the chatbot has no sources: every question is in it), one
  // of its questions dismissed.
  const reply = (await s.conversations.recentMessages(bot.id, 'api-cluster', 20)).find((m) => m.role === 'assistant');
  await s.feedback.rate(bot.id, 'api-cluster', reply!.created_at, 'down');
  await s.unansweredRecorder.settled();
  const [question] = await s.unanswered.list(bot.id, 'open');
  await s.improver.dismiss(bot.id, question!.id);
  for (const email of ['grace@example.com', 'grace.hopper@example.com']) {
    // The second form of the session updates its lead.
    await s.leadCapture.capture(await s.chatbots.get(bot.id), 'embed-lead', {
      name: 'Grace',
      email,
      custom_data: { company: 'Navy' },
    });
  }
  const source = await s.intake.addText(bot.id, 'Opening hours: nine to five on weekdays.', 'Hours');
  await until(async () => (await s.sources.get(source.id)).status === 'done', 'ingestion');
  await s.intake.remove(source.id, app.retrieval.index);
  // The queue's scripts by hand, with the gateway's own worker stopped: it would otherwise claim the
  // queued source first whenever its poll falls between the enqueue (or the finish) and the claim.
  await app.ingestion.stop();
  await s.ingestion.enqueue(bot.id, 'src-by-hand', systemClock.nowMicros());
  const claimed = await s.ingestion.claimOne(bot.id, 'src-by-hand', systemClock.nowMicros(), 1000);
  t.equal(await s.ingestion.renew(claimed!, systemClock.nowMicros(), 1000), true);
  // Asked to sync while leased: marked, and queued again when the claim finishes.
  t.equal(await s.ingestion.syncNow(bot.id, 'src-by-hand', systemClock.nowMicros()), 'running');
  await s.ingestion.finish(claimed!, systemClock.nowMicros());
  t.equal(await s.ingestion.size(), 1);
  const again = await s.ingestion.claimOne(bot.id, 'src-by-hand', systemClock.nowMicros(), 1000);
  await s.ingestion.finish(again!, systemClock.nowMicros());
  const alice = await s.agents.create(owner.id, 'Alice');
  await s.presence.enter(owner.id, 'connection-1', 1000);
  // Canned replies, and an agent's reply suggestion (the per-agent gate's hold taken and released).
  const canned = await s.cannedReplies.create(owner.id, { shortcut: 'hours', text: 'Nine to five.' });
  await s.cannedReplies.update(owner.id, canned.id, { shortcut: 'opening-hours' });
  await s.cannedReplies.delete(owner.id, canned.id);
  await s.control.takeOver(bot.id, 'api-cluster', 'Alice');
  const agent = await WidgetClient.at(`${base.replace(/^http/, 'ws')}/agents/v1/socket`);
  agent.send({ type: 'auth', token: alice.token });
  await agent.next('conversations');
  agent.send({ type: 'suggest', chatbot_id: bot.id, session_id: 'api-cluster', ref: 1 });
  t.match(await agent.next('suggestion'), { ref: 1 });
  await agent.close();
  await s.control.release(bot.id, 'api-cluster');
  // The rating changed (the rating script's other branch).
  await s.feedback.rate(bot.id, 'api-cluster', reply!.created_at, 'up');

  // Webhook deliveries: sent, looked at, one redelivered; a claim given back unattempted.
  await until(() => receiver.received.length >= 6, 'the webhook deliveries');
  const [latest] = await s.deliveries.log(hook.id, { limit: 1 });
  await s.deliveries.get(latest!.id);
  await until(async () => (await s.deliveries.get(latest!.id)).status === 'delivered', 'delivered');
  await s.deliveries.redeliver(latest!.id);
  await app.dispatcher.stop();
  await s.outbox.emit(
    { event: 'message.received', chatbot_id: bot.id, timestamp: '', data: { conversation_id: 'x' } },
    'by-hand',
  );
  const [held] = await s.deliveries.claim(1, 1000, 'token');
  await s.deliveries.release(held!, systemClock.nowMicros());

  // WhatsApp: linked through a socket lease, the owner answering from the phone, disconnected.
  await s.whatsapp.requestLink(bot.id, null);
  await s.signals.publish({ kind: 'channel', chatbot_id: bot.id, channel: 'whatsapp' });
  const socket = await whatsapp.socket(0);
  socket.open('4930000000:1@s.whatsapp.net');
  await until(async () => (await s.whatsapp.get(bot.id)).state === 'linked', 'linked');
  socket.receive([textMessage('4915112345678@s.whatsapp.net', 'hi there')]);
  await until(() => socket.sent.length === 1, 'the WhatsApp reply');
  socket.receive([textMessage('4915112345678@s.whatsapp.net', 'I will take it', { fromMe: true })]);
  await until(
    async () => (await s.conversations.get(bot.id, 'wa_4915112345678@s.whatsapp.net')).taken_over_by === 'owner',
    'the owner takeover',
  );
  await s.whatsapp.disconnect(bot.id);
  await s.signals.publish({ kind: 'channel', chatbot_id: bot.id, channel: 'whatsapp' });
  await until(() => socket.loggedOut, 'the logout');

  // WhatsApp by the Cloud API: a signed message answered, a status callback recorded on the reply.
  const number = graph.addNumber();
  await s.whatsappCloudConnector.connect(bot.id, { phone_number_id: number.id, token: number.token, app_secret: 'a'.repeat(32) }); // prettier-ignore
  await postWebhook(base, bot.id, textWebhook(number, '4915100000001', 'wamid.SLOT', 'hello cloud'), 'a'.repeat(32));
  const cloudReply = await until(() => graph.of('send', number.id)[0], 'the Cloud API reply');
  await postWebhook(base, bot.id, statusWebhook(number, cloudReply.wamid!, '4915100000001', 'read'), 'a'.repeat(32));
  await until(
    async () =>
      (await s.conversations.transcript(bot.id, 'wa_4915100000001@s.whatsapp.net')).messages[1]?.delivery?.status ===
      'read',
    'the status recorded',
  );
  await s.whatsappCloudConnector.disconnect(bot.id);

  // Telegram connections, and an event left pending by a "dead" process, picked up by the sweeper.
  await s.telegram.connect({ chatbotId: bot.id, token: '1:x', mode: 'polling', botInfo: {} });
  await s.telegram.disconnect(bot.id);
  await s.relay.register(bot.id);
  await s.conversations.beginTurn(
    bot.id,
    'api-abandoned',
    { content: 'left behind', source: 'api' },
    { rateLimit: 10, rateWindowMs: 60_000, leaseMs: 300, historySize: 10 },
  );
  // The lease such a turn leaves, let go of by its own process (after an outage, once Redis answers).
  t.equal(await s.conversations.releaseOwnLease(bot.id, 'api-abandoned'), true);
  await until(async () => !(await s.relay.store.hasEntries(bot.id)), 'the sweep');
  // The dashboard's owner sign-in: an invitation accepted, a sign-in, a session used, all ended.
  const invite = await s.ownerAuth.invite(owner.id, base);
  await s.ownerAuth.acceptInvite(new URL(invite.url).hash.replace('#/invite/', ''), 'correct horse battery');
  const signedIn = await s.ownerAuth.signIn('cluster@example.com', 'correct horse battery', '127.0.0.1');
  await s.sessions.authenticate(signedIn.session.token);
  await s.ownerAuth.signOutEverywhere(owner.id);
  // An OAuth sign-in the owner declined (its state taken once), and a connection with a sealed secret.
  const state = await s.oauth.begin('dropbox', owner.id, { kind: 'cli' });
  await t.rejects(s.oauth.complete('dropbox', { state, error: 'access_denied' }, '', `${base}/callback`), {
    message: 'Dropbox access was not granted.',
  });
  const connection = await s.connections.create(owner.id, {
    service: 'notion',
    authKind: 'token',
    secret: { token: 't' },
  });
  await s.connections.delete(connection.id);
  // Retention: a chatbot's sweep claimed, renewed and ended by hand, with the gateway's worker stopped
  // (times are the gateway clock's, which may run ahead of Date.now()); an erasure request (a session
  // whose lead is left, whose inbox groups are unlinked).
  await app.retention.stop();
  await s.chatbots.configure(bot.id, { retention: { conversations_days: 30 } });
  const [sweep] = await s.retention.claim(1, systemClock.nowMicros(), 1000);
  t.equal(await s.retention.renew(sweep!, systemClock.nowMicros(), 1000), true);
  t.equal(await s.retention.finish(sweep!, systemClock.nowMicros() + 3_600_000_000), true);
  t.match(await s.conversationErasure.erase(bot.id, 'embed-lead'), { deleted: { conversation: false, lead: true } });
  // An import: a conversation and its lead written as they were in another install.
  const at = '2026-11-21T21:06:33.123456+00:00';
  await s.transfer.restore(bot.id, {
    conversation_id: crypto.randomUUID(),
    chatbot_id: bot.id,
    session_id: 'embed-imported',
    source: 'embed',
    created_at: at,
    last_activity_at: at,
    escalated_at: null,
    taken_over_by: null,
    messages: [{ role: 'user', content: 'Imported', created_at: at }],
  });
  await s.leads.restore(
    {
      lead_id: crypto.randomUUID(),
      chatbot_id: bot.id,
      session_id: 'embed-imported',
      name: 'Ada',
      email: 'ada@example.com',
      phone: '',
      custom_data: {},
      created_at: at,
    },
    systemClock.nowMicros(),
  );
  await s.apiKeys.revoke(owner.id, key.id);
  stopped = true;
  await app.stop();
  // A gateway with another EMBEDDINGS re-embeds the stored chunks, switches and drops the old ones.
  const embeddings = await new FakeOpenAiEmbeddings().start();
  const mover = await startApp(
    loadConfig({
      REDIS_URL: redis.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      EMBEDDINGS: 'openai:fake-embed',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: embeddings.url,
    }),
    createLogger('silent'),
    { shutdownGraceMs: 500, spaceMigration: { pollMs: 20 } },
  );
  await mover.migration!.ended();
  t.match(await mover.services.spaces.migration(), { to: 'openai-fake-embed', phase: 'done' });
  await mover.stop();
  await embeddings.stop();

  const seen = new Set(monitor.groups.filter((group) => group.kind === 'script').map((group) => group.script));
  const missed = LuaScript.all.filter((script) => !seen.has(script.sha1) && !seen.has(script.source));
  t.same(
    missed.map((script) => script.source.trim().split('\n')[0]),
    [],
    `all ${LuaScript.all.length} scripts ran`,
  );
  const violations = await monitor.violations();
  t.same(violations, [], 'no script or transaction spans hash slots');
  t.same(
    monitor.unreadable.map((command) => command[0]!.toLowerCase()).filter((name) => !['ping', 'time'].includes(name)),
    [],
    'the server told the keys of every command',
  );
  const scripts = monitor.groups.filter((group) => group.kind === 'script').length;
  const transactions = monitor.groups.length - scripts;
  t.ok(scripts > 100 && transactions > 10, `checked ${scripts} script runs and ${transactions} transactions`);
  t.comment(`checked ${scripts} script runs and ${transactions} transactions`);
  t.ok(monitor.counts.get('spublish')! > 0, 'signals travel on a sharded channel');
  t.equal(monitor.counts.get('publish'), undefined, 'and never on a classic one');
});

t.test('the monitor catches a script that touches keys of two slots without declaring them', async (t) => {
  const redis = await startClusterRedis();
  const monitor = await SlotMonitor.start(redis.url);
  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(async () => {
    client.destroy();
    await monitor.stop();
    await redis.stop();
  });
  await client.eval("redis.call('SET', KEYS[1], '1'); return redis.call('GET', 'other')", { keys: ['{b:1}:x'] });
  await client.eval("redis.call('SET', KEYS[1], '1'); return redis.call('GET', '{b:1}:y')", { keys: ['{b:1}:x'] });
  await until(() => monitor.groups.length === 2, 'both runs seen');
  const violations = await monitor.violations();
  t.equal(violations.length, 1);
  t.same(Object.keys(violations[0]!.slots), ['{b:1}:x', 'other']);
});
