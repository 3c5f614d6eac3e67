import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { parseServiceAccountKey, serviceAccountToken } from '../../../src/connections/google-service-account.ts';
import { InvalidGrantError, requestToken } from '../../../src/connections/token-endpoint.ts';
import { ValidationError } from '../../../src/errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { googleDriveConnector } from '../../../src/sources/connectors/google-drive-connector.ts';
import { FakeGoogleDrive, type FakeDriveFile } from '../../fakes/fake-google-drive.ts';
import { thrown, assertRefused, connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeGoogleDrive().start();
t.teardown(() => fake.stop());

/** Every access token handed out, and every error message a test saw: none may hold a token. */
const { issued, messages, grant, context, failure } = connectorTestBed({
  issue: () => fake.oauth.issueGrant().access_token,
  reconnect: 'Reconnect Google Drive.',
  baseUrls: { google: `${fake.url}/`, googleToken: `${fake.url}/token` },
});

/** The API calls the fake received, as `method fileId-or-query`. */
function calls(): [string, string][] {
  return fake.requests.map((request) => [
    request.method,
    request.method === 'files.list'
      ? `${request.query.q} ${request.query.pageToken ?? ''}`.trim()
      : `${request.fileId} ${request.query.alt ?? request.query.mimeType ?? request.query.fields}`,
  ]);
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const LIST_FIELDS = 'nextPageToken,files(id,name,mimeType,size,md5Checksum,version,modifiedTime,webViewLink)';
const GET_FIELDS = 'id,name,mimeType,size,md5Checksum,version,modifiedTime,webViewLink,trashed';
const RESUME = 'Résumé tips.md';

let tree: Record<string, FakeDriveFile>;

t.beforeEach(() => {
  fake.reset();
  const handbook = fake.addFolder('Handbook');
  const intro = fake.addFile('Intro.pdf', 'application/pdf', '%PDF-1.7 intro', handbook.id);
  const policies = fake.addNative('Policies', 'document', { [DOCX]: 'PK policies docx' }, handbook.id);
  const guides = fake.addFolder('Guides', handbook.id);
  const onboarding = fake.addFile('Onboarding', 'text/plain', 'Day one: get a badge.', guides.id);
  const resume = fake.addFile(RESUME, 'text/markdown', '# Résumé\n\nKeep it short.\n', guides.id);
  const deep = fake.addFolder('Deep', guides.id);
  const faq = fake.addFile('FAQ.csv', 'text/csv', 'question,answer\nwhy,because\n', deep.id);
  const budget = fake.addNative('Budget', 'spreadsheet', { 'text/csv': 'month,spend\nmay,10\n' }, handbook.id);
  const logo = fake.addFile('Logo.png', 'image/png', 'PNG', handbook.id);
  const old = fake.addFile('Old.pdf', 'application/pdf', '%PDF-1.7 old', handbook.id);
  const pitch = fake.addNative('Pitch', 'presentation', { [PPTX]: 'PK pitch pptx' }, handbook.id);
  fake.addNative('Survey', 'form', {}, handbook.id);
  fake.addNative('Shortcut to FAQ', 'shortcut', {}, handbook.id);
  const notes = fake.addFile('Notes.docx', DOCX, 'PK notes docx', handbook.id);
  const archive = fake.addFolder('Archive', handbook.id);
  fake.addFile('Secret.pdf', 'application/pdf', '%PDF-1.7 secret', archive.id);
  fake.trash(old.id);
  fake.trash(archive.id);
  fake.maxPageSize = 3;
  tree = { handbook, intro, policies, guides, onboarding, resume, deep, faq, budget, logo, pitch, notes };
});

/** The listed document of a fake file, as the connector reports it. */
function listed(file: FakeDriveFile): ConnectorDocument {
  const native = file.mimeType.startsWith('application/vnd.google-apps.');
  const docs = { document: 'document', spreadsheet: 'spreadsheets', presentation: 'presentation' };
  const kind = docs[file.mimeType.slice('application/vnd.google-apps.'.length) as keyof typeof docs];
  return {
    id: file.id,
    title: file.name,
    size: native ? null : file.content.length,
    changeToken: String(file.version),
    url: native
      ? `https://docs.google.com/${kind}/d/${file.id}/edit?usp=drivesdk`
      : `https://drive.google.com/file/d/${file.id}/view?usp=drivesdk`,
  };
}

const open = (file: FakeDriveFile) => `https://drive.google.com/open?id=${file.id}`;

t.test('the connector reads Google Drive through a connection', async (t) => {
  const { type, service, connectionOptional } = googleDriveConnector;
  t.same(
    { type, service, connectionOptional },
    { type: 'google_drive', service: 'google_drive', connectionOptional: false },
  );
});

t.test('links and ids become their canonical form', async (t) => {
  const file = '1AbCdEfGhIjKlMnOpQrStUvWxYz012345';
  const doc = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';
  const drive = '0ADmj2XnHaH8mUk9PVA';
  const canonical = (id: string) => `https://drive.google.com/open?id=${id}`;
  const accepted: [string, string][] = [
    [`https://drive.google.com/file/d/${file}/view?usp=sharing`, file],
    [`https://drive.google.com/file/d/${file}/view`, file],
    [`https://drive.google.com/file/d/${file}`, file],
    [`https://drive.google.com/file/u/1/d/${file}/preview`, file],
    [`http://drive.google.com/file/d/${file}/edit`, file],
    [`drive.google.com/file/d/${file}/view`, file],
    [`https://drive.google.com/open?id=${file}`, file],
    [`https://drive.google.com/open?id=${file}&usp=drive_fs`, file],
    [`https://docs.google.com/document/d/${doc}/edit?usp=sharing`, doc],
    [`https://docs.google.com/document/d/${doc}/edit#heading=h.2`, doc],
    [`https://docs.google.com/document/u/0/d/${doc}/`, doc],
    [`https://docs.google.com/spreadsheets/d/${doc}/edit#gid=0`, doc],
    [`https://docs.google.com/presentation/d/${doc}/edit#slide=id.p`, doc],
    [`https://drive.google.com/drive/folders/${file}`, file],
    [`https://drive.google.com/drive/folders/${file}?usp=sharing`, file],
    [`https://drive.google.com/drive/u/0/folders/${file}`, file],
    [`https://drive.google.com/drive/folders/${drive}`, drive],
    [`  ${file}  `, file],
    [doc, doc],
  ];
  for (const [reference, id] of accepted) {
    t.equal(googleDriveConnector.parseReference(reference), canonical(id), reference);
  }
  // The canonical form is accepted as it is.
  t.equal(googleDriveConnector.parseReference(canonical(file)), canonical(file));

  const refused = [
    'https://drive.google.com/drive/my-drive',
    'https://drive.google.com/drive/folders/',
    'https://drive.google.com/drive/folders/short',
    `https://drive.google.com/drive/folders/${file}/extra`,
    `https://drive.google.com/open?id=${file}!`,
    `https://drive.google.com.evil.example/file/d/${file}/view`,
    `https://docs.google.com/forms/d/${doc}/edit`,
    'https://docs.google.com/document/d/e/2PACX-1vTx9Kq3m1b7XyZ2a8f3k2lq9/pub',
    `https://sites.google.com/view/${file}`,
    `ftp://drive.google.com/file/d/${file}/view`,
    'handbook',
    'not a link',
    '',
  ];
  assertRefused(
    t,
    (reference) => googleDriveConnector.parseReference(reference),
    refused,
    'url must be a Google Drive file or folder link, or its id, like ' +
      'https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOpQrStUvWxYz012345.',
  );
});

t.test('a folder is listed page by page, depth-first, without trash or unreadable types', async (t) => {
  const read = context();
  // Every request of the library goes through the HTTP layer's fetch, to the configured root.
  const fetched: string[] = [];
  const fetch = read.http.fetch;
  const recording: typeof fetch = (input, init) => {
    fetched.push(String(input instanceof Request ? input.url : input));
    return fetch(input, init);
  };
  const listing = await googleDriveConnector.list(open(tree.handbook!), {
    ...read,
    http: { ...read.http, fetch: recording },
  });
  const { intro, policies, onboarding, resume, faq, budget, pitch, notes } = tree;
  t.same(listing, {
    title: 'Handbook',
    single: false,
    documents: [intro, policies, onboarding, resume, faq, budget, pitch, notes].map((file) => listed(file!)),
  });
  const inParents = (file: FakeDriveFile) => `'${file.id}' in parents and trashed = false`;
  t.same(calls(), [
    ['files.get', `${tree.handbook!.id} ${GET_FIELDS}`],
    ['files.list', inParents(tree.handbook!)],
    ['files.list', inParents(tree.guides!)],
    ['files.list', inParents(tree.deep!)],
    ['files.list', `${inParents(tree.handbook!)} ~!!~AI9FV7T001pgTk`],
    ['files.list', `${inParents(tree.handbook!)} ~!!~AI9FV7T002pgTk`],
  ]);
  const list = fake.requests[1]!;
  t.same(list.query, {
    q: inParents(tree.handbook!),
    fields: LIST_FIELDS,
    pageSize: '1000',
    supportsAllDrives: 'true',
    includeItemsFromAllDrives: 'true',
  });
  const token = await read.auth.accessToken();
  t.ok(fake.requests.every((request) => request.token === token && request.status === 200));
  t.equal(fetched.length, 6);
  t.ok(fetched.every((url) => url.startsWith(`${fake.url}/drive/v3/files`)));
});

t.test('each kind of document is fetched as a file the parsers read', async (t) => {
  // Drive often types a `.md` upload as text/plain; a file without an extension gets its type's.
  const changelog = fake.addFile('Changelog.md', 'text/plain', '# Changes\n', tree.handbook!.id);
  const scan = fake.addFile('Scan', 'application/pdf', '%PDF-1.7 scan', tree.handbook!.id);
  const read = context();
  const listing = await googleDriveConnector.list(open(tree.handbook!), read);
  fake.requests.length = 0;
  const fetched = [];
  for (const document of listing.documents) {
    fetched.push(await googleDriveConnector.fetch(open(tree.handbook!), document, read));
  }
  const file = (filename: string, bytes: string) => ({ kind: 'file', filename, bytes: Buffer.from(bytes) });
  t.same(fetched, [
    file('Intro.pdf', '%PDF-1.7 intro'),
    file('Policies.docx', 'PK policies docx'),
    file('Onboarding.txt', 'Day one: get a badge.'),
    file(RESUME, '# Résumé\n\nKeep it short.\n'),
    file('FAQ.csv', 'question,answer\nwhy,because\n'),
    file('Budget.csv', 'month,spend\nmay,10\n'),
    file('Pitch.pptx', 'PK pitch pptx'),
    file('Notes.docx', 'PK notes docx'),
    file('Changelog.md', '# Changes\n'),
    file('Scan.pdf', '%PDF-1.7 scan'),
  ]);
  const metadata = (f: FakeDriveFile) => ['files.get', `${f.id} id,name,mimeType,trashed`];
  const media = (f: FakeDriveFile) => [metadata(f), ['files.get', `${f.id} media`]];
  const exported = (f: FakeDriveFile, type: string) => [metadata(f), ['files.export', `${f.id} ${type}`]];
  const { intro, policies, onboarding, resume, faq, budget, pitch, notes } = tree;
  t.same(calls(), [
    ...media(intro!),
    ...exported(policies!, DOCX),
    ...media(onboarding!),
    ...media(resume!),
    ...media(faq!),
    ...exported(budget!, 'text/csv'),
    ...exported(pitch!, PPTX),
    ...media(notes!),
    ...media(changelog),
    ...media(scan),
  ]);
  t.same(fake.requests[0]!.query, { fields: 'id,name,mimeType,trashed', supportsAllDrives: 'true' });
  t.same(fake.requests[1]!.query, { alt: 'media', supportsAllDrives: 'true' });
  t.same(fake.requests[3]!.query, { mimeType: DOCX });
});

t.test('a file link is one document', async (t) => {
  const pdf = await googleDriveConnector.list(`https://drive.google.com/file/d/${tree.intro!.id}/view`, context());
  t.same(pdf, { title: 'Intro.pdf', single: true, documents: [listed(tree.intro!)] });
  const doc = googleDriveConnector.parseReference(`https://docs.google.com/document/d/${tree.policies!.id}/edit`);
  const policies = await googleDriveConnector.list(doc, context());
  t.same(policies, { title: 'Policies', single: true, documents: [listed(tree.policies!)] });
  t.equal(policies.documents[0]!.size, null);
});

t.test('a file of a type Switchboard does not read is refused', async (t) => {
  const error = await failure(googleDriveConnector.list(open(tree.logo!), context()));
  t.ok(error instanceof ConnectorError);
  t.equal(
    error.message,
    'Logo.png is not a file Switchboard reads: a Google Doc, Sheet or Slides, or a PDF, DOCX, PPTX, TXT, MD or CSV file.',
  );
});

t.test('items of a shared drive are read with the shared-drive flags', async (t) => {
  const team = fake.addFolder('Team drive', undefined, { driveId: '0ADmj2XnHaH8mUk9PVA' });
  const guide = fake.addFile('Guide.md', 'text/markdown', '# Guide\n', team.id, { driveId: '0ADmj2XnHaH8mUk9PVA' });
  const read = context();
  const listing = await googleDriveConnector.list(open(team), read);
  t.same(listing, { title: 'Team drive', single: false, documents: [listed(guide)] });
  const fetched = await googleDriveConnector.fetch(open(team), listing.documents[0]!, read);
  t.same(fetched, { kind: 'file', filename: 'Guide.md', bytes: Buffer.from('# Guide\n') });
});

t.test('the listing stops at the document limit', async (t) => {
  const listing = await googleDriveConnector.list(open(tree.handbook!), context({ maxDocuments: 2 }));
  t.same(listing.documents, [listed(tree.intro!), listed(tree.policies!)]);
  t.same(
    calls().map(([method]) => method),
    ['files.get', 'files.list'],
  );

  // Stopped inside a subfolder: no further page of the parent is asked for.
  fake.requests.length = 0;
  const four = await googleDriveConnector.list(open(tree.handbook!), context({ maxDocuments: 4 }));
  t.same(
    four.documents.map((document) => document.title),
    ['Intro.pdf', 'Policies', 'Onboarding', RESUME],
  );
  t.same(
    calls().map(([method]) => method),
    ['files.get', 'files.list', 'files.list'],
  );
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  fake.answerNext('files.list', {
    status: 429,
    headers: { 'content-type': 'application/json; charset=UTF-8', 'retry-after': '1' },
    body: JSON.stringify({
      error: {
        code: 429,
        message: 'Rate Limit Exceeded',
        errors: [{ message: 'Rate Limit Exceeded', domain: 'usageLimits', reason: 'rateLimitExceeded' }],
        status: 'RESOURCE_EXHAUSTED',
      },
    }),
  });
  const waits: number[] = [];
  const listing = await googleDriveConnector.list(open(tree.deep!), context({ waits }));
  t.same(waits, [1000]);
  t.same(listing.documents, [listed(tree.faq!)]);
  t.same(
    fake.requests.map((request) => [request.method, request.status]),
    [
      ['files.get', 200],
      ['files.list', 429],
      ['files.list', 200],
    ],
  );
});

t.test('Drive still limiting is a readable error, as a 429 or as a 403 rate limit', async (t) => {
  const limited = (status: number, reason: string) => ({
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8', 'retry-after': '0' },
    body: JSON.stringify({
      error: { code: status, message: 'Rate Limit Exceeded', errors: [{ domain: 'usageLimits', reason }] },
    }),
  });
  for (let i = 0; i < 4; i += 1) fake.answerNext('files.get', limited(429, 'rateLimitExceeded'));
  const error = await failure(googleDriveConnector.list(open(tree.handbook!), context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'Google Drive is limiting requests; try again later.');

  fake.answerNext('files.get', limited(403, 'userRateLimitExceeded'));
  const user = await failure(googleDriveConnector.list(open(tree.handbook!), context()));
  t.equal(user.message, 'Google Drive is limiting requests; try again later.');
});

t.test('an expired access token is refreshed once, then the call succeeds', async (t) => {
  const expired = grant();
  fake.oauth.expireAccessTokens();
  const fresh = grant();
  const read = context({ tokens: [expired, fresh] });
  const listing = await googleDriveConnector.list(open(tree.deep!), read);
  t.equal(read.auth.refreshes, 1);
  t.same(listing.documents, [listed(tree.faq!)]);
  t.same(
    fake.requests.map((request) => [request.method, request.token, request.status]),
    [
      ['files.get', expired, 401],
      ['files.get', fresh, 200],
      ['files.list', fresh, 200],
    ],
  );

  // A download refreshes the same way.
  fake.oauth.expireAccessTokens();
  const later = grant();
  const download = context({ tokens: [fresh, later] });
  const fetched = await googleDriveConnector.fetch(open(tree.deep!), listing.documents[0]!, download);
  t.same(fetched, { kind: 'file', filename: 'FAQ.csv', bytes: Buffer.from('question,answer\nwhy,because\n') });
  t.equal(download.auth.refreshes, 1);
});

t.test('a revoked grant asks the owner to reconnect, and the library never refreshes on its own', async (t) => {
  const first = grant();
  const second = grant();
  fake.oauth.revokeGrants();
  const read = context({ tokens: [first, second] });
  const error = await failure(googleDriveConnector.list(open(tree.handbook!), read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect Google Drive.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.method, request.token, request.status]),
    [
      ['files.get', first, 401],
      ['files.get', second, 401],
    ],
  );

  // A refresh the connection itself refuses (the refresh token was revoked) says the same.
  const refused = await failure(
    googleDriveConnector.fetch(open(tree.intro!), listed(tree.intro!), context({ tokens: [first] })),
  );
  t.ok(refused instanceof ReconnectError);
  t.equal(refused.message, 'Reconnect Google Drive.');
  t.notOk(fake.requests.some((request) => request.method === 'token'));
});

t.test('a document over the size cap: its size is listed, and a download is refused', async (t) => {
  const big = fake.addFile('Big.txt', 'text/plain', 'x'.repeat(10_000), tree.handbook!.id);
  const streamed = fake.addFile('Streamed.txt', 'text/plain', 'y'.repeat(10_000), tree.handbook!.id, { chunked: true });
  const read = context({ maxDocumentBytes: 4096 });
  const listing = await googleDriveConnector.list(open(big), read);
  t.equal(listing.documents[0]!.size, 10_000);
  const host = new URL(fake.url).host;
  const declared = await failure(googleDriveConnector.fetch(open(big), listing.documents[0]!, read));
  t.ok(declared instanceof ConnectorError);
  t.equal(declared.message, `${host} sent more than 4 KB; the limit is 4 KB.`);

  // Sent without a length, the download is cut when it passes the cap.
  const unknown = { ...listed(streamed), size: null };
  const cut = await failure(googleDriveConnector.fetch(open(streamed), unknown, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${host} sent more than 4 KB; the limit is 4 KB.`);
  t.same(fake.requests.at(-1)!.answered['transfer-encoding'], 'chunked');

  // Google's own files have no size; an export too large for Drive says so.
  fake.exportLimitBytes = 8;
  const policies = await failure(googleDriveConnector.fetch(open(tree.policies!), listed(tree.policies!), read));
  t.ok(policies instanceof ConnectorError);
  t.equal(policies.message, 'Policies is too large for Google Drive to export; its limit is 10 MB.');
});

t.test('trashed documents are not listed, and one trashed or deleted after listing is gone', async (t) => {
  const read = context();
  const listing = await googleDriveConnector.list(open(tree.handbook!), read);
  const titles = listing.documents.map((document) => document.title);
  t.notOk(titles.includes('Old.pdf') || titles.includes('Secret.pdf'));

  fake.trash(tree.intro!.id);
  const trashed = await failure(googleDriveConnector.fetch(open(tree.handbook!), listing.documents[0]!, read));
  t.ok(trashed instanceof DocumentGoneError);
  t.equal(trashed.message, 'Google Drive no longer has Intro.pdf.');

  fake.remove(tree.policies!.id);
  const deleted = await failure(googleDriveConnector.fetch(open(tree.handbook!), listing.documents[1]!, read));
  t.ok(deleted instanceof DocumentGoneError);
  t.equal(deleted.message, 'Google Drive no longer has Policies.');
  t.same(fake.requests.at(-1)!.status, 404);
});

t.test('a reference that does not resolve says what is missing', async (t) => {
  const missing = await failure(
    googleDriveConnector.list('https://drive.google.com/open?id=1NoSuchFileAtAll0000000000000000', context()),
  );
  t.ok(missing instanceof ConnectorError);
  t.notOk(missing instanceof DocumentGoneError);
  t.equal(
    missing.message,
    'Google Drive has no file or folder 1NoSuchFileAtAll0000000000000000, or it is not shared with the connection.',
  );

  fake.trash(tree.handbook!.id);
  const trashed = await failure(googleDriveConnector.list(open(tree.handbook!), context()));
  t.ok(trashed instanceof ConnectorError);
  t.equal(trashed.message, 'Handbook is in the Google Drive trash.');

  fake.answerNext('files.get', {
    status: 403,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: JSON.stringify({
      error: {
        code: 403,
        message: 'Request had insufficient authentication scopes.',
        errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }],
        status: 'PERMISSION_DENIED',
      },
    }),
  });
  const scopes = await failure(googleDriveConnector.list(open(tree.intro!), context()));
  t.equal(scopes.message, 'Google Drive refused access (HTTP 403): Request had insufficient authentication scopes.');

  fake.answerNext('files.get', { status: 500, headers: { 'content-type': 'text/html' }, body: '<html>Error</html>' });
  const broken = await failure(googleDriveConnector.list(open(tree.intro!), context()));
  t.ok(broken instanceof ConnectorError);
  t.equal(broken.message, 'Google Drive answered HTTP 500.');
});

t.test("the fake serves Google's OAuth endpoints at their real paths", async (t) => {
  const http = context().http;
  const authorize = await http.request(
    `${fake.url}/o/oauth2/v2/auth?client_id=${fake.oauth.clientId}&response_type=code&code_challenge_method=S256`,
  );
  t.equal(authorize.statusCode, 200);
  const { refresh_token } = fake.oauth.issueGrant();
  const form = {
    grant_type: 'refresh_token',
    refresh_token,
    client_id: fake.oauth.clientId,
    client_secret: fake.oauth.clientSecret,
  };
  const refreshed = await requestToken(http, `${fake.url}/token`, form, 'Google Drive', 0);
  issued.push(refreshed.accessToken);
  t.ok(fake.oauth.isValid(refreshed.accessToken));
  t.same(refreshed.expiresAt, 3600_000);
});

const keys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const EMAIL = 'switchboard-reader@handbook-4821.iam.gserviceaccount.com';

function keyFile(privateKey: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: 'handbook-4821',
    private_key_id: '8d3f1c2b7a',
    private_key: privateKey,
    client_email: EMAIL,
    client_id: '104582937465018273645',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    ...overrides,
  });
}

t.test('a service account key is checked before it is stored', async (t) => {
  t.same(parseServiceAccountKey(keyFile(keys.privateKey)), { client_email: EMAIL, private_key: keys.privateKey });
  const refused = [
    'not json',
    '{}',
    '[]',
    JSON.stringify({ installed: { client_id: 'x.apps.googleusercontent.com', client_secret: 's' } }),
    keyFile(keys.privateKey, { type: 'authorized_user' }),
    keyFile(keys.privateKey, { client_email: 'not an email' }),
    keyFile('-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n'),
    keyFile(keys.privateKey, { private_key: undefined }),
  ];
  for (const json of refused) {
    const error = thrown(() => parseServiceAccountKey(json));
    t.ok(error instanceof ValidationError, json.slice(0, 40));
    t.equal((error as ValidationError).detail, 'service account key must be a Google service account JSON key file.');
  }
});

t.test('a service account signs an assertion for a token, which then reads Drive', async (t) => {
  fake.addServiceAccount(EMAIL, keys.publicKey);
  const http = context().http;
  const before = Date.now();
  const token = await serviceAccountToken(keyFile(keys.privateKey), `${fake.url}/token`, http.fetch);
  issued.push(token.accessToken);
  t.ok(fake.oauth.isValid(token.accessToken));
  t.ok(token.expiresAt >= before + 3599_000 && token.expiresAt <= Date.now() + 3599_000, String(token.expiresAt));
  const exchange = fake.requests.find((request) => request.method === 'token')!;
  t.same(Object.keys(exchange.form), ['grant_type', 'assertion']);
  t.equal(exchange.form.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  t.equal(exchange.status, 200);
  const [header, payload] = exchange.form
    .assertion!.split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  t.same(header, { alg: 'RS256' });
  t.same(
    { iss: payload.iss, scope: payload.scope, aud: payload.aud, lifetime: payload.exp - payload.iat },
    {
      iss: EMAIL,
      scope: 'https://www.googleapis.com/auth/drive.readonly',
      aud: 'https://oauth2.googleapis.com/token',
      lifetime: 3600,
    },
  );

  const read = context({ tokens: [token.accessToken] });
  const listing = await googleDriveConnector.list(open(tree.deep!), read);
  t.same(listing.documents, [listed(tree.faq!)]);
});

t.test('a refused or failing token exchange is told apart', async (t) => {
  const http = context().http;
  const other = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  fake.addServiceAccount(EMAIL, keys.publicKey);
  const forged = await failure(serviceAccountToken(keyFile(other.privateKey), `${fake.url}/token`, http.fetch));
  t.ok(forged instanceof InvalidGrantError);
  t.equal(forged.message, 'Google Drive refused the service account (invalid_grant)');
  t.equal(fake.requests.at(-1)!.status, 400);

  fake.answerNext('token', { status: 500, headers: { 'content-type': 'text/html' }, body: 'Server Error' });
  const broken = await failure(serviceAccountToken(keyFile(keys.privateKey), `${fake.url}/token`, http.fetch));
  t.ok(broken instanceof ConnectorError);
  t.equal(broken.message, 'Google Drive could not issue an access token: HTTP 500.');
});

t.test('no error message holds a token', async (t) => {
  t.ok(messages.length >= 15);
  const leaks = messages.filter((message) => issued.some((token) => message.includes(token)));
  t.same(leaks, []);
});
