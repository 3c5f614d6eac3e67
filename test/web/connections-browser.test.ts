import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import t from 'tap';
import { OAuthFake } from '../fakes/fake-oauth.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createOwner, PASSWORD } from '../support/dashboard-client.ts';
import { startGateway } from '../support/gateway.ts';
import { freePort } from '../support/redis-server.ts';
import { readmeScreenshot, SHOTS } from '../support/screenshots.ts';

const DRIVE_FOLDER = 'https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOpQrStUvWxYz012345';
const NOTION_TOKEN = 'ntn_browser_plaintext_token_4242';

/**
 * Google on loopback: the OAuth fake at Google's authorize and token paths, and a Drive API that
 * refuses tokens the fake no longer honours (401) and knows no file (404). Drive requests can be held
 * back, so the page shows a source while it is being listed. Every grant the token endpoint hands
 * out is kept, as the gateway received it.
 */
async function startGoogle() {
  const oauth = new OAuthFake({
    clientId: 'google-client',
    clientSecret: 'google-secret',
    tokenPath: '/token',
    authorizePath: '/o/oauth2/v2/auth',
  });
  const issued: Array<{ access_token?: string; refresh_token?: string }> = [];
  let held: Promise<void> = Promise.resolve();
  let release = () => {};
  const drive = (req: IncomingMessage, res: ServerResponse) => {
    const [status, message] = oauth.authorized(req) ? [404, 'File not found.'] : [401, 'Invalid Credentials'];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: status, message, errors: [{ reason: 'notFound', message }] } }));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/token') {
        const end = res.end.bind(res);
        res.end = ((body: string) => {
          issued.push(JSON.parse(body));
          return end(body);
        }) as typeof res.end;
      }
      if (oauth.handle(req, res, Buffer.concat(chunks))) return;
      if (req.url?.startsWith('/drive/')) void held.then(() => drive(req, res));
      else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    oauth,
    issued,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdDrive: () => (held = new Promise((resolve) => (release = resolve))),
    releaseDrive: () => release(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every value in the Redis database, as text (strings, hashes, sets, sorted sets, lists, streams). */
async function redisDump(url: string): Promise<string> {
  const client = createClient({ url });
  await client.connect();
  const dump: string[] = [];
  try {
    for await (const keys of client.scanIterator({ COUNT: 100 })) {
      for (const key of keys) {
        const type = await client.type(key);
        if (type === 'string') dump.push(String(await client.get(key)));
        else if (type === 'hash') dump.push(JSON.stringify(await client.hGetAll(key)));
        else if (type === 'set') dump.push(JSON.stringify(await client.sMembers(key)));
        else if (type === 'zset') dump.push(JSON.stringify(await client.zRange(key, 0, -1)));
        else if (type === 'list') dump.push(JSON.stringify(await client.lRange(key, 0, -1)));
        else if (type === 'stream') dump.push(JSON.stringify(await client.xRange(key, '-', '+')));
        else dump.push(`${key}: ${type}`);
      }
    }
  } finally {
    await client.close();
  }
  return dump.join('\n');
}

t.test(
  'an owner connects Google Drive by OAuth and Notion by token, and adds connector sources',
  { skip: chromiumMissing },
  async (t) => {
    const google = await startGoogle();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const callback = `${publicUrl}/dashboard/oauth/google_drive/callback`;
    const gw = await startGateway({
      PORT: String(port),
      PUBLIC_URL: publicUrl,
      SECRET_KEY: '7e'.repeat(32),
      CRAWL_ALLOW_PRIVATE: '1',
      GOOGLE_CLIENT_ID: 'google-client',
      GOOGLE_CLIENT_SECRET: 'google-secret',
      GOOGLE_OAUTH_BASE_URL: google.origin,
      GOOGLE_API_BASE_URL: google.origin,
    });
    const browser = await launchChromium();
    t.teardown(async () => {
      await browser.close();
      await gw.stop();
      await google.close();
    });
    const { services } = gw.app;
    const owner = await createOwner(gw.app);
    const bot = await services.chatbots.create(owner.id, { name: 'Docs Bot' });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) errors.push(message.text());
    });
    const codeRequests = () => google.oauth.tokenRequests.filter((r) => r.grant_type === 'authorization_code');

    await page.goto(`${publicUrl}/dashboard`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chatbots' }).waitFor();

    // The Connections page: one card per service, as this server is configured.
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', exact: true }).waitFor();
    t.equal(new URL(page.url()).hash, '#/connections');
    const card = (service: string) => page.locator(`li.service-card[data-service="${service}"]`);
    // The cards come with the services' answer: wait for the last one before reading them all.
    await card('notion').waitFor();
    t.same(await page.locator('li.service-card h2').allTextContents(), ['Google Drive', 'Dropbox', 'Notion']);
    t.equal(
      await card('google_drive').getByRole('link', { name: 'Connect Google Drive' }).getAttribute('href'),
      '/dashboard/oauth/google_drive/start',
    );
    t.equal(await card('dropbox').getByRole('button', { name: 'Connect Dropbox' }).isDisabled(), true);
    t.equal(
      await card('dropbox').locator('.unavailable').textContent(),
      'Not available yet: the server operator must configure Dropbox sign-in on this server first.',
    );
    t.equal(
      await card('notion').locator('.how-to').textContent(),
      'Create an internal integration at notion.so/my-integrations, copy its secret, and share your pages with it.',
    );
    t.equal(
      await page.locator('p.empty').textContent(),
      'No connections yet. YouTube videos need none; the other services need one first.',
    );

    // Connect Google Drive: the gateway sends the browser to Google's page, Allow brings it back.
    await card('google_drive').getByRole('link', { name: 'Connect Google Drive' }).click();
    await page.waitForURL((url) => url.origin === google.origin && url.pathname === '/o/oauth2/v2/auth');
    await page.getByRole('heading', { name: 'Allow Switchboard to read your files?' }).waitFor();
    await page.getByRole('link', { name: 'Allow' }).click();
    await page.waitForURL(`${publicUrl}/dashboard#/connections`);
    const row = (service: string) => page.locator(`li.connection-item[data-service="${service}"]`);
    await row('google_drive').waitFor();
    t.equal(await row('google_drive').locator('.connection-status').textContent(), 'Connected');
    t.equal(await row('google_drive').locator('.connection-service').textContent(), 'Google Drive');
    const [drive] = await services.connections.listForUser(owner.id);
    t.match(drive, { service: 'google_drive', auth_kind: 'oauth', status: 'active' });
    t.equal(await row('google_drive').getAttribute('data-connection-id'), drive!.id);
    t.equal(google.oauth.tokenRequests.length, 1, 'one request to the token endpoint');
    t.equal(codeRequests().length, 1);
    t.match(codeRequests()[0], {
      grant_type: 'authorization_code',
      client_id: 'google-client',
      redirect_uri: callback,
      code_verifier: /^[A-Za-z0-9_-]{64}$/,
    });

    // Connect Notion with an integration secret.
    await card('notion').getByLabel('Integration secret').fill(NOTION_TOKEN);
    await card('notion').getByLabel('Name (optional)').fill('Acme workspace');
    await card('notion').getByRole('button', { name: 'Connect Notion' }).click();
    await row('notion').waitFor();
    t.equal(await row('notion').locator('.connection-label').textContent(), 'Acme workspace');
    t.equal(await row('notion').locator('.connection-status').textContent(), 'Connected');
    t.equal(await card('notion').getByLabel('Integration secret').inputValue(), '', 'the secret left the form');
    await readmeScreenshot(page, 'connections');

    // The grant Google issued and the Notion secret are sealed: no Redis value holds them in plaintext.
    const grant = google.issued[0]!;
    t.match(grant, { access_token: /^at-/, refresh_token: /^rt-/ });
    t.match(await services.connections.secret(drive!.id), {
      access_token: grant.access_token,
      refresh_token: grant.refresh_token,
    });
    const dump = await redisDump(gw.redis.url);
    t.ok(dump.includes(drive!.id), 'the scan saw the connection');
    for (const secret of [grant.access_token!, grant.refresh_token!, NOTION_TOKEN]) {
      t.notOk(dump.includes(secret), `${secret.slice(0, 6)}… is not stored in plaintext`);
    }

    // Disconnect Notion: asked twice, then gone.
    await row('notion').getByRole('button', { name: 'Disconnect' }).click();
    await row('notion').getByRole('button', { name: 'Disconnect Notion' }).click();
    await row('notion').waitFor({ state: 'detached' });
    t.same(
      (await services.connections.listForUser(owner.id)).map((c) => c.service),
      ['google_drive'],
    );

    // A chatbot's Sources page: the connector types, with what each needs.
    await page.getByRole('link', { name: 'Chatbots' }).click();
    await page.getByRole('link', { name: 'Docs Bot' }).click();
    await page.getByRole('link', { name: 'Sources' }).click();
    const form = page.locator('form.add-connector');
    await form.waitFor();
    const add = form.getByRole('button', { name: 'Add source' });
    t.equal(await form.getByLabel('Link').getAttribute('placeholder'), 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
    await form.getByLabel('Type').selectOption('dropbox');
    t.equal(
      await form.locator('p.connect-first').textContent(),
      'Connect Dropbox first: your account has no Dropbox connection yet.',
    );
    t.equal(await form.getByRole('link', { name: 'Connect Dropbox first' }).getAttribute('href'), '#/connections');
    t.equal(await add.isDisabled(), true);
    await form.getByLabel('Type').selectOption('notion');
    await form.getByRole('link', { name: 'Connect Notion first' }).waitFor();
    await form.getByLabel('Type').selectOption('google_drive');
    // Rendered once the "connect first" line is gone; then nothing else of the form is stale.
    await form.locator('p.connect-first').waitFor({ state: 'detached' });
    t.equal(await form.locator('p.connect-first').count(), 0);
    t.equal(await form.getByLabel('Connection').count(), 0, 'no picker for a single connection');
    t.equal(await add.isDisabled(), false);

    // A YouTube link that is not one video: the gateway's reason is shown as it is.
    await form.getByLabel('Type').selectOption('youtube');
    await form.getByLabel('Link').fill('https://www.youtube.com/playlist?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf');
    await add.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    t.equal(
      await alert.textContent(),
      'url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.',
    );
    t.same(await services.sources.listForChatbot(bot.id), [], 'nothing was added');
    await readmeScreenshot(page, 'connector-sources');

    // Google revoked the grant: the source shows its progress while listing, then the reason it failed.
    google.oauth.revokeGrants();
    google.holdDrive();
    await form.getByLabel('Type').selectOption('google_drive');
    await form.getByLabel('Link').fill(DRIVE_FOLDER);
    await add.click();
    const driveSource = page.locator('li.source-item').filter({ hasText: 'https://drive.google.com/open?id=' });
    await driveSource.locator('.progress').filter({ hasText: 'listing documents' }).waitFor({ timeout: 20_000 });
    t.equal(await driveSource.locator('.badge.type').textContent(), 'Google Drive');
    google.releaseDrive();
    await page.locator('li.source-item[data-status="failed"]').waitFor({ timeout: 20_000 });
    t.equal(await driveSource.locator('.error-text').textContent(), 'Reconnect Google Drive.');
    t.match(await services.connections.get(drive!.id), { status: 'needs_reauth' });

    // Reconnect from the Connections page updates the same connection.
    await driveSource.getByRole('link', { name: 'Open Connections' }).click();
    await row('google_drive').locator('.connection-status').filter({ hasText: 'Needs reconnecting' }).waitFor();
    await readmeScreenshot(page, 'connections-reconnect');
    await row('google_drive').getByRole('link', { name: 'Reconnect' }).click();
    await page.getByRole('link', { name: 'Allow' }).click();
    await page.waitForURL(`${publicUrl}/dashboard#/connections`);
    await row('google_drive').locator('.connection-status').filter({ hasText: 'Connected' }).waitFor();
    t.equal(await row('google_drive').getAttribute('data-connection-id'), drive!.id, 'the same connection');
    t.equal(await page.locator('li.connection-item').count(), 1);
    t.equal(codeRequests().length, 2);
    t.match(await services.connections.get(drive!.id), { status: 'active' });

    // With two Google Drive connections the owner picks one.
    const seeded = google.oauth.issueGrant();
    const second = await services.connections.create(owner.id, {
      service: 'google_drive',
      authKind: 'oauth',
      secret: {
        access_token: seeded.access_token,
        refresh_token: seeded.refresh_token,
        expires_at: String(Date.now() + 3_600_000),
      },
      label: 'Support Drive',
    });
    await page.getByRole('link', { name: 'Chatbots' }).click();
    await page.getByRole('link', { name: 'Docs Bot' }).click();
    await page.getByRole('link', { name: 'Sources' }).click();
    await form.getByLabel('Type').selectOption('google_drive');
    const picker = form.getByLabel('Connection');
    await picker.waitFor();
    const options = picker.locator('option');
    t.same(
      [await options.nth(0).getAttribute('value'), await options.nth(1).getAttribute('value'), await options.count()],
      [second.id, drive!.id, 2],
      'newest first',
    );
    t.match(await picker.locator('option').first().textContent(), /^Support Drive · added /);
    await picker.selectOption(drive!.id);
    await form.getByLabel('Link').fill(DRIVE_FOLDER);
    const [posted] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith(`/chatbots/${bot.id}/sources`)),
      add.click(),
    ]);
    t.same(JSON.parse(posted.postData()!), {
      type: 'google_drive',
      url: DRIVE_FOLDER,
      connection_id: drive!.id,
      refresh: 'weekly',
    });
    await page.locator('li.source-item[data-status="failed"]').nth(1).waitFor({ timeout: 20_000 });
    const [latest] = await services.sources.listForChatbot(bot.id);
    t.match(latest, { type: 'google_drive', connection_id: drive!.id, status: 'failed' });
    t.equal(
      await page.locator(`li.source-item[data-source-id="${latest!.id}"] .error-text`).textContent(),
      latest!.error,
      'the failure reason is shown as the gateway stored it',
    );

    t.same(errors, [], 'no page errors, no CSP violations');
    t.comment(`screenshots in ${SHOTS}`);
  },
);
