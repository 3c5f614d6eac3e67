// Issue 18: the Ollama provider retried at once, hammering a busy server, and retried answers that
// another try cannot change.
import t from 'tap';
import { OllamaProvider } from '../../src/llm/ollama-provider.ts';
import { fakeOllama } from '../fakes/fake-llm-server.ts';
import { streamingSuite } from './streaming-suite.ts';

const server = await fakeOllama().start();
t.teardown(() => server.stop());
const prompt = { system: 'Be brief.', turns: [{ role: 'user' as const, content: 'Hi' }] };
const BASE_MS = 40;

t.test('a busy server is tried again after growing waits, then answers', async (t) => {
  server.requests.length = 0;
  let calls = 0;
  server.behaviour = () => (++calls <= 2 ? { status: 503, body: { error: 'server busy' } } : { text: 'Hello.' });
  const provider = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 2 }, BASE_MS);
  const reply = await provider.generate('llama3.2', prompt);
  t.equal(reply.text, 'Hello.');
  t.equal(server.requests.length, 3);
  const [first, second, third] = server.requests.map((request) => request.at);
  // Waits of BASE_MS and 2 × BASE_MS, less at most a quarter of jitter.
  t.ok(second! - first! >= BASE_MS * 0.75 - 1, `first wait ${second! - first!} ms`);
  t.ok(third! - second! >= 2 * BASE_MS * 0.75 - 1, `second wait ${third! - second!} ms`);
});

t.test('an answer another try cannot change is not retried', async (t) => {
  server.requests.length = 0;
  server.behaviour = () => ({ status: 404, body: { error: "model 'nope' not found" } });
  const provider = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 2 }, BASE_MS);
  await t.rejects(provider.generate('nope', prompt), { name: 'LlmError', message: "ollama: model 'nope' not found" });
  t.equal(server.requests.length, 1);
});

t.test('retries stop at maxRetries, and an abort ends the wait between them', async (t) => {
  server.requests.length = 0;
  server.behaviour = () => ({ status: 500, body: { error: 'boom' } });
  const provider = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 2 }, BASE_MS);
  await t.rejects(provider.generate('llama3.2', prompt), { name: 'LlmError', message: 'ollama: boom' });
  t.equal(server.requests.length, 3);

  server.requests.length = 0;
  const slow = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 5 }, 60_000);
  const controller = new AbortController();
  const started = performance.now();
  const call = slow.generate('llama3.2', prompt, { signal: controller.signal });
  while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
  controller.abort();
  await t.rejects(call, { name: 'LlmError' });
  t.ok(performance.now() - started < 5000, 'not waiting out a 60 s backoff');
  t.equal(server.requests.length, 1);
});

// Issue 21: streamed through the SDK's `chat({ stream: true })` (NDJSON), usage from the `done` message.
streamingSuite(t, {
  name: 'ollama',
  fake: fakeOllama,
  provider: (url, options) => new OllamaProvider({ host: url }, options, BASE_MS),
  busy: { status: 503, body: { error: 'server busy' } },
  busyMessage: 'ollama: server busy',
  timeoutMessage: 'ollama: The operation was aborted due to timeout',
});

t.test('a streamed request says stream: true', async (t) => {
  server.requests.length = 0;
  server.behaviour = () => ({ text: 'Hello.' });
  const provider = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 0 }, BASE_MS);
  await provider.generate('llama3.2', prompt, { onText: () => {} });
  t.same(server.requests[0]!.body, {
    model: 'llama3.2',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    stream: true,
  });
});

t.test('a stream cut before its first piece is tried again: no text would be repeated', async (t) => {
  server.requests.length = 0;
  let calls = 0;
  server.behaviour = () => ({ text: 'Hello again.', failAfterPieces: ++calls === 1 ? 0 : undefined });
  const provider = new OllamaProvider({ host: server.url }, { timeoutMs: 5000, maxRetries: 1 }, BASE_MS);
  const pieces: string[] = [];
  const reply = await provider.generate('llama3.2', prompt, { onText: (delta) => pieces.push(delta) });
  t.same(reply, { text: 'Hello again.', usage: { input_tokens: 3, output_tokens: 2 } });
  t.same(pieces, ['Hello', ' again.']);
  t.same(
    server.requests.map((request) => request.streamEnd),
    ['cut', 'done'],
  );
});
