import t from 'tap';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch } from '../support/openapi-contract.ts';

const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'ok' });
const WINDOW_MS = 1500;
const gw = await startGateway({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  PLAN_QUOTAS: 'free=5,scale=150',
  RATE_LIMIT_PER_MINUTE: '100000',
  CONVERSATION_RATE_WINDOW_MS: String(WINDOW_MS),
});
t.teardown(async () => {
  await gw.stop();
  await openai.stop();
});
const { services } = gw.app;

async function chat(key: string, chatbotId: string, message: string, sessionId: string) {
  const res = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('the monthly quota: exactly 150 of 1,000 racing calls are accepted', async (t) => {
  const account = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(account.user.id, { name: 'Busy' });
  const results = await Promise.all(
    Array.from({ length: 1000 }, (_, i) => chat(account.key, bot.id, 'hi', `quota-${i}`)),
  );
  const accepted = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 429);
  t.equal(accepted.length, 150);
  t.equal(refused.length, 850);
  t.ok(refused.every((r) => r.body.detail === 'Monthly message limit reached.'));
  t.equal(await services.quota.used(account.user.id), 150);
  t.same(await chat(account.key, bot.id, 'more', 'quota-late'), {
    status: 429,
    body: { detail: 'Monthly message limit reached.' },
  });
});

t.test('the conversation rate limit: 20 per rolling window, refused messages are not counted', async (t) => {
  const account = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(account.user.id, { name: 'Chatty' });
  const statuses = [];
  for (let i = 0; i < 25; i += 1) statuses.push(await chat(account.key, bot.id, `m${i}`, 'flood-1'));
  t.same(
    statuses.map((r) => r.status),
    [...Array(20).fill(200), ...Array(5).fill(429)],
  );
  t.same(statuses[24]!.body, { detail: 'Conversation rate limit exceeded.' });
  t.equal(await services.quota.used(account.user.id), 20, 'refused messages gave their quota back');
  const other = await chat(account.key, bot.id, 'hello', 'flood-2');
  t.equal(other.status, 200, 'other conversations are not limited');
  const transcript = await services.control.show(bot.id, 'flood-1');
  t.equal(transcript.messages.filter((m) => m.role === 'user').length, 20, 'refused messages are not stored');
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 100));
  t.equal((await chat(account.key, bot.id, 'later', 'flood-1')).status, 200, 'the window rolled');
});

t.test('a plan change takes effect on the next message', async (t) => {
  const account = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(account.user.id, { name: 'Plan' });
  for (let i = 0; i < 5; i += 1) t.equal((await chat(account.key, bot.id, 'x', `plan-${i}`)).status, 200);
  await services.accounts.setPlan(account.user.id, 'free');
  // Keys of an account off the Scale plan stop working altogether (DESIGN.md).
  t.equal((await chat(account.key, bot.id, 'x', 'plan-x')).status, 401);
});
