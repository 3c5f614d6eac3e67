import t from 'tap';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { dropboxConnector } from '../../../src/sources/connectors/dropbox-connector.ts';
import { FakeDropbox } from '../../fakes/fake-dropbox.ts';
import { assertRefused, connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeDropbox().start();
t.teardown(() => fake.stop());

/** Every access token handed out, and every error message a test saw: none may hold a token. */
const { issued, messages, grant, context, failure } = connectorTestBed({
  issue: () => fake.oauth.issueGrant().access_token,
  reconnect: 'Reconnect Dropbox.',
  baseUrls: { dropboxApi: fake.apiUrl, dropboxContent: fake.contentUrl },
});

/** The calls the fake received, as `host route arg`. */
function calls(): [string, string, unknown][] {
  return fake.requests.map((request) => [request.host, request.route, request.arg]);
}

function hash(path: string): string {
  return FakeDropbox.contentHash(fake.entry(path).bytes);
}

const HANDBOOK = '/Team/Handbook';
const RESUME = 'Résumé tips.md';

t.beforeEach(() => {
  fake.reset();
  fake.addFile(`${HANDBOOK}/Intro.pdf`, '%PDF-1.7 intro');
  fake.addFile(`${HANDBOOK}/Policies.md`, '# Policies\n\nBe kind.\n');
  fake.addFile(`${HANDBOOK}/Budget.xlsx`, 'PK spreadsheet');
  fake.addFile(`${HANDBOOK}/Plan.txt`, 'a cloud document', { downloadable: false });
  fake.addFile(`${HANDBOOK}/Guides/Onboarding.txt`, 'Day one: get a badge.');
  fake.addFile(`${HANDBOOK}/Guides/${RESUME}`, '# Résumé\n\nKeep it short.\n');
  fake.addFile(`${HANDBOOK}/Guides/Deep/FAQ.csv`, 'question,answer\nwhy,because\n');
  fake.addFile(`${HANDBOOK}/Old.pdf`, '%PDF-1.7 old');
  fake.addFile(`${HANDBOOK}/Slides.pptx`, 'PK slides');
  fake.delete(`${HANDBOOK}/Old.pdf`);
});

t.test('the connector reads Dropbox through a connection', async (t) => {
  const { type, service, connectionOptional } = dropboxConnector;
  t.same({ type, service, connectionOptional }, { type: 'dropbox', service: 'dropbox', connectionOptional: false });
});

t.test('shared links and paths become their canonical form', async (t) => {
  const file = 'https://www.dropbox.com/scl/fi/k2x9b7q3m1/Handbook.pdf?rlkey=a8f3k2lq9';
  const folder = 'https://www.dropbox.com/scl/fo/4k2x9b7q3m1/AAB8f3k2?rlkey=a8f3k2lq9';
  const accepted: [string, string][] = [
    [`${file}&dl=0`, file],
    [`${file}&st=x1y2z3&dl=1`, file],
    ['https://dropbox.com/scl/fi/k2x9b7q3m1/Handbook.pdf?dl=0&rlkey=a8f3k2lq9', file],
    ['http://www.dropbox.com/scl/fi/k2x9b7q3m1/Handbook.pdf?rlkey=a8f3k2lq9&raw=1', file],
    ['www.dropbox.com/scl/fi/k2x9b7q3m1/Handbook.pdf?rlkey=a8f3k2lq9', file],
    [`  ${folder}&e=1&dl=0  `, folder],
    [
      'https://www.dropbox.com/scl/fi/k2x9b7q3m1/Team%20Handbook.pdf?rlkey=a8f3k2lq9&dl=0',
      'https://www.dropbox.com/scl/fi/k2x9b7q3m1/Team%20Handbook.pdf?rlkey=a8f3k2lq9',
    ],
    [
      'https://www.dropbox.com/s/2sn712vy1ovegw8/Prime_Numbers.txt?dl=0',
      'https://www.dropbox.com/s/2sn712vy1ovegw8/Prime_Numbers.txt',
    ],
    [
      'https://www.dropbox.com/sh/s6fvw6ol7rmqo1x/AAAgWRSbjmYDvPpDB30Sykjfa?dl=0',
      'https://www.dropbox.com/sh/s6fvw6ol7rmqo1x/AAAgWRSbjmYDvPpDB30Sykjfa',
    ],
    ['/Team/Handbook', '/Team/Handbook'],
    [' /Team/Handbook/ ', '/Team/Handbook'],
    ['/Team/Handbook/Intro.pdf', '/Team/Handbook/Intro.pdf'],
    ['/Équipe/Manuel', '/Équipe/Manuel'],
    ['/', '/'],
  ];
  for (const [reference, canonical] of accepted) t.equal(dropboxConnector.parseReference(reference), canonical);

  const refused = [
    'https://www.dropbox.com/scl/fi/k2x9b7q3m1/Handbook.pdf?dl=0',
    'https://www.dropbox.com/scl/fi/k2x9b7q3m1?rlkey=a8f3k2lq9',
    'https://www.dropbox.com/scl/fo/4k2x9b7q3m1/AAB8f3k2/extra?rlkey=a8f3k2lq9',
    'https://www.dropbox.com/s/2sn712vy1ovegw8',
    'https://www.dropbox.com/home/Team/Handbook',
    'https://dropbox.com.evil.example/s/2sn712vy1ovegw8/Prime_Numbers.txt',
    'https://dl.dropboxusercontent.com/s/2sn712vy1ovegw8/Prime_Numbers.txt',
    'ftp://www.dropbox.com/s/2sn712vy1ovegw8/Prime_Numbers.txt',
    'Team/Handbook',
    '/Team//Handbook',
    '/Team/../Secrets',
    '/Team/\u0000Handbook',
    'not a link',
    '',
  ];
  assertRefused(
    t,
    (reference) => dropboxConnector.parseReference(reference),
    refused,
    'url must be a Dropbox shared link or a path in the connected Dropbox, like ' +
      'https://www.dropbox.com/scl/fo/4k2x9b7q3m1/AAB8f3k2?rlkey=a8f3k2lq9&dl=0 or /Team/Handbook.',
  );
});

t.test('a shared file is one document, downloaded through its link', async (t) => {
  const shared = fake.share(`${HANDBOOK}/Intro.pdf`);
  const link = dropboxConnector.parseReference(shared);
  const entry = fake.entry(`${HANDBOOK}/Intro.pdf`);
  const read = context();
  const listing = await dropboxConnector.list(link, read);
  t.same(listing, {
    title: 'Intro.pdf',
    single: true,
    documents: [{ id: entry.id, title: 'Intro.pdf', size: 14, changeToken: entry.rev, url: link }],
  });
  const fetched = await dropboxConnector.fetch(link, listing.documents[0]!, read);
  t.same(fetched, { kind: 'file', filename: 'Intro.pdf', bytes: Buffer.from('%PDF-1.7 intro') });
  t.same(calls(), [
    ['api', 'sharing/get_shared_link_metadata', { url: link }],
    ['content', 'sharing/get_shared_link_file', { url: link }],
  ]);
  const token = await read.auth.accessToken();
  t.same(
    fake.requests.map((request) => [request.token, request.headers['content-type'], request.status]),
    [
      [token, 'application/json', 200],
      [token, undefined, 200],
    ],
  );
});

t.test('a shared file the parsers cannot read is refused', async (t) => {
  const link = dropboxConnector.parseReference(fake.share(`${HANDBOOK}/Budget.xlsx`));
  const error = await failure(dropboxConnector.list(link, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(
    error.message,
    'Budget.xlsx is not a file Switchboard reads: a downloadable PDF, DOCX, PPTX, TXT, MD or CSV.',
  );
});

const linkDocuments = (link: string): ConnectorDocument[] =>
  [
    ['/Intro.pdf', 'Intro.pdf'],
    ['/Policies.md', 'Policies.md'],
    ['/Slides.pptx', 'Slides.pptx'],
    ['/Guides/Onboarding.txt', 'Guides/Onboarding.txt'],
    [`/Guides/${RESUME}`, `Guides/${RESUME}`],
    ['/Guides/Deep/FAQ.csv', 'Guides/Deep/FAQ.csv'],
  ].map(([id, path]) => {
    const entry = fake.entry(`${HANDBOOK}/${path}`);
    const title = path!.slice(path!.lastIndexOf('/') + 1);
    return { id: id!, title, size: entry.bytes.length, changeToken: hash(entry.path), url: link };
  });

t.test('a shared folder is walked folder by folder, page by page', async (t) => {
  const link = dropboxConnector.parseReference(fake.share(HANDBOOK));
  const read = context();
  const listing = await dropboxConnector.list(link, read);
  // Budget.xlsx is of another type, Plan.txt cannot be downloaded, Old.pdf was deleted.
  t.same(listing, { title: 'Handbook', single: false, documents: linkDocuments(link) });
  const shared = { shared_link: { url: link } };
  t.same(calls(), [
    ['api', 'sharing/get_shared_link_metadata', { url: link }],
    ['api', 'files/list_folder', { path: '', ...shared }],
    ['api', 'files/list_folder/continue', { cursor: 'AAH1cUrS0r' }],
    ['api', 'files/list_folder', { path: '/Guides', ...shared }],
    ['api', 'files/list_folder', { path: '/Guides/Deep', ...shared }],
  ]);

  fake.requests.length = 0;
  const resume = listing.documents[4]!;
  const fetched = await dropboxConnector.fetch(link, resume, read);
  t.same(fetched, { kind: 'file', filename: RESUME, bytes: Buffer.from('# Résumé\n\nKeep it short.\n') });
  t.same(calls(), [['content', 'sharing/get_shared_link_file', { url: link, path: `/Guides/${RESUME}` }]]);
  // The argument header is HTTP-header-safe JSON: no byte past ASCII.
  t.equal(
    fake.requests[0]!.headers['dropbox-api-arg'],
    `{"url":"${link}","path":"/Guides/R\\u00e9sum\\u00e9 tips.md"}`,
  );
});

t.test('a folder path is listed recursively, page by page, and files download by id', async (t) => {
  const read = context();
  const listing = await dropboxConnector.list(`${HANDBOOK}/`, read);
  const home = (folder: string, name: string) =>
    `https://www.dropbox.com/home${folder}?preview=${encodeURIComponent(name)}`;
  const expected = [
    [HANDBOOK, 'Intro.pdf'],
    [HANDBOOK, 'Policies.md'],
    [`${HANDBOOK}/Guides`, 'Onboarding.txt'],
    [`${HANDBOOK}/Guides`, RESUME],
    [`${HANDBOOK}/Guides/Deep`, 'FAQ.csv'],
    [HANDBOOK, 'Slides.pptx'],
  ].map(([folder, name]) => {
    const entry = fake.entry(`${folder}/${name}`);
    return {
      id: entry.id,
      title: name!,
      size: entry.bytes.length,
      changeToken: hash(entry.path),
      url: home(encodeURI(folder!), name!),
    };
  });
  t.same(listing, { title: 'Handbook', single: false, documents: expected });
  t.equal(
    listing.documents[3]!.url,
    'https://www.dropbox.com/home/Team/Handbook/Guides?preview=R%C3%A9sum%C3%A9%20tips.md',
  );
  // Eleven entries (the folder itself first) in pages of three.
  t.same(calls(), [
    ['api', 'files/get_metadata', { path: HANDBOOK }],
    ['api', 'files/list_folder', { path: HANDBOOK, recursive: true }],
    ['api', 'files/list_folder/continue', { cursor: 'AAH1cUrS0r' }],
    ['api', 'files/list_folder/continue', { cursor: 'AAH2cUrS0r' }],
    ['api', 'files/list_folder/continue', { cursor: 'AAH3cUrS0r' }],
  ]);

  fake.requests.length = 0;
  const fetched = await dropboxConnector.fetch(HANDBOOK, listing.documents[4]!, read);
  t.same(fetched, { kind: 'file', filename: 'FAQ.csv', bytes: Buffer.from('question,answer\nwhy,because\n') });
  t.same(calls(), [['content', 'files/download', { path: fake.entry(`${HANDBOOK}/Guides/Deep/FAQ.csv`).id }]]);
});

t.test('a file path is one document', async (t) => {
  const entry = fake.entry(`${HANDBOOK}/Policies.md`);
  const listing = await dropboxConnector.list(`${HANDBOOK}/Policies.md`, context());
  t.same(listing, {
    title: 'Policies.md',
    single: true,
    documents: [
      {
        id: entry.id,
        title: 'Policies.md',
        size: 21,
        changeToken: hash(entry.path),
        url: 'https://www.dropbox.com/home/Team/Handbook?preview=Policies.md',
      },
    ],
  });
});

t.test('the root lists the whole Dropbox', async (t) => {
  fake.addFile('/Welcome.md', '# Hi\n');
  const listing = await dropboxConnector.list('/', context({ maxDocuments: 1 }));
  t.same(listing.title, 'Dropbox');
  t.same(listing.documents, [
    {
      id: fake.entry(`${HANDBOOK}/Intro.pdf`).id,
      title: 'Intro.pdf',
      size: 14,
      changeToken: hash(`${HANDBOOK}/Intro.pdf`),
      url: 'https://www.dropbox.com/home/Team/Handbook?preview=Intro.pdf',
    },
  ]);
  t.same(calls(), [['api', 'files/list_folder', { path: '', recursive: true }]]);
});

t.test('the listing stops at the document limit', async (t) => {
  const link = dropboxConnector.parseReference(fake.share(HANDBOOK));
  const listing = await dropboxConnector.list(link, context({ maxDocuments: 2 }));
  t.same(listing.documents, linkDocuments(link).slice(0, 2));
  t.same(
    calls().map(([, route]) => route),
    ['sharing/get_shared_link_metadata', 'files/list_folder'],
  );
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  fake.answerNext('files/list_folder', {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '1' },
    body: JSON.stringify({
      error_summary: 'too_many_requests/..',
      error: { reason: { '.tag': 'too_many_requests' }, retry_after: 1 },
    }),
  });
  const waits: number[] = [];
  const listing = await dropboxConnector.list(`${HANDBOOK}/Guides/Deep`, context({ waits }));
  t.same(waits, [1000]);
  t.same(
    listing.documents.map((document) => document.title),
    ['FAQ.csv'],
  );
  t.same(
    fake.requests.map((request) => [request.route, request.status]),
    [
      ['files/get_metadata', 200],
      ['files/list_folder', 429],
      ['files/list_folder', 200],
    ],
  );
});

t.test('Dropbox still limiting after the retries is a readable error', async (t) => {
  for (let i = 0; i < 4; i += 1) {
    fake.answerNext('files/get_metadata', {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
      body: JSON.stringify({
        error_summary: 'too_many_requests/..',
        error: { reason: { '.tag': 'too_many_requests' } },
      }),
    });
  }
  const error = await failure(dropboxConnector.list(HANDBOOK, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'Dropbox is limiting requests; try again later.');
});

t.test('an expired access token is refreshed once, then the call succeeds', async (t) => {
  const expired = grant();
  fake.oauth.expireAccessTokens();
  const fresh = grant();
  const read = context({ tokens: [expired, fresh] });
  const listing = await dropboxConnector.list(`${HANDBOOK}/Intro.pdf`, read);
  t.equal(read.auth.refreshes, 1);
  t.equal(listing.documents.length, 1);
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['files/get_metadata', expired, 401],
      ['files/get_metadata', fresh, 200],
    ],
  );

  // A download refreshes the same way.
  fake.oauth.expireAccessTokens();
  const later = grant();
  const download = context({ tokens: [fresh, later] });
  const fetched = await dropboxConnector.fetch(`${HANDBOOK}/Intro.pdf`, listing.documents[0]!, download);
  t.same(fetched, { kind: 'file', filename: 'Intro.pdf', bytes: Buffer.from('%PDF-1.7 intro') });
  t.equal(download.auth.refreshes, 1);
});

t.test('a revoked grant asks the owner to reconnect', async (t) => {
  const first = grant();
  const second = grant();
  fake.oauth.revokeGrants();
  const read = context({ tokens: [first, second] });
  const error = await failure(dropboxConnector.list(HANDBOOK, read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect Dropbox.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.token, request.status, JSON.stringify(request.arg)]),
    [
      [first, 401, JSON.stringify({ path: HANDBOOK })],
      [second, 401, JSON.stringify({ path: HANDBOOK })],
    ],
  );

  // A refresh the connection itself refuses (the refresh token was revoked) says the same.
  const refused = await failure(dropboxConnector.list(HANDBOOK, context({ tokens: [first] })));
  t.ok(refused instanceof ReconnectError);
  t.equal(refused.message, 'Reconnect Dropbox.');
});

t.test('a missing permission names the scope to grant, without a refresh', async (t) => {
  fake.scopes.delete('sharing.read');
  const link = dropboxConnector.parseReference(fake.share(HANDBOOK));
  const read = context();
  const error = await failure(dropboxConnector.list(link, read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect Dropbox to grant the sharing.read permission.');
  t.equal(read.auth.refreshes, 0);
});

t.test('a document over the size cap: its size is listed, and a download is refused', async (t) => {
  fake.addFile(`${HANDBOOK}/Big.txt`, 'x'.repeat(10_000));
  fake.addFile(`${HANDBOOK}/Streamed.txt`, 'y'.repeat(10_000), { chunked: true });
  const read = context({ maxDocumentBytes: 4096 });
  const big = await dropboxConnector.list(`${HANDBOOK}/Big.txt`, read);
  t.equal(big.documents[0]!.size, 10_000);
  const host = new URL(fake.contentUrl).host;
  const declared = await failure(dropboxConnector.fetch(`${HANDBOOK}/Big.txt`, big.documents[0]!, read));
  t.ok(declared instanceof ConnectorError);
  t.equal(declared.message, `${host} sent more than 4 KB; the limit is 4 KB.`);

  // Sent without a length, the download is cut when it passes the cap.
  const streamed = await dropboxConnector.list(`${HANDBOOK}/Streamed.txt`, read);
  const unknown = { ...streamed.documents[0]!, size: null };
  const cut = await failure(dropboxConnector.fetch(`${HANDBOOK}/Streamed.txt`, unknown, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${host} sent more than 4 KB; the limit is 4 KB.`);
  t.same(fake.requests.at(-1)!.answered['transfer-encoding'], 'chunked');
  t.same(fake.requests.at(-1)!.answered['content-length'], undefined);
});

t.test('deleted documents are not listed, and one deleted after listing is gone', async (t) => {
  const read = context();
  const listing = await dropboxConnector.list(HANDBOOK, read);
  t.notOk(listing.documents.some((document) => document.title === 'Old.pdf'));

  fake.delete(`${HANDBOOK}/Policies.md`);
  const policies = listing.documents.find((document) => document.title === 'Policies.md')!;
  const gone = await failure(dropboxConnector.fetch(HANDBOOK, policies, read));
  t.ok(gone instanceof DocumentGoneError);
  t.equal(gone.message, 'Dropbox no longer has Policies.md.');

  const link = dropboxConnector.parseReference(fake.share(`${HANDBOOK}/Guides`));
  const shared = await dropboxConnector.list(link, read);
  fake.delete(`${HANDBOOK}/Guides/Onboarding.txt`);
  const onboarding = shared.documents.find((document) => document.title === 'Onboarding.txt')!;
  const unshared = await failure(dropboxConnector.fetch(link, onboarding, read));
  t.ok(unshared instanceof DocumentGoneError);
  t.equal(unshared.message, 'Dropbox no longer has Onboarding.txt.');
});

t.test('a reference that does not resolve says what is missing', async (t) => {
  const missing = await failure(dropboxConnector.list('/Team/Nowhere', context()));
  t.ok(missing instanceof ConnectorError);
  t.equal(missing.message, 'Dropbox has no file or folder at /Team/Nowhere.');

  const link = dropboxConnector.parseReference(fake.share(HANDBOOK));
  fake.delete(HANDBOOK);
  const unshared = await failure(dropboxConnector.list(link, context()));
  t.ok(unshared instanceof ConnectorError);
  t.equal(unshared.message, 'Dropbox has no such shared link; it may have been turned off.');

  const other = dropboxConnector.parseReference(fake.share(`${HANDBOOK}/Intro.pdf`));
  fake.answerNext('sharing/get_shared_link_metadata', {
    status: 409,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      error_summary: 'shared_link_access_denied/..',
      error: { '.tag': 'shared_link_access_denied' },
    }),
  });
  const denied = await failure(dropboxConnector.list(other, context()));
  t.ok(denied instanceof ConnectorError);
  t.equal(denied.message, 'The Dropbox connection may not open this shared link.');

  fake.answerNext('files/get_metadata', {
    status: 409,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      error_summary: 'path/restricted_content/...',
      error: { '.tag': 'path', path: { '.tag': 'restricted_content' } },
    }),
  });
  const restricted = await failure(dropboxConnector.list(HANDBOOK, context()));
  t.ok(restricted instanceof ConnectorError);
  t.equal(restricted.message, 'Dropbox refused the request (path/restricted_content).');

  fake.answerNext('files/get_metadata', {
    status: 500,
    headers: { 'content-type': 'text/plain' },
    body: 'Internal Server Error',
  });
  const broken = await failure(dropboxConnector.list('/Team', context()));
  t.ok(broken instanceof ConnectorError);
  t.equal(broken.message, 'Dropbox answered HTTP 500.');
});

t.test('no error message holds a token', async (t) => {
  t.ok(messages.length >= 10);
  const leaks = messages.filter((message) => issued.some((token) => message.includes(token)));
  t.same(leaks, []);
});
