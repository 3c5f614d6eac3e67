import t from 'tap';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { shareKey } from '../../../src/sources/connectors/graph-drive.ts';
import { onedriveConnector } from '../../../src/sources/connectors/onedrive-connector.ts';
import { FakeMicrosoftGraph, type FakeGraphDrive, type FakeGraphItem } from '../../fakes/fake-microsoft-graph.ts';
import { assertRefused, connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeMicrosoftGraph().start();
t.teardown(() => fake.stop());

/** Every access token and download key handed out, and every error message a test saw. */
const { issued, messages, grant, context, failure } = connectorTestBed({
  issue: () => fake.oauth.issueGrant().access_token,
  reconnect: 'Reconnect OneDrive.',
  baseUrls: { graph: fake.graphUrl },
});

t.afterEach(() => {
  for (const request of fake.requests)
    issued.push(new URL(request.url, 'http://fake').searchParams.get('tempauth') ?? '');
});

/** The Graph calls the fake received, as `route url status`. */
function calls(): [string, string, number][] {
  return fake.requests.map((request) => [request.route, request.url, request.status]);
}

function document(item: FakeGraphItem, drive: FakeGraphDrive): ConnectorDocument {
  return {
    id: `drives/${drive.id}/items/${item.id}`,
    title: item.name,
    size: item.bytes.length,
    changeToken: FakeMicrosoftGraph.cTag(item),
    url: fake.webUrl(item),
  };
}

const RESUME = 'Résumé tips.md';
let personal: FakeGraphDrive;
let business: FakeGraphDrive;

t.beforeEach(() => {
  fake.reset();
  personal = fake.addOneDrive('personal');
  fake.addFile(personal, '/Handbook/Intro.pdf', '%PDF-1.7 intro');
  fake.addFile(personal, '/Handbook/Policies.md', '# Policies\n\nBe kind.\n');
  fake.addFile(personal, '/Handbook/Budget.xlsx', 'PK spreadsheet');
  fake.addFile(personal, '/Handbook/Guides/Onboarding.txt', 'Day one: get a badge.');
  fake.addFile(personal, '/Handbook/Guides/Deep/FAQ.csv', 'question,answer\nwhy,because\n');
  fake.addFile(personal, `/Handbook/Guides/${RESUME}`, '# Résumé\n\nKeep it short.\n');
  fake.addFile(personal, '/Handbook/Old.pdf', '%PDF-1.7 old');
  fake.addFile(personal, '/Handbook/Slides.pptx', 'PK slides');
  fake.delete(fake.item(personal, '/Handbook/Old.pdf'));
  business = fake.addOneDrive('business');
  fake.addFile(business, '/Projects/Plan.docx', 'PK plan');
});

t.test('the connector reads OneDrive through a Microsoft connection', async (t) => {
  const { type, service, connectionOptional } = onedriveConnector;
  t.same({ type, service, connectionOptional }, { type: 'onedrive', service: 'microsoft', connectionOptional: false });
});

t.test('sharing links become their canonical form', async (t) => {
  const accepted: [string, string][] = [
    [
      'https://1drv.ms/f/c/6a1f0e3b2c4d5e6f/EgAbCdEfGhIjKlMn?e=x1Y2z3',
      'https://1drv.ms/f/c/6a1f0e3b2c4d5e6f/EgAbCdEfGhIjKlMn?e=x1Y2z3',
    ],
    ['  http://1drv.ms/w/s!AkxYz123abc#top  ', 'https://1drv.ms/w/s!AkxYz123abc'],
    ['1drv.ms/b/s!AkxYz123abc?e=Qw3', 'https://1drv.ms/b/s!AkxYz123abc?e=Qw3'],
    [
      'https://onedrive.live.com/redir?resid=1231244193912!12&authkey=!AbC',
      'https://onedrive.live.com/redir?resid=1231244193912!12&authkey=!AbC',
    ],
    [
      'https://ONEDRIVE.live.com/?cid=6a1f0e3b2c4d5e6f&id=6A1F0E3B2C4D5E6F!105',
      'https://onedrive.live.com/?cid=6a1f0e3b2c4d5e6f&id=6A1F0E3B2C4D5E6F!105',
    ],
    [
      'https://contoso-my.sharepoint.com/:w:/g/personal/ada_contoso_com/EaBcDeF?e=4fGh7k',
      'https://contoso-my.sharepoint.com/:w:/g/personal/ada_contoso_com/EaBcDeF?e=4fGh7k',
    ],
    [
      'https://Contoso-My.SharePoint.com/:f:/r/personal/ada_contoso_com/Documents/Handbook',
      'https://contoso-my.sharepoint.com/:f:/r/personal/ada_contoso_com/Documents/Handbook',
    ],
    [
      'https://contoso-my.sharepoint.com/personal/ada_contoso_com/Documents/Team Handbook',
      'https://contoso-my.sharepoint.com/personal/ada_contoso_com/Documents/Team%20Handbook',
    ],
  ];
  for (const [reference, canonical] of accepted) t.equal(onedriveConnector.parseReference(reference), canonical);

  const refused = [
    'https://1drv.ms/',
    'https://1drv.ms/f',
    'https://1drv.ms/folder/abc',
    'https://onedrive.live.com/',
    'https://onedrive.live.com/about/en-us/',
    'https://contoso-my.sharepoint.com/personal/ada_contoso_com',
    'https://contoso-my.sharepoint.com/:w:/g',
    'https://contoso.sharepoint.com/:w:/s/marketing/EaBcDeF',
    'https://contoso-my.sharepoint.com.evil.example/:w:/g/personal/ada/EaBc',
    'https://1drv.ms:8443/f/s!AkxYz',
    'https://user@1drv.ms/f/s!AkxYz',
    'ftp://1drv.ms/f/s!AkxYz',
    'https://www.dropbox.com/s/2sn712vy1ovegw8/Prime_Numbers.txt',
    'not a link',
    '',
  ];
  assertRefused(
    t,
    (reference) => onedriveConnector.parseReference(reference),
    refused,
    'url must be a OneDrive sharing link, like https://1drv.ms/f/c/6a1f0e3b2c4d5e6f/EgAbCdEfGhIjKlMn?e=x1Y2z3 ' +
      'or https://contoso-my.sharepoint.com/:f:/g/personal/ada_contoso_com/EgAbCdEfGhIjKlMn?e=x1Y2z3.',
  );
});

t.test('a sharing link is encoded for /shares as Graph documents', async (t) => {
  t.equal(
    shareKey('https://onedrive.live.com/redir?resid=1231244193912!12&authKey=1201919!12921!1'),
    'u!aHR0cHM6Ly9vbmVkcml2ZS5saXZlLmNvbS9yZWRpcj9yZXNpZD0xMjMxMjQ0MTkzOTEyITEyJmF1dGhLZXk9MTIwMTkxOSExMjkyMSEx',
  );
  // `+` becomes `-`, `/` becomes `_`, and the `=` padding goes.
  t.equal(shareKey('https://1drv.ms/f/s!Ag~~?e=a?'), 'u!aHR0cHM6Ly8xZHJ2Lm1zL2YvcyFBZ35-P2U9YT8');
});

t.test('a shared file is one document, downloaded from another host without the token', async (t) => {
  const item = fake.item(business, '/Projects/Plan.docx');
  const link = onedriveConnector.parseReference(fake.share(item));
  const read = context();
  const listing = await onedriveConnector.list(link, read);
  t.same(listing, { title: 'Plan.docx', single: true, documents: [document(item, business)] });
  t.equal(
    listing.documents[0]!.url,
    'https://contoso-my.sharepoint.com/personal/ada_contoso_com/Documents/Projects/Plan.docx',
  );

  const fetched = await onedriveConnector.fetch(link, listing.documents[0]!, read);
  t.same(fetched, { kind: 'file', filename: 'Plan.docx', bytes: Buffer.from('PK plan') });
  const token = await read.auth.accessToken();
  const content = `/v1.0/drives/${business.id}/items/${item.id}/content`;
  t.same(
    fake.requests.map((request) => [request.host, request.route, request.token, request.status]),
    [
      ['graph', 'shares', token, 200],
      ['graph', 'content', token, 302],
      ['download', 'download', '', 200],
    ],
  );
  t.same(calls().slice(0, 2), [
    ['shares', `/v1.0/shares/${shareKey(link)}/driveItem`, 200],
    ['content', content, 302],
  ]);
  t.equal(fake.requests[0]!.headers.prefer, 'redeemSharingLink');
  // The pre-authenticated download never sees the connection's token.
  t.equal(fake.requests[2]!.headers.authorization, undefined);
  t.match(fake.requests[2]!.url, /^\/_layouts\/15\/download\.aspx\?UniqueId=[0-9A-F-]{36}&tempauth=[\w-]+$/);
});

t.test('a shared file the parsers cannot read is refused', async (t) => {
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook/Budget.xlsx')));
  const error = await failure(onedriveConnector.list(link, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'Budget.xlsx is not a file Switchboard reads: a PDF, DOCX, PPTX, TXT, MD or CSV.');
});

const folderDocuments = (): ConnectorDocument[] =>
  [
    '/Handbook/Intro.pdf',
    '/Handbook/Policies.md',
    '/Handbook/Slides.pptx',
    '/Handbook/Guides/Onboarding.txt',
    `/Handbook/Guides/${RESUME}`,
    '/Handbook/Guides/Deep/FAQ.csv',
  ].map((path) => document(fake.item(personal, path), personal));

t.test('a shared folder is walked folder by folder, page by page', async (t) => {
  const handbook = fake.item(personal, '/Handbook');
  const guides = fake.item(personal, '/Handbook/Guides');
  const deep = fake.item(personal, '/Handbook/Guides/Deep');
  const link = onedriveConnector.parseReference(fake.share(handbook));
  t.match(link, /^https:\/\/1drv\.ms\/f\/c\/[0-9a-f]{16}\/E[\w-]+\?e=[\w-]+$/);
  const read = context();
  const listing = await onedriveConnector.list(link, read);
  // Budget.xlsx is of another type, Old.pdf is in the recycle bin.
  t.same(listing, { title: 'Handbook', single: false, documents: folderDocuments() });
  t.equal(listing.documents[0]!.url, `https://onedrive.live.com/redir?resid=${personal.id}!103`);
  const children = (folder: FakeGraphItem) => `/v1.0/drives/${personal.id}/items/${folder.id}/children`;
  // Five live entries in Handbook, in pages of three; the second page from the absolute nextLink.
  t.same(calls(), [
    ['shares', `/v1.0/shares/${shareKey(link)}/driveItem`, 200],
    ['children', children(handbook), 200],
    ['children', `${children(handbook)}?$skiptoken=Mw`, 200],
    ['children', children(guides), 200],
    ['children', children(deep), 200],
  ]);

  fake.requests.length = 0;
  const fetched = await onedriveConnector.fetch(link, listing.documents[4]!, read);
  t.same(fetched, { kind: 'file', filename: RESUME, bytes: Buffer.from('# Résumé\n\nKeep it short.\n') });
  t.same(
    fake.requests.map((request) => [request.route, request.status]),
    [
      ['content', 302],
      ['download', 200],
    ],
  );
});

t.test('the listing stops at the document limit', async (t) => {
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook')));
  const listing = await onedriveConnector.list(link, context({ maxDocuments: 2 }));
  t.same(listing.documents, folderDocuments().slice(0, 2));
  t.same(
    calls().map(([route]) => route),
    ['shares', 'children'],
  );
});

t.test('a next-page link to another host is not followed with the token', async (t) => {
  const handbook = fake.item(personal, '/Handbook');
  fake.answerNext('children', {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ value: [], '@odata.nextLink': 'https://collector.example/v1.0/children?$skiptoken=Mw' }),
  });
  const link = onedriveConnector.parseReference(fake.share(handbook));
  const error = await failure(onedriveConnector.list(link, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'OneDrive sent a next-page link to another host.');
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  fake.answerNext('children', {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: JSON.stringify({
      error: { code: 'activityLimitReached', message: 'The request has been throttled', innerError: {} },
    }),
  });
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook/Guides/Deep')));
  const waits: number[] = [];
  const listing = await onedriveConnector.list(link, context({ waits }));
  t.same(waits, [1000]);
  t.same(
    listing.documents.map((listed) => listed.title),
    ['FAQ.csv'],
  );
  t.same(
    calls().map(([route, , status]) => [route, status]),
    [
      ['shares', 200],
      ['children', 429],
      ['children', 200],
    ],
  );
});

t.test('Graph still throttling after the retries is a readable error', async (t) => {
  for (let i = 0; i < 4; i += 1) {
    fake.answerNext('shares', {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
      body: JSON.stringify({ error: { code: 'TooManyRequests', message: 'Please retry after', innerError: {} } }),
    });
  }
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook')));
  const error = await failure(onedriveConnector.list(link, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'OneDrive is limiting requests; try again later.');
});

t.test('an expired access token is refreshed once, then the call succeeds', async (t) => {
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook/Intro.pdf')));
  const expired = grant();
  fake.oauth.expireAccessTokens();
  const fresh = grant();
  const read = context({ tokens: [expired, fresh] });
  const listing = await onedriveConnector.list(link, read);
  t.equal(read.auth.refreshes, 1);
  t.same(
    listing.documents.map((listed) => listed.title),
    ['Intro.pdf'],
  );
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['shares', expired, 401],
      ['shares', fresh, 200],
    ],
  );
  // The body Graph answers a stale token with.
  const body = JSON.parse(await rawGraph(expired)) as { error: Record<string, unknown> };
  t.same(Object.keys(body), ['error']);
  t.same(
    [body.error.code, body.error.message, Object.keys(body.error.innerError as object)],
    [
      'InvalidAuthenticationToken',
      'Access token has expired or is not yet valid.',
      ['date', 'request-id', 'client-request-id'],
    ],
  );

  // A download refreshes the same way.
  fake.oauth.expireAccessTokens();
  const later = grant();
  const download = context({ tokens: [fresh, later] });
  const fetched = await onedriveConnector.fetch(link, listing.documents[0]!, download);
  t.same(fetched, { kind: 'file', filename: 'Intro.pdf', bytes: Buffer.from('%PDF-1.7 intro') });
  t.equal(download.auth.refreshes, 1);
});

/** A Graph call made by hand. */
async function rawGraph(token: string): Promise<string> {
  const response = await fetch(`${fake.graphUrl}/v1.0/drives/${personal.id}/root/children`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return response.text();
}

t.test('a revoked grant asks the owner to reconnect', async (t) => {
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook')));
  const first = grant();
  const second = grant();
  fake.oauth.revokeGrants();
  const read = context({ tokens: [first, second] });
  const error = await failure(onedriveConnector.list(link, read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect OneDrive.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['shares', first, 401],
      ['shares', second, 401],
    ],
  );

  // A refresh the connection itself refuses (the refresh token was revoked) says the same.
  const refused = await failure(onedriveConnector.list(link, context({ tokens: [first] })));
  t.ok(refused instanceof ReconnectError);
  t.equal(refused.message, 'Reconnect OneDrive.');
});

t.test('a document over the size cap: its size is listed, and a download is refused', async (t) => {
  const big = fake.addFile(personal, '/Large/Big.txt', 'x'.repeat(10_000));
  fake.addFile(personal, '/Large/Streamed.txt', 'y'.repeat(10_000), { chunked: true });
  const read = context({ maxDocumentBytes: 4096 });
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Large')));
  const listing = await onedriveConnector.list(link, read);
  t.same(
    listing.documents.map((listed) => [listed.title, listed.size]),
    [
      ['Big.txt', 10_000],
      ['Streamed.txt', 10_000],
    ],
  );
  const host = new URL(fake.downloadUrl).host;
  const declared = await failure(onedriveConnector.fetch(link, listing.documents[0]!, read));
  t.ok(declared instanceof ConnectorError);
  t.equal(declared.message, `${host} sent more than 4 KB; the limit is 4 KB.`);

  // Sent without a length, the download is cut when it passes the cap.
  const unknown = { ...listing.documents[1]!, size: null };
  const cut = await failure(onedriveConnector.fetch(link, unknown, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${host} sent more than 4 KB; the limit is 4 KB.`);
  t.equal(big.bytes.length, 10_000);
});

t.test('deleted items: not listed, gone when fetched, and a link to one names no document', async (t) => {
  const link = onedriveConnector.parseReference(fake.share(fake.item(personal, '/Handbook')));
  const read = context();
  const listing = await onedriveConnector.list(link, read);
  t.notOk(listing.documents.some((listed) => listed.title === 'Old.pdf'));

  fake.delete(fake.item(personal, '/Handbook/Policies.md'));
  const gone = await failure(onedriveConnector.fetch(link, listing.documents[1]!, read));
  t.ok(gone instanceof DocumentGoneError);
  t.equal(gone.message, 'OneDrive no longer has Policies.md.');

  fake.delete(fake.item(personal, '/Handbook'));
  const missing = await failure(onedriveConnector.list(link, read));
  t.ok(missing instanceof ConnectorError);
  t.notOk(missing instanceof DocumentGoneError);
  t.equal(missing.message, 'OneDrive has nothing at this link, or the connection may not open it.');
});

t.test('a changed file has a new change token', async (t) => {
  const item = fake.item(personal, '/Handbook/Intro.pdf');
  const link = onedriveConnector.parseReference(fake.share(item));
  const before = (await onedriveConnector.list(link, context())).documents[0]!.changeToken;
  fake.update(item, '%PDF-1.7 intro, second edition');
  const after = (await onedriveConnector.list(link, context())).documents[0]!.changeToken;
  t.same([before, after], [`"c:{${item.guid}},1"`, `"c:{${item.guid}},2"`]);
});

t.test('the fake serves the identity platform token endpoint for any tenant', async (t) => {
  const { refresh_token } = fake.oauth.issueGrant();
  const response = await fetch(`${fake.graphUrl}/contoso.onmicrosoft.com/oauth2/v2.0/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token,
      client_id: fake.oauth.clientId,
      client_secret: fake.oauth.clientSecret,
    }),
  });
  t.equal(response.status, 200);
  const { access_token } = (await response.json()) as { access_token: string };
  t.ok(fake.oauth.isValid(access_token));
  t.same(fake.oauth.tokenRequests.at(-1)?.grant_type, 'refresh_token');
});

t.test('no error message holds a token or a download key', async (t) => {
  t.ok(messages.length >= 9);
  const secrets = issued.filter(Boolean);
  t.ok(
    secrets.some((secret) => !secret.startsWith('at-')),
    'download keys were seen',
  );
  t.same(
    messages.filter((message) => secrets.some((secret) => message.includes(secret))),
    [],
  );
});
