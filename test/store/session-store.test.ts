import t from 'tap';
import { NotFoundError } from '../../src/errors.ts';
import { createLogger } from '../../src/logger.ts';
import { AccountStore } from '../../src/store/account-store.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { RedisKeys } from '../../src/redis/redis-keys.ts';
import { SessionStore } from '../../src/store/session-store.ts';
import { startRedis } from '../support/redis-server.ts';

const server = await startRedis();
const redis = await connectRedis({ url: server.url }, createLogger('silent'));
t.teardown(async () => {
  await redis.close();
  await server.stop();
});
const keys = new RedisKeys('sb:');
let now = Date.UTC(2026, 10, 1) * 1000;
const clock = { nowMicros: () => now };
const accounts = new AccountStore(redis, keys, clock, ['free']);
const sessions = new SessionStore(redis, keys, clock, { idleMs: 60_000, maxAgeMs: 3_600_000 });

t.test('a session lives while used, up to its maximum age', async (t) => {
  const user = await accounts.create('s1@example.com');
  const created = await sessions.create(user.id);
  t.match(created.token, new RegExp(`^${user.id}\\.[A-Za-z0-9_-]{43}$`));
  const session = await sessions.authenticate(created.token);
  t.same(session && { userId: session.userId, csrfToken: session.csrfToken }, {
    userId: user.id,
    csrfToken: created.csrfToken,
  });
  const stored = keys.dashboardSession(user.id, session!.id);
  t.ok((await redis.pTTL(stored)) > 59_000, 'idle expiry set');
  t.notOk(JSON.stringify(await redis.hGetAll(stored)).includes(created.token.split('.')[1]!), 'secret not stored');
  now += 3_599_000_000;
  t.ok(await sessions.authenticate(created.token), 'still valid just before its maximum age');
  now += 2_000_000;
  t.equal(await sessions.authenticate(created.token), undefined, 'ended after its maximum age');
  t.equal(await redis.exists(stored), 0, 'and deleted');
});

t.test('malformed tokens and unknown users open nothing', async (t) => {
  for (const token of [undefined, '', 'x', `${crypto.randomUUID()}.${'a'.repeat(43)}`, 'a.b']) {
    t.equal(await sessions.authenticate(token), undefined, String(token));
  }
  await t.rejects(sessions.create(crypto.randomUUID()), new NotFoundError('User not found.'));
});

t.test('endAll ends every session of one owner only', async (t) => {
  const a = await accounts.create('s2@example.com');
  const b = await accounts.create('s3@example.com');
  const mine = await Promise.all([sessions.create(a.id), sessions.create(a.id)]);
  const theirs = await sessions.create(b.id);
  t.equal(await sessions.endAll(a.id), 2);
  for (const s of mine) t.equal(await sessions.authenticate(s.token), undefined);
  t.ok(await sessions.authenticate(theirs.token));
  t.equal(await redis.exists(keys.dashboardSessionsOf(a.id)), 0);
});
