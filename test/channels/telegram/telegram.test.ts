import { createClient } from 'redis';
import t from 'tap';
import { fakeOpenAi, heldAnswers } from '../../fakes/fake-llm-server.ts';
import { FakeTelegram, textUpdate } from '../../fakes/fake-telegram.ts';
import { runCli, runCliJson } from '../../support/cli.ts';
import { scaleAccount, startGateway } from '../../support/gateway.ts';
import { until } from '../../support/until.ts';
import { RecordingSink } from '../../support/recording-sink.ts';

const telegram = await new FakeTelegram().start();
const openai = await fakeOpenAi().start();
openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
const sink = new RecordingSink();
const gw = await startGateway(
  {
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    LLM_MAX_RETRIES: '0',
    TELEGRAM_API_ROOT: telegram.url,
    PUBLIC_URL: 'https://bots.example.com',
    TELEGRAM_POLLER_LEASE_MS: '600',
  },
  { events: sink },
);
// Reads what only Redis shows (whether a poller holds its lease), on a connection of its own.
const redis = await createClient({ url: gw.redis.url }).connect();
t.teardown(async () => {
  redis.destroy();
  await gw.stop();
  await telegram.stop();
  await openai.stop();
});
const { services } = gw.app;
const cliEnv = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '', TELEGRAM_API_ROOT: telegram.url };
const owner = await scaleAccount(gw.app);
let nextUpdate = 1000;

/**
 * A chatbot connected to a new fake bot in webhook mode: through the CLI in the first test, directly
 * through the service layer (what the CLI calls) in the others, since each CLI run is a Node process.
 */
async function connected(name: string, viaCli = false) {
  const bot = await services.chatbots.create(owner.user.id, { name });
  const token = telegram.addBot(`${name.replace(/\W/g, '')}_bot`);
  if (viaCli) {
    const printed = await runCliJson(['channel', 'telegram', '--bot', bot.id, '--token', token], cliEnv);
    return { bot, token, secret: printed.secret_token as string, printed };
  }
  const me = await fetch(`${telegram.url}/bot${token}/getMe`, { method: 'POST' });
  const botInfo = ((await me.json()) as { result: Record<string, unknown> }).result;
  const connection = await services.telegram.connect({ chatbotId: bot.id, token, mode: 'webhook', botInfo });
  await services.signals.publish({ kind: 'channel', chatbot_id: bot.id, channel: 'telegram' });
  return { bot, token, secret: connection.secretToken, printed: undefined };
}

function post(chatbotId: string, secret: string | undefined, update: unknown) {
  return fetch(`${gw.baseUrl}/channels/telegram/${chatbotId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
    body: JSON.stringify(update),
  });
}

const sent = (token: string) => telegram.of('sendMessage', token).map((c) => [c.params.chat_id, c.params.text]);

t.test('channel telegram: connects, registers the webhook, and refuses bad input', async (t) => {
  const { bot, token, printed, secret } = await connected('Hooks', true);
  t.same(printed, { mode: 'webhook', webhook_path: `/channels/telegram/${bot.id}`, secret_token: secret });
  t.match(secret, /^[A-Za-z0-9_-]{32}$/);
  const [registered] = await until(
    () => telegram.of('setWebhook', token).length > 0 && telegram.of('setWebhook', token),
    'setWebhook',
  );
  t.same(registered!.params, {
    url: `https://bots.example.com/channels/telegram/${bot.id}`,
    secret_token: secret,
    allowed_updates: ['message'],
  });
  const failure = (stderr: string) => ({ code: 1, stdout: '', stderr: `${stderr}\n` });
  t.same(
    await runCli(['channel', 'telegram', '--bot', bot.id, '--token', '123:short'], cliEnv),
    failure('token does not look like a Telegram bot token (123456:ABC…).'),
  );
  t.same(
    await runCli(['channel', 'telegram', '--bot', bot.id, '--token', `42:${'x'.repeat(35)}`], cliEnv),
    failure('Telegram refused the token: Unauthorized'),
  );
  t.same(
    await runCli(['channel', 'telegram', '--bot', bot.id, '--token', token, '--mode', 'push'], cliEnv),
    failure('channel telegram: --mode must be webhook or polling'),
  );
  t.same(
    await runCli(['channel', 'telegram', '--bot', crypto.randomUUID(), '--token', token], cliEnv),
    failure('Chatbot not found.'),
  );
});

t.test('the webhook: the secret token is checked before anything else', async (t) => {
  const { bot, secret } = await connected('Secret');
  const update = textUpdate(nextUpdate++, 501, 'hello');
  for (const wrong of [undefined, 'nope', `${secret}x`]) {
    const res = await post(bot.id, wrong, update);
    t.same([res.status, await res.json()], [401, { detail: 'Invalid secret token.' }]);
  }
  const other = await services.chatbots.create(owner.user.id, { name: 'Not on Telegram' });
  for (const id of [other.id, crypto.randomUUID()]) {
    const res = await post(id, secret, update);
    t.same([res.status, await res.json()], [404, { detail: 'Telegram is not connected for this chatbot.' }]);
  }
  const notId = await post('not-a-uuid', secret, update);
  t.same([notId.status, await notId.json()], [404, { detail: 'Chatbot not found.' }]);
  const bad = await fetch(`${gw.baseUrl}/channels/telegram/${bot.id}`, {
    method: 'POST',
    headers: { 'x-telegram-bot-api-secret-token': secret },
    body: '{not json',
  });
  t.same([bad.status, await bad.json()], [400, { detail: 'Request body is not valid JSON.' }]);
  t.equal(openai.requests.length, 0, 'nothing reached the AI');
});

t.test('an update is acknowledged at once; the reply comes back with typing first', async (t) => {
  const { bot, token, secret } = await connected('Replies');
  const held = heldAnswers((req) => ({ text: `AI: ${req.body.messages.at(-1).content}` }));
  openai.behaviour = held.behaviour;
  t.teardown(() => {
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  });
  const res = await post(bot.id, secret, textUpdate(nextUpdate++, 601, 'When do you open?'));
  t.equal(res.status, 200);
  t.equal(await res.text(), '');
  t.equal(held.answered, false, 'answered before the AI did');
  held.release();
  await until(() => sent(token).length === 1, 'the reply');
  t.same(sent(token), [[601, 'AI: When do you open?']]);
  const typing = telegram.of('sendChatAction', token);
  t.same(typing[0]!.params, { chat_id: 601, action: 'typing' });
  t.ok(typing[0]!.at <= telegram.of('sendMessage', token)[0]!.at, 'typing came before the reply');
  const transcript = await services.conversations.transcript(bot.id, 'tg_601');
  t.equal(transcript.source, 'telegram');
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'When do you open?'],
      ['assistant', 'AI: When do you open?'],
    ],
  );
  t.match(
    sink.forSession('tg_601').map((e) => [e.event, e.data.source]),
    [
      ['conversation.started', 'telegram'],
      ['message.received', 'telegram'],
    ],
  );
});

t.test('a re-sent update is taken in once; updates of one chat keep their order', async (t) => {
  const { bot, token, secret } = await connected('Dupes');
  const calls = openai.requests.length;
  const first = textUpdate(nextUpdate++, 701, 'one');
  const results = await Promise.all([post(bot.id, secret, first), post(bot.id, secret, first)]);
  t.same(
    results.map((r) => r.status),
    [200, 200],
  );
  await post(bot.id, secret, textUpdate(nextUpdate++, 701, 'two'));
  await post(bot.id, secret, first);
  // An update is answered 200 once it is dropped as re-sent or queued behind its chat's earlier ones,
  // and a chat's queued updates reach its conversation, whose turns run one at a time, in that order.
  // So once an update posted after them is answered, each one taken in before it has had its turn.
  await post(bot.id, secret, textUpdate(nextUpdate++, 701, 'three'));
  await until(() => sent(token).some(([, text]) => text === 'AI: three'), 'the reply to the last update');
  t.same(sent(token), [
    [701, 'AI: one'],
    [701, 'AI: two'],
    [701, 'AI: three'],
  ]);
  t.equal(openai.requests.length - calls, 3, 'the AI was asked once per distinct update');
});

t.test('long replies are split at Telegram limit, at paragraph boundaries', async (t) => {
  const { bot, token, secret } = await connected('Long');
  const paragraphs = Array.from({ length: 9 }, (_, i) => `${String(i)}${'x'.repeat(999)}`);
  openai.behaviour = () => ({ text: paragraphs.join('\n\n') });
  t.teardown(() => {
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  });
  await post(bot.id, secret, textUpdate(nextUpdate++, 801, 'tell me everything'));
  await until(() => sent(token).length === 3, 'three messages');
  const parts = sent(token).map(([, text]) => text as string);
  t.ok(
    parts.every((p) => p.length <= 4096),
    `each within the limit (${parts.map((p) => p.length).join(', ')})`,
  );
  t.same(parts, [paragraphs.slice(0, 4).join('\n\n'), paragraphs.slice(4, 8).join('\n\n'), paragraphs[8]]);
});

t.test('a cited reply lists its sources after the text; an unanswerable one says how to reach a person', async (t) => {
  const { bot, token, secret } = await connected('Cited');
  const source = await services.intake.addText(bot.id, 'Unworn shoes can be returned within 30 days.', 'Returns');
  await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
  openai.behaviour = () => ({ text: 'You have 30 days [1].' });
  t.teardown(() => {
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  });
  await post(bot.id, secret, textUpdate(nextUpdate++, 801, 'Can I return shoes?'));
  await until(() => sent(token).length === 1, 'the reply');
  t.same(sent(token), [[801, 'You have 30 days [1].\n\nSources:\n[1] Returns']]);
  t.equal(
    (await services.conversations.transcript(bot.id, 'tg_801')).messages.at(-1)!.content,
    'You have 30 days [1].',
  );

  await services.chatbots.configure(bot.id, { answers: { sources_only: true } });
  const calls = openai.requests.length;
  await post(bot.id, secret, textUpdate(nextUpdate++, 801, 'Which planet is the largest?'));
  await until(() => sent(token).length === 2, 'the second reply');
  const fallback = (await services.chatbots.get(bot.id)).fallback_message;
  t.same(sent(token)[1], [801, `${fallback}\n\nTo talk to a person, write "talk to a human".`]);
  t.equal(openai.requests.length, calls, 'the AI was not asked');
  await services.chatbots.configure(bot.id, { escalation: { smart_intent: false } });
  await post(bot.id, secret, textUpdate(nextUpdate++, 801, 'Which ocean is the deepest?'));
  await until(() => sent(token).length === 3, 'the third reply');
  t.same(sent(token)[2], [801, fallback], 'no hint where writing it would not reach anyone');
});

t.test('/start greets with the welcome text; other message kinds get a notice', async (t) => {
  const { bot, token, secret } = await connected('Greeter');
  // Conversation actors live in this process (each spawned as its first message reaches the router)
  // until idle for minutes: their number grows by one for each conversation an update goes to.
  const actors = gw.app.router.size;
  await services.chatbots.configure(bot.id, { widget: { welcome_message: 'Welcome to Acme!' } });
  await post(bot.id, secret, textUpdate(nextUpdate++, 901, '/start'));
  const photo = { update_id: nextUpdate++, message: { message_id: 2, date: 0, chat: { id: 901, type: 'private' }, from: { id: 901, is_bot: false, first_name: 'Ada' }, photo: [{ file_id: 'f', file_unique_id: 'u', width: 1, height: 1 }] } }; // prettier-ignore
  await post(bot.id, secret, photo);
  const edited = { update_id: nextUpdate++, edited_message: textUpdate(0, 901, 'edited').message };
  await post(bot.id, secret, edited);
  // A chat's updates are handled one after another, and a text is with the conversation router before
  // the next one is handled. So once a /start posted after them is greeted, each update before it was
  // answered, dropped or handed to the router: nothing more can come.
  await post(bot.id, secret, textUpdate(nextUpdate++, 901, '/start'));
  await until(() => sent(token).length === 3, 'three answers');
  t.same(sent(token), [
    [901, 'Welcome to Acme!'],
    [901, 'Sorry, I can only read text messages.'],
    [901, 'Welcome to Acme!'],
  ]);
  t.equal(gw.app.router.size, actors, 'nothing went to the AI');
  t.same(
    (await services.conversations.recent(bot.id, 10)).map((c) => c.session_id),
    [],
    'no conversation was started',
  );
});

t.test(
  'takeover: the AI stays silent, the agent reply reaches the chat, release hands back; each change is told',
  async (t) => {
    const { bot, token, secret } = await connected('Human');
    await services.agents.create(owner.user.id, 'Alice', 'Al');
    await post(bot.id, secret, textUpdate(nextUpdate++, 1001, 'I want to talk to a human'));
    await until(() => sent(token).length === 2, 'the escalation notice and the AI answer');
    t.same(sent(token), [
      [1001, "We've asked a person to join. Nobody is available right now; they will reply here as soon as they can."],
      [1001, 'AI: I want to talk to a human'],
    ]);
    const escalated = sink.forSession('tg_1001').find((e) => e.event === 'conversation.escalated');
    t.match(escalated?.data, { session_id: 'tg_1001', channel: 'telegram' });
    t.notOk('message_count' in (escalated?.data ?? {}), 'message_count is for web only');
    await services.control.takeOver(bot.id, 'tg_1001', 'Alice');
    const calls = openai.requests.length;
    await post(bot.id, secret, textUpdate(nextUpdate++, 1001, 'hello?'));
    await until(
      async () => (await services.conversations.transcript(bot.id, 'tg_1001')).messages.length === 3,
      'the stored message',
    );
    await services.control.reply(bot.id, 'tg_1001', 'Alice', 'Hi, Alice here.');
    await until(() => sent(token).length === 4, 'the agent reply');
    t.same(sent(token).slice(2), [
      [1001, 'Alice joined the conversation.'],
      [1001, 'Hi, Alice here.'],
    ]);
    t.equal(openai.requests.length, calls, 'the AI was not asked while Alice held it');
    await services.control.release(bot.id, 'tg_1001', 'Alice');
    await post(bot.id, secret, textUpdate(nextUpdate++, 1001, 'thanks'));
    await until(() => sent(token).length === 6, 'the AI again');
    t.same(sent(token).slice(4), [
      [1001, 'Alice left the conversation. The assistant is back.'],
      [1001, 'AI: thanks'],
    ]);
  },
);

t.test('a paused chatbot answers with a notice; 429 is retried after retry_after', async (t) => {
  const { bot, token, secret } = await connected('Paused');
  await services.chatbots.setActive(bot.id, false);
  const calls = openai.requests.length;
  await post(bot.id, secret, textUpdate(nextUpdate++, 1101, 'anyone?'));
  await until(() => sent(token).length === 1, 'the notice');
  t.same(sent(token), [[1101, 'Chatbot is paused.']]);
  t.equal(openai.requests.length, calls, 'the AI was not asked');
  await services.chatbots.setActive(bot.id, true);
  telegram.failNext('sendMessage', { status: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 });
  await post(bot.id, secret, textUpdate(nextUpdate++, 1101, 'now?'));
  await until(() => sent(token).length === 3, 'the retried reply');
  const [failed, retried] = telegram.of('sendMessage', token).slice(1);
  t.same([failed!.params.text, retried!.params.text], ['AI: now?', 'AI: now?']);
  t.ok(retried!.at - failed!.at >= 950, `waited retry_after (${retried!.at - failed!.at} ms)`);
});

// Issue 19: the 4,000-character limit lived in the other channels only; a Telegram message (up to
// 4,096 characters) went to the AI whole.
t.test('a message over 4,000 characters is refused with the same rule as on every channel', async (t) => {
  const { bot, token, secret } = await connected('Long');
  const calls = openai.requests.length;
  await post(bot.id, secret, textUpdate(nextUpdate++, 1201, 'x'.repeat(4001)));
  await until(() => sent(token).length === 1, 'the notice');
  t.same(sent(token), [[1201, 'message must be at most 4000 characters.']]);
  t.equal(openai.requests.length, calls, 'the AI was not asked');
  await t.rejects(
    services.conversations.transcript(bot.id, 'tg_1201'),
    { name: 'NotFoundError', message: 'Conversation not found.' },
    'nothing stored',
  );
});

t.test('the provider failing: the chat gets the fallback message, stored as the reply', async (t) => {
  const { bot, token, secret } = await connected('Unlucky');
  openai.behaviour = () => ({ status: 500 });
  t.teardown(() => {
    openai.behaviour = (req) => ({ text: `AI: ${req.body.messages.at(-1).content}` });
  });
  await post(bot.id, secret, textUpdate(nextUpdate++, 1301, 'are you there?'));
  await until(() => sent(token).length === 1, 'the fallback message');
  t.same(sent(token), [[1301, bot.fallback_message]]);
  const transcript = await services.conversations.transcript(bot.id, 'tg_1301');
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'are you there?'],
      ['assistant', bot.fallback_message],
    ],
  );
});

t.test('polling mode: one gateway polls, updates are answered, disconnect stops it', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Poller' });
  const token = telegram.addBot('poller_bot');
  const printed = await runCliJson(
    ['channel', 'telegram', '--bot', bot.id, '--token', token, '--mode', 'polling'],
    cliEnv,
  );
  t.same(printed, { mode: 'polling', webhook_path: null, secret_token: null });
  await until(() => telegram.of('deleteWebhook', token).length > 0, 'polling to begin');
  telegram.queueUpdate(token, textUpdate(nextUpdate++, 1201, 'polled'));
  await until(() => sent(token).length === 1, 'the reply');
  t.same(sent(token), [[1201, 'AI: polled']]);
  const starts = telegram.of('deleteWebhook', token).length;
  const gone = await Promise.all(
    Array.from({ length: 20 }, () => post(bot.id, 'anything', textUpdate(nextUpdate++, 1201, 'x'))),
  );
  t.same(new Set(gone.map((r) => r.status)), new Set([404]), 'no webhook in polling mode');
  // A webhook call that restarted the bot would do so before it is answered, and a poller deletes the
  // webhook before it polls: so the poller that fetches an update queued now is the same one, or one
  // that has called deleteWebhook again.
  telegram.queueUpdate(token, textUpdate(nextUpdate++, 1201, 'polled again'));
  await until(() => sent(token).length === 2, 'the reply to the next update');
  t.same(sent(token)[1], [1201, 'AI: polled again']);
  t.equal(telegram.of('deleteWebhook', token).length, starts, 'webhook calls never restart the poller');
  t.same(await runCliJson(['channel', 'telegram', '--bot', bot.id, '--disconnect'], cliEnv), {
    chatbot_id: bot.id,
    disconnected: true,
  });
  // A disconnected bot is not polled: on the disconnect's signal the gateway stops the poller (its
  // pending getUpdates is cancelled and its polling ends), and only then lets go of its lease, which a
  // running poller keeps renewing. With the connection gone from Redis, no gateway starts another.
  const poller = services.keys.telegramPoller(bot.id);
  await until(async () => (await redis.exists(poller)) === 0, 'the poller to stop');
  const again = await runCli(['channel', 'telegram', '--bot', bot.id, '--disconnect'], cliEnv);
  t.same(again, { code: 1, stdout: '', stderr: 'Telegram is not connected for this chatbot.\n' });
});
