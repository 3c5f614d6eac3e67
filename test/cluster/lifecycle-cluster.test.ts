import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { WebhookReceiver } from '../fakes/webhook-receiver.ts';
import { chatCall, startGatewayCluster } from '../support/gateway-cluster.ts';
import { scaleOwnerWithBot } from '../support/scale-owner.ts';
import type { GatewayProcess } from '../support/gateway-process.ts';
import { outboxSettled } from '../support/outbox-settled.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Two gateways. A visitor's conversation lives on A; agents take it over and release it through
// either. Every gateway's dispatcher claims from the same queue, and the receiver still gets one
// conversation's events in the order they happened.
t.test('an agent on B takes over a conversation on A: its events, once each, in order', async (t) => {
  const openai = await fakeOpenAi().start();
  openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  const receiver = await new WebhookReceiver().start();
  const cluster = await startGatewayCluster(2, {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    CONVERSATION_RATE_LIMIT: '1000',
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_POLL_MS: '50',
  });
  const sockets: WidgetClient[] = [];
  t.teardown(async () => {
    for (const socket of sockets) await socket.close();
    await cluster.stop();
    await receiver.stop();
    await openai.stop();
  });
  const [a, b] = cluster.gateways as [GatewayProcess, GatewayProcess];
  const { services } = cluster;
  const { owner, key, bot } = await scaleOwnerWithBot(services, 'Lifecycle');
  const hook = await services.webhooks.create(bot.id, receiver.url, [
    'message.received',
    'conversation.taken_over',
    'conversation.released',
  ]);
  receiver.secrets.push(hook.secret);
  const alice = await services.agents.create(owner.id, 'Alice');
  const bob = await services.agents.create(owner.id, 'Bob');
  const agentOn = async (gateway: GatewayProcess, token: string) => {
    const socket = await WidgetClient.at(`${gateway.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
    sockets.push(socket);
    socket.send({ type: 'auth', token });
    await socket.next('authenticated');
    await socket.next('conversations');
    let refs = 0;
    /** Sends a takeover or release and waits for its ok. */
    return async (type: 'takeover' | 'release', sessionId: string) => {
      const ref = `${type}-${(refs += 1)}`;
      socket.send({ type, chatbot_id: bot.id, session_id: sessionId, ref });
      const answer = await socket.next(['ok', 'error']);
      if (answer.type !== 'ok' || answer.ref !== ref) throw new Error(JSON.stringify(answer));
    };
  };
  const aliceOnB = await agentOn(b, alice.token);
  const bobOnA = await agentOn(a, bob.token);
  /** The events the receiver got for a session, as [event, agent or content], first attempts only. */
  const seen = (sessionId: string) =>
    receiver.received
      .filter((r) => r.signatureValid && r.body.data.session_id === sessionId)
      .map((r) => [r.body.event, r.body.data.agent ?? r.body.data.content, r.headers['x-switchboard-attempt']]);
  const settled = () => outboxSettled(services, bot.id);

  // The widget visitor on A; Alice takes over through B, the AI on A stays silent, Alice releases.
  const { client: visitor, ready } = await WidgetClient.ready(a.baseUrl, { chatbot_id: bot.id });
  sockets.push(visitor);
  const session = String(ready.session_id);
  visitor.send({ type: 'message', content: 'Hello' });
  t.match(await visitor.next('message'), { role: 'assistant', content: 'AI: Hello' });
  await aliceOnB('takeover', session);
  await aliceOnB('takeover', session);
  visitor.send({ type: 'message', content: 'Anyone there?' });
  await until(
    async () => (await services.conversations.transcript(bot.id, session)).messages.length === 3,
    'the message stored',
  );
  await aliceOnB('release', session);
  await bobOnA('takeover', session);
  await until(() => seen(session).length >= 5, 'five deliveries', 20_000);
  await until(settled, 'the outbox settled');
  t.same(seen(session), [
    ['message.received', 'Hello', '1'],
    ['conversation.taken_over', 'Alice', '1'],
    ['message.received', 'Anyone there?', '1'],
    ['conversation.released', 'Alice', '1'],
    ['conversation.taken_over', 'Bob', '1'],
  ]);
  t.same(
    (await visitor.quietFor(200)).filter((frame) => frame.type === 'message'),
    [],
    'the AI never answered while held',
  );
  const taken = receiver.received.find((r) => r.body?.event === 'conversation.taken_over')!;
  t.same(taken.body.data, {
    conversation_id: (await services.conversations.get(bot.id, session)).conversation_id,
    session_id: session,
    channel: 'web',
    agent: 'Alice',
    taken_over_at: taken.body.timestamp,
  });

  // Many changes through both gateways, messages through either, a receiver answering after random
  // delays: each conversation's events still arrive in the order they happened.
  receiver.answer = () => ({ status: 200, delayMs: Math.floor(Math.random() * 30) });
  const sessions = Array.from({ length: 6 }, (_, i) => `api-order-${i}`);
  for (const id of sessions) {
    const chat = async (text: string) => {
      const result = await chatCall(cluster.pick(), key, bot.id, id, text);
      if (!('status' in result) || result.status !== 200) throw new Error(JSON.stringify(result));
    };
    await chat('one');
    await aliceOnB('takeover', id);
    await chat('two');
    await aliceOnB('release', id);
    await bobOnA('takeover', id);
    await bobOnA('release', id);
    await chat('three');
  }
  const expected = [
    ['message.received', 'one', '1'],
    ['conversation.taken_over', 'Alice', '1'],
    ['message.received', 'two', '1'],
    ['conversation.released', 'Alice', '1'],
    ['conversation.taken_over', 'Bob', '1'],
    ['conversation.released', 'Bob', '1'],
    ['message.received', 'three', '1'],
  ];
  await until(() => sessions.every((id) => seen(id).length >= expected.length), 'every delivery', 30_000);
  await until(settled, 'the outbox settled');
  for (const id of sessions) t.same(seen(id), expected, id);
});
