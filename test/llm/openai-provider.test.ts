// Issue 21: the OpenAI provider streams chat completions through the SDK (`stream: true`, usage from
// the last chunk), and a call without onText stays a single completion.
import t from 'tap';
import { OpenAiProvider } from '../../src/llm/openai-provider.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { prompt, streamingSuite } from './streaming-suite.ts';

const openAi = (url: string, options: { timeoutMs: number; maxRetries: number }) =>
  new OpenAiProvider({ apiKey: 'sk-test', baseUrl: `${url}/v1` }, options);

streamingSuite(t, {
  name: 'openai',
  fake: fakeOpenAi,
  provider: openAi,
  busy: { status: 503, body: { error: { message: 'The server is overloaded.', type: 'server_error' } } },
  busyMessage: 'openai: 503 The server is overloaded.',
  timeoutMessage: 'openai: The operation was aborted due to timeout',
});

t.test('the request asks for a stream with its usage', async (t) => {
  const server = await fakeOpenAi().start();
  t.teardown(() => server.stop());
  const pieces: string[] = [];
  await openAi(server.url, { timeoutMs: 5000, maxRetries: 0 }).generate('gpt-test', prompt, {
    onText: (delta) => pieces.push(delta),
  });
  t.same(server.requests[0]!.body, {
    model: 'gpt-test',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    stream: true,
    stream_options: { include_usage: true },
  });
  // The role chunk, the finish chunk and the usage chunk carry no text: only 'ok' reached onText.
  t.same(pieces, ['ok']);
});

t.test(
  'a cut after the response began but before any text is not retried: the SDK retries only until the response',
  async (t) => {
    const server = await fakeOpenAi().start();
    t.teardown(() => server.stop());
    server.behaviour = () => ({ text: 'one', failAfterPieces: 0 });
    await t.rejects(
      openAi(server.url, { timeoutMs: 5000, maxRetries: 2 }).generate('gpt-test', prompt, { onText: () => {} }),
      { name: 'LlmError', message: 'openai: terminated', emitted: false },
    );
    t.equal(server.requests.length, 1);
  },
);
