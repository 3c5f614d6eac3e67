import t from 'tap';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SocketOpenGate } from '../../src/admission/socket-open-gate.ts';
import { connectedRedis } from '../support/connected-redis.ts';
import { until } from '../support/until.ts';

const { redis } = await connectedRedis(t);
const keys = new RedisKeys('sb:');

t.test('a limit per address in a window; refusals are not counted; others are not affected', async (t) => {
  const gate = new SocketOpenGate(redis, keys, { perAddress: 2, windowMs: 60_000 });
  t.same(await gate.admit('198.51.100.1'), { kind: 'admitted' });
  t.same(await gate.admit('198.51.100.1'), { kind: 'admitted' });
  t.same(await gate.admit('198.51.100.1'), { kind: 'limited', retryAfterSeconds: 60 });
  t.same(await gate.admit('198.51.100.1'), { kind: 'limited', retryAfterSeconds: 60 });
  t.equal(await redis.zCard(keys.socketOpens('198.51.100.1')), 2, 'only admitted opens are kept');
  t.same(await gate.admit('198.51.100.2'), { kind: 'admitted' });
});

t.test('an IPv6 address counts with its /64; an IPv4-mapped one as the IPv4 address', async (t) => {
  const gate = new SocketOpenGate(redis, keys, { perAddress: 1, windowMs: 60_000 });
  t.same(await gate.admit('2001:db8:1:2::1'), { kind: 'admitted' });
  t.match(await gate.admit('2001:db8:1:2:ffff::9'), { kind: 'limited' });
  t.same(await gate.admit('2001:db8:1:3::1'), { kind: 'admitted' }, 'another /64');
  t.same(await gate.admit('198.51.100.9'), { kind: 'admitted' });
  t.match(await gate.admit('::ffff:198.51.100.9'), { kind: 'limited' });
});

t.test('the window slides: an address is admitted again once its oldest open has aged out', async (t) => {
  const gate = new SocketOpenGate(redis, keys, { perAddress: 1, windowMs: 300 });
  t.same(await gate.admit('198.51.100.3'), { kind: 'admitted' });
  t.same(await gate.admit('198.51.100.3'), { kind: 'limited', retryAfterSeconds: 1 });
  await until(async () => (await gate.admit('198.51.100.3')).kind === 'admitted', 'the window to slide', 5000);
  t.match(await gate.admit('198.51.100.3'), { kind: 'limited' });
  t.ok((await redis.pTTL(keys.socketOpens('198.51.100.3'))) <= 300, 'the window expires with its last open');
});

t.test('opens that have left the window are trimmed from its set as new ones come', async (t) => {
  // A 1 ms window: each open leaves it almost at once. Counting them out needs no trim, but a set that
  // were never trimmed would hold every open of a busy address until it went quiet.
  const gate = new SocketOpenGate(redis, keys, { perAddress: 1000, windowMs: 1 });
  let admitted = 0;
  for (let i = 0; i < 400; i++) if ((await gate.admit('198.51.100.4')).kind === 'admitted') admitted += 1;
  t.equal(admitted, 400);
  const kept = await redis.zCard(keys.socketOpens('198.51.100.4'));
  t.ok(kept < 200, `the set keeps ${kept} of 400 opens`);
});
