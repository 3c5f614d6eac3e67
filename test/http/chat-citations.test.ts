import t from 'tap';
import { CITE_RULE, contextBlock, identityRules } from '../../src/conversations/prompt-builder.ts';
import type { RetrievedChunk } from '../../src/rag/retriever.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';

// Issue 21: the REST reply stays SPEC's `{"response": "…"}`. Its citation markers are stripped, and the
// prompt asks for none, unless the owner turned "citations in API replies" on: then the text keeps
// plain [1]-style markers and lists its sources after it.
const openai = await fakeOpenAi().start();
const CONTEXT: RetrievedChunk[] = [
  { id: 'r:0', text: 'Returns are free within 30 days.', title: 'Returns', url: '', score: 0.03, relevance: 0.8 },
  {
    id: 's:0',
    text: 'Orders ship within two working days.',
    title: 'Shipping',
    url: 'https://shop.example/shipping',
    score: 0.02,
    relevance: 0.7,
  },
];
const FENCE = 'fence-of-citations-test';
const gw = await startGateway(
  { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${openai.url}/v1`, LLM_MAX_RETRIES: '0' },
  { fenceNonce: () => FENCE, retriever: { retrieve: async () => CONTEXT } },
);
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, { name: 'Shop Helper', provider: 'chatgpt' });
openai.behaviour = () => ({ text: 'It ships in two days [2] and returns are free [1][7].' });

const chat = async (message: string) => {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: 'api-citations' }),
  });
  return [res.status, await res.json()];
};
const system = () => String(openai.requests.at(-1)!.body.messages[0].content);

t.test('by default an API reply has no markers and its prompt asks for none', async (t) => {
  t.same(await chat('How fast do you ship?'), [200, { response: 'It ships in two days and returns are free.' }]);
  t.equal(system(), [bot.system_prompt, identityRules(bot.name, FENCE), contextBlock(CONTEXT, FENCE)].join('\n\n'));
  t.notOk(system().includes(CITE_RULE));
  t.equal(openai.requests.at(-1)!.body.stream, undefined, 'REST turns do not stream');
  const stored = (await services.conversations.transcript(bot.id, 'api-citations')).messages.at(-1)!;
  t.same(stored, {
    role: 'assistant',
    content: 'It ships in two days and returns are free.',
    created_at: stored.created_at,
  });
});

t.test('with citations in API replies on, plain [n] markers and a Sources list', async (t) => {
  await services.chatbots.configure(bot.id, { answers: { api_citations: true } });
  t.same(await chat('And returns?'), [
    200,
    {
      response:
        'It ships in two days [1] and returns are free [2].\n\nSources:\n[1] Shipping — https://shop.example/shipping\n[2] Returns',
    },
  ]);
  t.equal(
    system(),
    [bot.system_prompt, identityRules(bot.name, FENCE, true), contextBlock(CONTEXT, FENCE)].join('\n\n'),
  );
  const stored = (await services.conversations.transcript(bot.id, 'api-citations')).messages.at(-1)!;
  t.same(stored, {
    role: 'assistant',
    content: 'It ships in two days [1] and returns are free [2].',
    created_at: stored.created_at,
    citations: [{ title: 'Shipping', url: 'https://shop.example/shipping' }, { title: 'Returns' }],
  });
});
