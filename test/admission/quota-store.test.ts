import t from 'tap';
import { AccountStore } from '../../src/store/account-store.ts';
import { QuotaStore } from '../../src/admission/quota-store.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { createLogger } from '../../src/logger.ts';
import { commandsExecutedDuring } from '../support/commands-executed.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { server, redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');

t.test('quotas are per calendar month in UTC', async (t) => {
  let now = Date.UTC(2026, 10, 30, 23, 59, 59) * 1000;
  const clock = { nowMicros: () => now };
  const accounts = new AccountStore(redis, keys, clock, ['free', 'scale']);
  const quota = new QuotaStore(redis, keys, clock, { free: 2, scale: 10 });
  const user = await accounts.create('month@example.com', 'free');
  t.equal(await quota.consume(user.id), 'counted');
  t.equal(await quota.consume(user.id), 'counted');
  t.equal(await quota.consume(user.id), 'exhausted');
  now = Date.UTC(2026, 11, 1, 0, 0, 1) * 1000;
  t.equal(await quota.used(user.id), 0, 'December starts empty');
  t.equal(await quota.consume(user.id), 'counted');
  await quota.refund(user.id);
  t.equal(await quota.used(user.id), 0);
  await quota.refund(user.id);
  t.equal(await quota.used(user.id), 0, 'a refund never goes below zero');
  t.equal(await quota.consume(crypto.randomUUID()), 'unknown-account');
});

t.test('gateways counting at once never count past the limit', async (t) => {
  const clock = { nowMicros: () => Date.UTC(2026, 10, 15) * 1000 };
  const accounts = new AccountStore(redis, keys, clock, ['free']);
  const user = await accounts.create('race@example.com', 'free');
  const gateways = await Promise.all(
    [1, 2, 3].map(async () => {
      const client = await connectRedis({ url: server.url }, createLogger('silent'));
      t.teardown(() => client.close());
      return new QuotaStore(client, keys, clock, { free: 20 });
    }),
  );
  const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => gateways[i % 3]!.consume(user.id)));
  t.equal(decisions.filter((decision) => decision === 'counted').length, 20);
  t.equal(decisions.filter((decision) => decision === 'exhausted').length, 40);
  t.equal(await gateways[0]!.used(user.id), 20);
});

t.test('the plan is read through the cache: a message costs the script, and a new plan applies', async (t) => {
  const clock = { nowMicros: () => Date.UTC(2026, 10, 15) * 1000 };
  const accounts = new AccountStore(redis, keys, clock, ['free', 'scale']);
  const quota = new QuotaStore(redis, keys, clock, { free: 2, scale: 10 });
  const user = await accounts.create('plan@example.com', 'free');
  t.equal(await quota.consume(user.id), 'counted');
  const delta = await commandsExecutedDuring(redis, async () => t.equal(await quota.consume(user.id), 'counted'));
  t.same(delta, { evalsha: 1, incr: 2 }, 'no read of the plan');
  t.equal(await quota.consume(user.id), 'exhausted');
  // The operator changes the plan from another process (the CLI).
  const cli = await connectRedis({ url: server.url }, createLogger('silent'));
  t.teardown(() => cli.close());
  await new AccountStore(cli, keys, clock, ['free', 'scale']).setPlan(user.id, 'scale');
  await until(async () => (await quota.consume(user.id)) === 'counted', 'the new plan applied');
  t.equal(await quota.used(user.id), 3);
  // A plan the quotas do not name, even one an object inherits, counts nothing.
  await cli.hSet(keys.user(user.id), 'plan', 'constructor');
  await until(async () => (await quota.consume(user.id)) === 'unknown-account', 'the unknown plan seen');
  t.equal(await quota.used(user.id), 3);
});
