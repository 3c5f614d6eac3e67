import t from 'tap';
import { fakeOllama, fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';

const openai = await fakeOpenAi().start();
const ollama = await fakeOllama().start();
t.teardown(() => Promise.all([openai.stop(), ollama.stop()]));
// OpenAI has a key, Gemini none, Ollama needs none.
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  OLLAMA_HOST: ollama.url,
  LLM_MAX_RETRIES: '0',
});
t.teardown(() => gw.stop());

t.test("the providers' status: which ones this gateway can call, and their default models", async (t) => {
  const owner = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const res = await owner.get('/dashboard/api/providers');
  t.same(
    [res.status, res.body],
    [
      200,
      [
        { provider: 'gemini', configured: false, default_model: 'gemini-2.5-flash' },
        { provider: 'chatgpt', configured: true, default_model: 'gpt-4o-mini' },
        { provider: 'ollama', configured: true, default_model: 'llama3.2' },
      ],
    ],
  );
  t.notMatch(JSON.stringify(res.body), /sk-test/);
});

t.test('Test: one tiny completion with the gateway’s credentials; failures are results with the reason', async (t) => {
  const owner = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  openai.behaviour = () => ({ text: ' OK \n' });
  const ok = await owner.post('/dashboard/api/providers/test', { provider: 'chatgpt' });
  t.equal(ok.status, 200);
  const { latency_ms: latency, ...rest } = ok.body as { latency_ms: number };
  t.same(rest, { provider: 'chatgpt', model: 'gpt-4o-mini', ok: true, reply: 'OK' });
  t.ok(Number.isInteger(latency) && latency >= 0, `latency ${latency} ms`);
  const sent = openai.requests.at(-1)!.body as { model: string; messages: unknown };
  t.same(
    [sent.model, sent.messages],
    [
      'gpt-4o-mini',
      [
        { role: 'system', content: 'You are checking a connection. Reply with the single word OK.' },
        { role: 'user', content: 'Are you there?' },
      ],
    ],
  );

  const missing = await owner.post('/dashboard/api/providers/test', { provider: 'gemini' });
  t.same(withoutLatency(missing), [
    200,
    { provider: 'gemini', model: 'gemini-2.5-flash', ok: false, detail: 'gemini: GEMINI_API_KEY is not set' },
  ]);

  ollama.behaviour = () => ({ status: 404, body: { error: 'model "qwen3:0.6b" not found, try pulling it first' } });
  const refused = await owner.post('/dashboard/api/providers/test', { provider: 'ollama', model: 'qwen3:0.6b' });
  t.same(withoutLatency(refused), [
    200,
    {
      provider: 'ollama',
      model: 'qwen3:0.6b',
      ok: false,
      detail: 'ollama: model "qwen3:0.6b" not found, try pulling it first',
    },
  ]);
});

t.test('Test: bad input, and one test per owner and provider every 10 seconds', async (t) => {
  const owner = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  const other = await DashboardClient.signIn(gw.baseUrl, await createOwner(gw.app));
  for (const [body, detail] of [
    [{}, 'provider must be one of: gemini, chatgpt, ollama.'],
    [{ provider: 'claude' }, 'provider must be one of: gemini, chatgpt, ollama.'],
    [{ provider: 'chatgpt', model: 'a b' }, 'model must be 1 to 100 letters, digits and . _ : / -.'],
    [{ provider: 'chatgpt', model: 7 }, 'model must be 1 to 100 letters, digits and . _ : / -.'],
  ] as const) {
    const res = await owner.post('/dashboard/api/providers/test', body);
    t.same([res.status, res.body], [400, { detail }], JSON.stringify(body));
  }
  openai.behaviour = () => ({ text: 'OK' });
  const calls = openai.requests.length;
  const first = await owner.post('/dashboard/api/providers/test', { provider: 'chatgpt' });
  const again = await owner.post('/dashboard/api/providers/test', { provider: 'chatgpt' });
  t.same(
    [first.status, again.status, again.body],
    [200, 429, { detail: 'Wait a few seconds before testing this provider again.' }],
  );
  t.equal((await owner.post('/dashboard/api/providers/test', { provider: 'ollama' })).status, 200, 'another provider');
  t.equal((await other.post('/dashboard/api/providers/test', { provider: 'chatgpt' })).status, 200, 'another owner');
  t.equal(openai.requests.length, calls + 2, 'the refused test made no call');
});

function withoutLatency(res: { status: number; body: unknown }): unknown[] {
  const rest: Record<string, unknown> = { ...(res.body as Record<string, unknown>) };
  delete rest.latency_ms;
  return [res.status, rest];
}
