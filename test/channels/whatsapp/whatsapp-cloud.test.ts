import { createClient } from 'redis';
import t from 'tap';
import {
  hubSignature,
  messageWebhook,
  postWebhook,
  statusWebhook,
  textWebhook,
} from '../../fakes/fake-graph-whatsapp.ts';
import { heldAnswers } from '../../fakes/fake-llm-server.ts';
import { cliFailure, runCli, runCliJson } from '../../support/cli.ts';
import { APP_SECRET, echo, startCloudGateway } from '../../support/cloud-gateway.ts';
import { until } from '../../support/until.ts';

// Issue 23: WhatsApp through the Business Cloud API, against a loopback Graph API speaking Meta's
// documented shapes, with webhooks signed over their raw bodies as Meta signs them: connecting, the
// webhook's checks, a visitor's messages answered (or not, when they are not text). The hand-off, the
// 24-hour window and Graph errors are in whatsapp-cloud-handoff.test.ts.
const cloud = await startCloudGateway();
t.teardown(() => cloud.stop());
const { gw, graph, openai, sink, logs, services, owner, cliEnv } = cloud;
const { connected, visitor, messageId, sessionOf, post, say, transcript, messages } = cloud;

t.test('channel whatsapp --cloud: connects, prints the webhook and verify token, never the secrets', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Cloud CLI' });
  const number = graph.addNumber('+1 555-0199', 'Acme Help');
  const account = graph.addBusinessAccount(number.token);
  const args = ['channel', 'whatsapp', '--bot', bot.id, '--cloud', '--phone-number-id', number.id];
  const secrets = ['--token', number.token, '--app-secret', APP_SECRET];
  const printed = await runCliJson([...args, ...secrets, '--business-account-id', account], cliEnv);
  t.same(printed, {
    chatbot_id: bot.id,
    transport: 'cloud',
    phone_number_id: number.id,
    business_account_id: account,
    display_phone_number: '+1 555-0199',
    verified_name: 'Acme Help',
    webhook_path: `/channels/whatsapp/${bot.id}`,
    webhook_url: `https://bots.example.com/channels/whatsapp/${bot.id}`,
    verify_token: printed.verify_token,
    text_only_notice: 'Sorry, I can only read text messages.',
    connected_at: printed.connected_at,
  });
  t.match(printed.verify_token, /^sbv_[A-Za-z0-9_-]{24}$/);
  t.match(printed.connected_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
  t.same(
    graph.of('number', number.id).map((call) => [call.version, call.path, call.token]),
    [['v26.0', `/${number.id}?fields=display_phone_number,verified_name`, number.token]],
    'the token was checked with Meta, on the pinned version',
  );
  t.same(
    graph.of('subscribe').map((call) => call.path),
    [`/${account}/subscribed_apps`],
  );
  const redis = createClient({ url: gw.redis.url });
  await redis.connect();
  const stored = Object.values(await redis.hGetAll(`sb:{b:${bot.id}}:whatsapp:cloud`)).join(' ');
  redis.destroy();
  t.notMatch(stored, number.token, 'the token is sealed at rest');
  t.notMatch(stored, APP_SECRET, 'the app secret is sealed at rest');
  t.same(await runCliJson(['channel', 'whatsapp', '--bot', bot.id, '--status'], cliEnv), printed);

  // A change of the same number keeps the secrets and the verify token when they are left out.
  const changed = await runCliJson([...args, '--text-only-notice', 'Text only, please!'], cliEnv);
  t.same(changed, { ...changed, verify_token: printed.verify_token, text_only_notice: 'Text only, please!' });

  const failure = (stderr: string) => cliFailure(stderr);
  t.same(
    await runCli([...args.slice(0, -2), '--phone-number-id', 'abc', ...secrets], cliEnv),
    failure('phone_number_id must be the phone number id (digits) from WhatsApp → API Setup in the Meta app.'),
  );
  const other = graph.addNumber();
  t.same(
    await runCli([...args.slice(0, -1), other.id, '--app-secret', APP_SECRET], cliEnv),
    failure('token is required: a system-user access token, without spaces.'),
  );
  t.same(
    await runCli(
      [...args.slice(0, -1), other.id, '--token', `EAAG${'x'.repeat(30)}`, '--app-secret', APP_SECRET],
      cliEnv,
    ),
    failure(
      'The Cloud API refused: The WhatsApp access token has expired or was revoked: connect again with a new system-user token.',
    ),
  );
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id, '--token', number.token], cliEnv),
    failure('channel whatsapp: --phone-number-id, --token, --app-secret and the like need --cloud'),
  );
  t.same(await runCliJson(['channel', 'whatsapp', '--bot', bot.id, '--disconnect'], cliEnv), {
    chatbot_id: bot.id,
    disconnected: true,
  });
  t.same(
    await runCli(['channel', 'whatsapp', '--bot', bot.id, '--status'], cliEnv),
    failure('WhatsApp is not connected for this chatbot.'),
  );
});

t.test("Meta's subscription check: the challenge echoed for the verify token, refused otherwise", async (t) => {
  const { bot, status } = await connected('Verify');
  const check = (query: Record<string, string>, id = bot.id) =>
    fetch(`${gw.baseUrl}/channels/whatsapp/${id}?${new URLSearchParams(query).toString()}`);
  const ok = await check({
    'hub.mode': 'subscribe',
    'hub.verify_token': status.verify_token,
    'hub.challenge': '1158201444',
  });
  t.same(
    [ok.status, ok.headers.get('content-type'), await ok.text()],
    [200, 'text/plain; charset=utf-8', '1158201444'],
  );
  const refusals: Array<Record<string, string>> = [
    { 'hub.mode': 'subscribe', 'hub.verify_token': `${status.verify_token}x`, 'hub.challenge': '1' },
    { 'hub.mode': 'unsubscribe', 'hub.verify_token': status.verify_token, 'hub.challenge': '1' },
    { 'hub.challenge': '1' },
  ];
  for (const query of refusals) {
    const refused = await check(query);
    t.same([refused.status, await refused.json()], [403, { detail: 'Invalid verify token.' }]);
  }
  const other = await services.chatbots.create(owner.user.id, { name: 'Not on the Cloud API' });
  const missing = await check({ 'hub.mode': 'subscribe', 'hub.verify_token': status.verify_token }, other.id);
  t.same(
    [missing.status, await missing.json()],
    [404, { detail: 'WhatsApp Cloud API is not connected for this chatbot.' }],
  );
  const notId = await check({}, 'not-a-uuid');
  t.same([notId.status, await notId.json()], [404, { detail: 'Chatbot not found.' }]);
});

t.test('a forged or missing signature is refused with 401 and nothing is taken in', async (t) => {
  const { bot, number } = await connected('Forged');
  const from = visitor();
  const id = messageId();
  const payload = textWebhook(number, from, id, 'Let me in');
  const raw = JSON.stringify(payload);
  const before = openai.requests.length;
  const warned = logs.withMessage('whatsapp webhook refused: bad signature').length;
  for (const signature of [
    hubSignature(raw, 'another app secret'),
    hubSignature(`${raw} `, APP_SECRET),
    hubSignature(raw, APP_SECRET).replace('sha256=', 'sha1='),
    'sha256=',
    null,
  ]) {
    const res = await postWebhook(gw.baseUrl, bot.id, payload, APP_SECRET, signature);
    t.same([res.status, await res.json()], [401, { detail: 'Invalid signature.' }]);
  }
  t.equal(logs.withMessage('whatsapp webhook refused: bad signature').length - warned, 5, 'each refusal logged');
  t.equal(await services.conversations.exists(bot.id, sessionOf(from)), false, 'no conversation');
  t.same(graph.of('send', number.id), [], 'nothing sent');
  t.equal(openai.requests.length, before, 'the AI was not asked');
  // The message id was not remembered: Meta's own delivery of it is taken in.
  const res = await post(bot.id, payload);
  t.same([res.status, await res.text()], [200, '']);
  await until(() => graph.texts(number.id).length === 1, 'the reply');
  t.same(graph.texts(number.id), [[from, 'AI: Let me in']]);
});

t.test("a visitor's message is answered: read with typing first, then the reply; statuses recorded", async (t) => {
  const { bot, number } = await connected('Answers');
  const from = visitor();
  const id = messageId();
  const held = heldAnswers(echo);
  openai.behaviour = held.behaviour;
  t.teardown(() => void (openai.behaviour = echo));
  const res = await say(bot.id, number, from, 'When do you open?', id);
  t.same([res.status, await res.text()], [200, '']);
  t.equal(held.answered, false, 'acknowledged before the AI answered');
  held.release();
  await until(() => graph.texts(number.id).length === 1, 'the reply');
  const [read] = graph.of('read', number.id);
  const [sent] = graph.of('send', number.id);
  t.same(read!.body, {
    messaging_product: 'whatsapp',
    status: 'read',
    message_id: id,
    typing_indicator: { type: 'text' },
  });
  t.same(sent!.body, {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: from,
    type: 'text',
    text: { preview_url: false, body: 'AI: When do you open?' },
  });
  t.ok(read!.at <= sent!.at, 'typing came before the reply');
  t.equal(sent!.token, number.token);
  const session = sessionOf(from);
  // The fake records the send as it receives it; the gateway records Graph's answer just after.
  const first = await until(async () => {
    const read = await transcript(bot.id, session);
    return read.messages[1]?.delivery ? read : undefined;
  }, 'the reply accepted by Graph');
  t.equal(first.source, 'whatsapp');
  t.match(first.messages, [
    { role: 'user', content: 'When do you open?' },
    { role: 'assistant', content: 'AI: When do you open?', delivery: { status: 'accepted' } },
  ]);
  t.match(
    sink.forSession(session).map((e) => [e.event, e.data.source]),
    [
      ['conversation.started', 'whatsapp'],
      ['message.received', 'whatsapp'],
    ],
  );

  // Statuses arrive in any order; the reply's only ever moves forward.
  for (const state of ['delivered', 'read', 'sent'] as const) {
    const ack = await post(bot.id, statusWebhook(number, sent!.wamid!, from, state));
    t.same([ack.status, await ack.text()], [200, '']);
  }
  const reply = (await transcript(bot.id, session)).messages[1]!;
  t.same(Object.keys(reply.delivery ?? {}), ['status', 'at']);
  t.equal(reply.delivery?.status, 'read');
});

t.test('a message Meta delivers again, or twice at once, is answered once', async (t) => {
  const { bot, number } = await connected('Retries');
  const from = visitor();
  const before = openai.requests.length;
  const payload = textWebhook(number, from, messageId(), 'only once');
  const results = await Promise.all([post(bot.id, payload), post(bot.id, payload), post(bot.id, payload)]);
  t.same(
    results.map((r) => r.status),
    [200, 200, 200],
  );
  await say(bot.id, number, from, 'and then this');
  await post(bot.id, payload);
  await until(() => graph.texts(number.id).length === 2, 'two replies');
  await until(async () => (await messages(bot.id, sessionOf(from))).length === 4, 'four messages');
  t.same(graph.texts(number.id), [
    [from, 'AI: only once'],
    [from, 'AI: and then this'],
  ]);
  t.equal(openai.requests.length - before, 2, 'the AI was asked once per message id');
});

t.test("long replies are split at WhatsApp's 4096-character limit", async (t) => {
  const { bot, number } = await connected('Long');
  const paragraphs = Array.from({ length: 9 }, (_, i) => `${String(i)}${'x'.repeat(999)}`);
  openai.behaviour = () => ({ text: paragraphs.join('\n\n') });
  t.teardown(() => void (openai.behaviour = echo));
  const from = visitor();
  await say(bot.id, number, from, 'tell me everything');
  await until(() => graph.texts(number.id).length === 3, 'three messages');
  t.same(
    graph.texts(number.id).map(([, text]) => text),
    [paragraphs.slice(0, 4).join('\n\n'), paragraphs.slice(4, 8).join('\n\n'), paragraphs[8]],
  );
});

t.test('media, locations and reactions: a placeholder in the transcript, the notice, no AI', async (t) => {
  const { bot, number } = await connected('Media', 'I only read text, sorry!');
  const from = visitor();
  const before = openai.requests.length;
  const image = { id: messageId(), type: 'image', image: { caption: 'my receipt', mime_type: 'image/jpeg', sha256: 'abc', id: '1479537139650973' } }; // prettier-ignore
  const location = {
    id: messageId(),
    type: 'location',
    location: { latitude: 52.52, longitude: 13.405, name: 'Berlin' },
  };
  const reaction = { id: messageId(), type: 'reaction', reaction: { message_id: 'wamid.OUT', emoji: '👍' } };
  const voice = {
    id: messageId(),
    type: 'audio',
    audio: { mime_type: 'audio/ogg; codecs=opus', id: '2', voice: true },
  };
  for (const message of [image, location, reaction, voice]) {
    t.equal((await post(bot.id, messageWebhook(number, from, message))).status, 200);
  }
  await until(() => graph.texts(number.id).length === 4, 'four notices');
  t.same(graph.texts(number.id), Array(4).fill([from, 'I only read text, sorry!']));
  t.same(
    graph.of('read', number.id).map((call) => call.body),
    [image, location, reaction, voice].map((m) => ({
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: m.id,
    })),
    'each marked read, without typing',
  );
  await until(async () => (await messages(bot.id, sessionOf(from))).length === 4, 'four placeholders');
  t.same(
    (await transcript(bot.id, sessionOf(from))).messages.map((m) => [m.role, m.content]),
    [
      ['user', '[image] my receipt'],
      ['user', '[location]'],
      ['user', '[reaction 👍]'],
      ['user', '[audio]'],
    ],
  );
  t.equal(openai.requests.length, before, 'the AI was not asked');
});

t.test('no token or app secret is ever logged', async (t) => {
  const logged = JSON.stringify(logs.lines);
  const webhooks = logs.lines.filter(
    (line) => line.msg === 'request' && String(line.path).startsWith('/channels/whatsapp/'),
  );
  t.ok(webhooks.length > 0, `the gateway logged (at debug level) while it took webhooks (${webhooks.length})`);
  t.notMatch(logged, APP_SECRET);
  for (const number of graph.numbers()) t.notMatch(logged, number.token);
});
