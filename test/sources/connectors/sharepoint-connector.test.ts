import t from 'tap';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { shareKey } from '../../../src/sources/connectors/graph-drive.ts';
import { sharepointConnector } from '../../../src/sources/connectors/sharepoint-connector.ts';
import {
  FakeMicrosoftGraph,
  type FakeGraphDrive,
  type FakeGraphPage,
  type FakeGraphSite,
} from '../../fakes/fake-microsoft-graph.ts';
import { assertRefused, connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeMicrosoftGraph().start();
t.teardown(() => fake.stop());

/** Every access token and download key handed out, and every error message a test saw. */
const { issued, messages, grant, context, failure } = connectorTestBed({
  issue: () => fake.oauth.issueGrant().access_token,
  reconnect: 'Reconnect SharePoint.',
  baseUrls: { graph: fake.graphUrl },
});

t.afterEach(() => {
  for (const request of fake.requests)
    issued.push(new URL(request.url, 'http://fake').searchParams.get('tempauth') ?? '');
});

/** The requests the fake received, as `route url status`. */
function calls(): [string, string, number][] {
  return fake.requests.map((request) => [request.route, request.url, request.status]);
}

const SITE = 'https://contoso.sharepoint.com/sites/marketing';
let site: FakeGraphSite;
let library: FakeGraphDrive;
const pages: Record<string, FakeGraphPage> = {};

function fileDocument(path: string): ConnectorDocument {
  const item = fake.item(library, path);
  return {
    id: `drives/${library.id}/items/${item.id}`,
    title: item.name,
    size: item.bytes.length,
    changeToken: FakeMicrosoftGraph.cTag(item),
    url: fake.webUrl(item),
  };
}

function pageDocument(name: string): ConnectorDocument {
  const page = pages[name]!;
  return {
    id: `sites/${site.id}/pages/${page.id}`,
    title: page.title,
    size: null,
    changeToken: FakeMicrosoftGraph.eTag(page),
    url: fake.pageUrl(page),
  };
}

t.beforeEach(() => {
  fake.reset();
  site = fake.addSite({ hostname: 'contoso.sharepoint.com', path: '/sites/marketing', displayName: 'Marketing' });
  library = fake.drive(site.driveId);
  fake.addFile(library, '/Brand/Guidelines.pdf', '%PDF-1.7 guidelines');
  fake.addFile(library, '/Brand/Logo.png', 'PNG');
  fake.addFile(library, '/Brand/Campaigns/Spring.docx', 'PK spring');
  fake.addFile(library, '/Notes.md', '# Notes\n\nShip it.\n');
  fake.addFile(library, '/Budget.xlsx', 'PK budget');
  fake.addFile(library, '/Archive/Old.txt', 'old news');
  fake.addFile(library, '/Handbook.docx', 'PK handbook');
  fake.addFile(library, '/Brand/Campaigns/Summer.pptx', 'PK summer');
  fake.delete(fake.item(library, '/Archive/Old.txt'));
  const add = (name: string, title: string, more: Partial<FakeGraphPage> = {}) =>
    (pages[name] = fake.addPage(site, { name, title, parts: [{ html: `<p>${title} text.</p>` }], ...more }));
  add('Home.aspx', 'Home', {
    parts: [
      { html: '<p>Welcome to <strong>Marketing</strong>.</p>' },
      { image: 'The team' },
      { html: '<h2>News</h2>' },
    ],
    side: [{ html: '<p>Contacts: ada@contoso.com</p>' }],
  });
  add('Launch-plan.aspx', 'Launch plan');
  add('Draft.aspx', 'Draft', { published: false });
  add('Events.aspx', 'Events');
  add('FAQ.aspx', 'FAQ & tips');
});

t.test('the connector reads SharePoint through a Microsoft connection', async (t) => {
  const { type, service, connectionOptional } = sharepointConnector;
  t.same(
    { type, service, connectionOptional },
    { type: 'sharepoint', service: 'microsoft', connectionOptional: false },
  );
});

t.test('sites and sharing links become their canonical form', async (t) => {
  const accepted: [string, string][] = [
    [SITE, SITE],
    ['  https://Contoso.SharePoint.com/sites/marketing/  ', SITE],
    ['http://contoso.sharepoint.com/sites/marketing?web=1#top', SITE],
    ['contoso.sharepoint.com/teams/Sales-EMEA', 'https://contoso.sharepoint.com/teams/Sales-EMEA'],
    // A page or library of the site, as the address bar shows it, names the site.
    ['https://contoso.sharepoint.com/sites/marketing/SitePages/Home.aspx', SITE],
    ['https://contoso.sharepoint.com/sites/marketing/Shared%20Documents/Forms/AllItems.aspx', SITE],
    [
      'https://contoso.sharepoint.com/:w:/s/marketing/EaBcDeFgHiJ?e=4fGh7k',
      'https://contoso.sharepoint.com/:w:/s/marketing/EaBcDeFgHiJ?e=4fGh7k',
    ],
    [
      'https://contoso.sharepoint.com/:f:/r/sites/marketing/Shared%20Documents/Brand?csf=1&web=1',
      'https://contoso.sharepoint.com/:f:/r/sites/marketing/Shared%20Documents/Brand?csf=1&web=1',
    ],
  ];
  for (const [reference, canonical] of accepted) t.equal(sharepointConnector.parseReference(reference), canonical);

  const refused = [
    'https://contoso.sharepoint.com/',
    'https://contoso.sharepoint.com/sites',
    // A subsite is not its parent site.
    'https://contoso.sharepoint.com/sites/marketing/emea',
    'https://contoso.sharepoint.com/:w:/s',
    'https://contoso-my.sharepoint.com/:w:/g/personal/ada_contoso_com/EaBcDeF',
    'https://contoso.sharepoint.com.evil.example/sites/marketing',
    'https://sharepoint.com/sites/marketing',
    'https://intranet.contoso.com/sites/marketing',
    'https://contoso.sharepoint.com:444/sites/marketing',
    'ftp://contoso.sharepoint.com/sites/marketing',
    'not a link',
    '',
  ];
  assertRefused(
    t,
    (reference) => sharepointConnector.parseReference(reference),
    refused,
    'url must be a SharePoint site or sharing link, like https://contoso.sharepoint.com/sites/marketing ' +
      'or https://contoso.sharepoint.com/:f:/s/marketing/EgAbCdEfGhIjKlMn?e=x1Y2z3.',
  );
});

const siteDocuments = (): ConnectorDocument[] => [
  ...['Events.aspx', 'FAQ.aspx', 'Home.aspx', 'Launch-plan.aspx'].map(pageDocument),
  ...['/Notes.md', '/Handbook.docx', '/Brand/Guidelines.pdf', '/Brand/Campaigns/Spring.docx'].map(fileDocument),
  fileDocument('/Brand/Campaigns/Summer.pptx'),
];

t.test('a site lists its published pages, then its library, page by page and folder by folder', async (t) => {
  const read = context();
  const listing = await sharepointConnector.list(SITE, read);
  // Draft.aspx was never published; Logo.png and Budget.xlsx are of other types; Old.txt was deleted.
  t.same(listing, { title: 'Marketing', single: false, documents: siteDocuments() });
  t.same(
    listing.documents.map((listed) => listed.url),
    [
      `${SITE}/SitePages/Events.aspx`,
      `${SITE}/SitePages/FAQ.aspx`,
      `${SITE}/SitePages/Home.aspx`,
      `${SITE}/SitePages/Launch-plan.aspx`,
      `${SITE}/Shared%20Documents/Notes.md`,
      `${SITE}/Shared%20Documents/Handbook.docx`,
      `${SITE}/Shared%20Documents/Brand/Guidelines.pdf`,
      `${SITE}/Shared%20Documents/Brand/Campaigns/Spring.docx`,
      `${SITE}/Shared%20Documents/Brand/Campaigns/Summer.pptx`,
    ],
  );
  const children = (id: string) => `/v1.0/drives/${library.id}/items/${id}/children`;
  const folder = (path: string) => children(fake.item(library, path).id);
  const pagesUrl = `/v1.0/sites/${site.id}/pages/microsoft.graph.sitePage`;
  t.same(calls(), [
    ['site', '/v1.0/sites/contoso.sharepoint.com:/sites/marketing', 200],
    ['pages', pagesUrl, 200],
    ['pages', `${pagesUrl}?$skiptoken=Mw`, 200],
    ['drive', `/v1.0/sites/${site.id}/drive`, 200],
    ['children', `/v1.0/drives/${library.id}/root/children`, 200],
    ['children', `${children(library.rootId)}?$skiptoken=Mw`, 200],
    ['children', folder('/Brand'), 200],
    ['children', folder('/Archive'), 200],
    ['children', folder('/Brand/Campaigns'), 200],
  ]);
  t.match(site.id, /^contoso\.sharepoint\.com,[0-9a-f-]{36},[0-9a-f-]{36}$/);
});

t.test('a page is fetched with its canvas layout as one HTML document', async (t) => {
  const read = context();
  const home = await sharepointConnector.fetch(SITE, pageDocument('Home.aspx'), read);
  t.same(home, {
    kind: 'html',
    html:
      '<!doctype html><html><head><meta charset="utf-8"><title>Home</title></head><body><h1>Home</h1>\n' +
      '<p>Welcome to <strong>Marketing</strong>.</p>\n<h2>News</h2>\n<p>Contacts: ada@contoso.com</p>\n</body></html>',
  });
  const faq = await sharepointConnector.fetch(SITE, pageDocument('FAQ.aspx'), read);
  t.same(faq, {
    kind: 'html',
    html:
      '<!doctype html><html><head><meta charset="utf-8"><title>FAQ &#38; tips</title></head>' +
      '<body><h1>FAQ &#38; tips</h1>\n<p>FAQ & tips text.</p>\n</body></html>',
  });
  t.same(calls(), [
    [
      'page',
      `/v1.0/sites/${site.id}/pages/${pages['Home.aspx']!.id}/microsoft.graph.sitePage?$expand=canvasLayout`,
      200,
    ],
    [
      'page',
      `/v1.0/sites/${site.id}/pages/${pages['FAQ.aspx']!.id}/microsoft.graph.sitePage?$expand=canvasLayout`,
      200,
    ],
  ]);
});

t.test('a library file downloads from another host without the token', async (t) => {
  const read = context();
  const spring = fileDocument('/Brand/Campaigns/Spring.docx');
  const fetched = await sharepointConnector.fetch(SITE, spring, read);
  t.same(fetched, { kind: 'file', filename: 'Spring.docx', bytes: Buffer.from('PK spring') });
  const token = await read.auth.accessToken();
  const item = fake.item(library, '/Brand/Campaigns/Spring.docx');
  t.same(
    fake.requests.map((request) => [request.host, request.route, request.token, request.status]),
    [
      ['graph', 'content', token, 302],
      ['download', 'download', '', 200],
    ],
  );
  t.equal(fake.requests[0]!.url, `/v1.0/drives/${library.id}/items/${item.id}/content`);
  t.equal(fake.requests[1]!.headers.authorization, undefined);
});

t.test('a classic site without Site Pages lists its library only', async (t) => {
  const classic = fake.addSite({
    hostname: 'contoso.sharepoint.com',
    path: '/teams/legal',
    displayName: 'Legal',
    classic: true,
  });
  fake.addFile(fake.drive(classic.driveId), '/Contracts/NDA.pdf', '%PDF-1.7 nda');
  const listing = await sharepointConnector.list('https://contoso.sharepoint.com/teams/legal', context());
  t.same([listing.title, listing.documents.map((listed) => listed.title)], ['Legal', ['NDA.pdf']]);
  t.same(
    calls().map(([route, , status]) => [route, status]),
    [
      ['site', 200],
      ['pages', 404],
      ['drive', 200],
      ['children', 200],
      ['children', 200],
    ],
  );
});

t.test('sharing links to a folder and to a file', async (t) => {
  const folderLink = sharepointConnector.parseReference(fake.share(fake.item(library, '/Brand')));
  t.match(folderLink, /^https:\/\/contoso\.sharepoint\.com\/:f:\/s\/marketing\/E[\w-]+\?e=[\w-]+$/);
  const folder = await sharepointConnector.list(folderLink, context());
  t.same(folder, {
    title: 'Brand',
    single: false,
    documents: ['/Brand/Guidelines.pdf', '/Brand/Campaigns/Spring.docx', '/Brand/Campaigns/Summer.pptx'].map(
      fileDocument,
    ),
  });
  t.same(calls()[0], ['shares', `/v1.0/shares/${shareKey(folderLink)}/driveItem`, 200]);

  const fileLink = sharepointConnector.parseReference(fake.share(fake.item(library, '/Handbook.docx')));
  t.match(fileLink, /^https:\/\/contoso\.sharepoint\.com\/:w:\/s\/marketing\//);
  const file = await sharepointConnector.list(fileLink, context());
  t.same(file, { title: 'Handbook.docx', single: true, documents: [fileDocument('/Handbook.docx')] });
});

t.test('a site that does not exist is a readable error', async (t) => {
  const error = await failure(sharepointConnector.list('https://contoso.sharepoint.com/sites/nowhere', context()));
  t.ok(error instanceof ConnectorError);
  t.equal(
    error.message,
    'SharePoint has no site at https://contoso.sharepoint.com/sites/nowhere, or the connection may not open it.',
  );
});

t.test('the listing stops at the document limit', async (t) => {
  const listing = await sharepointConnector.list(SITE, context({ maxDocuments: 2 }));
  t.same(listing.documents, siteDocuments().slice(0, 2));
  t.same(
    calls().map(([route]) => route),
    ['site', 'pages'],
  );
  const more = await sharepointConnector.list(SITE, context({ maxDocuments: 6 }));
  t.same(more.documents, siteDocuments().slice(0, 6));
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  fake.answerNext('pages', {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: JSON.stringify({
      error: { code: 'TooManyRequests', message: 'Please retry after', innerError: {} },
    }),
  });
  const waits: number[] = [];
  const listing = await sharepointConnector.list(SITE, context({ waits }));
  t.same(waits, [1000]);
  t.same(listing.documents, siteDocuments());
  t.same(
    calls()
      .slice(0, 3)
      .map(([route, , status]) => [route, status]),
    [
      ['site', 200],
      ['pages', 429],
      ['pages', 200],
    ],
  );
});

t.test('an expired access token is refreshed once, then the call succeeds', async (t) => {
  const expired = grant();
  fake.oauth.expireAccessTokens();
  const fresh = grant();
  const read = context({ tokens: [expired, fresh] });
  const page = await sharepointConnector.fetch(SITE, pageDocument('Events.aspx'), read);
  t.equal(read.auth.refreshes, 1);
  t.same(page, {
    kind: 'html',
    html:
      '<!doctype html><html><head><meta charset="utf-8"><title>Events</title></head>' +
      '<body><h1>Events</h1>\n<p>Events text.</p>\n</body></html>',
  });
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['page', expired, 401],
      ['page', fresh, 200],
    ],
  );
});

t.test('a revoked grant asks the owner to reconnect', async (t) => {
  const first = grant();
  const second = grant();
  fake.oauth.revokeGrants();
  const read = context({ tokens: [first, second] });
  const error = await failure(sharepointConnector.list(SITE, read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect SharePoint.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['site', first, 401],
      ['site', second, 401],
    ],
  );

  const refused = await failure(sharepointConnector.list(SITE, context({ tokens: [first] })));
  t.ok(refused instanceof ReconnectError);
  t.equal(refused.message, 'Reconnect SharePoint.');
});

t.test('a document over the size cap: its size is listed, and a download is refused', async (t) => {
  fake.addFile(library, '/Large/Streamed.txt', 'y'.repeat(10_000), { chunked: true });
  const read = context({ maxDocumentBytes: 4096 });
  const link = sharepointConnector.parseReference(fake.share(fake.item(library, '/Large')));
  const listing = await sharepointConnector.list(link, read);
  t.same(
    listing.documents.map((listed) => [listed.title, listed.size]),
    [['Streamed.txt', 10_000]],
  );
  const unknown = { ...listing.documents[0]!, size: null };
  const cut = await failure(sharepointConnector.fetch(link, unknown, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${new URL(fake.downloadUrl).host} sent more than 4 KB; the limit is 4 KB.`);
});

t.test('deleted pages and files are not listed, and are gone when fetched', async (t) => {
  const read = context();
  const listing = await sharepointConnector.list(SITE, read);
  pages['Home.aspx']!.deleted = true;
  fake.delete(fake.item(library, '/Notes.md'));
  const page = await failure(sharepointConnector.fetch(SITE, listing.documents[2]!, read));
  t.ok(page instanceof DocumentGoneError);
  t.equal(page.message, 'SharePoint no longer has Home.');
  const file = await failure(sharepointConnector.fetch(SITE, listing.documents[4]!, read));
  t.ok(file instanceof DocumentGoneError);
  t.equal(file.message, 'SharePoint no longer has Notes.md.');

  const again = await sharepointConnector.list(SITE, read);
  t.same(
    again.documents.map((listed) => listed.title),
    ['Events', 'FAQ & tips', 'Launch plan', 'Handbook.docx', 'Guidelines.pdf', 'Spring.docx', 'Summer.pptx'],
  );
});

t.test('no error message holds a token or a download key', async (t) => {
  t.ok(messages.length >= 6);
  const secrets = issued.filter(Boolean);
  t.same(
    messages.filter((message) => secrets.some((secret) => message.includes(secret))),
    [],
  );
});
