import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { SHOP_FAQ } from '../support/shop-faq.ts';
import { until } from '../support/until.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// Issue 21, item 5, end to end with the local embedder: a question gets the fallback message, the
// owner improves its answer from the inbox, the gateway ingests it, and paraphrases of the question
// then find it: the prompt the LLM receives holds the owner's answer.
const openai = await fakeOpenAi().start();
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  CONVERSATION_RATE_LIMIT: '1000',
});
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await createOwner(gw.app);
const client = await DashboardClient.signIn(gw.baseUrl, owner);
const bot = (await client.post('/dashboard/api/chatbots', { name: 'Bike shop', provider: 'chatgpt' })).body;
const key = await services.apiKeys.create(owner.id, 'site');
const ANSWER = 'Yes: dogs on a lead are welcome in the shop, and there is a water bowl by the door.';

async function chat(message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: (await res.json()) as { response: string } };
}

t.test('a paraphrase of an improved question finds the owner’s answer', async (t) => {
  for (const [title, text] of SHOP_FAQ) await services.intake.addText(bot.id, text, title);
  await until(
    async () => (await services.sources.listForChatbot(bot.id)).every((source) => source.status === 'done'),
    'the shop’s sources to be ingested',
    30_000,
  );

  // Two visitors ask; the model has nothing to say: the fallback message, twice, one group.
  openai.behaviour = () => ({ text: '' });
  for (const [i, question] of ['Can I bring my dog into the shop?', 'can I bring my dog in the shop'].entries()) {
    t.same(await chat(question, `api-visitor-${i}`), { status: 200, body: { response: bot.fallback_message } });
  }
  await services.unansweredRecorder.settled();
  const [group, ...others] = (await client.get(`/dashboard/api/chatbots/${bot.id}/unanswered`)).body;
  t.same(others, []);
  t.match(group, {
    question: 'Can I bring my dog into the shop?',
    count: 2,
    reasons: { fallback: 2 },
    examples: ['Can I bring my dog into the shop?', 'can I bring my dog in the shop'],
  });

  const improved = await client.post(`/dashboard/api/chatbots/${bot.id}/unanswered/${group.id}/answer`, {
    answer: ANSWER,
  });
  t.equal(improved.status, 201);
  const sourceId: string = improved.body.source.id;
  await until(async () => (await services.sources.get(sourceId)).status === 'done', 'the answer to be ingested');

  openai.behaviour = () => ({ text: 'Dogs are welcome.' });
  for (const paraphrase of [
    'Are dogs allowed inside your store?',
    'May I come in with my dog?',
    'Is my dog welcome when I visit the shop?',
  ]) {
    const before = openai.requests.length;
    t.same(await chat(paraphrase, 'api-later'), { status: 200, body: { response: 'Dogs are welcome.' } });
    const system: string = openai.requests[before]!.body.messages[0].content;
    t.ok(system.includes(ANSWER), `${paraphrase}: the prompt holds the improved answer`);
    t.ok(system.includes('title="Can I bring my dog into the shop?"'), `${paraphrase}: titled with the question`);
  }
  await services.unansweredRecorder.settled();
  t.same((await client.get(`/dashboard/api/chatbots/${bot.id}/unanswered`)).body, [], 'nothing new is unanswered');
});
