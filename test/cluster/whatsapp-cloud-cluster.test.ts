import t from 'tap';
import { FakeGraphWhatsApp, postWebhook, statusWebhook, textWebhook } from '../fakes/fake-graph-whatsapp.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { startGatewayCluster } from '../support/gateway-cluster.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';

// Issue 23, item 4: Meta posts a number's webhooks to whichever gateway the load balancer picks.
// Two gateway processes on one Redis: a message delivered to both at once is answered once, a
// status callback reaching the other gateway is recorded on the reply, and an agent on B answers a
// chat whose messages came in on A.
t.test('two gateways receiving one number’s webhooks', async (t) => {
  const graph = await new FakeGraphWhatsApp().start();
  const openai = await fakeOpenAi().start();
  openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}`, delayMs: 200 });
  const cluster = await startGatewayCluster(2, {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    GRAPH_API_BASE_URL: graph.url,
    GRAPH_API_RETRY_MS: '20',
    CRAWL_ALLOW_PRIVATE: '1',
    SECRET_KEY: '3c'.repeat(32),
  });
  const [a, b] = cluster.gateways as [(typeof cluster.gateways)[0], (typeof cluster.gateways)[0]];
  const sockets: WidgetClient[] = [];
  t.teardown(async () => {
    for (const socket of sockets) await socket.close();
    await cluster.stop();
    await openai.stop();
    await graph.stop();
  });
  const { services } = cluster;
  const owner = await services.accounts.create('cloud-cluster@example.com', 'scale');
  const bot = await services.chatbots.create(owner.id, { name: 'Cloud Cluster' });
  const number = graph.addNumber();
  const APP_SECRET = 'feedface'.repeat(4);
  const connection = await services.whatsappCloudConnector.connect(bot.id, {
    phone_number_id: number.id,
    token: number.token,
    app_secret: APP_SECRET,
  });
  const from = '4915100000777';
  const session = `wa_${from}@s.whatsapp.net`;
  const post = (gateway: typeof a, payload: unknown) => postWebhook(gateway.baseUrl, bot.id, payload, APP_SECRET);
  const messages = async () =>
    (await services.conversations.exists(bot.id, session))
      ? (await services.conversations.transcript(bot.id, session)).messages
      : [];

  await t.test('each gateway answers the subscription check with the stored verify token', async (t) => {
    for (const gateway of [a, b]) {
      const query = new URLSearchParams({
        'hub.mode': 'subscribe',
        'hub.verify_token': connection.verify_token,
        'hub.challenge': 'challenge-42',
      });
      const res = await fetch(`${gateway.baseUrl}/channels/whatsapp/${bot.id}?${query.toString()}`);
      t.same([res.status, await res.text()], [200, 'challenge-42']);
    }
  });

  await t.test('one message id posted to both gateways at once: one turn, one reply', async (t) => {
    const payload = textWebhook(number, from, 'wamid.CLUSTER1', 'Hello from anywhere');
    const answers = await Promise.all([post(a, payload), post(b, payload), post(a, payload), post(b, payload)]);
    t.same(
      answers.map((res) => res.status),
      [200, 200, 200, 200],
    );
    await until(() => graph.texts(number.id).length === 1, 'the reply');
    await until(async () => (await messages()).length === 2, 'the stored reply');
    // Meta retrying later, to either gateway, changes nothing (the next test's replies would come
    // after a late second answer, and its exact list would show it).
    await post(b, payload);
    await post(a, payload);
    t.same(graph.texts(number.id), [[from, 'AI: Hello from anywhere']]);
    t.equal(openai.requests.length, 1, 'the AI was asked once');
    t.same(
      (await messages()).map((m) => [m.role, m.content]),
      [
        ['user', 'Hello from anywhere'],
        ['assistant', 'AI: Hello from anywhere'],
      ],
    );
  });

  await t.test('messages of one chat arriving at alternate gateways are each answered once', async (t) => {
    for (const [index, gateway] of [a, b, a, b].entries()) {
      const res = await post(gateway, textWebhook(number, from, `wamid.ALT${index}`, `question ${index}`));
      t.equal(res.status, 200);
      await until(() => graph.texts(number.id).length === index + 2, `answer ${index}`);
    }
    t.same(
      graph.texts(number.id).slice(1),
      [0, 1, 2, 3].map((i) => [from, `AI: question ${i}`]),
    );
  });

  await t.test('a status callback reaching the other gateway is recorded on the reply', async (t) => {
    const sent = graph.of('send', number.id)[0]!;
    t.equal((await post(b, statusWebhook(number, sent.wamid!, from, 'delivered'))).status, 200);
    t.equal((await post(a, statusWebhook(number, sent.wamid!, from, 'read'))).status, 200);
    t.match((await messages())[1], { content: 'AI: Hello from anywhere', delivery: { status: 'read' } });
  });

  await t.test('an agent on B answers a chat whose messages came in on A', async (t) => {
    const agent = await services.agents.create(owner.id, 'Omar', 'O');
    const socket = await WidgetClient.at(`${b.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
    sockets.push(socket);
    socket.send({ type: 'auth', token: agent.token });
    await socket.next('authenticated');
    for (const frame of [
      { type: 'takeover', ref: 'take' },
      { type: 'reply', content: 'Omar here, from the other gateway.', ref: 'reply' },
    ]) {
      socket.send({ ...frame, chatbot_id: bot.id, session_id: session });
      t.match(await socket.next(['ok', 'error']), { type: 'ok', ref: frame.ref });
    }
    await until(() => graph.texts(number.id).length === 7, 'the joined line and the reply');
    t.same(graph.texts(number.id).slice(-2), [
      [from, 'Omar joined the conversation.'],
      [from, 'Omar here, from the other gateway.'],
    ]);
  });
});
