import t from 'tap';
import { startGateway } from '../support/gateway.ts';
import { createOwner, DashboardClient, PASSWORD } from '../support/dashboard-client.ts';

const gw = await startGateway();
t.teardown(() => gw.stop());
const { services } = gw.app;
const COOKIE =
  /^sb_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}; Max-Age=2592000; Path=\/dashboard; HttpOnly; SameSite=Lax$/;
const CLEARED = 'sb_session=; Max-Age=0; Path=/dashboard; HttpOnly; SameSite=Lax';

t.test('sign-in: a wrong password, an unknown email and an account without a password fail alike', async (t) => {
  const owner = await createOwner(gw.app);
  const noPassword = await services.accounts.create(`nopass-${crypto.randomUUID()}@example.com`, 'scale');
  const client = new DashboardClient(gw.baseUrl);
  const attempts = [
    { email: owner.email, password: 'wrong password entirely' },
    { email: `nobody-${crypto.randomUUID()}@example.com`, password: PASSWORD },
    { email: noPassword.email, password: PASSWORD },
    { email: owner.email, password: 'x'.repeat(300) },
  ];
  for (const attempt of attempts) {
    const res = await client.post('/dashboard/api/session', attempt);
    t.same([res.status, res.body], [401, { detail: 'Email or password is incorrect.' }], attempt.email);
    t.equal(res.headers.get('set-cookie'), null, 'no cookie');
  }
  const missing = await client.post('/dashboard/api/session', { password: PASSWORD });
  t.same([missing.status, missing.body], [400, { detail: 'email is required.' }]);
  const noSecret = await client.post('/dashboard/api/session', { email: owner.email, password: 42 });
  t.same([noSecret.status, noSecret.body], [400, { detail: 'password is required.' }]);
});

t.test('sign-in sets an HttpOnly, SameSite=Lax session cookie and answers who is signed in', async (t) => {
  const owner = await createOwner(gw.app);
  const client = new DashboardClient(gw.baseUrl);
  const res = await client.post('/dashboard/api/session', { email: owner.email.toUpperCase(), password: PASSWORD });
  t.equal(res.status, 200);
  t.match(res.headers.get('set-cookie'), COOKIE);
  t.equal(res.headers.get('cache-control'), 'no-store');
  const account = await services.accounts.get(owner.id);
  t.same(res.body, { user: account, csrf_token: client.csrf, public_url: null });
  t.match(client.csrf, /^[A-Za-z0-9_-]{43}$/);
  const me = await client.get('/dashboard/api/session');
  t.same([me.status, me.body], [200, { user: account, csrf_token: client.csrf, public_url: null }]);
  t.equal(me.headers.get('cache-control'), 'no-store');

  const anonymous = await fetch(`${gw.baseUrl}/dashboard/api/session`);
  t.same([anonymous.status, await anonymous.json()], [401, { detail: 'Not signed in.' }]);
  const forged = await fetch(`${gw.baseUrl}/dashboard/api/session`, {
    headers: { cookie: `sb_session=${owner.id}.${'A'.repeat(43)}` },
  });
  t.same([forged.status, await forged.json()], [401, { detail: 'Not signed in.' }]);
});

t.test('CSRF: state changes need the session token and a same-origin caller', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const host = new URL(gw.baseUrl).host;
  const create = (headers: Record<string, string>) => client.post('/dashboard/api/chatbots', { name: 'Csrf' }, headers);
  const refused = [
    [{ 'x-csrf-token': '' }, 'CSRF token missing or invalid.'],
    [{ 'x-csrf-token': `${client.csrf.slice(0, -1)}x` }, 'CSRF token missing or invalid.'],
    [{ 'x-csrf-token': 'short' }, 'CSRF token missing or invalid.'],
    [{ origin: 'http://evil.example' }, 'Cross-site request refused.'],
    [{ origin: 'null' }, 'Cross-site request refused.'],
    [{ 'sec-fetch-site': 'cross-site' }, 'Cross-site request refused.'],
    [{ 'sec-fetch-site': 'same-site' }, 'Cross-site request refused.'],
  ] as const;
  for (const [headers, detail] of refused) {
    const res = await create(headers);
    t.same([res.status, res.body], [403, { detail }], JSON.stringify(headers));
  }
  t.same(await services.chatbots.listForUser(owner.id), [], 'nothing was created');
  const sameOrigin = await create({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' });
  t.equal(sameOrigin.status, 201);
  const script = await create({});
  t.equal(script.status, 201, 'a non-browser client with the token is fine');
  const read = await client.get('/dashboard/api/chatbots', { 'x-csrf-token': '' });
  t.equal(read.status, 200, 'reads need no CSRF token');

  const crossLogin = await new DashboardClient(gw.baseUrl).post(
    '/dashboard/api/session',
    { email: owner.email, password: PASSWORD },
    { origin: 'http://evil.example' },
  );
  t.same([crossLogin.status, crossLogin.body], [403, { detail: 'Cross-site request refused.' }]);
});

t.test('sign out ends this session; sign out everywhere ends them all', async (t) => {
  const owner = await createOwner(gw.app);
  const laptop = await DashboardClient.signIn(gw.baseUrl, owner);
  const phone = await DashboardClient.signIn(gw.baseUrl, owner);
  const tablet = await DashboardClient.signIn(gw.baseUrl, owner);
  const laptopCookie = laptop.cookie;
  const out = await laptop.del('/dashboard/api/session');
  t.same([out.status, out.body], [200, { signed_out: true }]);
  t.equal(out.headers.get('set-cookie'), CLEARED);
  const replay = await fetch(`${gw.baseUrl}/dashboard/api/session`, { headers: { cookie: laptopCookie } });
  t.equal(replay.status, 401, 'the old cookie opens nothing');
  t.equal((await phone.get('/dashboard/api/session')).status, 200, 'other sessions go on');

  const everywhere = await phone.del('/dashboard/api/sessions');
  t.same([everywhere.status, everywhere.body], [200, { signed_out: true }]);
  t.equal(everywhere.headers.get('set-cookie'), CLEARED);
  t.same((await tablet.get('/dashboard/api/session')).body, { detail: 'Not signed in.' });
  t.equal((await phone.get('/dashboard/api/session')).status, 401);
  const again = await DashboardClient.signIn(gw.baseUrl, owner);
  t.equal((await again.get('/dashboard/api/session')).status, 200, 'signing in again works');
});

t.test('setting a new password ends every session and retires the old password', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  await services.ownerAuth.setPassword(owner.id, 'a brand new passphrase');
  t.equal((await client.get('/dashboard/api/session')).status, 401);
  const old = await new DashboardClient(gw.baseUrl).post('/dashboard/api/session', owner);
  t.equal(old.status, 401);
  await DashboardClient.signIn(gw.baseUrl, { ...owner, password: 'a brand new passphrase' });
});

t.test('an invitation link sets the password once and signs the owner in', async (t) => {
  const account = await services.accounts.create(`invited-${crypto.randomUUID()}@example.com`, 'free');
  const invite = await services.ownerAuth.invite(account.id, 'http://localhost:8080');
  t.match(invite.url, /^http:\/\/localhost:8080\/dashboard\/#\/invite\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
  const token = invite.url.split('#/invite/')[1];
  const client = new DashboardClient(gw.baseUrl);
  const short = await client.post('/dashboard/api/invite', { token, password: 'too short' });
  t.same([short.status, short.body], [400, { detail: 'password must be 12 to 256 characters.' }]);
  const wrong = await client.post('/dashboard/api/invite', {
    token: `${account.id}.${'B'.repeat(43)}`,
    password: PASSWORD,
  });
  t.same([wrong.status, wrong.body], [404, { detail: 'This invitation link is invalid, used or expired.' }]);
  const accepted = await client.post('/dashboard/api/invite', { token, password: PASSWORD });
  t.equal(accepted.status, 200);
  t.match(accepted.headers.get('set-cookie'), COOKIE);
  t.same(accepted.body, { user: account, csrf_token: client.csrf, public_url: null });
  t.equal((await client.get('/dashboard/api/session')).status, 200, 'signed in');
  const reused = await new DashboardClient(gw.baseUrl).post('/dashboard/api/invite', { token, password: PASSWORD });
  t.same([reused.status, reused.body], [404, { detail: 'This invitation link is invalid, used or expired.' }]);
  await DashboardClient.signIn(gw.baseUrl, { id: account.id, email: account.email, password: PASSWORD });

  const newer = await services.ownerAuth.invite(account.id, 'http://localhost:8080');
  const newest = await services.ownerAuth.invite(account.id, 'http://localhost:8080');
  const stale = await client.post('/dashboard/api/invite', {
    token: newer.url.split('#/invite/')[1],
    password: PASSWORD,
  });
  t.equal(stale.status, 404, 'a newer invitation replaces an older one');
  t.equal(
    (await client.post('/dashboard/api/invite', { token: newest.url.split('#/invite/')[1], password: PASSWORD }))
      .status,
    200,
  );
});

t.test('with an https PUBLIC_URL the cookie is Secure and only that origin may change state', async (t) => {
  const published = await startGateway({ PUBLIC_URL: 'https://bots.example.com' });
  t.teardown(() => published.stop());
  const owner = await createOwner(published.app);
  const client = new DashboardClient(published.baseUrl);
  const local = `http://${new URL(published.baseUrl).host}`;
  const refused = await client.post('/dashboard/api/session', owner, { origin: local });
  t.same(
    [refused.status, refused.body],
    [403, { detail: 'Cross-site request refused.' }],
    'the host alone is not enough',
  );
  const res = await client.post('/dashboard/api/session', owner, { origin: 'https://bots.example.com' });
  t.equal(res.status, 200);
  t.equal(
    res.headers.get('set-cookie')?.replace(/=[^;]+;/, '=…;'),
    'sb_session=…; Max-Age=2592000; Path=/dashboard; HttpOnly; Secure; SameSite=Lax',
  );
  t.equal(res.body.public_url, 'https://bots.example.com');
  const create = await client.post('/dashboard/api/chatbots', { name: 'X' }, { origin: 'https://bots.example.com' });
  t.equal(create.status, 201);
});
