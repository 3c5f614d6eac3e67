import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices } from '../../src/services.ts';
import { generateApiKey } from '../../src/auth/api-key-token.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SOURCE_STATUSES, SOURCE_TYPES } from '../../src/sources/source.ts';
import { SourceStore } from '../../src/store/source-store.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { apiFetch, assertDescribed, parseRawResponse } from '../support/openapi-contract.ts';
import { maskVarying, rawRequest } from '../support/raw-http.ts';

const gw = await startGateway();
t.teardown(() => gw.stop());
const { services } = gw.app;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const LIST_FIELDS = ['created_at', 'id', 'is_active', 'name', 'provider', 'slug'];
const DETAIL_FIELDS = [...LIST_FIELDS, 'fallback_message', 'system_prompt'].sort();
const SOURCE_FIELDS = ['created_at', 'id', 'page_count', 'status', 'title', 'type', 'url'];

const owner = await scaleAccount(gw.app);
const other = await scaleAccount(gw.app);
const support = await services.chatbots.create(owner.user.id, {
  name: 'Support Bot',
  provider: 'gemini',
  systemPrompt: 'You answer support questions.',
  fallbackMessage: 'Please email support@example.com.',
});
const sales = await services.chatbots.create(owner.user.id, { name: 'Sales Bot', provider: 'ollama' });
await services.chatbots.setActive(sales.id, false);
const removed = await services.chatbots.create(owner.user.id, { name: 'Old Bot' });
await services.chatbots.softDelete(removed.id);
const foreign = await services.chatbots.create(other.user.id, { name: 'Support Bot' });

/** A public API call, its response checked against docs/openapi.json. */
async function get(path: string, key: string | undefined = owner.key) {
  return read(
    await apiFetch(gw.baseUrl + path, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } }),
  );
}

/** A route outside the public API's operations (nothing to check it against). */
async function getOther(path: string) {
  return read(await fetch(gw.baseUrl + path));
}

async function read(response: Response) {
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

t.test('GET /api/v1/chatbots: a bare array of list views, newest first, deleted excluded', async (t) => {
  const res = await get('/api/v1/chatbots');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  t.same(res.body, [
    {
      id: sales.id,
      name: 'Sales Bot',
      slug: 'sales-bot',
      provider: 'ollama',
      is_active: false,
      created_at: sales.created_at,
    },
    {
      id: support.id,
      name: 'Support Bot',
      slug: 'support-bot',
      provider: 'gemini',
      is_active: true,
      created_at: support.created_at,
    },
  ]);
  for (const item of res.body as Array<Record<string, unknown>>) {
    t.same(Object.keys(item).sort(), LIST_FIELDS);
    t.match(item.id, UUID);
    t.match(item.created_at, TIMESTAMP);
  }
});

t.test('GET /api/v1/chatbots for an owner without chatbots is an empty array', async (t) => {
  const lonely = await scaleAccount(gw.app);
  const res = await get('/api/v1/chatbots', lonely.key);
  t.equal(res.status, 200);
  t.same(res.body, []);
});

t.test('GET /api/v1/chatbots/{id}: the detail view, exactly', async (t) => {
  const res = await get(`/api/v1/chatbots/${support.id}`);
  t.equal(res.status, 200);
  t.same(res.body, {
    id: support.id,
    name: 'Support Bot',
    slug: 'support-bot',
    provider: 'gemini',
    is_active: true,
    created_at: support.created_at,
    system_prompt: 'You answer support questions.',
    fallback_message: 'Please email support@example.com.',
  });
  t.same(Object.keys(res.body).sort(), DETAIL_FIELDS);
  const paused = await get(`/api/v1/chatbots/${sales.id}`);
  t.equal(paused.status, 200);
  t.equal(paused.body.is_active, false);
  const upper = await get(`/api/v1/chatbots/${support.id.toUpperCase()}`);
  t.equal(upper.status, 200);
  t.equal(upper.body.id, support.id);
});

t.test('a foreign, deleted, unknown or non-UUID chatbot id is one identical 404', async (t) => {
  const ids = [foreign.id, removed.id, crypto.randomUUID(), 'not-a-uuid', `${support.id}x`, '..%2F..'];
  for (const suffix of ['', '/sources']) {
    for (const id of ids) {
      const res = await get(`/api/v1/chatbots/${id}${suffix}`);
      t.equal(res.status, 404, `${id}${suffix}`);
      t.same(res.body, { detail: 'Chatbot not found.' }, `${id}${suffix}`);
    }
  }
  // A path that cannot be decoded is an unknown route: 404 before authentication, as documented.
  for (const path of ['/api/v1/chatbots/%', '/api/v1/chatbots/%E0%A4%A/sources']) {
    const res = await get(path, undefined);
    t.same([res.status, res.body, res.headers.get('x-ratelimit-limit')], [404, { detail: 'Not Found' }, null], path);
  }
  const theirs = await get(`/api/v1/chatbots/${support.id}`, other.key);
  t.equal(theirs.status, 404);
  t.same(theirs.body, { detail: 'Chatbot not found.' });
  const theirSources = await get(`/api/v1/chatbots/${support.id}/sources`, other.key);
  t.same([theirSources.status, theirSources.body], [404, { detail: 'Chatbot not found.' }]);
});

t.test('GET /api/v1/chatbots/{id}/sources: bare array, newest first, exact fields, deleted excluded', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'Docs Bot' });
  const first = await services.sources.create(bot.id, { type: 'text', title: 'Returns policy', content: 'x' });
  const second = await services.sources.create(bot.id, { type: 'url', url: 'https://example.com/' });
  const gone = await services.sources.create(bot.id, { type: 'text', content: 'y' });
  await services.sources.softDelete(gone.id);
  await services.sources.setStatus(second.id, 'done', { pageCount: 12 });
  const res = await get(`/api/v1/chatbots/${bot.id}/sources`);
  t.equal(res.status, 200);
  t.same(res.body, [
    {
      id: second.id,
      type: 'url',
      title: '',
      url: 'https://example.com/',
      status: 'done',
      page_count: 12,
      created_at: second.created_at,
    },
    {
      id: first.id,
      type: 'text',
      title: 'Returns policy',
      url: '',
      status: 'pending',
      page_count: 0,
      created_at: first.created_at,
    },
  ]);
  for (const item of res.body as Array<Record<string, unknown>>) t.same(Object.keys(item).sort(), SOURCE_FIELDS);
  const empty = await get(`/api/v1/chatbots/${support.id}/sources`);
  t.same([empty.status, empty.body], [200, []]);
});

t.test('every SPEC source type and status is representable; equal times order by id, descending', async (t) => {
  const bot = await services.chatbots.create(owner.user.id, { name: 'All Types' });
  // A second store over the same Redis with a frozen clock gives every source the same created_at.
  const frozen = { nowMicros: () => 1_795_000_000_123_456 };
  const keys = new RedisKeys(gw.config.REDIS_PREFIX);
  const redis = (services.sources as unknown as { redis: never }).redis;
  const sameTime = new SourceStore(redis, keys, frozen);
  const created = [];
  for (const [i, type] of SOURCE_TYPES.entries()) {
    const source = await sameTime.create(bot.id, {
      type,
      url: type === 'text' ? '' : `https://e.com/${i}`,
      content: 'x',
    });
    await sameTime.setStatus(source.id, SOURCE_STATUSES[i % SOURCE_STATUSES.length]!);
    created.push(source.id);
  }
  const res = await get(`/api/v1/chatbots/${bot.id}/sources`);
  t.equal(res.status, 200);
  const body = res.body as Array<{ id: string; type: string; status: string; created_at: string }>;
  t.same(
    body.map((s) => s.id),
    [...created].sort().reverse(),
  );
  t.same(new Set(body.map((s) => s.type)), new Set(SOURCE_TYPES));
  t.same(new Set(body.map((s) => s.status)), new Set(SOURCE_STATUSES));
  t.same(new Set(body.map((s) => s.created_at)), new Set(['2026-11-18T11:06:40.123456+00:00']));
});

t.test('401 is byte-identical for every way a key can be wrong, and counts toward nothing', async (t) => {
  const revoked = await services.apiKeys.create(owner.user.id, 'to revoke');
  await services.apiKeys.revoke(owner.user.id, revoked.id);
  const downgraded = await scaleAccount(gw.app);
  await services.accounts.setPlan(downgraded.user.id, 'standard');
  const before = await get('/api/v1/chatbots');
  const variants: Record<string, string[]> = {
    missing: [],
    'wrong scheme': [`Authorization: Basic ${Buffer.from('a:b').toString('base64')}`],
    'empty bearer': ['Authorization: Bearer '],
    malformed: ['Authorization: Bearer ic_notakey'],
    'bad checksum': [`Authorization: Bearer ${owner.key.slice(0, -1)}${owner.key.endsWith('A') ? 'B' : 'A'}`],
    'unknown well-formed': [`Authorization: Bearer ${generateApiKey()}`],
    revoked: [`Authorization: Bearer ${revoked.key}`],
    'account not on Scale': [`Authorization: Bearer ${downgraded.key}`],
  };
  const responses = new Map<string, string>();
  for (const [name, headers] of Object.entries(variants)) {
    const raw = await rawRequest(gw.app.port, ['GET /api/v1/chatbots HTTP/1.1', 'Host: test', ...headers]);
    await assertDescribed('GET', '/api/v1/chatbots', parseRawResponse(raw));
    responses.set(name, maskVarying(raw));
  }
  const expected = [
    'HTTP/1.1 401 Unauthorized',
    'Server: switchboard',
    'X-Request-Id: *',
    'WWW-Authenticate: Bearer',
    'Content-Type: application/json',
    'Content-Length: 25',
    'Date: *',
    'Connection: close',
    '',
    '{"detail":"Unauthorized"}',
  ].join('\r\n');
  for (const [name, raw] of responses) t.equal(raw, expected, name);
  const after = await get('/api/v1/chatbots');
  t.equal(after.status, 200);
  const remaining = Number(before.headers.get('x-ratelimit-remaining'));
  t.equal(after.headers.get('x-ratelimit-remaining'), String(remaining - 1));
});

t.test('check order: 401 before 404, and the key counts toward its limit', async (t) => {
  const res = await get(`/api/v1/chatbots/${crypto.randomUUID()}`, 'ic_wrong');
  t.same([res.status, res.body], [401, { detail: 'Unauthorized' }]);
  const before = await get('/api/v1/chatbots');
  const admitted = await get(`/api/v1/chatbots/${crypto.randomUUID()}`);
  t.same([admitted.status, admitted.body], [404, { detail: 'Chatbot not found.' }]);
  t.equal(admitted.headers.get('x-ratelimit-limit'), '60');
  const remaining = Number(before.headers.get('x-ratelimit-remaining'));
  t.equal(admitted.headers.get('x-ratelimit-remaining'), String(remaining - 1));
  t.equal(admitted.headers.get('retry-after'), null);
});

t.test('a successful call records last_used_at on the key', async (t) => {
  const fresh = await services.apiKeys.create(owner.user.id, 'fresh');
  t.equal((await services.apiKeys.list(owner.user.id)).find((k) => k.id === fresh.id)?.last_used_at, null);
  const res = await get('/api/v1/chatbots', fresh.key);
  t.equal(res.status, 200);
  const listed = (await services.apiKeys.list(owner.user.id)).find((k) => k.id === fresh.id);
  t.match(listed?.last_used_at, TIMESTAMP);
  await services.apiKeys.revoke(owner.user.id, fresh.id);
  const afterRevoke = await get('/api/v1/chatbots', fresh.key);
  t.same([afterRevoke.status, afterRevoke.body], [401, { detail: 'Unauthorized' }]);
});

t.test('unknown routes and wrong methods answer {"detail"}', async (t) => {
  const unknown = await getOther('/api/v1/nothing-here');
  t.same([unknown.status, unknown.body], [404, { detail: 'Not Found' }]);
  const root = await fetch(`${gw.baseUrl}/`, { redirect: 'manual' });
  t.same([root.status, root.headers.get('location')], [302, '/dashboard'], 'the root leads to the dashboard');
  const wrong = await fetch(`${gw.baseUrl}/api/v1/chatbots`, { method: 'DELETE' });
  t.equal(wrong.status, 405);
  t.same(await wrong.json(), { detail: 'Method Not Allowed' });
  t.equal(wrong.headers.get('allow'), 'GET');
});

t.test('changes written by another process are seen on the very next request', async (t) => {
  // A second connection stands in for another gateway or the CLI; this gateway's client-side
  // cache must be invalidated by Redis, not by anything in this process.
  const otherProcess = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
  t.teardown(() => otherProcess.close());
  const remote = createServices(otherProcess, gw.config, systemClock, createLogger('silent'));
  const bot = await services.chatbots.create(owner.user.id, { name: 'Cached Bot' });
  t.equal((await get(`/api/v1/chatbots/${bot.id}`)).body.is_active, true);
  t.equal((await get(`/api/v1/chatbots/${bot.id}/sources`)).body.length, 0);
  await remote.chatbots.setActive(bot.id, false);
  t.equal((await get(`/api/v1/chatbots/${bot.id}`)).body.is_active, false);
  await remote.sources.create(bot.id, { type: 'text', content: 'hello' });
  t.equal((await get(`/api/v1/chatbots/${bot.id}/sources`)).body.length, 1);
  await remote.chatbots.softDelete(bot.id);
  t.equal((await get(`/api/v1/chatbots/${bot.id}`)).status, 404);
  t.notOk((await get('/api/v1/chatbots')).body.some((b: { id: string }) => b.id === bot.id));
});

t.test('health and readiness', async (t) => {
  const health = await getOther('/healthz');
  t.same([health.status, health.body], [200, { status: 'ok' }]);
  const ready = await getOther('/readyz');
  t.same([ready.status, ready.body], [200, { status: 'ready' }]);
});
