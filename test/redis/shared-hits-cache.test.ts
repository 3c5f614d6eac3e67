import { createClient } from 'redis';
import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { connectRedis, isCluster } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { freezeShareable, SharedHitsCache, SharedHitsPooledCache } from '../../src/redis/shared-hits-cache.ts';
import { SignalBus } from '../../src/redis/signal-bus.ts';
import { startRedis } from '../support/redis-server.ts';
import { until } from '../support/until.ts';

// node-redis answers a client-side cache hit with a structuredClone of the cached reply: 15% of the
// read benchmark's CPU. The gateway's cache hands out the reply itself, frozen.

const server = await startRedis();
t.teardown(() => server.stop());

t.test('a hit is the cached reply itself, deep-frozen; a write anywhere invalidates it', async (t) => {
  const redis = await connectRedis({ url: server.url }, createLogger('silent'));
  t.teardown(() => redis.close());
  if (isCluster(redis)) throw new Error('expected a single node client');
  const writer = await createClient({ url: server.url }).connect();
  t.teardown(() => writer.destroy());
  await writer.hSet('record', { name: 'Ada', plan: 'free' });
  await writer.rPush('list', ['a', 'b']);

  const first = await redis.hGetAll('record');
  const hit = await redis.hGetAll('record');
  const again = await redis.hGetAll('record');
  t.same(first, { name: 'Ada', plan: 'free' });
  t.not(hit, first, 'the miss hands its caller a copy (the library does)');
  t.equal(again, hit, 'hits share the cached reply');
  t.ok(Object.isFrozen(hit));
  t.throws(
    () => {
      (hit as Record<string, string>)['plan'] = 'scale';
    },
    TypeError,
    'changing it throws rather than changing every later reader’s record',
  );

  await redis.lRange('list', 0, -1);
  const list = await redis.lRange('list', 0, -1);
  t.same(list, ['a', 'b']);
  t.equal(await redis.lRange('list', 0, -1), list);
  t.throws(() => list.sort(), TypeError);

  await writer.hSet('record', 'plan', 'scale');
  await until(async () => (await redis.hGetAll('record'))['plan'] === 'scale', 'the invalidation');
  t.same(await redis.hGetAll('record'), { name: 'Ada', plan: 'scale' });
});

t.test('a reply holding Buffers is cloned for every hit, as the library does', async (t) => {
  // The gateway's reads with a Buffer type mapping go past the cache (node-redis caches only the
  // default mapping), so the fallback is driven here through the cache's own entry point.
  const cache = new SharedHitsCache({ maxEntries: 10 });
  const client = {} as Parameters<SharedHitsCache['handleCache']>[0];
  const parser = { redisArgs: ['HGETALL', 'binary'], keys: ['binary'] } as unknown as Parameters<
    SharedHitsCache['handleCache']
  >[1];
  let sent = 0;
  const read = () =>
    cache.handleCache(client, parser, () => {
      sent += 1;
      return Promise.resolve({ vector: Buffer.from([1, 2, 3]) } as never);
    }) as Promise<{ vector: Buffer }>;
  await read();
  const one = await read();
  const two = await read();
  t.equal(sent, 1, 'answered from the cache');
  t.not(one, two);
  t.notOk(Object.isFrozen(one));
  one.vector[0] = 9;
  t.same([...(await read()).vector], [1, 2, 3], 'the cached reply is untouched');
  const strings = { ...parser, redisArgs: ['HGETALL', 'plain'], keys: ['plain'] } as typeof parser;
  const plain = () =>
    cache.handleCache(client, strings, () => Promise.resolve({ name: 'Ada' } as never)) as Promise<object>;
  await plain();
  t.equal(await plain(), await plain(), 'a reply of strings is shared through the same entry point');
});

t.test('the signal subscriber has no client-side cache: it reads nothing, and shares none', async (t) => {
  const redis = await connectRedis({ url: server.url }, createLogger('silent'));
  t.teardown(() => redis.close());
  const bus = new SignalBus(redis, new RedisKeys('shc:'), createLogger('silent'));
  await bus.subscribe(() => {});
  t.teardown(() => bus.stop());
  const admin = await createClient({ url: server.url }).connect();
  t.teardown(() => admin.destroy());
  const clients = await admin.clientList();
  const subscribers = clients.filter((client) => client.flags.includes('P'));
  t.equal(subscribers.length, 1);
  t.notOk(subscribers[0]!.flags.includes('t'), 'no tracking on the subscriber');
  t.ok(
    clients.some((client) => client.flags.includes('t')),
    'the caching connection tracks its reads',
  );
});

t.test("a cluster's pooled cache shares its hits the same way", async (t) => {
  const client = await createClient({
    url: server.url,
    RESP: 3,
    clientSideCache: new SharedHitsPooledCache({ maxEntries: 10 }),
  }).connect();
  t.teardown(() => client.destroy());
  await client.set('pooled', 'v');
  await client.hSet('pooled-hash', 'f', 'v');
  await client.hGetAll('pooled-hash');
  const hit = await client.hGetAll('pooled-hash');
  t.equal(await client.hGetAll('pooled-hash'), hit);
  t.ok(Object.isFrozen(hit));
});

t.test('what can be shared: plain data only, frozen all the way down', async (t) => {
  const nested = { a: ['x', { b: 'y' }], c: null, d: 1, e: true };
  t.equal(freezeShareable(nested), true);
  t.ok(Object.isFrozen(nested) && Object.isFrozen(nested.a) && Object.isFrozen(nested.a[1]));
  t.equal(freezeShareable('text'), true);
  t.equal(freezeShareable(null), true);
  const withBuffer = { a: 'x', b: Buffer.from('y') };
  t.equal(freezeShareable(withBuffer), false);
  t.notOk(Object.isFrozen(withBuffer));
  t.equal(freezeShareable(new Map([['a', 'b']])), false);
  t.equal(freezeShareable(Object.freeze(new Map([['a', 'b']]))), false, 'a frozen Map can still be changed');
  t.equal(freezeShareable([new Set()]), false);
});
