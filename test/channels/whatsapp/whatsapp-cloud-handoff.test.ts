import t from 'tap';
import { statusWebhook, textWebhook } from '../../fakes/fake-graph-whatsapp.ts';
import { APP_SECRET, startCloudGateway } from '../../support/cloud-gateway.ts';
import { until } from '../../support/until.ts';
import { WidgetClient } from '../../support/widget-client.ts';

// Issue 23: a Cloud API chat taken over by an agent (the hand-off lines, the agent's reply and typing),
// the 24-hour window an agent's reply must fall in, Graph API errors recorded on the replies and
// retried, and the one transport per chatbot.
const cloud = await startCloudGateway();
t.teardown(() => cloud.stop());
const { gw, graph, openai, logs, services, owner, linkedDevices } = cloud;
const { connected, visitor, messageId, sessionOf, post, say, transcript, messages } = cloud;

t.test(
  'takeover: the AI stays silent, the agent reply reaches the chat, release hands back; each change is told',
  async (t) => {
    const { bot, number } = await connected('Human');
    const alice = await services.agents.create(owner.user.id, 'Alice', 'Al');
    const from = visitor();
    const session = sessionOf(from);
    await say(bot.id, number, from, 'Hello?');
    await until(() => graph.texts(number.id).length === 1, 'the AI reply');

    const agent = await WidgetClient.at(`${gw.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
    t.teardown(() => agent.close());
    agent.send({ type: 'auth', token: alice.token });
    await agent.next('authenticated');
    const command = async (frame: Record<string, unknown>) => {
      agent.send({ ...frame, chatbot_id: bot.id, session_id: session, ref: frame.type });
      return agent.next(['ok', 'error']);
    };
    t.match(await command({ type: 'takeover' }), { type: 'ok' });
    await until(() => graph.texts(number.id).length === 2, 'the joined line');
    const before = openai.requests.length;
    await say(bot.id, number, from, 'Is someone there?');
    await until(async () => (await messages(bot.id, session)).length === 3, 'the stored message');
    t.match(await command({ type: 'typing' }), { type: 'ok' });
    await until(() => graph.of('read', number.id).length === 2, "the agent's typing");
    t.match(await command({ type: 'reply', content: 'Hi, Alice here.' }), { type: 'ok' });
    t.match(await command({ type: 'release' }), { type: 'ok' });
    await until(() => graph.texts(number.id).length === 4, 'the reply and the left line');
    t.same(graph.texts(number.id), [
      [from, 'AI: Hello?'],
      [from, 'Alice joined the conversation.'],
      [from, 'Hi, Alice here.'],
      [from, 'Alice left the conversation. The assistant is back.'],
    ]);
    t.equal(openai.requests.length, before, 'the AI stayed silent while Alice held it');
    t.same(graph.of('read', number.id).at(-1)!.body.typing_indicator, { type: 'text' }, "the agent's typing");
    t.match((await transcript(bot.id, session)).messages.at(-1), {
      role: 'agent',
      content: 'Hi, Alice here.',
      agent: { name: 'Alice', initial: 'Al' },
      delivery: { status: 'accepted' },
    });
  },
);

t.test("the 24-hour window: an agent's reply after it is refused in the console, nothing stored or sent", async (t) => {
  const { bot, number } = await connected('Window');
  const alice = await services.agents.create(owner.user.id, 'Alice W', 'A');
  const from = visitor();
  const session = sessionOf(from);
  await say(bot.id, number, from, 'Can you call me back tomorrow?');
  await until(() => graph.texts(number.id).length === 1, 'the AI reply');
  const agent = await WidgetClient.at(`${gw.baseUrl.replace(/^http/, 'ws')}/agents/v1/socket`);
  t.teardown(async () => {
    cloud.clock.aheadMs = 0;
    await agent.close();
  });
  agent.send({ type: 'auth', token: alice.token });
  await agent.next('authenticated');
  const reply = async (content: string) => {
    agent.send({ type: 'reply', chatbot_id: bot.id, session_id: session, content, ref: content });
    return agent.next(['ok', 'error']);
  };
  agent.send({ type: 'takeover', chatbot_id: bot.id, session_id: session, ref: 'take' });
  t.match(await agent.next(['ok', 'error']), { type: 'ok', ref: 'take' });
  await until(() => graph.texts(number.id).length === 2, 'the joined line');

  cloud.clock.aheadMs = 24 * 3600 * 1000 - 60_000;
  t.match(await reply('Still within the day'), { type: 'ok' });
  cloud.clock.aheadMs = 24 * 3600 * 1000 + 1000;
  t.same(await reply('A day too late'), {
    type: 'error',
    ref: 'A day too late',
    detail: 'The 24-hour WhatsApp window has closed: the visitor must write first.',
  });
  await until(() => graph.texts(number.id).length === 3, 'the reply in time');
  t.same(graph.texts(number.id).at(-1), [from, 'Still within the day']);
  t.same(
    (await transcript(bot.id, session)).messages.map((m) => m.content).slice(-1),
    ['Still within the day'],
    'the late reply was not stored',
  );
  t.equal(graph.of('send', number.id).length, 3, 'nothing sent for the late reply');
  // The visitor writes again, a day later by the gateway's clock: the window opens anew.
  await post(bot.id, textWebhook(number, from, messageId(), "I'm back", Date.now() + cloud.clock.aheadMs));
  await until(async () => (await messages(bot.id, session)).length === 4, 'the visitor message');
  t.match(await reply('Welcome back'), { type: 'ok' });
  await until(() => graph.texts(number.id).length === 4, 'the welcome');
  t.same(graph.texts(number.id).at(-1), [from, 'Welcome back']);
});

t.test('Graph errors: 131047 and a failed status recorded with their meaning; 130429 tried again', async (t) => {
  const { bot, number } = await connected('Errors');
  const from = visitor();
  const session = sessionOf(from);
  graph.failNext('send', {
    status: 400,
    code: 131047,
    title: 'Re-engagement message',
    details:
      'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  });
  await say(bot.id, number, from, 'first');
  await until(async () => (await messages(bot.id, session))[1]?.delivery, 'the failure recorded');
  t.match((await transcript(bot.id, session)).messages[1], {
    role: 'assistant',
    content: 'AI: first',
    delivery: {
      status: 'failed',
      error_code: 131047,
      error: 'The 24-hour WhatsApp window has closed: the visitor must write first.',
    },
  });

  graph.failNext('send', { status: 429, code: 130429, title: 'Rate limit hit' });
  graph.failNext('send', { status: 429, code: 130429, title: 'Rate limit hit', retryAfter: 0 });
  const sends = graph.of('send', number.id).length;
  await say(bot.id, number, from, 'second');
  await until(() => graph.texts(number.id).length === sends + 3, 'two refusals and the send');
  const tries = graph.of('send', number.id).slice(-3);
  t.same(
    tries.map((call) => call.body.text.body),
    ['AI: second', 'AI: second', 'AI: second'],
  );
  t.ok(
    tries[1]!.at - tries[0]!.at >= 25,
    `waited GRAPH_API_RETRY_MS before the first retry (${tries[1]!.at - tries[0]!.at} ms)`,
  );
  await until(async () => (await messages(bot.id, session))[3]?.delivery, 'the second reply recorded');
  t.same(
    graph.texts(number.id).map(([, body]) => body),
    ['AI: first', 'AI: second', 'AI: second', 'AI: second'],
    "Meta's refusal of a reply is not told to the visitor",
  );
  t.match((await transcript(bot.id, session)).messages[3], { content: 'AI: second', delivery: { status: 'accepted' } });

  // Meta accepts a message, then reports it undeliverable.
  const accepted = graph.of('send', number.id).at(-1)!;
  const undeliverable = { code: 131026, title: 'Message undeliverable', details: 'Unable to deliver message.' };
  await post(bot.id, statusWebhook(number, accepted.wamid!, from, 'failed', undeliverable));
  t.match((await transcript(bot.id, session)).messages[3], {
    delivery: {
      status: 'failed',
      error_code: 131026,
      error:
        'WhatsApp could not deliver the message: the number may not be on WhatsApp, its owner may not have accepted the latest terms, or may use an old version of WhatsApp.',
    },
  });
  await post(bot.id, statusWebhook(number, accepted.wamid!, from, 'read'));
  t.match((await transcript(bot.id, session)).messages[3], { delivery: { status: 'failed' } }, 'failed is final');
});

t.test(
  'one transport per chatbot: connecting the Cloud API unlinks the device, linking ends the Cloud API',
  async (t) => {
    const bot = await services.chatbots.create(owner.user.id, { name: 'Switcher' });
    const before = linkedDevices.sockets.length;
    await services.whatsappLinker.link(bot.id);
    const socket = await linkedDevices.socket(before);
    socket.open('4930000009:3@s.whatsapp.net');
    await until(async () => (await services.whatsapp.find(bot.id))?.state === 'linked', 'linked');
    const number = graph.addNumber();
    await services.whatsappCloudConnector.connect(bot.id, { phone_number_id: number.id, token: number.token, app_secret: APP_SECRET }); // prettier-ignore
    await until(() => socket.loggedOut, 'the device logged out');
    t.equal(await services.whatsapp.find(bot.id), undefined);
    t.match(await services.whatsappCloudConnector.status(bot.id), { phone_number_id: number.id });

    await services.whatsappLinker.link(bot.id);
    t.equal(await services.whatsappCloudConnector.status(bot.id), null);
    const res = await say(bot.id, number, visitor(), 'anyone?');
    t.same([res.status, await res.json()], [404, { detail: 'WhatsApp Cloud API is not connected for this chatbot.' }]);
    await services.whatsappLinker.disconnect(bot.id);
  },
);

t.test('no token or app secret is ever logged', async (t) => {
  const logged = JSON.stringify(logs.lines);
  const webhooks = logs.lines.filter(
    (line) => line.msg === 'request' && String(line.path).startsWith('/channels/whatsapp/'),
  );
  t.ok(webhooks.length > 0, `the gateway logged (at debug level) while it took webhooks (${webhooks.length})`);
  t.notMatch(logged, APP_SECRET);
  for (const number of graph.numbers()) t.notMatch(logged, number.token);
});
