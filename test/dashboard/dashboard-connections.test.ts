import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { OAuthFake } from '../fakes/fake-oauth.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { freePort } from '../support/redis-server.ts';

// Google's OAuth endpoints on loopback, at the paths the gateway derives from GOOGLE_OAUTH_BASE_URL.
const google = new OAuthFake({
  clientId: 'google-client',
  clientSecret: 'google-secret',
  tokenPath: '/token',
  authorizePath: '/o/oauth2/v2/auth',
});
const fake = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => google.handle(req, res, Buffer.concat(chunks)) || res.writeHead(404).end());
});
await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
const fakeOrigin = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

const port = await freePort();
const publicUrl = `http://127.0.0.1:${port}`;
const gw = await startGateway({
  PORT: String(port),
  PUBLIC_URL: publicUrl,
  SECRET_KEY: '3c'.repeat(32),
  CRAWL_ALLOW_PRIVATE: '1',
  GOOGLE_CLIENT_ID: 'google-client',
  GOOGLE_CLIENT_SECRET: 'google-secret',
  GOOGLE_OAUTH_BASE_URL: fakeOrigin,
});
t.teardown(async () => {
  await gw.stop();
  await new Promise((resolve) => fake.close(resolve));
});

const CALLBACK = `${publicUrl}/dashboard/oauth/google_drive/callback`;

/** The short page the OAuth routes answer a person's browser with. */
function oauthPage(text: string): string {
  return (
    `<!doctype html><meta charset="utf-8"><title>Switchboard</title><p>${text}</p>` +
    `<p><a href="/dashboard#/connections">Back to the dashboard</a></p>`
  );
}

/** A plain GET as a browser's navigation sends it, redirects not followed. */
async function navigate(url: string, cookie = ''): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** Starts a Google Drive sign-in in the owner's session; returns its state and the fake's Allow link. */
async function startSignIn(client: DashboardClient): Promise<{ state: string; allow: string }> {
  const start = await navigate(`${publicUrl}/dashboard/oauth/google_drive/start`, client.cookie);
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${start.text}`);
  const authorize = new URL(start.headers.get('location')!);
  const page = await (await fetch(authorize)).text();
  const allow = /href="([^"]+)"/.exec(page)![1]!.replaceAll('&#38;', '&');
  return { state: authorize.searchParams.get('state')!, allow: new URL(allow, fakeOrigin).href };
}

t.test('the services the Connections page offers, and how each connects', async (t) => {
  const client = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const res = await client.get('/dashboard/api/connection-services');
  t.same(
    [res.status, res.body],
    [
      200,
      [
        { service: 'google_drive', label: 'Google Drive', method: 'oauth', available: true },
        { service: 'dropbox', label: 'Dropbox', method: 'oauth', available: false },
        { service: 'notion', label: 'Notion', method: 'token', available: true },
      ],
    ],
  );
  t.equal(res.headers.get('cache-control'), 'no-store');
});

t.test('Notion by token: created, listed without its secret, and deleted only by its owner', async (t) => {
  const owner = await createOwner(gw.app);
  const a = await DashboardClient.signIn(publicUrl, owner);
  const b = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const created = await a.post('/dashboard/api/connections', {
    service: 'notion',
    token: '  ntn_dashboard_secret_1  ',
    label: 'Acme workspace',
  });
  t.equal(created.status, 201);
  t.same(Object.keys(created.body), ['id', 'service', 'status', 'created_at', 'auth_kind', 'label', 'base_url']);
  t.match(created.body, { service: 'notion', status: 'active', label: 'Acme workspace', base_url: '' });
  t.same(await gw.app.services.connections.secret(created.body.id), { token: 'ntn_dashboard_secret_1' });
  const listed = await a.get('/dashboard/api/connections');
  t.same([listed.status, listed.body], [200, [created.body]]);
  t.same((await b.get('/dashboard/api/connections')).body, [], "B's list holds nothing of A's");

  for (const [body, detail] of [
    [
      { service: 'google_drive', token: 'x' },
      'service must be notion (Google Drive and Dropbox connect with Connect).',
    ],
    [{ service: 'notion' }, 'token is required.'],
    [{ service: 'notion', token: 'x'.repeat(4097) }, 'token must be at most 4096 characters.'],
  ] as const) {
    const res = await a.post('/dashboard/api/connections', body);
    t.same([res.status, res.body], [400, { detail }], JSON.stringify(body).slice(0, 60));
  }

  const path = `/dashboard/api/connections/${created.body.id}`;
  for (const [client, target] of [
    [b, path],
    [a, `/dashboard/api/connections/${crypto.randomUUID()}`],
  ] as const) {
    const res = await client.del(target);
    t.same([res.status, res.body], [404, { detail: 'Connection not found.' }], target);
  }
  t.equal((await gw.app.services.connections.get(created.body.id)).id, created.body.id, 'still there');
  const deleted = await a.del(path);
  t.same([deleted.status, deleted.body], [200, { id: created.body.id, deleted: true }]);
  t.same((await a.get('/dashboard/api/connections')).body, []);
  const again = await a.del(path);
  t.same([again.status, again.body], [404, { detail: 'Connection not found.' }]);
});

t.test('the OAuth start needs a session and a configured service', async (t) => {
  const a = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const anonymous = await navigate(`${publicUrl}/dashboard/oauth/google_drive/start`);
  t.same([anonymous.status, anonymous.text], [401, oauthPage('Not signed in.')]);
  t.equal(anonymous.headers.get('content-security-policy'), "default-src 'none'");
  const dropbox = await navigate(`${publicUrl}/dashboard/oauth/dropbox/start`, a.cookie);
  t.same(
    [dropbox.status, dropbox.text],
    [400, oauthPage('Dropbox is not set up on this server: set DROPBOX_APP_KEY and DROPBOX_APP_SECRET.')],
  );
  const start = await navigate(`${publicUrl}/dashboard/oauth/google_drive/start`, a.cookie);
  t.equal(start.status, 302);
  const authorize = new URL(start.headers.get('location')!);
  t.equal(authorize.origin + authorize.pathname, `${fakeOrigin}/o/oauth2/v2/auth`);
  t.match(Object.fromEntries(authorize.searchParams), {
    client_id: 'google-client',
    response_type: 'code',
    redirect_uri: CALLBACK,
    scope: 'https://www.googleapis.com/auth/drive.readonly',
    code_challenge: /^[A-Za-z0-9_-]{43}$/,
    code_challenge_method: 'S256',
    access_type: 'offline',
    prompt: 'consent',
    state: /^[A-Za-z0-9_-]{32}$/,
  });
});

t.test('the OAuth callback completes only in the session that started it', async (t) => {
  const owner = await createOwner(gw.app);
  const a = await DashboardClient.signIn(publicUrl, owner);
  const b = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const before = google.tokenRequests.length;
  const { allow } = await startSignIn(a);
  const back = await navigate(allow);
  t.equal(back.status, 302);
  const callback = back.headers.get('location')!;
  t.equal(new URL(callback).origin + new URL(callback).pathname, CALLBACK);

  // Another owner's browser, and a browser without any session, are refused; the state stays usable.
  const foreign = 'This sign-in was started in another browser session.';
  for (const cookie of [b.cookie, '']) {
    const res = await navigate(callback, cookie);
    t.same([res.status, res.text], [403, oauthPage(foreign)], cookie ? "B's session" : 'no session');
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    t.equal(res.headers.get('cache-control'), 'no-store');
  }
  t.equal(google.tokenRequests.length, before, 'no code was exchanged for them');
  t.same((await b.get('/dashboard/api/connections')).body, []);

  const done = await navigate(callback, a.cookie);
  t.same([done.status, done.headers.get('location')], [302, '/dashboard#/connections']);
  t.equal(google.tokenRequests.length, before + 1);
  t.match(google.tokenRequests.at(-1), {
    grant_type: 'authorization_code',
    redirect_uri: CALLBACK,
    client_id: 'google-client',
    client_secret: 'google-secret',
    code_verifier: /^[A-Za-z0-9_-]{64}$/,
  });
  const listed = (await a.get('/dashboard/api/connections')).body;
  t.match(listed, [{ service: 'google_drive', status: 'active', label: '', base_url: '' }]);
  t.equal(listed.length, 1);
  const replay = await navigate(callback, a.cookie);
  t.same([replay.status, replay.text], [400, oauthPage('This sign-in was already used; start again.')]);
});

t.test('an unknown or missing state is answered with a page that says to start again', async (t) => {
  const a = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const expired = oauthPage('This sign-in has expired or is unknown; start again.');
  for (const query of ['?code=c&state=not-a-state', '?code=c', '']) {
    const res = await navigate(`${CALLBACK}${query}`, a.cookie);
    t.same([res.status, res.text], [400, expired], query || 'no query');
  }
  const unknown = await navigate(`${publicUrl}/dashboard/oauth/gitbook/callback?code=c&state=x`, a.cookie);
  t.same([unknown.status, unknown.text], [400, oauthPage('Unknown service.')]);
});

t.test('the owner refusing access at the service is told so', async (t) => {
  const a = await DashboardClient.signIn(publicUrl, await createOwner(gw.app));
  const { state } = await startSignIn(a);
  const denied = await navigate(`${CALLBACK}?error=access_denied&state=${state}`, a.cookie);
  t.same([denied.status, denied.text], [400, oauthPage('Google Drive access was not granted.')]);
  t.same((await a.get('/dashboard/api/connections')).body, []);
});
