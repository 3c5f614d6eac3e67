import t from 'tap';
import { createLogger } from '../../src/logger.ts';
import { connectRedis } from '../../src/redis/redis-client.ts';
import { startGateway } from '../support/gateway.ts';
import { DashboardClient } from '../support/dashboard-client.ts';

const COOKIE =
  /^sb_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/dashboard; HttpOnly; SameSite=Lax$/;
const BAD_TOKEN = { detail: 'This setup token is invalid, used or expired. Restart the gateway for a new one.' };
const DONE = { detail: 'The owner account already exists. Sign in instead.' };
const OWNER = { email: 'First@Example.com', password: 'a long passphrase' };

t.test('first run: a printed setup token creates the first owner once, signed in, on the default plan', async (t) => {
  const gw = await startGateway({ DEFAULT_PLAN: 'scale' });
  t.teardown(() => gw.stop());
  const { ownerAuth } = gw.app.services;
  const client = new DashboardClient(gw.baseUrl);
  t.same((await client.get('/dashboard/api/setup')).body, { setup_needed: true });
  const token = await ownerAuth.firstRunToken();
  const otherGateways = await ownerAuth.firstRunToken();
  if (!token || !otherGateways) throw new Error('no setup token while no owner exists');
  t.match(token, /^[A-Za-z0-9_-]{43}$/);

  // Bad input is refused before the token is spent.
  const refusals: [unknown, number, unknown][] = [
    [{ ...OWNER, token, email: 'nobody' }, 400, { detail: 'email must be a valid email address.' }],
    [{ ...OWNER, token, email: undefined }, 400, { detail: 'email must be a valid email address.' }],
    [{ ...OWNER, token, password: 'short' }, 400, { detail: 'password must be 12 to 256 characters.' }],
    [{ ...OWNER, token: 'A'.repeat(43) }, 404, BAD_TOKEN],
    [{ ...OWNER, token: `${token}x` }, 404, BAD_TOKEN],
    [OWNER, 404, BAD_TOKEN],
  ];
  for (const [body, status, detail] of refusals) {
    const res = await client.post('/dashboard/api/setup', body);
    t.same([res.status, res.body], [status, detail], JSON.stringify(body));
  }
  const crossSite = await client.post('/dashboard/api/setup', { ...OWNER, token }, { 'sec-fetch-site': 'cross-site' });
  t.equal(crossSite.status, 403);
  t.same(await gw.app.services.accounts.list(), [], 'nothing was created');

  const created = await client.post('/dashboard/api/setup', { ...OWNER, token });
  t.equal(created.status, 200);
  t.match(created.headers.get('set-cookie'), COOKIE);
  const [account] = await gw.app.services.accounts.list();
  t.same(created.body, { user: account, csrf_token: client.csrf, public_url: null });
  t.same([account!.email, account!.plan], ['first@example.com', 'scale']);
  t.equal((await client.get('/dashboard/api/chatbots')).status, 200, 'signed in');
  const again = await DashboardClient.signIn(gw.baseUrl, { ...OWNER, id: account!.id });
  t.ok(again.csrf, 'the password works for a sign-in');

  t.same((await client.get('/dashboard/api/setup')).body, { setup_needed: false });
  const reused = await new DashboardClient(gw.baseUrl).post('/dashboard/api/setup', { ...OWNER, token });
  t.same([reused.status, reused.body], [409, DONE]);
  const other = await new DashboardClient(gw.baseUrl).post('/dashboard/api/setup', {
    ...OWNER,
    email: 'second@example.com',
    token: otherGateways,
  });
  t.same([other.status, other.body], [409, DONE], "another gateway's token makes no second owner");
  t.equal(await ownerAuth.firstRunToken(), undefined, 'a gateway starting now prints no token');
  t.equal((await gw.app.services.accounts.list()).length, 1);
});

t.test('two setup pages racing with two tokens make exactly one owner', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.stop());
  const { ownerAuth } = gw.app.services;
  const tokens = await Promise.all([1, 2, 3, 4].map(() => ownerAuth.firstRunToken()));
  const results = await Promise.all(
    tokens.map((token, i) =>
      new DashboardClient(gw.baseUrl).post('/dashboard/api/setup', { ...OWNER, email: `racer${i}@example.com`, token }),
    ),
  );
  t.same(results.map((res) => res.status).sort(), [200, 409, 409, 409]);
  t.same(
    results.filter((res) => res.status === 409).map((res) => res.body),
    [DONE, DONE, DONE],
  );
  t.equal((await gw.app.services.accounts.list()).length, 1);
});

t.test('an install whose owners predate the marker offers no setup', async (t) => {
  const gw = await startGateway();
  t.teardown(() => gw.stop());
  const { accounts, ownerAuth, keys } = gw.app.services;
  await accounts.create('old@example.com', 'free');
  const redis = await connectRedis({ url: gw.redis.url }, createLogger('silent'));
  t.teardown(() => redis.close());
  await redis.del(keys.accountsExist());
  t.same((await new DashboardClient(gw.baseUrl).get('/dashboard/api/setup')).body, { setup_needed: false });
  t.equal(await ownerAuth.firstRunToken(), undefined);
  t.equal(await redis.get(keys.accountsExist()), '1', 'the scan found the owner and set the marker');
});
