import t from 'tap';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorContext, ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { zendeskConnector } from '../../../src/sources/connectors/zendesk-connector.ts';
import { FakeZendesk, type FakeZendeskArticle } from '../../fakes/fake-zendesk.ts';
import { testConnectorContext, TestAuth, failureOf, assertRefused } from '../../support/connector-context.ts';

const fake = await new FakeZendesk().start();
t.teardown(() => fake.stop());
const HOST = new URL(fake.url).host;
/** The fake under another name: another origin, so another help centre. */
const LOCALHOST = fake.url.replace('127.0.0.1', 'localhost');

/** Every token and credential a test used, and every error message a test saw: none may hold one. */
const secrets: string[] = [];
const messages: string[] = [];

interface ContextOptions {
  tokens?: string[];
  secret?: Record<string, string>;
  baseUrl?: string;
  maxDocumentBytes?: number;
  maxDocuments?: number;
  waits?: number[];
}

/** A read without a connection, as a public help centre is read. */
function anonymous(options: Omit<ContextOptions, 'tokens' | 'secret' | 'baseUrl'> = {}): ConnectorContext {
  return testConnectorContext(options);
}

/** A read through a connection: API tokens for `fake.email`, the first one current. */
function connected(options: ContextOptions = {}): ConnectorContext & { auth: TestAuth } {
  const { tokens = ['tok-1'], secret = {}, baseUrl = fake.url, ...limits } = options;
  for (const token of tokens) secrets.push(token, basic(token));
  const auth = new TestAuth({
    secret: { email: fake.email, token: tokens[0]!, ...secret },
    baseUrl,
    tokens,
    reconnect: 'Reconnect Zendesk.',
  });
  return { ...testConnectorContext({ ...limits, auth }), auth };
}

function basic(token: string): string {
  return Buffer.from(`${fake.email}/token:${token}`).toString('base64');
}

function failure(promise: Promise<unknown>): Promise<Error> {
  return failureOf(promise, messages);
}

/** The requests the fake received, as `path?query`. */
function asked(): string[] {
  return fake.requests.map(
    (r) => `${r.path}${Object.keys(r.query).length ? `?${new URLSearchParams(r.query).toString()}` : ''}`,
  );
}

function documentOf(article: FakeZendeskArticle): ConnectorDocument {
  const title = article.title.replace(/&/g, '&#38;');
  return {
    id: String(article.id),
    title: article.title,
    size: Buffer.byteLength(`<h1>${title}</h1>${article.body}`),
    changeToken: article.editedAt,
    url: fake.htmlUrl(article),
  };
}

let A: Record<string, FakeZendeskArticle>;
let S: Record<string, number>;
let C: Record<string, number>;

t.beforeEach(() => {
  fake.reset();
  fake.tokens.add('tok-1');
  const start = fake.addCategory('Getting started').id;
  const internal = fake.addCategory('Internal').id;
  const accounts = fake.addSection('Accounts', start).id;
  const passwords = fake.addSection('Passwords', start, accounts).id;
  const billing = fake.addSection('Billing', start).id;
  const runbooks = fake.addSection('Runbooks', internal).id;
  C = { start, internal };
  S = { accounts, passwords, billing, runbooks };
  A = {
    create: fake.addArticle(accounts, 'Create an account', '<p>Sign up at the front page.</p>'),
    close: fake.addArticle(accounts, 'Close an account', '<p>Write to us.</p>'),
    reset: fake.addArticle(passwords, 'Reset your password', '<p>Use <b>Forgot password</b>.</p>'),
    invoices: fake.addArticle(billing, 'Invoices & receipts', '<p>Under Billing.</p>'),
    refunds: fake.addArticle(billing, 'Refunds', '<p>Within 30 days.</p>'),
    plans: fake.addArticle(billing, 'Upcoming plans', '<p>Soon.</p>', { draft: true }),
    notes: fake.addArticle(accounts, 'Agent notes', '<p>Check the CRM first.</p>', { userSegmentId: 77 }),
    pricing: fake.addArticle(billing, 'Old pricing', '<p>Was cheaper.</p>'),
    oncall: fake.addArticle(runbooks, 'On-call', '<p>Page the lead.</p>'),
    french: fake.addArticle(accounts, 'Créer un compte', '<p>Inscrivez-vous.</p>', { locale: 'fr' }),
  };
  A.pricing!.archived = true;
});

t.test('the connector reads Zendesk, with a connection or without', async (t) => {
  const { type, service, connectionOptional } = zendeskConnector;
  t.same({ type, service, connectionOptional }, { type: 'zendesk', service: 'zendesk', connectionOptional: true });
});

t.test('help centre, category, section and article links become their canonical form', async (t) => {
  const accepted: [string, string][] = [
    ['https://acme.zendesk.com/hc/en-us', 'https://acme.zendesk.com/hc/en-us'],
    ['https://acme.zendesk.com/hc/en-us/', 'https://acme.zendesk.com/hc/en-us'],
    ['https://acme.zendesk.com/hc', 'https://acme.zendesk.com/hc'],
    ['  acme.zendesk.com/hc/EN-US?utm_source=mail  ', 'https://acme.zendesk.com/hc/en-us'],
    ['http://acme.zendesk.com/hc/pt-br', 'https://acme.zendesk.com/hc/pt-br'],
    ['https://ACME.Zendesk.com/hc/es-419', 'https://acme.zendesk.com/hc/es-419'],
    ['https://help.acme.com/hc/en-us', 'https://help.acme.com/hc/en-us'],
    ['http://help.acme.com:8080/hc/fr', 'http://help.acme.com:8080/hc/fr'],
    [
      'https://acme.zendesk.com/hc/en-us/categories/360000012345-Getting-started',
      'https://acme.zendesk.com/hc/en-us/categories/360000012345',
    ],
    [
      'https://help.acme.com/hc/en-us/sections/360000067890-Billing?page=2#articles',
      'https://help.acme.com/hc/en-us/sections/360000067890',
    ],
    [
      'https://acme.zendesk.com/hc/en-us/articles/360001234567-Reset-your-password#h_01',
      'https://acme.zendesk.com/hc/en-us/articles/360001234567',
    ],
    ['https://acme.zendesk.com/hc/articles/360001234567', 'https://acme.zendesk.com/hc/articles/360001234567'],
    [
      'https://acme.zendesk.com/hc/fr/articles/360001234567-Cr%C3%A9er-un-compte',
      'https://acme.zendesk.com/hc/fr/articles/360001234567',
    ],
    [
      'https://acme.zendesk.com/hc/en-us/sections/360000067890/',
      'https://acme.zendesk.com/hc/en-us/sections/360000067890',
    ],
  ];
  for (const [reference, canonical] of accepted) t.equal(zendeskConnector.parseReference(reference), canonical);

  const refused = [
    'https://acme.zendesk.com',
    'https://acme.zendesk.com/agent/tickets/12',
    'https://acme.zendesk.com/hc/en-us/articles',
    'https://acme.zendesk.com/hc/en-us/articles/Reset-your-password',
    'https://acme.zendesk.com/hc/en-us/articles/360001234567-Reset/comments/5',
    'https://acme.zendesk.com/hc/en-us/community/posts/360001234567',
    'https://acme.zendesk.com/hc/en-us/requests/new',
    'https://acme.zendesk.com/hc/en_US',
    'https://user:secret@acme.zendesk.com/hc/en-us',
    'ftp://acme.zendesk.com/hc/en-us',
    'not a link',
    '',
  ];
  assertRefused(
    t,
    (reference) => zendeskConnector.parseReference(reference),
    refused,
    'url must be a Zendesk help centre, category, section or article link, like ' +
      'https://acme.zendesk.com/hc/en-us/articles/360001234567-Resetting-a-password.',
  );
});

t.test('an article link is one document, read fresh when fetched', async (t) => {
  const reference = zendeskConnector.parseReference(`${fake.htmlUrl(A.invoices!)}?from=search`);
  t.equal(reference, `${fake.url}/hc/en-us/articles/${A.invoices!.id}`);
  const read = anonymous();
  const listing = await zendeskConnector.list(reference, read);
  const html = '<h1>Invoices &#38; receipts</h1><p>Under Billing.</p>';
  t.same(listing, {
    title: 'Invoices & receipts',
    single: true,
    documents: [
      {
        id: String(A.invoices!.id),
        title: 'Invoices & receipts',
        size: Buffer.byteLength(html),
        changeToken: '2025-03-14T09:27:03Z',
        url: `${fake.url}/hc/en-us/articles/${A.invoices!.id}-Invoices-receipts`,
      },
    ],
  });
  A.invoices!.body = '<p>Under Billing, then Invoices.</p>';
  A.invoices!.editedAt = '2025-04-01T08:00:00Z';
  t.same(await zendeskConnector.fetch(reference, listing.documents[0]!, read), {
    kind: 'html',
    html: '<h1>Invoices &#38; receipts</h1><p>Under Billing, then Invoices.</p>',
  });
  const path = `/api/v2/help_center/en-us/articles/${A.invoices!.id}.json`;
  t.same(asked(), [path, path]);
  t.same(
    fake.requests.map((r) => r.authorization),
    ['', ''],
  );
});

t.test('a whole help centre is listed page by page with cursor pagination', async (t) => {
  fake.pageSize = 2;
  const reference = zendeskConnector.parseReference(`${fake.url}/hc/en-us`);
  const listing = await zendeskConnector.list(reference, anonymous());
  // The draft, the restricted, the archived and the French articles are not listed.
  t.same(listing, {
    title: HOST,
    single: false,
    documents: [A.create, A.close, A.reset, A.invoices, A.refunds, A.oncall].map((a) => documentOf(a!)),
  });
  const path = '/api/v2/help_center/en-us/articles.json';
  const after = (n: number) => Buffer.from(`offset:${n}`).toString('base64url');
  t.same(
    fake.requests.map((r) => [r.path, r.query]),
    [
      [path, { 'page[size]': '100' }],
      [path, { 'page[size]': '100', 'page[after]': after(2) }],
      [path, { 'page[size]': '100', 'page[after]': after(4) }],
    ],
  );
});

t.test('a server that answers offset-style is followed by its next_page', async (t) => {
  fake.pageSize = 2;
  fake.cursorPagination = false;
  const listing = await zendeskConnector.list(`${fake.url}/hc/en-us`, anonymous());
  t.same(
    listing.documents.map((d) => d.title),
    ['Create an account', 'Close an account', 'Reset your password', 'Invoices & receipts', 'Refunds', 'On-call'],
  );
  const path = '/api/v2/help_center/en-us/articles.json';
  t.same(
    fake.requests.map((r) => [r.path, r.query]),
    [
      [path, { 'page[size]': '100' }],
      [path, { page: '2', per_page: '2' }],
      [path, { page: '3', per_page: '2' }],
    ],
  );
});

t.test("next pages are asked for on the help centre's own host only", async (t) => {
  const article = (id: number) => ({
    id,
    title: `Article ${id}`,
    body: `<p>${id}</p>`,
    html_url: `https://acme.zendesk.com/hc/en-us/articles/${id}`,
    draft: false,
    user_segment_id: null,
    edited_at: '2025-01-01T00:00:00Z',
  });
  const answer = (body: object) => fake.answerNext({ status: 200, body: JSON.stringify(body) });
  answer({ articles: [article(1)], meta: { has_more: true, after_cursor: 'c2' }, links: { next: null } });
  const elsewhere = 'https://acme.zendesk.com/api/v2/help_center/en-us/articles.json?page=3&per_page=1';
  answer({ articles: [article(2)], next_page: elsewhere });
  answer({ articles: [article(3)], next_page: 'https://collector.example/steal?page=4' });
  const error = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, connected()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'Zendesk sent a next page that is not a Help Center API address.');
  const path = '/api/v2/help_center/en-us/articles.json';
  t.same(
    fake.requests.map((r) => [r.path, r.query, r.authorization === `Basic ${basic('tok-1')}`]),
    [
      [path, { 'page[size]': '100' }, true],
      [path, { 'page[size]': '100', 'page[after]': 'c2' }, true],
      [path, { page: '3', per_page: '1' }, true],
    ],
  );
});

t.test('a category holds the articles of its sections and subsections; a section its own', async (t) => {
  fake.pageSize = 3;
  const category = await zendeskConnector.list(`${fake.url}/hc/en-us/categories/${C.start}`, anonymous());
  t.same(category, {
    title: 'Getting started',
    single: false,
    documents: [A.create, A.close, A.reset, A.invoices, A.refunds].map((a) => documentOf(a!)),
  });
  const section = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.accounts}`, anonymous());
  t.same(section, { title: 'Accounts', single: false, documents: [documentOf(A.create!), documentOf(A.close!)] });
  t.same(asked(), [
    `/api/v2/help_center/en-us/categories/${C.start}.json`,
    `/api/v2/help_center/en-us/categories/${C.start}/articles.json?page%5Bsize%5D=100`,
    `/api/v2/help_center/en-us/categories/${C.start}/articles.json?page%5Bsize%5D=100&page%5Bafter%5D=${Buffer.from('offset:3').toString('base64url')}`,
    `/api/v2/help_center/en-us/sections/${S.accounts}.json`,
    `/api/v2/help_center/en-us/sections/${S.accounts}/articles.json?page%5Bsize%5D=100`,
  ]);
});

t.test("without a locale the help centre's default one is read, asked once per read", async (t) => {
  const read = anonymous();
  const all = await zendeskConnector.list(`${fake.url}/hc`, read);
  t.equal(all.documents.length, 6);
  const french = await zendeskConnector.list(`${fake.url}/hc/fr`, read);
  t.same(french.documents, [documentOf(A.french!)]);
  const single = await zendeskConnector.list(`${fake.url}/hc/articles/${A.close!.id}`, read);
  t.same(single.documents, [documentOf(A.close!)]);
  t.same(await zendeskConnector.fetch(`${fake.url}/hc`, single.documents[0]!, read), {
    kind: 'html',
    html: '<h1>Close an account</h1><p>Write to us.</p>',
  });
  t.same(
    fake.requests.map((r) => r.path),
    [
      '/api/v2/help_center/locales.json',
      '/api/v2/help_center/en-us/articles.json',
      '/api/v2/help_center/fr/articles.json',
      `/api/v2/help_center/en-us/articles/${A.close!.id}.json`,
      `/api/v2/help_center/en-us/articles/${A.close!.id}.json`,
    ],
  );

  fake.answerNext({ status: 200, body: JSON.stringify({ locales: [] }) });
  const unsaid = await failure(zendeskConnector.list(`${fake.url}/hc`, anonymous()));
  t.ok(unsaid instanceof ConnectorError);
  t.equal(unsaid.message, `${HOST} did not say its help centre's language.`);
});

t.test('a connection signs with its API token and may include restricted articles and drafts', async (t) => {
  const plain = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.billing}`, connected());
  t.same(
    plain.documents.map((d) => d.title),
    ['Invoices & receipts', 'Refunds'],
  );
  const restricted = connected({ secret: { include_restricted: 'true' } });
  const withRestricted = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.accounts}`, restricted);
  t.same(
    withRestricted.documents.map((d) => d.title),
    ['Create an account', 'Close an account', 'Agent notes'],
  );
  const notes = withRestricted.documents[2]!;
  t.same(await zendeskConnector.fetch(`${fake.url}/hc/en-us/sections/${S.accounts}`, notes, restricted), {
    kind: 'html',
    html: '<h1>Agent notes</h1><p>Check the CRM first.</p>',
  });
  const drafts = connected({ secret: { include_drafts: 'true' } });
  const withDrafts = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.billing}`, drafts);
  t.same(
    withDrafts.documents.map((d) => d.title),
    ['Invoices & receipts', 'Refunds', 'Upcoming plans'],
  );
  t.same(new Set(fake.requests.map((r) => r.authorization)), new Set([`Basic ${basic('tok-1')}`]));
  t.same(new Set(fake.requests.map((r) => r.status)), new Set([200]));

  const single = await failure(zendeskConnector.list(`${fake.url}/hc/en-us/articles/${A.plans!.id}`, connected()));
  t.ok(single instanceof ConnectorError);
  t.equal(single.message, 'The Zendesk article "Upcoming plans" is a draft, so it is not read.');
});

t.test('the listing stops at the document limit', async (t) => {
  fake.pageSize = 2;
  const listing = await zendeskConnector.list(`${fake.url}/hc/en-us`, anonymous({ maxDocuments: 3 }));
  t.same(
    listing.documents.map((d) => d.title),
    ['Create an account', 'Close an account', 'Reset your password'],
  );
  t.equal(fake.requests.length, 2);
});

t.test('a 429 is waited for as its Retry-After says, then the request succeeds', async (t) => {
  fake.answerNext({
    status: 429,
    headers: { 'retry-after': '1' },
    body: 'Number of allowed API requests per minute exceeded',
  });
  const waits: number[] = [];
  const listing = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.billing}`, connected({ waits }));
  t.equal(listing.title, 'Billing');
  t.same(waits, [1000]);
  t.same(
    fake.requests.map((r) => [r.path, r.status]),
    [
      [`/api/v2/help_center/en-us/sections/${S.billing}.json`, 429],
      [`/api/v2/help_center/en-us/sections/${S.billing}.json`, 200],
      [`/api/v2/help_center/en-us/sections/${S.billing}/articles.json`, 200],
    ],
  );
});

t.test('a refused token is refreshed once, and the next one is used', async (t) => {
  fake.tokens.clear();
  fake.tokens.add('tok-2');
  const read = connected({ tokens: ['tok-1', 'tok-2'] });
  const listing = await zendeskConnector.list(`${fake.url}/hc/en-us/articles/${A.refunds!.id}`, read);
  t.same(listing.documents, [documentOf(A.refunds!)]);
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((r) => [r.authorization, r.status]),
    [
      [`Basic ${basic('tok-1')}`, 401],
      [`Basic ${basic('tok-2')}`, 200],
    ],
  );
});

t.test('a revoked token means reconnecting', async (t) => {
  fake.tokens.clear();
  const twice = connected({ tokens: ['tok-1', 'tok-2'] });
  const error = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, twice));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect Zendesk.');
  t.equal(twice.auth.refreshes, 1);
  t.same(
    fake.requests.map((r) => r.status),
    [401, 401],
  );

  // The connection layer finds no newer token: it marks the connection and throws.
  const once = connected({ tokens: ['tok-1'] });
  const marked = await failure(zendeskConnector.fetch(`${fake.url}/hc/en-us`, documentOf(A.refunds!), once));
  t.ok(marked instanceof ReconnectError);
  t.equal(marked.message, 'Reconnect Zendesk.');

  const noEmail = connected({ secret: { email: '' } });
  const missing = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, noEmail));
  t.ok(missing instanceof ReconnectError);
  t.equal(missing.message, 'Reconnect Zendesk with the email address the API token belongs to.');
});

t.test('a connection for another help centre is refused before any request', async (t) => {
  const error = await failure(
    zendeskConnector.list(`${fake.url}/hc/en-us`, connected({ baseUrl: 'https://other.zendesk.com' })),
  );
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, `This Zendesk connection is for another help centre (other.zendesk.com), not ${HOST}.`);
  const fetched = await failure(
    zendeskConnector.fetch(`${fake.url}/hc`, documentOf(A.close!), connected({ baseUrl: LOCALHOST })),
  );
  t.equal(
    fetched.message,
    `This Zendesk connection is for another help centre (${new URL(LOCALHOST).host}), not ${HOST}.`,
  );
  t.same(fake.requests, []);
  const same = await zendeskConnector.list(`${fake.url}/hc/en-us`, connected({ baseUrl: `${fake.url}/hc/en-us` }));
  t.equal(same.documents.length, 6);
});

t.test('an article over the size cap is reported by size, and its download is stopped', async (t) => {
  const big = fake.addArticle(S.billing!, 'Price list', `<table>${'<tr><td>row</td></tr>'.repeat(200)}</table>`);
  const read = anonymous({ maxDocumentBytes: 1024 });
  const listing = await zendeskConnector.list(`${fake.url}/hc/en-us/sections/${S.billing}`, read);
  const listed = listing.documents.find((d) => d.title === 'Price list')!;
  t.equal(listed.size, 4234);
  const error = await failure(zendeskConnector.fetch(`${fake.url}/hc/en-us`, listed, read));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, `${HOST} sent more than 1 KB; the limit is 1 KB.`);
  t.equal(fake.requests.at(-1)!.path, `/api/v2/help_center/en-us/articles/${big.id}.json`);
});

t.test('an article gone since listing is gone; a missing reference fails the source', async (t) => {
  const reference = `${fake.url}/hc/en-us/sections/${S.billing}`;
  const read = anonymous();
  const listing = await zendeskConnector.list(reference, read);
  const [invoices, refunds] = listing.documents;
  A.refunds!.deleted = true;
  const gone = await failure(zendeskConnector.fetch(reference, refunds!, read));
  t.ok(gone instanceof DocumentGoneError);
  t.equal(gone.message, 'Zendesk no longer has the article "Refunds".');

  const drafted = connected();
  A.invoices!.draft = true;
  const draft = await failure(zendeskConnector.fetch(reference, invoices!, drafted));
  t.ok(draft instanceof DocumentGoneError);
  t.equal(draft.message, 'The Zendesk article "Invoices & receipts" is now a draft.');

  const section = await failure(zendeskConnector.list(`${fake.url}/hc/en-us/sections/42`, read));
  t.ok(section instanceof ConnectorError && !(section instanceof DocumentGoneError));
  t.equal(section.message, `Zendesk has no section 42 at ${HOST}, or it is not visible without signing in.`);
  const article = await failure(zendeskConnector.list(`${fake.url}/hc/en-us/articles/${A.notes!.id}`, read));
  t.equal(
    article.message,
    `Zendesk has no article ${A.notes!.id} at ${HOST}, or it is not visible without signing in.`,
  );
  const category = await failure(zendeskConnector.list(`${fake.url}/hc/en-us/categories/42`, connected()));
  t.equal(category.message, `Zendesk has no category 42 at ${HOST}, or it is not visible to the connection.`);
});

t.test("the service's other refusals are explained", async (t) => {
  fake.answerNext({ status: 403, body: JSON.stringify({ error: 'Forbidden', description: 'Sign in' }) });
  const closed = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, anonymous()));
  t.equal(
    closed.message,
    `${HOST} lets only signed-in users read its help centre; add the source with a Zendesk connection.`,
  );
  fake.answerNext({ status: 500, body: JSON.stringify({ error: 'InternalError' }) });
  const broken = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, connected()));
  t.equal(broken.message, 'Zendesk answered HTTP 500: InternalError');
  for (let i = 0; i < 4; i += 1) fake.answerNext({ status: 429, headers: { 'retry-after': '0' }, body: 'Slow down' });
  const limited = await failure(zendeskConnector.list(`${fake.url}/hc/en-us`, anonymous()));
  t.equal(limited.message, 'Zendesk is limiting requests; try again later.');
});

t.test('no error message holds a token', async (t) => {
  t.ok(messages.length >= 15);
  const leaks = messages.filter((message) => secrets.some((secret) => message.includes(secret)));
  t.same(leaks, []);
});
