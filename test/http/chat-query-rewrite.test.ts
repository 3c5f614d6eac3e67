import t from 'tap';
import { contextBlock, identityRules } from '../../src/conversations/prompt-builder.ts';
import { REWRITE_INSTRUCTIONS } from '../../src/rag/query-rewrite.ts';
import { bestRelevance } from '../../src/rag/relevance-floor.ts';
import { countWords, type RecordedRequest, startFakeProviders } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { LogCapture } from '../support/log-capture.ts';
import { until } from '../support/until.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const providers = await startFakeProviders();
const { openai, gemini, ollama } = providers;
const logs = new LogCapture();
const TIMEOUT_MS = 1500;
const FENCE = 'fence-of-rewrite-test';
const gw = await startGateway(
  {
    ...providers.env,
    // One retry: a rewrite that times out must not wait for it.
    LLM_MAX_RETRIES: '1',
    LLM_TIMEOUT_MS: String(TIMEOUT_MS),
    RATE_LIMIT_PER_MINUTE: '100000',
    CONVERSATION_RATE_LIMIT: '1000',
    LOG_LEVEL: 'info',
  },
  { fenceNonce: () => FENCE },
  logs,
);
t.teardown(async () => {
  await gw.stop();
  await providers.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);

async function chat(chatbotId: string, message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: await res.json() };
}

/** Warranty passages of eight products, worded like the question; the Aurora X2's is not. */
const PRODUCTS = ['Zephyr kettle', 'Nimbus toaster', 'Breeze fan', 'Comet vacuum', 'Orbit mixer', 'Pulse juicer'];
const AURORA =
  'Aurora X2 blender: covered for five years against defects in parts and labour, repaired or replaced free of charge.';
const PASSAGES = [
  ...PRODUCTS.concat(['Glide iron', 'Frost fridge']).map(
    (product, i) => `How long is the warranty? The warranty of the ${product} lasts ${i + 1} years from purchase.`,
  ),
  AURORA,
];

async function botWith(options: { provider?: string; model?: string; rewrite: boolean; trained?: boolean }) {
  const bot = await services.chatbots.create(owner.user.id, {
    name: 'Shop Helper',
    provider: options.provider ?? 'chatgpt',
    model: options.model ?? 'gpt-test',
    systemPrompt: 'You help customers of the shop.',
  });
  if (options.rewrite) await services.chatbots.configure(bot.id, { retrieval: { query_rewrite: true } });
  if (options.trained) {
    const sources = await Promise.all(
      PASSAGES.map((text, i) => services.intake.addText(bot.id, text, `Passage ${i + 1}`)),
    );
    for (const source of sources) {
      await until(async () => (await services.sources.get(source.id)).status === 'done', 'ingestion', 30_000);
    }
  }
  return bot;
}

const REWRITE = 'question: How long is the warranty of the Aurora X2 blender?\nterms: Aurora X2, blender, guarantee';
const isRewrite = (request: RecordedRequest) =>
  (request.body.messages?.[0]?.content ?? request.body.systemInstruction?.parts?.[0]?.text) === REWRITE_INSTRUCTIONS;
const metricsOf = (chatbotId: string) => logs.withMessage('turn metrics').filter((l) => l.chatbot_id === chatbotId);
const promptWords = (messages: Array<{ content: string }>) => countWords(messages.map((m) => m.content).join('\n'));

/** The answer prompt's system text when the passages are what `query` alone finds for the chatbot. */
async function systemFor(chatbotId: string, query: string): Promise<string> {
  const context = await gw.app.retrieval.retrieve(chatbotId, query);
  return ['You help customers of the shop.', identityRules('Shop Helper', FENCE), contextBlock(context, FENCE)].join(
    '\n\n',
  );
}

t.test('off by default: one LLM request per turn, and a metrics line without a rewrite', async (t) => {
  const bot = await botWith({ rewrite: false, trained: true });
  t.same((await services.chatbots.get(bot.id)).settings.retrieval, { query_rewrite: false });
  openai.behaviour = () => ({ text: 'The warranty lasts a few years.' });
  for (const [i, message] of ['Tell me about the Aurora X2 blender.', 'How long is its warranty?'].entries()) {
    const before = openai.requests.length;
    t.same(await chat(bot.id, message, 'off-1'), {
      status: 200,
      body: { response: 'The warranty lasts a few years.' },
    });
    t.equal(openai.requests.length - before, 1, `turn ${i + 1}: exactly one request`);
  }
  const answer = openai.requests.at(-1)!;
  t.notOk(isRewrite(answer));
  t.equal(answer.body.messages[0].content, await systemFor(bot.id, 'How long is its warranty?'));
  t.notOk(
    answer.body.messages[0].content.includes(AURORA),
    "the visitor's wording does not find the Aurora X2 passage",
  );
  const lines = metricsOf(bot.id);
  t.equal(lines.length, 2, 'one line per turn');
  const line = lines[1]!;
  t.same(Object.keys(line), [
    'level',
    'chatbot_id',
    'channel',
    'provider',
    'model',
    'retrieve_ms',
    'best_relevance',
    'llm',
    'msg',
  ]);
  t.same(line, {
    level: 30,
    chatbot_id: bot.id,
    channel: 'api',
    provider: 'chatgpt',
    model: 'gpt-test',
    retrieve_ms: line.retrieve_ms,
    best_relevance: line.best_relevance,
    llm: {
      status: 'ok',
      ms: (line.llm as { ms: number }).ms,
      input_tokens: promptWords(answer.body.messages),
      output_tokens: 6,
    },
    msg: 'turn metrics',
  });
  t.type(line.retrieve_ms, 'number');
  const passages = await gw.app.retrieval.retrieve(bot.id, 'How long is its warranty?');
  t.ok((line.best_relevance as number) > 0, 'the best passage has a relevance');
  t.equal(
    line.best_relevance,
    Math.round(bestRelevance(passages) * 1000) / 1000,
    "the best passage's, to a thousandth",
  );
  t.type((line.llm as { ms: number }).ms, 'number');
  t.notOk(JSON.stringify(lines).includes('warranty'), 'no message text');
});

t.test(
  'each provider receives the exact rewrite request, then the answer request with the original message',
  async (t) => {
    const first = 'Tell me about the Aurora X2 blender.';
    const second = 'How long is its warranty?';
    const rewriteContent = [
      'Conversation so far:',
      '<conversation>',
      'Visitor: Tell me about the Aurora X2 blender.',
      'Assistant: It is our 1200 W blender.',
      '</conversation>',
      '',
      'Latest visitor message:',
      '<message>',
      'How long is its warranty?',
      '</message>',
    ].join('\n');
    const rewriteUsage = { input: 140, output: 17 };
    const answerUsage = { input: 420, output: 12, reasoning: 5 };
    const cases = [
      { server: openai, provider: 'chatgpt', model: 'gpt-test' },
      { server: gemini, provider: 'gemini', model: 'gemini-2.5-flash' },
      { server: ollama, provider: 'ollama', model: 'llama3.2' },
    ];
    for (const { server, provider, model } of cases) {
      const bot = await botWith({ provider, model, rewrite: true });
      server.behaviour = (request) =>
        isRewrite(request)
          ? { text: REWRITE, usage: rewriteUsage }
          : { text: 'It is our 1200 W blender.', usage: answerUsage };
      const session = `shape-${provider}`;
      const before = server.requests.length;
      t.same(await chat(bot.id, first, session), { status: 200, body: { response: 'It is our 1200 W blender.' } });
      t.same(await chat(bot.id, second, session), { status: 200, body: { response: 'It is our 1200 W blender.' } });
      const [, , rewrite, answer] = server.requests.slice(before);
      t.equal(server.requests.length - before, 4, `${provider}: two requests per turn`);
      if (provider === 'gemini') {
        t.equal(rewrite!.path, '/v1/models/gemini-2.5-flash:generateContent');
        t.same(rewrite!.body.contents, [{ role: 'user', parts: [{ text: rewriteContent }] }]);
        t.same(rewrite!.body.systemInstruction, { parts: [{ text: REWRITE_INSTRUCTIONS }], role: 'user' });
        t.same(
          answer!.body.contents.map((c: { role: string; parts: Array<{ text: string }> }) => [
            c.role,
            c.parts[0]!.text,
          ]),
          [
            ['user', first],
            ['model', 'It is our 1200 W blender.'],
            ['user', second],
          ],
        );
      } else {
        const messages = [
          { role: 'system', content: REWRITE_INSTRUCTIONS },
          { role: 'user', content: rewriteContent },
        ];
        t.same(
          rewrite!.body,
          provider === 'ollama' ? { model, messages, stream: false } : { model, messages },
          `${provider}: the whole rewrite request`,
        );
        t.same(
          answer!.body.messages.slice(1),
          [
            { role: 'user', content: first },
            { role: 'assistant', content: 'It is our 1200 W blender.' },
            { role: 'user', content: second },
          ],
          `${provider}: the answer prompt has the visitor's own message`,
        );
      }
      const line = metricsOf(bot.id).at(-1)!;
      t.same(
        [line.provider, line.model, line.rewrite, line.llm],
        [
          provider,
          model,
          { status: 'ok', ms: (line.rewrite as { ms: number }).ms, input_tokens: 140, output_tokens: 17, variants: 3 },
          { status: 'ok', ms: (line.llm as { ms: number }).ms, input_tokens: 420, output_tokens: 12 },
        ],
        `${provider}: the tokens each call reported`,
      );
    }
  },
);

t.test("the rewrite's terms find a passage the visitor's wording does not: it reaches the answer prompt", async (t) => {
  const bot = await botWith({ rewrite: true, trained: true });
  openai.behaviour = (request) => (isRewrite(request) ? { text: REWRITE } : { text: 'Five years.' });
  await chat(bot.id, 'Tell me about the Aurora X2 blender.', 'fusion-1');
  const before = openai.requests.length;
  t.same(await chat(bot.id, 'How long is its warranty?', 'fusion-1'), {
    status: 200,
    body: { response: 'Five years.' },
  });
  const [rewrite, answer] = openai.requests.slice(before);
  t.ok(isRewrite(rewrite!));
  const ownWording = await gw.app.retrieval.retrieve(bot.id, 'How long is its warranty?');
  t.notOk(
    ownWording.some((passage) => passage.text === AURORA),
    "the visitor's wording alone does not find the passage",
  );
  t.ok(answer!.body.messages[0].content.includes(AURORA), 'the Aurora X2 passage is in the context');
  t.equal(answer!.body.messages.at(-1).content, 'How long is its warranty?');
  t.equal((answer!.body.messages[0].content as string).match(/<reference id=/g)!.length, 5);
  const line = metricsOf(bot.id).at(-1)!;
  t.same(Object.keys(line), [
    'level',
    'chatbot_id',
    'channel',
    'provider',
    'model',
    'retrieve_ms',
    'best_relevance',
    'rewrite',
    'llm',
    'msg',
  ]);
  const rewriteMetrics = line.rewrite as { ms: number };
  const llmMetrics = line.llm as { ms: number };
  t.same(line, {
    level: 30,
    chatbot_id: bot.id,
    channel: 'api',
    provider: 'chatgpt',
    model: 'gpt-test',
    retrieve_ms: line.retrieve_ms,
    best_relevance: line.best_relevance,
    rewrite: {
      status: 'ok',
      ms: rewriteMetrics.ms,
      input_tokens: promptWords(rewrite!.body.messages),
      output_tokens: countWords(REWRITE),
      variants: 3,
    },
    llm: { status: 'ok', ms: llmMetrics.ms, input_tokens: promptWords(answer!.body.messages), output_tokens: 2 },
    msg: 'turn metrics',
  });
  t.comment(
    `with the fake provider: rewrite ${rewriteMetrics.ms} ms (${promptWords(rewrite!.body.messages)} + ${countWords(REWRITE)} tokens), retrieval of 3 queries ${String(line.retrieve_ms)} ms, answer ${llmMetrics.ms} ms`,
  );
  t.notOk(JSON.stringify(line).includes('warranty'), 'no message text');
});

t.test('a rewrite that fails or times out: the turn answers from the message alone, with a warning', async (t) => {
  const bot = await botWith({ rewrite: true, trained: true });
  const warnings = () =>
    logs.withMessage('query rewrite unusable: retrieving for the message alone').filter((l) => l.chatbot_id === bot.id);
  openai.behaviour = (request) => (isRewrite(request) ? { status: 400 } : { text: 'A few years.' });
  let before = openai.requests.length;
  t.same(await chat(bot.id, 'How long is its warranty?', 'broken-1'), {
    status: 200,
    body: { response: 'A few years.' },
  });
  let calls = openai.requests.slice(before);
  t.same(calls.map(isRewrite), [true, false]);
  t.equal(
    calls[1]!.body.messages[0].content,
    await systemFor(bot.id, 'How long is its warranty?'),
    "the context is what the visitor's wording finds",
  );
  t.match(warnings(), [{ level: 40, status: 'failed', err: { type: 'LlmError', message: /^openai: 400/ } }]);
  t.match(metricsOf(bot.id).at(-1), {
    rewrite: { status: 'failed', ms: Number, input_tokens: null, output_tokens: null, variants: 1 },
    llm: { status: 'ok' },
  });

  openai.behaviour = (request) => (isRewrite(request) ? { hang: true } : { text: 'A few years.' });
  before = openai.requests.length;
  const started = Date.now();
  t.same(await chat(bot.id, 'How long is its warranty?', 'broken-2'), {
    status: 200,
    body: { response: 'A few years.' },
  });
  const waited = Date.now() - started;
  t.ok(waited >= TIMEOUT_MS - 50 && waited < 2 * TIMEOUT_MS, `the turn waited for the timeout only (${waited} ms)`);
  calls = openai.requests.slice(before);
  t.same(calls.map(isRewrite), [true, false], "the SDK's retry was not waited for");
  t.equal(calls[1]!.body.messages[0].content, await systemFor(bot.id, 'How long is its warranty?'));
  t.match(warnings().at(-1), { level: 40, status: 'timeout' });
  t.match(metricsOf(bot.id).at(-1), { rewrite: { status: 'timeout', variants: 1 }, llm: { status: 'ok' } });
});
