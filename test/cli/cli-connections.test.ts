import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import path from 'node:path';
import t from 'tap';
import { OAuthFake } from '../fakes/fake-oauth.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { freePort } from '../support/redis-server.ts';

const dropbox = new OAuthFake({
  clientId: 'app-key',
  clientSecret: 'app-secret',
  tokenPath: '/oauth2/token',
  authorizePath: '/oauth2/authorize',
});
const fake = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => dropbox.handle(req, res, Buffer.concat(chunks)) || res.writeHead(404).end());
});
await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
const fakeOrigin = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;

const SECRET_KEY = '5a'.repeat(32);
const port = await freePort();
const publicUrl = `http://127.0.0.1:${port}`;
const gw = await startGateway({
  PORT: String(port),
  PUBLIC_URL: publicUrl,
  SECRET_KEY,
  CRAWL_ALLOW_PRIVATE: '1',
  DROPBOX_API_BASE_URL: fakeOrigin,
  DROPBOX_APP_KEY: 'app-key',
  DROPBOX_APP_SECRET: 'app-secret',
});
t.teardown(async () => {
  await gw.stop();
  await new Promise((resolve) => fake.close(resolve));
});
// The CLI has its own environment: only Redis and the deployment's key, none of the gateway's OAuth settings.
const env = { REDIS_URL: gw.redis.url, SECRET_KEY, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);

t.test('connection create, list and delete; secrets never printed', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const notion = await ok([
    'connection',
    'create',
    '--user',
    user.id,
    '--service',
    'notion',
    '--token',
    'secret_abc123',
  ]);
  t.same(Object.keys(notion), ['id', 'service', 'status', 'created_at']);
  t.match(notion, { service: 'notion', status: 'active' });
  const zendesk = await ok([
    'connection', 'create', '--user', user.id, '--service', 'zendesk', '--token', 'zd-token', '--email', 'agent@acme.com',
    '--base-url', 'https://acme.zendesk.com/hc/en-us',
  ]); // prettier-ignore
  t.same((await gw.app.services.connections.get(zendesk.id)).base_url, 'https://acme.zendesk.com');
  const listed = await ok(['connection', 'list', '--user', user.id]);
  t.same(listed, [zendesk, notion]);
  t.notOk(JSON.stringify(listed).includes('secret_abc123'));
  t.same(await gw.app.services.connections.secret(notion.id), { token: 'secret_abc123' });
  t.same(await ok(['connection', 'delete', '--connection', notion.id]), { id: notion.id, deleted: true });
  t.same(await runCli(['connection', 'delete', '--connection', notion.id], env), failure('Connection not found.'));
});

t.test('connection create refuses what it cannot use, with one line each', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const cases: Array<[string[], string]> = [
    [
      ['--service', 'box', '--token', 'x'],
      'service must be one of: google_drive, notion, dropbox, microsoft, zendesk, gitbook.',
    ],
    [['--service', 'notion'], '--token is required for notion connections.'],
    [
      ['--service', 'zendesk', '--token', 'x'],
      'zendesk connections need --email and --base-url (the help centre, like https://acme.zendesk.com).',
    ],
    [
      ['--service', 'zendesk', '--token', 'x', '--email', 'a@b.c', '--base-url', 'acme'],
      '--base-url must be the help centre URL, like https://acme.zendesk.com.',
    ],
    [['--service', 'dropbox', '--token', 'x'], 'dropbox connections are made with `connection oauth`.'],
    [
      ['--service', 'google_drive'],
      'google_drive connections take --service-account-file, or connect with `connection oauth`.',
    ],
    [
      ['--service', 'microsoft', '--client-id', 'x'],
      '--client-id needs --client-secret and --tenant (Microsoft app-only access).',
    ],
    [
      ['--service', 'google_drive', '--service-account-file', '/nonexistent.json'],
      'connection create: cannot read /nonexistent.json: ENOENT',
    ],
  ];
  for (const [args, message] of cases) {
    t.same(await runCli(['connection', 'create', '--user', user.id, ...args], env), failure(message), args.join(' '));
  }
  t.same(
    await runCli(['connection', 'create', '--user', crypto.randomUUID(), '--service', 'notion', '--token', 'x'], env),
    failure('User not found.'),
  );
});

t.test('backend-only types need support to enable them per account', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await gw.app.services.chatbots.create(user.id, { name: 'Help' });
  const add = ['source', 'add', '--bot', bot.id, '--type', 'zendesk', '--url', 'https://acme.zendesk.com/hc/en-us'];
  t.same(await runCli(add, env), failure('Source type zendesk is not enabled for this account.'));
  t.same(await ok(['user', 'connectors', '--user', user.id, '--enable', 'zendesk,gitbook']), {
    user_id: user.id,
    connectors: ['gitbook', 'zendesk'],
  });
  t.same(await ok(['user', 'connectors', '--user', user.id, '--disable', 'gitbook']), {
    user_id: user.id,
    connectors: ['zendesk'],
  });
  t.same(
    await runCli(['user', 'connectors', '--user', user.id, '--enable', 'notion'], env),
    failure('connectors must be among: onedrive, sharepoint, zendesk, gitbook.'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'dropbox'], env),
    failure('source add: exactly one of --text, --url or --file is required'),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'box', '--url', 'x'], env),
    failure(
      'type must be one of: url, file, text, youtube, google_drive, notion, dropbox, onedrive, sharepoint, zendesk, gitbook.',
    ),
  );
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'dropbox', '--url', '/Team/Handbook.pdf'], env),
    failure('Connect Dropbox first: this account has no Dropbox connection.'),
  );
});

t.test(
  'connection oauth: the link goes through a gateway, the owner allows, the CLI prints the connection',
  async (t) => {
    const { user } = await scaleAccount(gw.app);
    const bin = path.resolve(import.meta.dirname, '../../bin/switchboard.js');
    const child = spawn(process.execPath, [bin, 'connection', 'oauth', '--user', user.id, '--service', 'dropbox'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const link = await new Promise<string>((resolve) =>
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const match = /(http:\/\/\S+\/start\?state=\S+)/.exec(stderr);
        if (match) resolve(match[1]!);
      }),
    );
    t.match(link, new RegExp(`^${publicUrl}/dashboard/oauth/dropbox/start\\?state=[A-Za-z0-9_-]{32}$`));
    // The gateway sends the browser to Dropbox's authorize page with PKCE and offline access.
    const start = await fetch(link, { redirect: 'manual' });
    t.equal(start.status, 302);
    const authorize = new URL(start.headers.get('location')!);
    t.equal(authorize.origin + authorize.pathname, `${fakeOrigin}/oauth2/authorize`);
    t.match(Object.fromEntries(authorize.searchParams), {
      client_id: 'app-key',
      response_type: 'code',
      redirect_uri: `${publicUrl}/dashboard/oauth/dropbox/callback`,
      code_challenge_method: 'S256',
      token_access_type: 'offline',
      scope: 'account_info.read files.metadata.read files.content.read sharing.read',
    });
    const page = await (await fetch(authorize)).text();
    const allow = /href="([^"]+)"/.exec(page)![1]!.replaceAll('&#38;', '&');
    const back = await fetch(new URL(allow, fakeOrigin), { redirect: 'manual' });
    const callback = await fetch(back.headers.get('location')!, { redirect: 'manual' });
    t.equal(callback.status, 200);
    t.match(await callback.text(), /Dropbox is connected to Switchboard\. You can close this window\./);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    t.equal(code, 0);
    const printed = JSON.parse(stdout);
    t.match(printed, { service: 'dropbox', status: 'active' });
    t.same(Object.keys(printed), ['id', 'service', 'status', 'created_at']);
    t.match(dropbox.tokenRequests.at(-1), {
      grant_type: 'authorization_code',
      redirect_uri: `${publicUrl}/dashboard/oauth/dropbox/callback`,
    });
    t.match(dropbox.tokenRequests.at(-1)!.code_verifier, /^[A-Za-z0-9_-]{64}$/);
    const secret = await gw.app.services.connections.secret(printed.id);
    t.ok(dropbox.isValid(secret.access_token));
    // The same link cannot be used twice.
    const reused = await fetch(back.headers.get('location')!, { redirect: 'manual' });
    t.equal(reused.status, 400);
    t.match(await reused.text(), /This sign-in was already used; start again\./);
  },
);

t.test('connection oauth without a configured service, or without a gateway URL', async (t) => {
  const { user } = await scaleAccount(gw.app);
  t.same(
    await runCli(['connection', 'oauth', '--user', user.id, '--service', 'notion'], env),
    failure('service must be one of google_drive, dropbox, microsoft for OAuth.'),
  );
  const other = await startGateway({ SECRET_KEY });
  t.teardown(() => other.stop());
  const { user: stranger } = await scaleAccount(other.app);
  t.same(
    await runCli(['connection', 'oauth', '--user', stranger.id, '--service', 'dropbox'], {
      ...env,
      REDIS_URL: other.redis.url,
    }),
    failure('connection oauth: no gateway has published its PUBLIC_URL; start a gateway with PUBLIC_URL set.'),
  );
  // The browser reaching a gateway that has no client for the service is told so.
  const state = await gw.app.services.oauth.begin('google_drive', user.id, { kind: 'cli' });
  const res = await fetch(`${publicUrl}/dashboard/oauth/google_drive/start?state=${state}`, { redirect: 'manual' });
  t.equal(res.status, 400);
  t.match(
    await res.text(),
    /Google Drive is not set up on this server: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET\./,
  );
});
