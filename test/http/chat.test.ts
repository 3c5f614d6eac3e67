import t from 'tap';
import { contextBlock, identityRules } from '../../src/conversations/prompt-builder.ts';
import type { RetrievedChunk } from '../../src/rag/retriever.ts';
import { startFakeProviders } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { RecordingSink } from '../support/recording-sink.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const providers = await startFakeProviders();
const { openai, gemini, ollama } = providers;
const sink = new RecordingSink();
const CONTEXT: RetrievedChunk[] = [
  {
    id: 'returns:0',
    text: 'Returns are free within 30 days.',
    title: 'Returns',
    url: 'https://shop.example/returns',
    score: 0.9,
    relevance: 0.9,
  },
];
let retrieverFails = false;
const FENCE = 'fence-of-chat-test';
const ENV = {
  ...providers.env,
  LLM_MAX_RETRIES: '0',
  LLM_TIMEOUT_MS: '1500',
  RATE_LIMIT_PER_MINUTE: '100000',
  CONVERSATION_RATE_LIMIT: '1000',
};
const gw = await startGateway(ENV, {
  events: sink,
  fenceNonce: () => FENCE,
  retriever: {
    retrieve: async () => {
      if (retrieverFails) throw new Error('retrieval exploded');
      return CONTEXT;
    },
  },
});
t.teardown(async () => {
  await gw.stop();
  await providers.stop();
});
const { services } = gw.app;
const owner = await scaleAccount(gw.app);
const bot = await services.chatbots.create(owner.user.id, {
  name: 'Shop Helper',
  provider: 'chatgpt',
  model: 'gpt-test',
  systemPrompt: 'You help customers of the shop.',
  fallbackMessage: 'Sorry, please contact us by email.',
});

async function chat(body: unknown, chatbotId = bot.id, key = owner.key, baseUrl = gw.baseUrl) {
  const res = await apiFetch(`${baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const SYSTEM = (name: string, prompt: string, chunks: RetrievedChunk[] = CONTEXT) =>
  [prompt, identityRules(name, FENCE), contextBlock(chunks, FENCE)].join('\n\n');

t.test(
  'OpenAI receives system prompt, identity rules, context block and the message; the reply is returned',
  async (t) => {
    openai.behaviour = () => ({ text: 'Returns are free for 30 days.' });
    const before = openai.requests.length;
    const res = await chat({ message: 'Can I return shoes?', session_id: 'api-openai-1' });
    t.same(res, { status: 200, body: { response: 'Returns are free for 30 days.' } });
    const request = openai.requests[before]!;
    t.equal(request.headers.authorization, 'Bearer sk-test');
    t.same(request.body.messages, [
      { role: 'system', content: SYSTEM('Shop Helper', 'You help customers of the shop.') },
      { role: 'user', content: 'Can I return shoes?' },
    ]);
    t.equal(request.body.model, 'gpt-test');
    t.match(request.body.messages[0].content, /untrusted data/);
    t.match(
      request.body.messages[0].content,
      /<reference id="1" title="Returns" url="https:\/\/shop.example\/returns">/,
    );
  },
);

t.test('Gemini receives its native format: systemInstruction and user/model contents, API v1', async (t) => {
  const geminiBot = await services.chatbots.create(owner.user.id, {
    name: 'Gem',
    provider: 'gemini',
    systemPrompt: 'Be kind.',
  });
  gemini.behaviour = (req) => ({ text: `gemini says ${req.body.contents.length}` });
  const first = await chat({ message: 'hello', session_id: 'gem-1' }, geminiBot.id);
  t.same(first, { status: 200, body: { response: 'gemini says 1' } });
  const second = await chat({ message: 'again', session_id: 'gem-1' }, geminiBot.id);
  t.same(second, { status: 200, body: { response: 'gemini says 3' } });
  const request = gemini.requests.at(-1)!;
  t.equal(request.path, '/v1/models/gemini-2.5-flash:generateContent');
  t.equal(request.headers['x-goog-api-key'], 'gemini-test');
  t.same(request.body.contents, [
    { role: 'user', parts: [{ text: 'hello' }] },
    { role: 'model', parts: [{ text: 'gemini says 1' }] },
    { role: 'user', parts: [{ text: 'again' }] },
  ]);
  t.same(request.body.systemInstruction, { parts: [{ text: SYSTEM('Gem', 'Be kind.') }], role: 'user' });
});

t.test('Ollama receives its native format on /api/chat, not streaming', async (t) => {
  const ollamaBot = await services.chatbots.create(owner.user.id, {
    name: 'Llama',
    provider: 'ollama',
    model: 'llama3.2',
  });
  ollama.behaviour = () => ({ text: 'local answer' });
  const res = await chat({ message: 'hi there', session_id: 'ol-1' }, ollamaBot.id);
  t.same(res, { status: 200, body: { response: 'local answer' } });
  const request = ollama.requests.at(-1)!;
  t.same(request.body, {
    model: 'llama3.2',
    messages: [
      { role: 'system', content: SYSTEM('Llama', ollamaBot.system_prompt) },
      { role: 'user', content: 'hi there' },
    ],
    stream: false,
  });
});

t.test('the prompt carries the last 10 messages: the 12th call no longer has the 1st message', async (t) => {
  openai.behaviour = (req) => ({ text: `reply ${req.body.messages.at(-1).content}` });
  const start = openai.requests.length;
  for (let i = 1; i <= 12; i += 1) {
    const res = await chat({ message: `m${i}`, session_id: 'window-1' });
    t.same(res.body, { response: `reply m${i}` });
  }
  const calls = openai.requests.slice(start);
  t.same(
    calls[5]!.body.messages.slice(1).map((m: { content: string }) => m.content),
    ['m1', 'reply m1', 'm2', 'reply m2', 'm3', 'reply m3', 'm4', 'reply m4', 'm5', 'reply m5', 'm6'],
  );
  const twelfth = calls[11]!.body.messages.slice(1);
  t.equal(twelfth.length, 11, '10 earlier messages and the new one');
  t.same(
    twelfth.map((m: { role: string; content: string }) => `${m.role}:${m.content}`),
    [
      'user:m7',
      'assistant:reply m7',
      'user:m8',
      'assistant:reply m8',
      'user:m9',
      'assistant:reply m9',
      'user:m10',
      'assistant:reply m10',
      'user:m11',
      'assistant:reply m11',
      'user:m12',
    ],
  );
  t.notOk(JSON.stringify(twelfth).includes('"m1"'));
});

t.test('without session_id all calls of a user share api-<user_id>; events come in order', async (t) => {
  openai.behaviour = () => ({ text: 'shared' });
  await chat({ message: 'first default' });
  await chat({ message: 'second default' });
  const sessionId = `api-${owner.user.id}`;
  const transcript = await services.control.show(bot.id, sessionId);
  t.same(
    transcript.messages.map((m) => [m.role, m.content]),
    [
      ['user', 'first default'],
      ['assistant', 'shared'],
      ['user', 'second default'],
      ['assistant', 'shared'],
    ],
  );
  const events = sink.forSession(sessionId);
  t.same(
    events.map((e) => e.event),
    ['conversation.started', 'message.received', 'message.received'],
  );
  t.same(events[0], {
    event: 'conversation.started',
    chatbot_id: bot.id,
    timestamp: events[0]!.timestamp,
    data: { conversation_id: transcript.conversation_id, session_id: sessionId, source: 'api' },
  });
  t.same(events[1]!.data, {
    conversation_id: transcript.conversation_id,
    session_id: sessionId,
    content: 'first default',
    source: 'api',
  });
  t.match(events[0]!.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
});

t.test('the source comes from the session prefix', async (t) => {
  openai.behaviour = () => ({ text: 'ok' });
  await chat({ message: 'x', session_id: 'tg_12345' });
  await chat({ message: 'x', session_id: 'custom-session' });
  t.equal(sink.forSession('tg_12345')[0]!.data.source, 'telegram');
  t.equal(sink.forSession('custom-session')[0]!.data.source, 'api');
});

t.test('50 concurrent messages on one session are answered in strict order', async (t) => {
  let active = 0;
  let overlapped = false;
  openai.behaviour = async (req) => {
    active += 1;
    if (active > 1) overlapped = true;
    await new Promise((resolve) => setTimeout(resolve, 5));
    active -= 1;
    const messages = req.body.messages as Array<{ role: string; content: string }>;
    return { text: `after ${messages.at(-1)!.content}` };
  };
  const start = openai.requests.length;
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => chat({ message: `q${i}`, session_id: 'strict-1' })),
  );
  t.ok(results.every((r) => r.status === 200));
  t.notOk(overlapped, 'no two LLM calls of one conversation overlap');
  const calls = openai.requests.slice(start).map((r) => r.body.messages.slice(1) as Array<{ content: string }>);
  for (let k = 1; k < calls.length; k += 1) {
    const previous = calls[k - 1]!;
    const turns = calls[k]!;
    // The call sees the previous call's message and its reply right before its own message.
    t.equal(turns.at(-3)!.content, previous.at(-1)!.content);
    t.equal(turns.at(-2)!.content, `after ${previous.at(-1)!.content}`);
  }
  const transcript = await services.control.show(bot.id, 'strict-1');
  t.equal(transcript.messages.length, 100);
  for (let i = 0; i < 100; i += 2) {
    t.equal(transcript.messages[i]!.role, 'user');
    t.equal(transcript.messages[i + 1]!.content, `after ${transcript.messages[i]!.content}`);
  }
  // Each requester got the reply to its own message.
  t.same(
    results.map((r) => r.body.response),
    Array.from({ length: 50 }, (_, i) => `after q${i}`),
  );
});

t.test('500 sessions make progress together', async (t) => {
  // Every LLM call is held until 100 are in flight at once: sessions that progress together get there;
  // one after another, they never would, and all are let go 5 s after the first call, so that such a
  // gateway fails at once with one call in flight. A gateway of its own, whose LLM timeout (30 s) a
  // loaded machine's slow ramp-up cannot reach (this file's 1.5 s was: calls held 1 s, then a loaded
  // event loop, failed as provider errors).
  const patient = await startGateway({ ...ENV, LLM_TIMEOUT_MS: '30000' });
  t.teardown(() => patient.stop());
  const account = await scaleAccount(patient.app);
  const parallelBot = await patient.app.services.chatbots.create(account.user.id, {
    name: 'Parallel',
    provider: 'chatgpt',
    model: 'gpt-test',
  });
  let open!: () => void;
  const together = new Promise<void>((resolve) => (open = resolve));
  let giveUp: NodeJS.Timeout | undefined;
  openai.behaviour = async () => {
    giveUp ??= setTimeout(open, 5000);
    if (openai.inFlight >= 100) open();
    await together;
    return { text: 'parallel' };
  };
  openai.maxInFlight = 0;
  const results = await Promise.all(
    Array.from({ length: 500 }, (_, i) =>
      chat({ message: 'hello', session_id: `par-${i}` }, parallelBot.id, account.key, patient.baseUrl),
    ),
  );
  clearTimeout(giveUp);
  const answers = new Map<string, number>();
  for (const { status, body } of results) {
    const answer = `${status} ${JSON.stringify(body)}`;
    answers.set(answer, (answers.get(answer) ?? 0) + 1);
  }
  t.same(Object.fromEntries(answers), { [`200 ${JSON.stringify({ response: 'parallel' })}`]: 500 });
  t.ok(openai.maxInFlight >= 100, `LLM calls overlapped (${openai.maxInFlight} at once)`);
});

t.test('provider failure, timeout and empty output', async (t) => {
  openai.behaviour = () => ({ status: 500 });
  t.same(await chat({ message: 'fail', session_id: 'errors-1' }), {
    status: 500,
    body: { detail: 'LLM provider error.' },
  });
  openai.behaviour = () => ({ hang: true });
  const started = Date.now();
  t.same(await chat({ message: 'slow', session_id: 'errors-1' }), {
    status: 500,
    body: { detail: 'LLM provider error.' },
  });
  t.ok(Date.now() - started >= 1400, 'the timeout was waited for');
  openai.behaviour = () => ({ text: '   ' });
  t.same(await chat({ message: 'empty', session_id: 'errors-1' }), {
    status: 200,
    body: { response: 'Sorry, please contact us by email.' },
  });
  openai.behaviour = () => ({ text: 'recovered' });
  t.same(await chat({ message: 'again', session_id: 'errors-1' }), { status: 200, body: { response: 'recovered' } });
  const transcript = await services.control.show(bot.id, 'errors-1');
  t.same(
    transcript.messages.map((m) => [m.role, m.content, m.failure]),
    [
      ['user', 'fail', 'LLM provider error: openai: 500 fake failure'],
      ['user', 'slow', 'LLM provider error: openai: Request timed out.'],
      ['user', 'empty', undefined],
      ['assistant', 'Sorry, please contact us by email.', undefined],
      ['user', 'again', undefined],
      ['assistant', 'recovered', undefined],
    ],
    'the owner reads why the first two got no answer',
  );
});

t.test('a turn that throws is a 500 and the actor serves the next message', async (t) => {
  openai.behaviour = () => ({ text: 'fine' });
  retrieverFails = true;
  t.same(await chat({ message: 'boom', session_id: 'crash-1' }), {
    status: 500,
    body: { detail: 'Internal server error.' },
  });
  retrieverFails = false;
  t.same(await chat({ message: 'next', session_id: 'crash-1' }), { status: 200, body: { response: 'fine' } });
});

t.test('400 for every malformed body, paused chatbots, and 404 before 400', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{}, 'message is required.'],
    [{ message: null }, 'message is required.'],
    [{ message: 42 }, 'message must be a string.'],
    [{ message: '   ' }, 'message must not be empty.'],
    [{ message: 'x'.repeat(4001) }, 'message must be at most 4000 characters.'],
    [{ message: 'hi', session_id: '' }, 'session_id must be 1 to 128 characters of letters, digits and _ . : @ -'],
    [
      { message: 'hi', session_id: 'has space' },
      'session_id must be 1 to 128 characters of letters, digits and _ . : @ -',
    ],
    [
      { message: 'hi', session_id: 'x'.repeat(129) },
      'session_id must be 1 to 128 characters of letters, digits and _ . : @ -',
    ],
    [{ message: 'hi', session_id: 7 }, 'session_id must be 1 to 128 characters of letters, digits and _ . : @ -'],
    ['[1]', 'Request body must be a JSON object.'],
    ['{"message":', 'Request body is not valid JSON.'],
  ];
  for (const [body, detail] of cases) {
    t.same(await chat(body), { status: 400, body: { detail } }, detail);
  }
  t.same(
    (await chat({ message: '🙂'.repeat(4000), session_id: 'emoji' })).status,
    200,
    '4000 characters, not UTF-16 units',
  );
  const paused = await services.chatbots.create(owner.user.id, { name: 'Paused' });
  await services.chatbots.setActive(paused.id, false);
  t.same(await chat({ message: 'hi' }, paused.id), { status: 400, body: { detail: 'Chatbot is paused.' } });
  const stranger = await scaleAccount(gw.app);
  t.same(await chat('{"broken', bot.id, stranger.key), { status: 404, body: { detail: 'Chatbot not found.' } });
  t.same(await chat({ message: 'hi' }, 'nope'), { status: 404, body: { detail: 'Chatbot not found.' } });
  const unauthorized = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/chat`, { method: 'POST', body: '{}' });
  t.same([unauthorized.status, await unauthorized.json()], [401, { detail: 'Unauthorized' }]);
});
