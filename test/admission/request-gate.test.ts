import t from 'tap';
import { AccountStore } from '../../src/store/account-store.ts';
import { ApiKeyStore } from '../../src/store/api-key-store.ts';
import { RequestGate } from '../../src/admission/request-gate.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');

t.test('a refused request does not use up its second’s last_used_at write', async (t) => {
  let now = Date.UTC(2026, 10, 27, 12, 0, 0) * 1000;
  const clock = { nowMicros: () => now };
  const accounts = new AccountStore(redis, keys, clock, ['free', 'scale']);
  const apiKeys = new ApiKeyStore(redis, keys, clock);
  // One request per 2 s of the server's time: the second request at once is refused.
  const gate = new RequestGate(redis, keys, apiKeys, { limit: 1, windowMs: 2000 }, clock);
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
