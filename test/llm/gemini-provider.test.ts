// Issue 21: the Gemini provider streams generateContent through @google/genai (API v1, server-sent
// events, usage from the last chunk's usageMetadata), and a call without onText stays a single call.
import t from 'tap';
import { GeminiProvider } from '../../src/llm/gemini-provider.ts';
import { fakeGemini } from '../fakes/fake-llm-server.ts';
import { prompt, streamingSuite } from './streaming-suite.ts';

const gemini = (url: string, options: { timeoutMs: number; maxRetries: number }) =>
  new GeminiProvider({ apiKey: 'gemini-test', baseUrl: url }, options);

streamingSuite(t, {
  name: 'gemini',
  fake: fakeGemini,
  provider: gemini,
  busy: { status: 503, body: { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } } },
  busyMessage: 'gemini: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}',
  timeoutMessage: 'gemini: This operation was aborted',
});

t.test('the request goes to streamGenerateContent on API v1, as server-sent events', async (t) => {
  const server = await fakeGemini().start();
  t.teardown(() => server.stop());
  await gemini(server.url, { timeoutMs: 5000, maxRetries: 0 }).generate('gemini-test', prompt, { onText: () => {} });
  const request = server.requests[0]!;
  t.equal(request.path, '/v1/models/gemini-test:streamGenerateContent?alt=sse');
  t.equal(request.headers['x-goog-api-key'], 'gemini-test');
  t.same(request.body, {
    contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' },
    // The SDK sends the config's generation fields, none here, whenever a config is given.
    generationConfig: {},
  });
});

t.test("usage is the last chunk's, thoughts counted as output; earlier chunks count the prompt only", async (t) => {
  const server = await fakeGemini().start();
  t.teardown(() => server.stop());
  server.behaviour = () => ({ text: 'Thought it through.', usage: { input: 9, output: 13, reasoning: 10 } });
  const reply = await gemini(server.url, { timeoutMs: 5000, maxRetries: 0 }).generate('gemini-test', prompt, {
    onText: () => {},
  });
  t.same(reply, { text: 'Thought it through.', usage: { input_tokens: 9, output_tokens: 13 } });
});

t.test('a reply that stops at a continuation checkpoint fails instead of ending short', async (t) => {
  const server = await fakeGemini().start();
  t.teardown(() => server.stop());
  server.behaviour = () => ({ text: 'The first part', finishReason: 'CONTINUATION' });
  const pieces: string[] = [];
  await t.rejects(
    gemini(server.url, { timeoutMs: 5000, maxRetries: 2 }).generate('gemini-test', prompt, {
      onText: (delta) => pieces.push(delta),
    }),
    {
      name: 'LlmError',
      message: 'gemini: the reply stopped at a continuation checkpoint, which a stream does not resume',
      emitted: true,
    },
  );
  t.same(pieces, ['The', ' first', ' part']);
  t.equal(server.requests.length, 1);
});

t.test(
  'a cut after the response began but before any text is not retried: the SDK retries only until the response',
  async (t) => {
    const server = await fakeGemini().start();
    t.teardown(() => server.stop());
    server.behaviour = () => ({ text: 'one', failAfterPieces: 0 });
    await t.rejects(
      gemini(server.url, { timeoutMs: 5000, maxRetries: 2 }).generate('gemini-test', prompt, { onText: () => {} }),
      { name: 'LlmError', message: 'gemini: terminated', emitted: false },
    );
    t.equal(server.requests.length, 1);
  },
);
