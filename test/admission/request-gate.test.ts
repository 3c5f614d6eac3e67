import t from 'tap';
import { AccountStore } from '../../src/store/account-store.ts';
import { ApiKeyStore } from '../../src/store/api-key-store.ts';
import { QuotaStore } from '../../src/admission/quota-store.ts';
import { RequestGate, type GateOptions } from '../../src/admission/request-gate.ts';
import { connectRedis, type RedisClient } from '../../src/redis/redis-client.ts';
import type { Clock } from '../../src/clock.ts';
import { createLogger } from '../../src/logger.ts';
import { commandsExecutedDuring } from '../support/commands-executed.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { server, redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');

/** A gate over `client` with the stores it reads: `limits` per key, `quotas` messages a month per plan. */
function gateOn(
  client: RedisClient,
  clock: Pick<Clock, 'nowMicros'>,
  limits: GateOptions,
  quotas: Record<string, number>,
) {
  const apiKeys = new ApiKeyStore(client, keys, clock);
  const quota = new QuotaStore(client, keys, clock, quotas);
  return { apiKeys, quota, gate: new RequestGate(client, keys, apiKeys, quota, limits, clock) };
}

t.test('a refused request does not use up its second’s last_used_at write', async (t) => {
  let now = Date.UTC(2026, 10, 27, 12, 0, 0) * 1000;
  const clock = { nowMicros: () => now };
  const accounts = new AccountStore(redis, keys, clock, ['free', 'scale']);
  // One request per 2 s of the server's time: the second request at once is refused.
  const { apiKeys, gate } = gateOn(redis, clock, { limit: 1, windowMs: 2000 }, { scale: 10 });
  const user = await accounts.create('gate@example.com', 'scale');
  const created = await apiKeys.create(user.id, 'gate');
  const lastUsed = async () => (await apiKeys.list(user.id)).find((k) => k.id === created.id)?.last_used_at;

  t.match(await gate.admit(created.key), { kind: 'admitted', remaining: 0 });
  const first = await lastUsed();
  t.type(first, 'string', 'the admitted request wrote last_used_at');

  now += 1_000_000; // the gateway's next second: this key may be written once more in it
  t.same(await gate.admit(created.key), { kind: 'limited', limit: 1, remaining: 0 });
  t.equal(await lastUsed(), first, 'the refused request wrote nothing');
  await until(async () => (await gate.admit(created.key)).kind === 'admitted', 'the window to pass', 10_000);
  const second = await lastUsed();
  t.not(second, first, 'the admitted request of that second wrote last_used_at');
  t.ok(Date.parse(second!) > Date.parse(first!));

  t.same(await gate.admit('sb_not-a-key'), { kind: 'unauthorized' });
});

t.test('a message counted in the gate’s own script: one round trip, exact, only for an admitted request', async (t) => {
  const clock = { nowMicros: () => Date.UTC(2026, 10, 27, 12, 0, 0) * 1000 };
  const accounts = new AccountStore(redis, keys, clock, ['free', 'scale']);
  const { apiKeys, quota, gate } = gateOn(redis, clock, { limit: 5, windowMs: 60_000 }, { scale: 3 });
  const user = await accounts.create('gate-quota@example.com', 'scale');
  const created = await apiKeys.create(user.id, 'chat');
  const key = (await gate.identify(created.key))!;
  t.same(key, { userId: user.id, keyId: created.id, token: created.key });
  t.equal(await gate.identify('sb_not-a-key'), undefined);
  t.equal(await gate.identify(undefined), undefined);

  const delta = await commandsExecutedDuring(redis, async () =>
    t.same(await gate.admitKey(key, true), {
      kind: 'admitted',
      userId: user.id,
      limit: 5,
      remaining: 4,
      quota: 'counted',
    }),
  );
  t.match(delta, { evalsha: 1, incr: 2 }, 'the request and its message in one script');
  t.same(await gate.admitKey(key), { kind: 'admitted', userId: user.id, limit: 5, remaining: 3 }, 'nothing counted');
  t.equal(await quota.used(user.id), 1);
  t.match(await gate.admitKey(key, true), { remaining: 2, quota: 'counted' });
  t.match(await gate.admitKey(key, true), { remaining: 1, quota: 'counted' });
  t.same(
    await gate.admitKey(key, true),
    { kind: 'admitted', userId: user.id, limit: 5, remaining: 0, quota: 'exhausted' },
    'the fourth message is over the quota; the request is still counted by the key’s window',
  );
  t.equal(await quota.used(user.id), 3);
  t.same(await gate.admitKey(key, true), { kind: 'limited', limit: 5, remaining: 0 });
  t.equal(await quota.used(user.id), 3, 'a limited request counts no message');
  t.same(await quota.daily(user.id, 1), [{ date: '2026-11-27', messages: 3 }], 'the day’s counter too');

  await accounts.setPlan(user.id, 'free');
  t.same(await gate.admitKey(key, true), { kind: 'unauthorized' }, 'a key off the Scale plan');
  t.equal(await quota.used(user.id), 3);

  const unquoted = gateOn(redis, clock, { limit: 5, windowMs: 60_000 }, {}).gate;
  await accounts.setPlan(user.id, 'scale');
  const other = await accounts.create('gate-unquoted@example.com', 'scale');
  const otherKey = (await unquoted.identify((await apiKeys.create(other.id, 'chat')).key))!;
  t.same(
    await unquoted.admitKey(otherKey, true),
    { kind: 'admitted', userId: other.id, limit: 5, remaining: 4, quota: 'unknown-account' },
    'a plan PLAN_QUOTAS does not name counts no message',
  );
  t.equal(await quota.used(other.id), 0);
});

t.test('three gateways admitting messages at once: exact key limit and exact quota', async (t) => {
  const clock = { nowMicros: () => Date.UTC(2026, 10, 27, 12, 0, 0) * 1000 };
  const accounts = new AccountStore(redis, keys, clock, ['scale']);
  const user = await accounts.create('gate-race@example.com', 'scale');
  const created = await new ApiKeyStore(redis, keys, clock).create(user.id, 'race');
  const gates = await Promise.all(
    [1, 2, 3].map(async () => {
      const client = await connectRedis({ url: server.url }, createLogger('silent'));
      t.teardown(() => client.close());
      return gateOn(client, clock, { limit: 50, windowMs: 60_000 }, { scale: 20 }).gate;
    }),
  );
  const key = (await gates[0]!.identify(created.key))!;
  const decisions = await Promise.all(Array.from({ length: 90 }, (_, i) => gates[i % 3]!.admitKey(key, true)));
  const tally = (kind: string, quota?: string) =>
    decisions.filter((d) => d.kind === kind && (d.kind !== 'admitted' || d.quota === quota)).length;
  t.same(
    [tally('admitted', 'counted'), tally('admitted', 'exhausted'), tally('limited')],
    [20, 30, 40],
    '50 requests admitted, 20 of their messages counted, 40 requests limited',
  );
  t.equal(await new QuotaStore(redis, keys, clock, { scale: 20 }).used(user.id), 20);
});
