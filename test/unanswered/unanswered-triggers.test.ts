import t from 'tap';
import type { UnansweredGroup } from '../../src/contract/unanswered.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';
import { WidgetClient } from '../support/widget-client.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// Each way a question reaches the unanswered inbox, through real turns: the REST API and the widget
// socket, the fake OpenAI server as the provider, the local embedder and the relevance floor.
const openai = await fakeOpenAi().start();
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  LLM_MAX_RETRIES: '0',
  CONVERSATION_RATE_LIMIT: '1000',
});
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const HOURS =
  'Opening hours: the bike shop opens at nine in the morning and closes at six in the evening, Monday to Saturday.';
const REPAIRS =
  'Repairs: we service and repair every brand of bicycle in our workshop; a standard service costs 60 euros.';
const GROUNDED = 'What time does the bike shop open in the morning?';
const OFF_TOPIC = 'Who won the football world cup in 2018?';

/** A chatbot trained on the shop's two texts (ingested), and its settings. */
async function shopBot(name: string, settings: Record<string, unknown> = {}) {
  const bot = await services.chatbots.create(owner.user.id, { name, provider: 'chatgpt', model: 'gpt-test' });
  if (Object.keys(settings).length > 0) await services.chatbots.configure(bot.id, settings);
  for (const [text, title] of [
    [HOURS, 'Hours'],
    [REPAIRS, 'Repairs'],
  ] as const) {
    const source = await services.intake.addText(bot.id, text, title);
    await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
  }
  return services.chatbots.get(bot.id);
}

const bot = await shopBot('Shop');

async function chat(message: string, sessionId: string, chatbotId = bot.id) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: (await res.json()) as { response: string } };
}

/** The open group whose representative is `question`, once it is there. */
function groupOf(question: string, chatbotId = bot.id, what = question): Promise<UnansweredGroup> {
  return until(
    async () => (await services.unanswered.list(chatbotId, 'open')).find((group) => group.question === question),
    `the inbox to hold "${what}"`,
  );
}

/** Where a group stands, without its id and times. */
function summary(group: UnansweredGroup) {
  return { question: group.question, count: group.count, reasons: group.reasons, session_id: group.session_id };
}

t.test('an answer from passages above the relevance floor stays out of the inbox', async (t) => {
  openai.behaviour = () => ({ text: 'We open at nine.' });
  t.same(await chat(GROUNDED, 'api-grounded'), { status: 200, body: { response: 'We open at nine.' } });
  await services.unansweredRecorder.settled();
  t.same(await services.unanswered.list(bot.id, 'open'), []);
});

t.test('(b) a reply written from passages below the relevance floor', async (t) => {
  openai.behaviour = () => ({ text: 'I am not sure.' });
  t.same(await chat(OFF_TOPIC, 'api-offtopic'), { status: 200, body: { response: 'I am not sure.' } });
  t.same(summary(await groupOf(OFF_TOPIC)), {
    question: OFF_TOPIC,
    count: 1,
    reasons: { low_relevance: 1 },
    session_id: 'api-offtopic',
  });
});

t.test('(a) the fallback message: an empty answer, and a provider that failed in the widget', async (t) => {
  openai.behaviour = () => ({ text: '' });
  const question = 'When does the bike shop open on Saturday morning?';
  t.same(await chat(question, 'api-empty'), { status: 200, body: { response: bot.fallback_message } });
  t.same(summary(await groupOf(question)), {
    question,
    count: 1,
    reasons: { fallback: 1 },
    session_id: 'api-empty',
  });

  openai.behaviour = () => ({ status: 500 });
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: 'when does the bike shop open on saturday morning' });
  t.equal((await client.next('message')).content, bot.fallback_message);
  await client.close();
  await until(async () => (await groupOf(question)).count === 2, 'the second time');
  t.same(summary(await groupOf(question)), {
    question,
    count: 2,
    reasons: { fallback: 2 },
    session_id: ready.session_id,
  });
});

t.test('(c) the answer-only-from-sources refusal, without a call to the LLM', async (t) => {
  const strict = await shopBot('Strict shop', { answers: { sources_only: true } });
  const calls = openai.requests.length;
  t.same(await chat(OFF_TOPIC, 'api-strict', strict.id), { status: 200, body: { response: strict.fallback_message } });
  t.equal(openai.requests.length, calls, 'the LLM was not asked');
  t.same(summary(await groupOf(OFF_TOPIC, strict.id)), {
    question: OFF_TOPIC,
    count: 1,
    reasons: { sources_only: 1 },
    session_id: 'api-strict',
  });
});

t.test('(d) a reply the visitor rated down in the widget: the question before it, once', async (t) => {
  openai.behaviour = (req) => ({ text: `About "${req.body.messages.at(-1).content}": we open at nine.` });
  const question = 'Does the bike shop open at nine?';
  const { client, ready } = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  client.send({ type: 'message', content: question });
  const reply = await client.next('message');
  client.send({ type: 'message', content: 'Thanks, and the repairs?' });
  await client.next('message');
  await services.unansweredRecorder.settled();
  t.notOk(
    (await services.unanswered.list(bot.id, 'open')).some((group) => group.question === question),
    'answered from the sources, the question is not in the inbox before the rating',
  );
  for (const rating of ['down', 'up', 'down']) {
    client.send({ type: 'feedback', created_at: reply.created_at, rating });
    t.same(await client.next('feedback_saved'), { type: 'feedback_saved', created_at: reply.created_at, rating });
  }
  await client.close();
  await services.unansweredRecorder.settled();
  t.same(summary(await groupOf(question)), {
    question,
    count: 1,
    reasons: { thumbs_down: 1 },
    session_id: ready.session_id,
  });
});

t.test('(e) an escalation: the last question before it, from the widget button and from smart intent', async (t) => {
  openai.behaviour = () => ({ text: 'A standard service costs 60 euros.' });
  const question = 'How much does a standard bicycle service cost in the workshop?';
  const button = await WidgetClient.ready(gw.baseUrl, { chatbot_id: bot.id });
  button.client.send({ type: 'message', content: question });
  await button.client.next('message');
  button.client.send({ type: 'escalate' });
  await button.client.next('escalated');
  t.same(summary(await groupOf(question)), {
    question,
    count: 1,
    reasons: { escalated: 1 },
    session_id: button.ready.session_id,
  });
  // A second escalation of the conversation records nothing more.
  await services.control.escalate(bot.id, button.ready.session_id);
  await button.client.close();

  // "Talk to a human" is not the question: the one before it is. It was answered below the floor too,
  // and counts once with both reasons.
  openai.behaviour = () => ({ text: 'Let me check.' });
  t.same((await chat('Do you sell kayaks?', 'api-kayak')).status, 200);
  t.same((await chat('I want to talk to a human', 'api-kayak')).status, 200);
  await until(
    async () => (await groupOf('Do you sell kayaks?')).reasons.escalated === 1,
    'the escalation to reach the group',
  );
  await services.unansweredRecorder.settled();
  t.same(summary(await groupOf('Do you sell kayaks?')), {
    question: 'Do you sell kayaks?',
    count: 1,
    reasons: { low_relevance: 1, escalated: 1 },
    session_id: 'api-kayak',
  });
  t.same((await groupOf(question)).count, 1);
  t.notOk(
    (await services.unanswered.list(bot.id, 'open')).some((group) => /human/.test(group.question)),
    'the request for a human is not a question of the inbox',
  );
});
