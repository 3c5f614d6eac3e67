import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices } from '../../src/services.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { startRedis } from '../support/redis-server.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  await server.stop();
});
const services = createServices(redis, loadConfig({}), systemClock, createLogger('silent'));

t.test('50 concurrent creates at 4 active keys leave exactly 5 active', async (t) => {
  const user = await services.accounts.create('race@example.com', 'scale');
  for (let i = 0; i < 4; i += 1) await services.apiKeys.create(user.id, `k${i}`);
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => services.apiKeys.create(user.id, `race ${i}`)),
  );
  const created = results.filter((r) => r.status === 'fulfilled');
  const refused = results.filter((r) => r.status === 'rejected');
  t.equal(created.length, 1);
  t.equal(refused.length, 49);
  for (const r of refused) {
    t.match(r.reason, { name: 'LimitError', detail: 'Maximum 5 active API keys allowed.' });
  }
  const listed = await services.apiKeys.list(user.id);
  t.equal(listed.filter((k) => k.active).length, 5);
  t.equal(listed.length, 5, 'refused creations leave no record');
  // The refused keys' lookup entries were removed as well.
  t.equal((await redis.keys('sb:keyhash:*')).length, 5);
});

t.test('revoking frees a place under the cap; revoked keys stay listed as inactive', async (t) => {
  const user = await services.accounts.create('cap@example.com', 'scale');
  const keys = [];
  for (let i = 0; i < 5; i += 1) keys.push(await services.apiKeys.create(user.id, `k${i}`));
  await t.rejects(services.apiKeys.create(user.id, 'sixth'), {
    name: 'LimitError',
    detail: 'Maximum 5 active API keys allowed.',
  });
  const revoked = await services.apiKeys.revoke(user.id, keys[2]!.id);
  t.same(revoked, {
    id: keys[2]!.id,
    name: 'k2',
    prefix: keys[2]!.prefix,
    last_used_at: null,
    created_at: keys[2]!.created_at,
    active: false,
  });
  const sixth = await services.apiKeys.create(user.id, 'sixth');
  const listed = await services.apiKeys.list(user.id);
  t.equal(listed.length, 6);
  t.equal(listed[0]!.id, sixth.id, 'newest first');
  t.equal(listed.filter((k) => k.active).length, 5);
  t.same(Object.keys(listed[0]!).sort(), ['active', 'created_at', 'id', 'last_used_at', 'name', 'prefix']);
});

t.test('the key is shown once; only its SHA-256 is stored', async (t) => {
  const user = await services.accounts.create('hash@example.com', 'scale');
  const created = await services.apiKeys.create(user.id, 'ci');
  t.match(created.key, /^ic_/);
  t.equal(created.prefix, created.key.slice(0, 8));
  t.same(Object.keys(created).sort(), ['created_at', 'id', 'key', 'name', 'prefix']);
  const dump: string[] = [];
  for (const name of await redis.keys('*')) {
    const type = await redis.type(name);
    if (type === 'hash') dump.push(JSON.stringify(await redis.hGetAll(name)));
    if (type === 'string') dump.push(String(await redis.get(name)));
  }
  t.notOk(
    dump.some((value) => value.includes(created.key)),
    'the full key is nowhere in Redis',
  );
  t.notOk(
    dump.some((value) => value.includes(created.key.slice(3))),
    'nor its secret part',
  );
});

t.test('API access needs the Scale plan', async (t) => {
  const user = await services.accounts.create('free@example.com');
  t.equal(user.plan, 'free');
  await t.rejects(services.apiKeys.create(user.id, 'nope'), {
    name: 'LimitError',
    detail: 'API access requires the Scale plan.',
  });
  t.same(await services.apiKeys.list(user.id), []);
  await services.accounts.setPlan(user.id, 'scale');
  t.ok(await services.apiKeys.create(user.id, 'now'));
});

t.test("revoking an unknown key or another account's key is 404 API key not found.", async (t) => {
  const a = await services.accounts.create('a@example.com', 'scale');
  const b = await services.accounts.create('b@example.com', 'scale');
  const bKey = await services.apiKeys.create(b.id, 'b');
  await t.rejects(services.apiKeys.revoke(a.id, bKey.id), { name: 'NotFoundError', detail: 'API key not found.' });
  await t.rejects(services.apiKeys.revoke(a.id, crypto.randomUUID()), {
    name: 'NotFoundError',
    detail: 'API key not found.',
  });
  t.equal((await services.apiKeys.list(b.id))[0]!.active, true, "the other account's key is untouched");
});

t.test('names and users are validated', async (t) => {
  const user = await services.accounts.create('names@example.com', 'scale');
  await t.rejects(services.apiKeys.create(user.id, '   '), {
    name: 'ValidationError',
    detail: 'name must be 1 to 100 characters.',
  });
  await t.rejects(services.apiKeys.create(user.id, 'x'.repeat(101)), {
    name: 'ValidationError',
    detail: 'name must be 1 to 100 characters.',
  });
  await t.rejects(services.apiKeys.create(crypto.randomUUID(), 'x'), {
    name: 'NotFoundError',
    detail: 'User not found.',
  });
  await t.rejects(services.apiKeys.list(crypto.randomUUID()), { name: 'NotFoundError', detail: 'User not found.' });
});
