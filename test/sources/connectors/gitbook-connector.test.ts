import { createHash } from 'node:crypto';
import t from 'tap';
import { ValidationError } from '../../../src/errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import { gitbookConnector } from '../../../src/sources/connectors/gitbook-connector.ts';
import { FakeGitBook, type FakeGitBookPage, type FakeGitBookSpace } from '../../fakes/fake-gitbook.ts';
import { connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeGitBook().start();
t.teardown(() => fake.stop());

/** Every token handed out, and every error message a test saw: none may hold a token. */
const {
  issued,
  messages,
  grant: token,
  context,
  failure,
} = connectorTestBed({
  issue: () => fake.issueToken(),
  reconnect: 'Reconnect GitBook.',
  baseUrls: { gitbook: fake.url },
});

/** The calls the fake received, as `path query`. */
function calls(): [string, Record<string, string>][] {
  return fake.requests.map((request) => [request.path, request.query]);
}

const reference = (space: FakeGitBookSpace) => `https://app.gitbook.com/s/${space.id}`;
const appUrl = (space: FakeGitBookSpace, path: string) =>
  `https://app.gitbook.com/o/${space.organization}/s/${space.id}/${path}`;
const pageToken = (page: FakeGitBookPage) => `${page.documentId}@${page.updatedAt}`;

let space: FakeGitBookSpace;
let pages: Record<'welcome' | 'history' | 'guides' | 'onboarding' | 'dayOne' | 'faq', FakeGitBookPage>;

t.beforeEach(() => {
  fake.reset();
  space = fake.addSpace('Handbook');
  const welcome = fake.addPage(space, undefined, 'Welcome', { markdown: '# Welcome\n\nHello.\n' });
  const history = fake.addPage(space, welcome, 'History', { markdown: 'Founded in 2019.\n' });
  const guides = fake.addPage(space, undefined, 'Guides', { type: 'group' });
  const onboarding = fake.addPage(space, guides, 'Onboarding', { markdown: 'Get a badge.\n' });
  const dayOne = fake.addPage(space, onboarding, 'Day one', { markdown: 'Meet the team.\n' });
  fake.addPage(space, guides, 'Empty', {});
  fake.addPage(space, guides, 'Status page', { type: 'link', href: 'https://status.acme.com' });
  fake.addPage(space, undefined, 'Internal notes', { markdown: 'Do not index.\n', noIndex: true });
  const faq = fake.addPage(space, undefined, 'FAQ', { markdown: 'Why? Because.\n' });
  pages = { welcome, history, guides, onboarding, dayOne, faq };
});

t.test('the connector reads GitBook through a connection', async (t) => {
  const { type, service, connectionOptional } = gitbookConnector;
  t.same({ type, service, connectionOptional }, { type: 'gitbook', service: 'gitbook', connectionOptional: false });
});

t.test('space links and ids become the canonical space link', async (t) => {
  const id = '9aBcD3eFgH1iJkL2mNoP';
  const canonical = `https://app.gitbook.com/s/${id}`;
  const accepted: [string, string][] = [
    [`https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/${id}`, canonical],
    [`https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/${id}/`, canonical],
    [`https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/${id}/guides/onboarding?fallback=true#day-one`, canonical],
    [`https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/${id}/~/changes/12/guides`, canonical],
    [`https://app.gitbook.com/s/${id}`, canonical],
    [`https://app.gitbook.com/s/${id}/getting-started`, canonical],
    [`http://app.gitbook.com/s/${id}`, canonical],
    [`app.gitbook.com/s/${id}`, canonical],
    [`https://APP.GITBOOK.COM/s/${id}`, canonical],
    [`  ${id}  `, canonical],
    ['-MLfnPrYaF1QD-s5QZ2n', 'https://app.gitbook.com/s/-MLfnPrYaF1QD-s5QZ2n'],
  ];
  for (const [link, expected] of accepted) t.equal(gitbookConnector.parseReference(link), expected, link);

  const detail = (value: string) => {
    try {
      gitbookConnector.parseReference(value);
      return 'accepted';
    } catch (caught) {
      t.ok(caught instanceof ValidationError, value);
      return (caught as ValidationError).detail;
    }
  };
  const invalid =
    'url must be a GitBook space link or space id, like ' +
    'https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/9aBcD3eFgH1iJkL2mNoP or 9aBcD3eFgH1iJkL2mNoP.';
  for (const value of [
    'https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/home',
    'https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/c/Zz9kQ2mN7xLp4RtV8wYb',
    'https://app.gitbook.com/s/short',
    'https://app.gitbook.com/s/9aBcD3eFgH1iJkL2mNo!',
    'https://app.gitbook.com/',
    'https://api.gitbook.com/v1/spaces/9aBcD3eFgH1iJkL2mNoP',
    'https://gitbook.com/docs',
    'ftp://app.gitbook.com/s/9aBcD3eFgH1iJkL2mNoP',
    'handbook',
    'not a link',
    '',
  ]) {
    t.equal(detail(value), invalid, value);
  }
  const published =
    'url must be a GitBook space link, not a published docs site: paste the space link from ' +
    'app.gitbook.com, like https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/9aBcD3eFgH1iJkL2mNoP.';
  for (const value of [
    'https://docs.acme.com/getting-started',
    'https://acme.gitbook.io/handbook/',
    'docs.acme.com',
    `https://docs.acme.com/s/${id}`,
  ]) {
    t.equal(detail(value), published, value);
  }
});

t.test('a space with one page is one document, read as Markdown', async (t) => {
  const single = fake.addSpace('Release notes');
  const page = fake.addPage(single, undefined, 'Changelog', { markdown: '## 1.0\n\n- First release.\n' });
  const read = context();
  const link = gitbookConnector.parseReference(`https://app.gitbook.com/o/${single.organization}/s/${single.id}`);
  const listing = await gitbookConnector.list(link, read);
  t.same(listing, {
    title: 'Release notes',
    single: false,
    documents: [
      { id: page.id, title: 'Changelog', size: null, changeToken: pageToken(page), url: appUrl(single, 'changelog') },
    ],
  });
  const fetched = await gitbookConnector.fetch(link, listing.documents[0]!, read);
  t.same(fetched, { kind: 'markdown', markdown: '## 1.0\n\n- First release.\n' });
  t.same(calls(), [
    [`/v1/spaces/${single.id}`, {}],
    [`/v1/spaces/${single.id}/content`, {}],
    [`/v1/spaces/${single.id}/content/page/${page.id}`, { format: 'markdown' }],
  ]);
  const bearer = await read.auth.accessToken();
  t.same(
    fake.requests.map((request) => [request.headers.authorization, request.headers.accept, request.status]),
    [
      [`Bearer ${bearer}`, 'application/json', 200],
      [`Bearer ${bearer}`, 'application/json', 200],
      [`Bearer ${bearer}`, 'application/json', 200],
    ],
  );
});

t.test('the page tree is walked in order: nested pages and groups in, links and empty pages out', async (t) => {
  const read = context();
  const listing = await gitbookConnector.list(reference(space), read);
  const { welcome, history, onboarding, dayOne, faq } = pages;
  t.same(listing, {
    title: 'Handbook',
    single: false,
    documents: [
      [welcome, 'welcome'],
      [history, 'welcome/history'],
      [onboarding, 'guides/onboarding'],
      [dayOne, 'guides/onboarding/day-one'],
      [faq, 'faq'],
    ].map(([page, path]) => ({
      id: (page as FakeGitBookPage).id,
      title: (page as FakeGitBookPage).title,
      size: null,
      changeToken: pageToken(page as FakeGitBookPage),
      url: appUrl(space, path as string),
    })),
  });
  // The whole tree comes in one answer: GitBook does not paginate a revision's pages.
  t.same(calls(), [
    [`/v1/spaces/${space.id}`, {}],
    [`/v1/spaces/${space.id}/content`, {}],
  ]);

  fake.requests.length = 0;
  const fetched = await gitbookConnector.fetch(reference(space), listing.documents[3]!, read);
  t.same(fetched, { kind: 'markdown', markdown: 'Meet the team.\n' });
  t.same(calls(), [[`/v1/spaces/${space.id}/content/page/${dayOne.id}`, { format: 'markdown' }]]);
});

t.test('a published space links its pages on the published site', async (t) => {
  const published = fake.addSpace('Docs', { published: 'https://docs.acme.com/' });
  const intro = fake.addPage(published, undefined, 'Introduction', { markdown: 'Hi.\n' });
  const guides = fake.addPage(published, undefined, 'Guides', { type: 'group' });
  const install = fake.addPage(published, guides, 'Install', { markdown: 'npm i.\n' });
  const listing = await gitbookConnector.list(reference(published), context());
  t.same(
    listing.documents.map((document) => [document.id, document.url]),
    [
      [intro.id, 'https://docs.acme.com/introduction'],
      [install.id, 'https://docs.acme.com/guides/install'],
    ],
  );
});

t.test('a sync re-reads only the pages that changed', async (t) => {
  const read = context();
  const before = await gitbookConnector.list(reference(space), read);
  fake.editPage(space, pages.faq, 'Why? Because we can.\n');
  const after = await gitbookConnector.list(reference(space), read);
  const changed = after.documents.filter((document, at) => document.changeToken !== before.documents[at]!.changeToken);
  t.same(
    changed.map((document) => document.title),
    ['FAQ'],
  );
  t.equal(changed[0]!.changeToken, pageToken(pages.faq));
});

t.test('the listing stops at the document limit', async (t) => {
  const listing = await gitbookConnector.list(reference(space), context({ maxDocuments: 3 }));
  t.same(
    listing.documents.map((document) => document.title),
    ['Welcome', 'History', 'Onboarding'],
  );
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  fake.answerNext('content', {
    status: 429,
    headers: { 'retry-after': '1', 'x-ratelimit-remaining': '0' },
    body: JSON.stringify({ error: { code: 429, message: 'API rate limit exceeded. Please try again in 1 seconds' } }),
  });
  const waits: number[] = [];
  const listing = await gitbookConnector.list(reference(space), context({ waits }));
  t.same(waits, [1000]);
  t.equal(listing.documents.length, 5);
  t.same(
    fake.requests.map((request) => [request.path, request.status, request.answered['x-ratelimit-remaining']]),
    [
      [`/v1/spaces/${space.id}`, 200, '59'],
      [`/v1/spaces/${space.id}/content`, 429, '0'],
      [`/v1/spaces/${space.id}/content`, 200, '57'],
    ],
  );
});

t.test('GitBook still limiting after the retries is a readable error', async (t) => {
  for (let i = 0; i < 4; i += 1) {
    fake.answerNext('space', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: JSON.stringify({ error: { code: 429, message: 'API rate limit exceeded.' } }),
    });
  }
  const error = await failure(gitbookConnector.list(reference(space), context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'GitBook is limiting requests; try again later.');
});

t.test('a rejected token is refreshed once, then the call succeeds', async (t) => {
  const expired = token();
  fake.tokens.delete(expired);
  const fresh = token();
  const read = context({ tokens: [expired, fresh] });
  const listing = await gitbookConnector.list(reference(space), read);
  t.equal(read.auth.refreshes, 1);
  t.equal(listing.documents.length, 5);
  t.same(
    fake.requests.map((request) => [request.path, request.token, request.status]),
    [
      [`/v1/spaces/${space.id}`, expired, 401],
      [`/v1/spaces/${space.id}`, fresh, 200],
      [`/v1/spaces/${space.id}/content`, fresh, 200],
    ],
  );

  // A page read refreshes the same way.
  fake.tokens.delete(fresh);
  const later = token();
  const download = context({ tokens: [fresh, later] });
  const fetched = await gitbookConnector.fetch(reference(space), listing.documents[0]!, download);
  t.same(fetched, { kind: 'markdown', markdown: '# Welcome\n\nHello.\n' });
  t.equal(download.auth.refreshes, 1);
});

t.test('a revoked token asks the owner to reconnect', async (t) => {
  const first = token();
  const second = token();
  fake.tokens.clear();
  const read = context({ tokens: [first, second] });
  const error = await failure(gitbookConnector.list(reference(space), read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect GitBook.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.token, request.status, request.answered['content-type']]),
    [
      [first, 401, 'application/json; charset=utf-8'],
      [second, 401, 'application/json; charset=utf-8'],
    ],
  );

  // A personal token cannot be refreshed: the connection layer says reconnect at once.
  const personal = await failure(gitbookConnector.list(reference(space), context({ tokens: [first] })));
  t.ok(personal instanceof ReconnectError);
  t.equal(personal.message, 'Reconnect GitBook.');

  const none = await failure(gitbookConnector.list(reference(space), { ...context(), auth: undefined }));
  t.ok(none instanceof ReconnectError);
  t.equal(none.message, 'Reconnect GitBook.');
});

t.test('a page over the size cap: no size is listed, and the read is stopped at the cap', async (t) => {
  const big = fake.addPage(space, undefined, 'Big', { markdown: 'x'.repeat(10_000) });
  const streamed = fake.addPage(space, undefined, 'Streamed', { markdown: 'y'.repeat(10_000), chunked: true });
  // The tree itself is metadata and is read whole under a small cap.
  const read = context({ maxDocumentBytes: 4096 });
  const listing = await gitbookConnector.list(reference(space), read);
  const bigDocument = listing.documents.find((document) => document.id === big.id)!;
  t.equal(bigDocument.size, null);
  const host = new URL(fake.url).host;
  const declared = await failure(gitbookConnector.fetch(reference(space), bigDocument, read));
  t.ok(declared instanceof ConnectorError);
  t.equal(declared.message, `${host} sent more than 4 KB; the limit is 4 KB.`);

  const streamedDocument = listing.documents.find((document) => document.id === streamed.id)!;
  const cut = await failure(gitbookConnector.fetch(reference(space), streamedDocument, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${host} sent more than 4 KB; the limit is 4 KB.`);
  t.equal(fake.requests.at(-1)!.answered['content-length'], undefined);
});

t.test('deleted pages are not listed, and one deleted after listing is gone', async (t) => {
  const read = context();
  fake.removePage(space, pages.history);
  const listing = await gitbookConnector.list(reference(space), read);
  t.same(
    listing.documents.map((document) => document.title),
    ['Welcome', 'Onboarding', 'Day one', 'FAQ'],
  );

  fake.removePage(space, pages.onboarding);
  const gone = await failure(gitbookConnector.fetch(reference(space), listing.documents[2]!, read));
  t.ok(gone instanceof DocumentGoneError);
  t.equal(gone.message, 'GitBook no longer has the page Day one.');
  t.same(fake.requests.at(-1)!.status, 404);
});

t.test('a space in the trash or out of reach fails the source with a reason', async (t) => {
  fake.trash(space);
  const trashed = await failure(gitbookConnector.list(reference(space), context()));
  t.ok(trashed instanceof ConnectorError);
  t.equal(trashed.message, 'The GitBook space Handbook is in the trash.');

  const missing = await failure(gitbookConnector.list('https://app.gitbook.com/s/NoSuchSpace000000000', context()));
  t.ok(missing instanceof ConnectorError);
  t.notOk(missing instanceof DocumentGoneError);
  t.equal(missing.message, 'GitBook has no space NoSuchSpace000000000, or the token may not read it.');

  const other = fake.addSpace('Other');
  fake.answerNext('space', {
    status: 403,
    body: JSON.stringify({ error: { code: 403, message: 'You do not have access to this space.' } }),
  });
  const denied = await failure(gitbookConnector.list(reference(other), context()));
  t.equal(denied.message, 'GitBook refused access (HTTP 403): You do not have access to this space.');

  fake.answerNext('content', { status: 500, body: JSON.stringify({ error: { code: 500, message: 'Oops.' } }) });
  const broken = await failure(gitbookConnector.list(reference(other), context()));
  t.equal(broken.message, 'GitBook answered HTTP 500: Oops.');

  fake.answerNext('page', { status: 200, body: JSON.stringify({ id: 'x', type: 'document', document: {} }) });
  const document = { id: pages.faq.id, title: 'FAQ', size: null, changeToken: '', url: '' };
  const noMarkdown = await failure(gitbookConnector.fetch(reference(other), document, context()));
  t.equal(noMarkdown.message, 'GitBook sent the page FAQ without its Markdown.');
});

t.test('a computed page is re-read whenever the space changes', async (t) => {
  fake.answerNext('content', {
    status: 200,
    body: JSON.stringify({
      object: 'revision',
      id: 'ReV00000000000000042',
      pages: [
        {
          id: 'PaGe0000000000000042',
          title: 'API reference',
          kind: 'sheet',
          type: 'document',
          path: 'api-reference',
          urls: { app: appUrl(space, 'api-reference') },
          computed: { type: 'builtin:openapi', props: { doc: 'petstore' } },
          computedSeed: 'seed',
          pages: [],
        },
      ],
    }),
  });
  const listing = await gitbookConnector.list(reference(space), context());
  t.same(listing.documents, [
    {
      id: 'PaGe0000000000000042',
      title: 'API reference',
      size: null,
      changeToken: createHash('sha256').update('ReV00000000000000042\nPaGe0000000000000042').digest('hex'),
      url: appUrl(space, 'api-reference'),
    },
  ]);
});

t.test('no error message holds a token', async (t) => {
  t.ok(messages.length >= 10);
  const leaks = messages.filter((message) => issued.some((issuedToken) => message.includes(issuedToken)));
  t.same(leaks, []);
});
