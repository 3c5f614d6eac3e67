import { createClient } from 'redis';
import t from 'tap';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { PASSWORD_CHECKS_BUSY, SIGN_INS_IN_FLIGHT } from '../../src/dashboard/owner-auth.ts';
import { PASSWORD_WORK_CONCURRENCY, PASSWORD_WORK_QUEUE, passwordWorkLoad } from '../../src/dashboard/password-hash.ts';
import { createLogger } from '../../src/logger.ts';
import { createOwner, DashboardClient, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';

// Two gateways behind a trusted proxy (every request comes from 127.0.0.1; X-Forwarded-For names the
// client) on one redis-server: the sign-in limits live in Redis, so both count alike.
const ENV = { TRUSTED_PROXIES: 'private' };
const gw = await startGateway(ENV);
const second = await startApp(
  loadConfig({ ...ENV, REDIS_URL: gw.redis.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' }),
  createLogger('silent'),
  { shutdownGraceMs: 1000 },
);
t.teardown(async () => {
  await second.stop();
  await gw.stop();
});
const gateways = [gw.baseUrl, `http://127.0.0.1:${second.port}`];
const redis = await createClient({ url: gw.redis.url }).connect();
t.teardown(() => redis.destroy());

const LIMITED = { detail: 'Too many sign-in attempts. Try again in 15 minutes.' };
const WRONG = { detail: 'Email or password is incorrect.' };
const A = '203.0.113.7';
const B = '198.51.100.23';

/** One sign-in from `client`, through gateway `via` (0 or 1), timed. */
async function signIn(email: string, password: string, client: string, via = 0) {
  const started = performance.now();
  const res = await new DashboardClient(gateways[via]!).post(
    '/dashboard/api/session',
    { email, password },
    { 'x-forwarded-for': client },
  );
  return {
    status: res.status,
    body: res.body,
    retryAfter: res.headers.get('retry-after'),
    ms: performance.now() - started,
  };
}

/** Sorted set sizes of the login keys matching a pattern (`pair`, `addr`, `busy`). */
async function counted(kind: string): Promise<number[]> {
  const keys = await redis.keys(`sb:{login}:${kind}:*`);
  return Promise.all(keys.map((key) => redis.zCard(key)));
}

/** The time one uncontended sign-in takes on this machine now (median of three): mostly scrypt. */
async function baseline(email: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i += 1) times.push((await signIn(email, PASSWORD, '192.0.2.200')).ms);
  return times.sort((a, b) => a - b)[1]!;
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

t.beforeEach(async () => {
  await until(() => passwordWorkLoad().running === 0, 'idle password checks');
  for (const key of await redis.keys('sb:{login}:*')) await redis.del(key);
});

t.test("another client's failures never lock the right password out; that client is limited", async (t) => {
  const owner = await createOwner(gw.app);
  for (let i = 0; i < 10; i += 1) {
    t.same((await signIn(owner.email, 'not the password', A, i % 2)).body, WRONG, `failure ${i + 1} from A`);
  }
  for (const via of [0, 1]) {
    const limited = await signIn(owner.email, 'not the password', A, via);
    t.same([limited.status, limited.body, limited.retryAfter], [429, LIMITED, null], `A is limited on gateway ${via}`);
  }
  const rightFromA = await signIn(owner.email, PASSWORD, A);
  t.same([rightFromA.status, rightFromA.body], [429, LIMITED], 'from A even the right password waits');
  for (const via of [0, 1]) {
    const fromB = await signIn(owner.email, PASSWORD, B, via);
    t.equal(fromB.status, 200, `the right password from B signs in on gateway ${via}`);
    t.equal(fromB.body.user.email, owner.email);
  }
  const wrongFromB = await signIn(owner.email, 'not the password', B);
  t.same([wrongFromB.status, wrongFromB.body], [401, WRONG], "B's own guesses are counted afresh");
  t.same((await counted('pair')).sort(), [1, 10], "A's ten failures and B's one, successes taken back");
  t.same(await counted('busy'), [], 'nothing is left in flight');
});

t.test('the two gateways count the same email-and-client window in Redis', async (t) => {
  const owner = await createOwner(gw.app);
  // Sent in pairs, one to each gateway: a client may have two sign-ins checked at once.
  const statuses: number[] = [];
  for (let i = 0; i < 12; i += 2) {
    const pair = await Promise.all([0, 1].map((via) => signIn(owner.email, 'not the password', A, via)));
    statuses.push(...pair.map((res) => res.status));
  }
  t.same(statuses, [...Array<number>(10).fill(401), 429, 429], 'ten failures in all, on whichever gateway');
  t.same(await counted('pair'), [10]);
  t.equal((await signIn(owner.email, PASSWORD, B, 1)).status, 200);
});

t.test('30 concurrent guesses from one client do not hold up a real sign-in from another', async (t) => {
  const owner = await createOwner(gw.app);
  const usual = await baseline(owner.email);
  for (const key of await redis.keys('sb:{login}:*')) await redis.del(key);
  const burst = Array.from({ length: 30 }, (_, i) => signIn(owner.email, 'not the password', A, i % 2));
  // The real sign-in starts once the burst's checks are running, as it would behind an attack.
  await until(() => passwordWorkLoad().running > 0, 'the burst to reach scrypt');
  const real = await signIn(owner.email, PASSWORD, B);
  const answers = await Promise.all(burst);
  t.equal(real.status, 200);
  const checked = answers.filter((res) => res.status === 401);
  const refused = answers.filter((res) => res.status === 429);
  // What bounds the wait: A has two checks in flight at most (LOGIN_CONCURRENT_PER_ADDRESS), so the
  // real sign-in waits for at most those and its own, three checks' time, doubled for a loaded
  // machine where checks run side by side on too few cores. (Before: ten of A's queued ahead of it.)
  t.equal(checked.length, 2, 'two of A are checked at once, the rest are refused');
  t.ok(
    real.ms <= 2 * 3 * usual,
    `the real sign-in took ${real.ms.toFixed(0)} ms, at most 6 × ${usual.toFixed(0)} ms (one uncontended sign-in)`,
  );
  t.equal(refused.length, 28);
  t.same(
    new Set(refused.map((res) => JSON.stringify([res.body, res.retryAfter]))),
    new Set([JSON.stringify([{ detail: SIGN_INS_IN_FLIGHT }, null])]),
  );
  // A refusal costs no scrypt work; its time is the event loop's, which shares two cores with the
  // two checks running meanwhile (on a loaded machine, a check's time or more).
  const slowest = Math.max(...refused.map((res) => res.ms));
  t.ok(slowest <= 3 * usual, `each refusal is answered without a check (slowest ${slowest.toFixed(0)} ms)`);
  t.same(await counted('busy'), []);
});

t.test('30 concurrent guesses from 30 clients: the excess is refused at once with 503', async (t) => {
  const owner = await createOwner(gw.app);
  const usual = await baseline(owner.email);
  for (const key of await redis.keys('sb:{login}:*')) await redis.del(key);
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => signIn(owner.email, 'not the password', `192.0.2.${i + 1}`, i % 2)),
  );
  const took = performance.now() - started;
  const checked = answers.filter((res) => res.status === 401);
  const busy = answers.filter((res) => res.status === 503);
  const capacity = PASSWORD_WORK_CONCURRENCY + PASSWORD_WORK_QUEUE;
  t.equal(checked.length + busy.length, 30, `only 401 and 503: ${answers.map((res) => res.status).join(',')}`);
  // A process (both gateways run in this one) takes `capacity` checks at once; more get in only as
  // earlier ones finish.
  t.ok(checked.length >= capacity && checked.length <= 2 * capacity + 4, `${checked.length} checked`);
  t.same(
    new Set(busy.map((res) => JSON.stringify([res.body, res.retryAfter]))),
    new Set([JSON.stringify([{ detail: PASSWORD_CHECKS_BUSY }, null])]),
  );
  const slowest = Math.max(...busy.map((res) => res.ms));
  t.ok(slowest <= 3 * usual, `each 503 is answered without a check (slowest ${slowest.toFixed(0)} ms)`);
  // The checks admitted take `capacity / concurrency` rounds, doubled for a loaded machine; before,
  // all thirty queued (fifteen rounds).
  const rounds = capacity / PASSWORD_WORK_CONCURRENCY;
  t.ok(
    took <= 2 * (rounds + 1) * usual,
    `the burst was over in ${took.toFixed(0)} ms, at most ${2 * (rounds + 1)} × ${usual.toFixed(0)} ms`,
  );
  t.equal((await counted('addr')).length, checked.length, 'a refused check is not held against its client');
  t.equal((await signIn(owner.email, PASSWORD, B)).status, 200, 'once the burst is over, the owner signs in');
});
