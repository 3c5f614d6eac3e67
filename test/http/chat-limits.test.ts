import t from 'tap';
import { createClient } from 'redis';
import { until } from '../support/until.ts';
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

t.test('check order with the quota counted in the gate’s script: 401 → 429 → 404 → 400 → quota', async (t) => {
  // A gateway of its own: 8 requests per key per window, 2 messages a month.
  const small = await startGateway({
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    PLAN_QUOTAS: 'free=5,scale=2',
    RATE_LIMIT_PER_MINUTE: '8',
  });
  t.teardown(() => small.stop());
  const account = await scaleAccount(small.app);
  const bot = await small.app.services.chatbots.create(account.user.id, { name: 'Ordered' });
  const paused = await small.app.services.chatbots.create(account.user.id, { name: 'Paused' });
  await small.app.services.chatbots.setActive(paused.id, false);
  const post = async (chatbotId: string, body: string, key = account.key) => {
    const res = await apiFetch(`${small.baseUrl}/api/v1/chatbots/${chatbotId}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body,
    });
    const used = await small.app.services.quota.used(account.user.id);
    return [res.status, await res.json(), res.headers.get('x-ratelimit-remaining'), used];
  };
  // What Redis is asked to do on the account's hash tag, as MONITOR sees it (commands that scripts run
  // are shown with a `lua` client and left out): the gate's script, with 3 keys, or with the quota's 2
  // more for a message that passed every check before the quota; and the test's own reads of the
  // quota. A bare node-redis client, destroyed at the end (one in MONITOR mode cannot PING, and then
  // never closes).
  const monitor = await createClient({ url: small.redis.url }).connect();
  const probe = await createClient({ url: small.redis.url }).connect();
  t.teardown(() => {
    monitor.destroy();
    probe.destroy();
  });
  const tag = `{u:${account.user.id}}`;
  const seen: string[] = [];
  await monitor.monitor((line: string) => {
    if (!line.includes(tag) || line.includes(' lua]')) return;
    const [, name, keys] = /\] "([^"]+)"(?: "[^"]*" "(\d+)")?/.exec(line) ?? [];
    seen.push(name?.toLowerCase() === 'evalsha' ? `evalsha with ${keys} keys` : (name ?? line).toLowerCase());
  });
  const hi = JSON.stringify({ message: 'hi', session_id: 'ordered' });
  const rateLimited = { detail: 'API rate limit exceeded. Max 8 requests per minute.' };
  t.same(
    [
      await post(bot.id, hi, 'sb_not-a-key'),
      await post(crypto.randomUUID(), '{"broken'),
      await post(bot.id, '{"broken'),
      await post(bot.id, JSON.stringify({ message: '   ' })),
      await post(paused.id, hi),
      await post(bot.id, hi),
      await post(bot.id, hi),
      await post(bot.id, hi),
      await post(bot.id, '{"broken'),
      await post(crypto.randomUUID(), hi),
      await post(bot.id, hi),
    ],
    [
      [401, { detail: 'Unauthorized' }, null, 0],
      [404, { detail: 'Chatbot not found.' }, '7', 0],
      [400, { detail: 'Request body is not valid JSON.' }, '6', 0],
      [400, { detail: 'message must not be empty.' }, '5', 0],
      [400, { detail: 'Chatbot is paused.' }, '4', 0],
      [200, { response: 'ok' }, '3', 1],
      [200, { response: 'ok' }, '2', 2],
      [429, { detail: 'Monthly message limit reached.' }, '1', 2],
      [400, { detail: 'Request body is not valid JSON.' }, '0', 2],
      [429, rateLimited, '0', 2],
      [429, rateLimited, '0', 2],
    ],
    'each request counted by the key’s window whatever its error; only answered messages by the quota',
  );
  // Every command sent before this one is shown before it.
  await probe.echo(`${tag} the end`);
  await until(() => seen.includes('echo'), 'MONITOR to show the last command');
  const gate = 'evalsha with 3 keys';
  const gateAndQuota = 'evalsha with 5 keys';
  t.same(
    seen,
    [
      ...['get'],
      // A script's first run on this Redis is sent again whole (EVAL) after its NOSCRIPT.
      ...[gate, 'eval', 'get'],
      ...[gate, 'get'],
      ...[gate, 'get'],
      ...[gate, 'get'],
      ...[gateAndQuota, 'eval', 'get'],
      ...[gateAndQuota, 'get'],
      ...[gateAndQuota, 'get'],
      ...[gate, 'get'],
      ...[gate, 'get'],
      ...[gateAndQuota, 'get'],
      'echo',
    ],
    'one round trip for the gate and the quota, nothing else on the account’s keys (the GETs are the test’s)',
  );
});
