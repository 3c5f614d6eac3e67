import { createServer, type IncomingMessage } from 'node:http';
import { createClient } from 'redis';
import t from 'tap';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import type { ConnectionService } from '../../src/sources/connectors/connector.ts';
import { OAuthFake } from '../fakes/fake-oauth.ts';
import { startRedis } from '../support/redis-server.ts';

// One loopback server plays the three OAuth services' token endpoints at their real paths.
const fakes: Record<'google_drive' | 'dropbox' | 'microsoft', OAuthFake> = {
  google_drive: new OAuthFake({
    clientId: 'g-id',
    clientSecret: 'g-secret',
    tokenPath: '/token',
    authorizePath: '/o/oauth2/v2/auth',
  }),
  dropbox: new OAuthFake({
    clientId: 'd-id',
    clientSecret: 'd-secret',
    tokenPath: '/oauth2/token',
    authorizePath: '/oauth2/authorize',
  }),
  microsoft: new OAuthFake({
    clientId: 'm-id',
    clientSecret: 'm-secret',
    tokenPath: '/common/oauth2/v2.0/token',
    authorizePath: '/common/oauth2/v2.0/authorize',
  }),
};
fakes.microsoft.rotateRefreshTokens = true;
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (!Object.values(fakes).some((fake) => fake.handle(req, res, body))) res.writeHead(404).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

const redisServer = await startRedis();
const env = {
  REDIS_URL: redisServer.url,
  SECRET_KEY: '42'.repeat(32),
  CRAWL_ALLOW_PRIVATE: '1',
  GOOGLE_OAUTH_BASE_URL: origin,
  GOOGLE_CLIENT_ID: 'g-id',
  GOOGLE_CLIENT_SECRET: 'g-secret',
  DROPBOX_API_BASE_URL: origin,
  DROPBOX_APP_KEY: 'd-id',
  DROPBOX_APP_SECRET: 'd-secret',
  MICROSOFT_LOGIN_BASE_URL: origin,
  MICROSOFT_CLIENT_ID: 'm-id',
  MICROSOFT_CLIENT_SECRET: 'm-secret',
};
// Two gateways: two Redis connections, two service layers, each its own refresh-lease holder.
const clients = [createClient({ url: redisServer.url }), createClient({ url: redisServer.url })];
await Promise.all(clients.map((client) => client.connect()));
const gateways: Services[] = clients.map((client) =>
  createServices(client as never, loadConfig(env), systemClock, createLogger('silent')),
);
const [a, b] = gateways as [Services, Services];
t.teardown(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await redisServer.stop();
  await new Promise((resolve) => server.close(resolve));
});
const user = await a.accounts.create('creds@example.com', 'scale');

async function expiredConnection(service: ConnectionService, fake: OAuthFake) {
  const grant = fake.issueGrant();
  fake.expireAccessTokens();
  return a.connections.create(user.id, {
    service,
    authKind: 'oauth',
    secret: {
      access_token: grant.access_token,
      refresh_token: grant.refresh_token,
      expires_at: String(Date.now() + 3600_000),
    },
  });
}

for (const service of ['google_drive', 'dropbox', 'microsoft'] as const) {
  t.test(`${service}: an expired token is refreshed once across two gateways`, async (t) => {
    const fake = fakes[service];
    fake.tokenRequests.length = 0;
    fake.tokenDelayMs = 200;
    const connection = await expiredConnection(service, fake);
    const old = (await a.connections.secret(connection.id)).access_token!;
    const [authA, authB] = await Promise.all([
      a.credentials.forConnection(connection.id, a.connectorHttp),
      b.credentials.forConnection(connection.id, b.connectorHttp),
    ]);
    // Both were refused the old token by the service at once, and both ask for a new one.
    const [tokenA, tokenB] = await Promise.all([authA.refresh(old), authB.refresh(old)]);
    t.equal(fake.tokenRequests.length, 1, 'one refresh for both gateways');
    t.equal(fake.tokenRequests[0]!.grant_type, 'refresh_token');
    t.equal(tokenA, tokenB);
    t.ok(fake.isValid(tokenA));
    const stored = await a.connections.secret(connection.id);
    t.equal(stored.access_token, tokenA);
    if (service === 'microsoft') t.not(stored.refresh_token, fake.tokenRequests[0]!.refresh_token, 'rotated');
    else t.equal(stored.refresh_token, fake.tokenRequests[0]!.refresh_token);
    // The next use reads the stored token without asking the service again.
    const again = await b.credentials.forConnection(connection.id, b.connectorHttp);
    t.equal(await again.accessToken(), tokenA);
    t.equal(fake.tokenRequests.length, 1);
    fake.tokenDelayMs = 0;
  });
}

t.test('two sources of one connection in one gateway refresh its token once', async (t) => {
  const fake = fakes.microsoft;
  fake.tokenRequests.length = 0;
  fake.tokenDelayMs = 200;
  const connection = await expiredConnection('microsoft', fake);
  const old = (await a.connections.secret(connection.id)).access_token!;
  const [first, second] = await Promise.all([
    a.credentials.forConnection(connection.id, a.connectorHttp),
    a.credentials.forConnection(connection.id, a.connectorHttp),
  ]);
  const [one, two] = await Promise.all([first.refresh(old), second.refresh(old)]);
  t.equal(fake.tokenRequests.length, 1, 'one refresh for both sources');
  t.equal(one, two);
  t.ok(fake.isValid(one));
  fake.tokenDelayMs = 0;
});

t.test('a token past its expiry is refreshed before use', async (t) => {
  const fake = fakes.dropbox;
  fake.tokenRequests.length = 0;
  const grant = fake.issueGrant();
  const connection = await a.connections.create(user.id, {
    service: 'dropbox',
    authKind: 'oauth',
    secret: {
      access_token: grant.access_token,
      refresh_token: grant.refresh_token,
      expires_at: String(Date.now() - 1),
    },
  });
  const auth = await a.credentials.forConnection(connection.id, a.connectorHttp);
  const token = await auth.accessToken();
  t.not(token, grant.access_token);
  t.equal(fake.tokenRequests.length, 1);
});

t.test('a revoked grant marks the connection needs_reauth: "Reconnect Dropbox."', async (t) => {
  const fake = fakes.dropbox;
  const connection = await expiredConnection('dropbox', fake);
  const old = (await a.connections.secret(connection.id)).access_token!;
  fake.revokeGrants();
  const auth = await a.credentials.forConnection(connection.id, a.connectorHttp);
  await t.rejects(auth.refresh(old), { name: 'ReconnectError', message: 'Reconnect Dropbox.' });
  const marked = await b.connections.get(connection.id);
  t.equal(marked.status, 'needs_reauth');
  await t.rejects(b.credentials.forConnection(marked.id, b.connectorHttp), {
    name: 'ReconnectError',
    message: 'Reconnect Dropbox.',
  });
});

t.test('a refused static token (Notion) marks the connection needs_reauth: "Reconnect Notion."', async (t) => {
  const connection = await a.connections.create(user.id, {
    service: 'notion',
    authKind: 'token',
    secret: { token: 'secret_notion' },
  });
  const auth = await a.credentials.forConnection(connection.id, a.connectorHttp);
  t.equal(await auth.accessToken(), 'secret_notion');
  await t.rejects(auth.refresh('secret_notion'), { name: 'ReconnectError', message: 'Reconnect Notion.' });
  t.equal((await a.connections.get(connection.id)).status, 'needs_reauth');
});

t.test('Microsoft app-only credentials get a token with the client credentials grant', async (t) => {
  const fake = fakes.microsoft;
  fake.tokenRequests.length = 0;
  const connection = await a.connections.create(user.id, {
    service: 'microsoft',
    authKind: 'client_credentials',
    secret: { client_id: 'm-id', client_secret: 'm-secret', tenant: 'common' },
  });
  const auth = await a.credentials.forConnection(connection.id, a.connectorHttp);
  const token = await auth.accessToken();
  t.ok(fake.isValid(token));
  t.same(fake.tokenRequests, [
    {
      grant_type: 'client_credentials',
      client_id: 'm-id',
      client_secret: 'm-secret',
      scope: 'https://graph.microsoft.com/.default',
    },
  ]);
});

t.test('secrets are sealed at rest: no token appears in any Redis value', async (t) => {
  const fake = fakes.google_drive;
  const grant = fake.issueGrant();
  await a.connections.create(user.id, {
    service: 'google_drive',
    authKind: 'oauth',
    secret: { access_token: grant.access_token, refresh_token: grant.refresh_token, expires_at: '0' },
  });
  await a.connections.create(user.id, {
    service: 'gitbook',
    authKind: 'token',
    secret: { token: 'gb_plaintext_token' },
  });
  const dump: string[] = [];
  for await (const keys of clients[0]!.scanIterator({ COUNT: 100 })) {
    for (const key of keys) {
      const type = await clients[0]!.type(key);
      if (type === 'string') dump.push(String(await clients[0]!.get(key)));
      if (type === 'hash') dump.push(JSON.stringify(await clients[0]!.hGetAll(key)));
      if (type === 'zset') dump.push(JSON.stringify(await clients[0]!.zRange(key, 0, -1)));
    }
  }
  const all = dump.join('\n');
  for (const secret of [grant.access_token, grant.refresh_token, 'gb_plaintext_token', 'secret_notion', 'm-secret']) {
    t.notOk(all.includes(secret), `${secret} is not stored in plaintext`);
  }
  t.same(
    (await a.connections.listForUser(user.id)).map((c) => c.service).slice(0, 2),
    ['gitbook', 'google_drive'],
    'newest first',
  );
});
