import t from 'tap';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { assertDescribed, type ReceivedResponse } from '../support/openapi-contract.ts';

// A short window exercises the same Lua script as the 60-second default.
const WINDOW_MS = 4000;
const gw = await startGateway({ RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) });
t.teardown(() => gw.stop());

/** Every response the bursts got, checked against docs/openapi.json after the timed tests. */
const received: ReceivedResponse[] = [];

async function burst(key: string, count: number) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${gw.baseUrl}/api/v1/chatbots`, { headers: { authorization: `Bearer ${key}` } });
      const text = await res.text();
      received.push({ status: res.status, headers: Object.fromEntries(res.headers), body: text });
      return { status: res.status, headers: res.headers, body: JSON.parse(text) };
    }),
  );
}

t.test('exactly 60 of 200 concurrent requests are admitted; the rest get the exact 429', async (t) => {
  const { key } = await scaleAccount(gw.app);
  const started = Date.now();
  const results = await burst(key, 200);
  t.ok(Date.now() - started < WINDOW_MS, 'the burst fits in one window');
  const admitted = results.filter((r) => r.status === 200);
  const limited = results.filter((r) => r.status === 429);
  t.equal(admitted.length, 60);
  t.equal(limited.length, 140);
  t.same(
    admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b),
    Array.from({ length: 60 }, (_, i) => i),
  );
  for (const r of limited) {
    t.same(r.body, { detail: 'API rate limit exceeded. Max 60 requests per minute.' });
    t.equal(r.headers.get('x-ratelimit-limit'), '60');
    t.equal(r.headers.get('x-ratelimit-remaining'), '0');
    t.equal(r.headers.get('retry-after'), null);
  }
  t.ok(admitted.every((r) => r.headers.get('retry-after') === null));
});

t.test('the window rolls, and rejected requests were never counted', async (t) => {
  const { key } = await scaleAccount(gw.app);
  const first = await burst(key, 60);
  t.equal(first.filter((r) => r.status === 200).length, 60);
  // Rejected requests during the window must not extend it.
  const rejected = await burst(key, 50);
  t.equal(rejected.filter((r) => r.status === 429).length, 50);
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS + 100));
  const second = await burst(key, 80);
  t.equal(second.filter((r) => r.status === 200).length, 60);
  t.equal(second.filter((r) => r.status === 429).length, 20);
});

t.test('the window slides: requests leave it one by one as they age', async (t) => {
  const { key } = await scaleAccount(gw.app);
  const early = await burst(key, 30);
  t.equal(early.filter((r) => r.status === 200).length, 30);
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS / 2));
  const late = await burst(key, 30);
  t.equal(late.filter((r) => r.status === 200).length, 30);
  t.equal((await burst(key, 1))[0]!.status, 429);
  // After the early half has aged out, exactly 30 places are free again (not 60: a fixed window would give 60).
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS / 2 + 150));
  const again = await burst(key, 40);
  t.equal(again.filter((r) => r.status === 200).length, 30);
});

t.test('two keys of one account have separate windows', async (t) => {
  const account = await scaleAccount(gw.app);
  const second = await gw.app.services.apiKeys.create(account.user.id, 'second');
  const a = await burst(account.key, 70);
  const b = await burst(second.key, 70);
  t.equal(a.filter((r) => r.status === 200).length, 60);
  t.equal(b.filter((r) => r.status === 200).length, 60);
});

// Checked here rather than as they arrive, so checking takes nothing from the windows timed above.
t.test('every response of the bursts is one docs/openapi.json describes', async (t) => {
  t.ok(received.length > 600, `${received.length} responses`);
  for (const response of received) await assertDescribed('GET', '/api/v1/chatbots', response);
  t.same([...new Set(received.map((r) => r.status))].sort(), [200, 429]);
});
