import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FakeDropbox } from '../fakes/fake-dropbox.ts';
import { FakeGitBook } from '../fakes/fake-gitbook.ts';
import { FakeGoogleDrive } from '../fakes/fake-google-drive.ts';
import { FakeMicrosoftGraph } from '../fakes/fake-microsoft-graph.ts';
import { FakeNotion } from '../fakes/fake-notion.ts';
import { FakeZendesk } from '../fakes/fake-zendesk.ts';
import { FakeYouTube } from '../fakes/fake-youtube.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';
import { until } from '../support/until.ts';
import { startRedis } from '../support/redis-server.ts';
import { createServer } from 'node:http';
import { apiFetch } from '../support/openapi-contract.ts';

// Every connector source type ingested end to end: added through the CLI (`source add --type …
// --wait`, which only follows a gateway's ingestion), read by the gateway through the service's real
// client library from a loopback fake, chunked with its document in the chunk ids, and answered from.
const youtube = await new FakeYouTube().start();
const dropbox = await new FakeDropbox().start();
const gitbook = await new FakeGitBook().start();
const graph = await new FakeMicrosoftGraph().start();
const drive = await new FakeGoogleDrive().start();
const zendesk = await new FakeZendesk().start();
const notion = await new FakeNotion().start();
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'answered' });

const SECRET_KEY = '7c'.repeat(32);
const gw = await startGateway({
  SECRET_KEY,
  CRAWL_ALLOW_PRIVATE: '1',
  SEARCH_ENGINE: 'in-process',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  YOUTUBE_BASE_URL: youtube.url,
  GITBOOK_API_BASE_URL: gitbook.url,
  NOTION_BASE_URL: notion.url,
  GOOGLE_API_BASE_URL: drive.url,
  GOOGLE_OAUTH_BASE_URL: drive.url,
  MICROSOFT_GRAPH_BASE_URL: graph.graphUrl,
  MICROSOFT_LOGIN_BASE_URL: graph.graphUrl,
  MICROSOFT_CLIENT_ID: 'fake-microsoft-client',
  MICROSOFT_CLIENT_SECRET: 'fake-microsoft-secret',
  DROPBOX_API_BASE_URL: dropbox.apiUrl,
  DROPBOX_CONTENT_BASE_URL: dropbox.contentUrl,
  DROPBOX_APP_KEY: 'fake-app-key',
  DROPBOX_APP_SECRET: 'fake-app-secret',
  // Small, so one document of a folder can be over it.
  CONNECTOR_MAX_DOCUMENT_BYTES: '4096',
});
t.teardown(async () => {
  await gw.stop();
  await youtube.stop();
  await dropbox.stop();
  await gitbook.stop();
  await graph.stop();
  await drive.stop();
  await zendesk.stop();
  await notion.stop();
  await openai.stop();
});
const env = { REDIS_URL: gw.redis.url, SECRET_KEY, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);
const { services } = gw.app;

/** The chunk ids of a source, as stored. */
async function chunkIds(chatbotId: string, sourceId: string): Promise<string[]> {
  return (await gw.app.retrieval.chunks.forSource(chatbotId, sourceId)).map((chunk) => chunk.id).sort();
}

t.test('youtube: a video transcript, through the CLI', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Videos' });
  youtube.videos.set('dQw4w9WgXcQ', {
    title: 'Setting up the Acme router',
    captions: [
      {
        languageCode: 'en',
        name: 'English',
        lines: [
          [0, 3, 'Welcome to the Acme router setup.'],
          [3, 4, 'Plug the blue cable into the WAN port.'],
          [12, 4, 'Then hold the reset button for ten seconds.'],
        ],
      },
    ],
  });
  const source = await ok([
    'source', 'add', '--bot', bot.id, '--type', 'youtube', '--url', 'https://youtu.be/dQw4w9WgXcQ?t=30', '--wait',
  ]); // prettier-ignore
  t.same(source, {
    id: source.id,
    type: 'youtube',
    title: 'Setting up the Acme router',
    url: '',
    status: 'done',
    page_count: 0,
    created_at: source.created_at,
    chatbot_id: bot.id,
    error: '',
    reference: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    connection_id: '',
    refresh: 'weekly',
    last_sync: { at: source.last_sync.at, error: '', added: 1, changed: 0, removed: 0, unchanged: 0 },
    next_sync_at: source.next_sync_at,
  });
  t.equal(Date.parse(source.next_sync_at) - Date.parse(source.last_sync.at), 7 * 24 * 3600_000);
  t.same(await chunkIds(bot.id, source.id), [`${source.id}:dQw4w9WgXcQ:0`]);
  const documents = await services.sources.documents(await services.sources.get(source.id));
  t.same([...documents.keys()], ['dQw4w9WgXcQ']);
  t.match(documents.get('dQw4w9WgXcQ'), { title: 'Setting up the Acme router', chunks: 1, change_token: /^.+$/ });
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'which port does the blue cable go in', 1);
  t.equal(
    hits[0]!.chunk.content,
    'Setting up the Acme router\n\n[0:00] Welcome to the Acme router setup. Plug the blue cable into the WAN port.\n\n' +
      '[0:12] Then hold the reset button for ten seconds.',
  );
  t.equal(hits[0]!.chunk.url, 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
  // SPEC's source object: the reference is not the `url` of a non-URL type.
  const listed = await apiFetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/sources`, {
    headers: { authorization: `Bearer ${(await services.apiKeys.create(user.id, 'k')).key}` },
  });
  t.same(await listed.json(), [
    {
      id: source.id,
      type: 'youtube',
      title: 'Setting up the Acme router',
      url: '',
      status: 'done',
      page_count: 0,
      created_at: source.created_at,
    },
  ]);
});

t.test('youtube: a video without captions fails with a reason, and --wait exits 1 with it', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Silent' });
  youtube.videos.set('aaaaaaaaaaa', { title: 'No words', captions: 'absent' });
  const result = await runCli(
    [
      'source',
      'add',
      '--bot',
      bot.id,
      '--type',
      'youtube',
      '--url',
      'https://www.youtube.com/watch?v=aaaaaaaaaaa',
      '--wait',
    ],
    env,
  );
  const reason =
    'This video has no captions, or its owner turned them off. Upload a .vtt or .srt file of its subtitles instead.';
  t.same(result, failure(`source add: ${reason}`));
  const [source] = await services.sources.listForChatbot(bot.id);
  t.match(source, { status: 'failed', error: reason });
  t.same(await chunkIds(bot.id, source!.id), []);
});

t.test('a reference the connector cannot read is refused before anything is stored', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Refused' });
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'youtube', '--url', 'https://vimeo.com/1'], env),
    failure('url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.'),
  );
  t.same(await services.sources.listForChatbot(bot.id), []);
});

/** An owner whose Dropbox is connected (the grant as the OAuth callback stores it). */
async function dropboxOwner() {
  const { user } = await scaleAccount(gw.app);
  const grant = dropbox.oauth.issueGrant();
  const connection = await services.connections.create(user.id, {
    service: 'dropbox',
    authKind: 'oauth',
    secret: {
      access_token: grant.access_token,
      refresh_token: grant.refresh_token,
      expires_at: String(Date.now() + 3600_000),
    },
  });
  const bot = await services.chatbots.create(user.id, { name: 'Handbook' });
  return { user, connection, bot };
}

t.test('dropbox: a shared folder over several pages; a file over the cap is skipped before download', async (t) => {
  dropbox.reset();
  const { bot, connection } = await dropboxOwner();
  dropbox.addFile('/Handbook/Returns.md', '# Returns\n\nUnworn shoes can be returned within 30 days.\n');
  dropbox.addFile('/Handbook/Shipping.txt', 'We ship worldwide within five days.');
  dropbox.addFile('/Handbook/Guides/Care.md', '# Shoe care\n\nWipe leather with a damp cloth.\n');
  dropbox.addFile('/Handbook/Guides/Sizes.csv', 'size,length\n42,27 cm\n43,27.7 cm\n');
  dropbox.addFile('/Handbook/Huge.txt', 'x'.repeat(5000));
  dropbox.pageSize = 2;
  const link = dropbox.share('/Handbook');
  const result = await runCli(['source', 'add', '--bot', bot.id, '--type', 'dropbox', '--url', link, '--wait'], env);
  t.equal(result.code, 0, result.stderr);
  const source = JSON.parse(result.stdout);
  t.match(source, { type: 'dropbox', status: 'done', page_count: 4, url: '', connection_id: connection.id, error: '' });
  t.equal(source.title, 'Handbook');
  t.equal(source.reference, link.replace('&dl=0', ''));
  const documents = await services.sources.documents(await services.sources.get(source.id));
  t.same([...documents.values()].map((d) => d.title).sort(), ['Care.md', 'Returns.md', 'Shipping.txt', 'Sizes.csv']);
  const downloads = dropbox.requests.filter((r) => r.route === 'sharing/get_shared_link_file');
  t.equal(downloads.length, 4);
  t.notOk(
    downloads.some((r) => JSON.stringify(r.arg).includes('Huge')),
    'the file over the cap was never downloaded',
  );
  t.ok(dropbox.requests.filter((r) => r.route === 'files/list_folder/continue').length >= 1, 'paged');
  const ids = await chunkIds(bot.id, source.id);
  t.equal(ids.length, 4);
  t.ok(
    ids.every((id) => /^[0-9a-f-]{36}:[A-Za-z0-9_-]{1,64}:0$/.test(id)),
    'chunk ids carry the document',
  );
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'how long do I have to return shoes', 1);
  t.match(hits[0]!.chunk, { title: 'Returns.md', content: /within 30 days/ });
});

t.test('dropbox: an expired token is refreshed once and the source still ingests', async (t) => {
  dropbox.reset();
  const { bot, connection } = await dropboxOwner();
  dropbox.addFile('/Policies/Warranty.md', '# Warranty\n\nTwo years on every pair.\n');
  dropbox.oauth.expireAccessTokens();
  const before = dropbox.oauth.tokenRequests.length;
  const source = await ok(['source', 'add', '--bot', bot.id, '--type', 'dropbox', '--url', '/Policies', '--wait']);
  t.match(source, { status: 'done', title: 'Policies', page_count: 1 });
  t.equal(dropbox.oauth.tokenRequests.length, before + 1);
  t.equal(dropbox.oauth.tokenRequests.at(-1)!.grant_type, 'refresh_token');
  t.ok(dropbox.oauth.isValid((await services.connections.secret(connection.id)).access_token));
});

t.test('dropbox: a revoked grant fails the source with "Reconnect Dropbox." and marks the connection', async (t) => {
  dropbox.reset();
  const { bot, connection } = await dropboxOwner();
  dropbox.addFile('/Policies/Warranty.md', '# Warranty\n\nTwo years on every pair.\n');
  dropbox.oauth.revokeGrants();
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'dropbox', '--url', '/Policies', '--wait'], env),
    failure('source add: Reconnect Dropbox.'),
  );
  t.equal((await services.connections.get(connection.id)).status, 'needs_reauth');
  // Its other sources fail at once, without asking Dropbox.
  const asked = dropbox.requests.length;
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'dropbox', '--url', '/Other', '--wait'], env),
    failure('source add: Reconnect Dropbox.'),
  );
  t.equal(dropbox.requests.length, asked);
});

t.test('gitbook: a backend-only type, enabled for the account, read with a personal token', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Docs' });
  const space = gitbook.addSpace('Acme Developer Docs');
  const guides = gitbook.addPage(space, undefined, 'Guides', { type: 'group' });
  gitbook.addPage(space, guides, 'Authentication', {
    markdown: '# Authentication\n\nSend the key in the X-Acme-Key header.\n',
  });
  gitbook.addPage(space, guides, 'Pagination', {
    markdown: '# Pagination\n\nFollow the next cursor until it is empty.\n',
  });
  gitbook.addPage(space, undefined, 'Status page', { type: 'link', href: 'https://status.acme.com' });
  const link = `https://app.gitbook.com/o/${space.organization}/s/${space.id}/guides/authentication`;
  const add = ['source', 'add', '--bot', bot.id, '--type', 'gitbook', '--url', link, '--wait'];
  t.same(await runCli(add, env), failure('Source type gitbook is not enabled for this account.'));
  await ok(['user', 'connectors', '--user', user.id, '--enable', 'gitbook']);
  t.same(await runCli(add, env), failure('Connect GitBook first: this account has no GitBook connection.'));
  const connection = await ok([
    'connection',
    'create',
    '--user',
    user.id,
    '--service',
    'gitbook',
    '--token',
    gitbook.issueToken(),
  ]);
  const source = await ok(add);
  t.match(source, {
    type: 'gitbook',
    title: 'Acme Developer Docs',
    status: 'done',
    page_count: 2,
    reference: `https://app.gitbook.com/s/${space.id}`,
    connection_id: connection.id,
  });
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'which header carries the key', 1);
  t.match(hits[0]!.chunk, { title: 'Authentication', content: /X-Acme-Key/ });
  // A token GitBook no longer accepts: the connection needs a new one.
  gitbook.tokens.clear();
  t.same(await runCli(add, env), failure('source add: Reconnect GitBook.'));
  t.equal((await services.connections.get(connection.id)).status, 'needs_reauth');
});

t.test('onedrive: a shared folder read with a Microsoft OAuth grant; downloads never carry the token', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Drive' });
  await ok(['user', 'connectors', '--user', user.id, '--enable', 'onedrive,sharepoint']);
  const grant = graph.oauth.issueGrant();
  await services.connections.create(user.id, {
    service: 'microsoft',
    authKind: 'oauth',
    secret: {
      access_token: grant.access_token,
      refresh_token: grant.refresh_token,
      expires_at: String(Date.now() + 3600_000),
    },
  });
  const drive = graph.addOneDrive('business');
  const folder = graph.addFolder(drive, '/Support');
  graph.addFile(drive, '/Support/Opening hours.md', '# Opening hours\n\nThe shop opens at nine.\n');
  graph.addFile(drive, '/Support/Deep/Returns.txt', 'Returns are free within 30 days.');
  const source = await ok([
    'source',
    'add',
    '--bot',
    bot.id,
    '--type',
    'onedrive',
    '--url',
    graph.share(folder),
    '--wait',
  ]);
  t.match(source, { type: 'onedrive', title: 'Support', status: 'done', page_count: 2 });
  const downloads = graph.requests.filter((r) => r.host === 'download');
  t.equal(downloads.length, 2);
  t.ok(
    downloads.every((r) => r.headers.authorization === undefined),
    'no Authorization on the download host',
  );
});

t.test('sharepoint: a site with app-only client credentials: its pages and its document library', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Intranet' });
  await ok(['user', 'connectors', '--user', user.id, '--enable', 'sharepoint']);
  await ok([
    'connection', 'create', '--user', user.id, '--service', 'microsoft', '--client-id', 'fake-microsoft-client',
    '--client-secret', 'fake-microsoft-secret', '--tenant', 'common',
  ]); // prettier-ignore
  const site = graph.addSite({ hostname: 'acme.sharepoint.com', path: '/sites/HR', displayName: 'Human Resources' });
  graph.addPage(site, {
    name: 'Leave.aspx',
    title: 'Leave policy',
    parts: [{ html: '<p>Everyone gets 28 days of leave.</p>' }],
  });
  graph.addFile(graph.drive(site.driveId), '/Benefits.md', '# Benefits\n\nA bike lease for everyone.\n');
  const source = await ok([
    'source', 'add', '--bot', bot.id, '--type', 'sharepoint', '--url', 'https://acme.sharepoint.com/sites/HR/SitePages/Home.aspx', '--wait',
  ]); // prettier-ignore
  t.match(source, { type: 'sharepoint', title: 'Human Resources', status: 'done', page_count: 2 });
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'how many days of leave', 1);
  t.match(hits[0]!.chunk, { title: 'Leave policy', content: /28 days/ });
});

t.test(
  'google_drive: a folder and its subfolder read with a service account key; a file too large skipped',
  async (t) => {
    const { user } = await scaleAccount(gw.app);
    const bot = await services.chatbots.create(user.id, { name: 'Policies' });
    const keys = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const email = 'reader@acme-docs.iam.gserviceaccount.com';
    drive.addServiceAccount(email, keys.publicKey);
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-drive-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const keyFile = path.join(dir, 'key.json');
    writeFileSync(
      keyFile,
      JSON.stringify({
        type: 'service_account',
        private_key: keys.privateKey,
        client_email: email,
        token_uri: 'https://oauth2.googleapis.com/token',
      }),
    );
    const connection = await ok([
    'connection', 'create', '--user', user.id, '--service', 'google_drive', '--service-account-file', keyFile,
  ]); // prettier-ignore
    t.notOk(JSON.stringify(await services.connections.listForUser(user.id)).includes('PRIVATE KEY'));
    const folder = drive.addFolder('HR Policies');
    drive.addFile('Travel.md', 'text/markdown', '# Travel\n\nBook trains for trips under four hours.\n', folder.id);
    drive.addFile('Scan.pdf', 'application/pdf', 'x'.repeat(6000), folder.id);
    const sub = drive.addFolder('Benefits', folder.id);
    drive.addFile('Lunch.txt', 'text/plain', 'Lunch is paid on Fridays.', sub.id);
    const source = await ok([
    'source', 'add', '--bot', bot.id, '--type', 'google_drive', '--url', `https://drive.google.com/drive/folders/${folder.id}`, '--wait',
  ]); // prettier-ignore
    t.match(source, {
      type: 'google_drive',
      title: 'HR Policies',
      status: 'done',
      page_count: 2,
      reference: `https://drive.google.com/open?id=${folder.id}`,
      connection_id: connection.id,
    });
    const hits = await gw.app.retrieval.retriever.search(bot.id, 'which day is lunch paid', 1);
    t.match(hits[0]!.chunk, { title: 'Lunch.txt', content: /Fridays/ });
    const secret = await services.connections.secret(connection.id);
    t.ok(drive.oauth.isValid(secret.access_token) || secret.access_token!.length > 0, 'a token was minted and kept');
  },
);

t.test('zendesk: a public help centre without a connection; with one, restricted articles too', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Help' });
  await ok(['user', 'connectors', '--user', user.id, '--enable', 'zendesk']);
  const category = zendesk.addCategory('Orders');
  const section = zendesk.addSection('Shipping', category.id);
  zendesk.addArticle(section.id, 'Delivery times', '<p>Parcels arrive within three working days.</p>');
  zendesk.addArticle(section.id, 'Next release', '<p>Not yet.</p>', { draft: true });
  zendesk.addArticle(section.id, 'Partner rates', '<p>Partners pay 20% less.</p>', { userSegmentId: 77 });
  const add = [
    'source',
    'add',
    '--bot',
    bot.id,
    '--type',
    'zendesk',
    '--url',
    `${zendesk.url}/hc/en-us/sections/${section.id}-shipping`,
    '--wait',
  ];
  const open = await ok(add);
  t.match(open, { type: 'zendesk', title: 'Shipping', status: 'done', page_count: 1, connection_id: '' });
  t.equal(open.reference, `${zendesk.url}/hc/en-us/sections/${section.id}`);
  const token = [...zendesk.tokens][0] ?? 'zd-token';
  zendesk.tokens.add(token);
  const connection = await ok([
    'connection', 'create', '--user', user.id, '--service', 'zendesk', '--token', token, '--email', zendesk.email,
    '--base-url', zendesk.url, '--include-restricted',
  ]); // prettier-ignore
  const agent = await ok([...add, '--connection', connection.id]);
  t.match(agent, { status: 'done', page_count: 2, connection_id: connection.id });
  const documents = await services.sources.documents(await services.sources.get(agent.id));
  t.same([...documents.values()].map((d) => d.title).sort(), ['Delivery times', 'Partner rates']);
});

t.test('notion: a page with a sub-page and a database, read with an integration token', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Wiki' });
  const root = notion.addPage('Team Wiki', {
    blocks: [
      { type: 'heading_1', text: 'Welcome' },
      { type: 'paragraph', text: 'Start here.' },
    ],
  });
  notion.addPage('Expenses', {
    parent: root,
    blocks: [{ type: 'paragraph', text: 'Submit receipts within 14 days.' }],
  });
  const faq = notion.addDatabase('FAQ', { parent: root });
  notion.addRow(faq, 'Where is the office?', [{ type: 'paragraph', text: 'The office is at 12 Harbour Street.' }]);
  const connection = await ok([
    'connection',
    'create',
    '--user',
    user.id,
    '--service',
    'notion',
    '--token',
    notion.issueToken(),
  ]);
  const link = `https://www.notion.so/acme/Team-Wiki-${root.replaceAll('-', '')}`;
  const source = await ok(['source', 'add', '--bot', bot.id, '--type', 'notion', '--url', link, '--wait']);
  t.match(source, { type: 'notion', title: 'Team Wiki', status: 'done', page_count: 3, connection_id: connection.id });
  t.equal(source.reference, `https://www.notion.so/${root.replaceAll('-', '')}`);
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'where is the office', 1);
  t.match(hits[0]!.chunk, { title: 'Where is the office?', content: /12 Harbour Street/ });
  notion.revokeTokens();
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'notion', '--url', link, '--wait'], env),
    failure('source add: Reconnect Notion.'),
  );
});

t.test('the four dashboard types ingest when an owner adds them in the dashboard', async (t) => {
  const owner = await createOwner(gw.app);
  const client = await DashboardClient.signIn(gw.baseUrl, owner);
  const bot = await services.chatbots.create(owner.id, { name: 'Everything' });
  // The owner connected Notion in the dashboard and Drive and Dropbox by OAuth.
  const notionToken = notion.issueToken();
  t.equal((await client.post('/dashboard/api/connections', { service: 'notion', token: notionToken })).status, 201);
  for (const [service, fake] of [
    ['google_drive', drive.oauth],
    ['dropbox', dropbox.oauth],
  ] as const) {
    const grant = fake.issueGrant();
    await services.connections.create(owner.id, {
      service,
      authKind: 'oauth',
      secret: {
        access_token: grant.access_token,
        refresh_token: grant.refresh_token,
        expires_at: String(Date.now() + 3600_000),
      },
    });
  }
  youtube.videos.set('bbbbbbbbbbb', {
    title: 'Unboxing',
    captions: [{ languageCode: 'en', name: 'English', lines: [[0, 3, 'The box holds a router and a cable.']] }],
  });
  const page = notion.addPage('FAQ', { blocks: [{ type: 'paragraph', text: 'Support answers within a day.' }] });
  const doc = drive.addFile('Warranty.txt', 'text/plain', 'The warranty lasts two years.');
  dropbox.addFile('/Care/Leather.md', '# Leather\n\nUse a soft brush.\n');
  const added = [
    { type: 'youtube', url: 'https://www.youtube.com/watch?v=bbbbbbbbbbb' },
    { type: 'notion', url: `https://www.notion.so/${page.replaceAll('-', '')}` },
    { type: 'google_drive', url: `https://drive.google.com/file/d/${doc.id}/view` },
    { type: 'dropbox', url: '/Care/Leather.md' },
  ];
  const ids: string[] = [];
  for (const body of added) {
    const res = await client.post(`/dashboard/api/chatbots/${bot.id}/sources`, body);
    t.equal(res.status, 201, body.type);
    ids.push((res.body as { id: string }).id);
  }
  await until(async () => {
    const listed = (await client.get(`/dashboard/api/chatbots/${bot.id}/sources`)).body as Array<{ status: string }>;
    return listed.every((source) => source.status === 'done' || source.status === 'failed');
  }, 'the four sources');
  const listed = (await client.get(`/dashboard/api/chatbots/${bot.id}/sources`)).body as Array<Record<string, unknown>>;
  t.same(listed.map(({ type, title, status, error }) => ({ type, title, status, error })).reverse(), [
    { type: 'youtube', title: 'Unboxing', status: 'done', error: '' },
    { type: 'notion', title: 'FAQ', status: 'done', error: '' },
    { type: 'google_drive', title: 'Warranty.txt', status: 'done', error: '' },
    { type: 'dropbox', title: 'Leather.md', status: 'done', error: '' },
  ]);
  const answer = await gw.app.retrieval.retriever.search(bot.id, 'how long is the warranty', 1);
  t.match(answer[0]!.chunk.content, /two years/);
});

t.test("--wait only follows a gateway: its settings win over the CLI's, and without one it says so", async (t) => {
  // A loopback page: the gateway may crawl it (CRAWL_ALLOW_PRIVATE=1); the CLI's environment may not.
  const site = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<html><head><title>Opening hours</title></head><body><main><p>Open nine to five.</p></main></body></html>',
    );
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => site.close(resolve)));
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Hours' });
  const url = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
  const source = await ok(['source', 'add', '--bot', bot.id, '--url', url, '--wait']);
  t.match(source, { type: 'url', title: 'Opening hours', status: 'done', page_count: 1 });

  const lonely = await startRedis();
  t.teardown(() => lonely.stop());
  const alone = { ...env, REDIS_URL: lonely.url };
  const owner = await runCliJson(['user', 'create', '--email', 'alone@example.com'], alone);
  const chatbot = await runCliJson(['bot', 'create', '--user', owner.id, '--name', 'Alone'], alone);
  t.same(
    await runCli(['source', 'add', '--bot', chatbot.id, '--text', 'Queued text.', '--wait'], alone),
    failure(
      'source add: no gateway is running to ingest the source; it stays queued until one starts (npx switchboard serve)',
    ),
  );
});
