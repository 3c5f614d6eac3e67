import t from 'tap';
import { AccountStore } from '../../src/store/account-store.ts';
import { QuotaStore } from '../../src/admission/quota-store.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';

const { redis } = await connectedRedis(t);
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
