import t from 'tap';
import { ValidationError } from '../../../src/errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from '../../../src/sources/connectors/connector-errors.ts';
import type { ConnectorDocument } from '../../../src/sources/connectors/connector.ts';
import { notionConnector } from '../../../src/sources/connectors/notion-connector.ts';
import { FakeNotion, type BlockSpec } from '../../fakes/fake-notion.ts';
import { connectorTestBed } from '../../support/connector-context.ts';

const fake = await new FakeNotion().start();
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
  reconnect: 'Reconnect Notion.',
  baseUrls: { notion: fake.url },
});

/** The requests the fake received, as `route id [cursor]`. */
function calls(): string[] {
  return fake.requests.map((request) => {
    const id = request.path.split('/')[3];
    const cursor = request.query.start_cursor ?? (request.body?.start_cursor as string | undefined);
    return [request.route, id, cursor].filter(Boolean).join(' ');
  });
}

function hex(id: string): string {
  return id.replaceAll('-', '');
}

function document(id: string, title: string): ConnectorDocument {
  const page = fake.page(id);
  return { id, title, size: null, changeToken: page.edited, url: page.url };
}

const EVERY_KIND: BlockSpec[] = [
  { type: 'heading_1', text: 'Welcome' },
  { type: 'paragraph', text: 'Read this first.\nThen ask.' },
  { type: 'bulleted_list_item', text: 'Be kind', children: [{ type: 'bulleted_list_item', text: 'Always' }] },
  { type: 'bulleted_list_item', text: 'Be brief' },
  { type: 'numbered_list_item', text: 'Open the door' },
  { type: 'numbered_list_item', text: 'Walk in', children: [{ type: 'paragraph', text: 'Say hello.' }] },
  { type: 'to_do', text: 'Badge', checked: true },
  { type: 'to_do', text: 'Laptop' },
  { type: 'toggle', text: 'More', children: [{ type: 'paragraph', text: 'Hidden detail.' }] },
  { type: 'quote', text: 'Less is more.' },
  { type: 'callout', text: 'Mind the gap.', emoji: '⚠️' },
  { type: 'code', text: 'npm install\nnpm test', language: 'shell' },
  {
    type: 'table',
    children: [
      { type: 'table_row', cells: ['Plan', 'Price'] },
      { type: 'table_row', cells: ['Free', '0 | none'] },
    ],
  },
  { type: 'divider' },
  { type: 'heading_2', text: 'Columns' },
  {
    type: 'column_list',
    children: [
      { type: 'column', children: [{ type: 'paragraph', text: 'Left' }] },
      { type: 'column', children: [{ type: 'paragraph', text: 'Right' }] },
    ],
  },
  { type: 'image', url: 'https://example.com/diagram.png', caption: 'A diagram' },
  { type: 'bookmark', url: 'https://example.com/guide', caption: 'The guide' },
  { type: 'equation', expression: 'E = mc^2' },
  { type: 'table_of_contents' },
  { type: 'paragraph', text: '' },
];

const EVERY_KIND_MARKDOWN = `# Handbook

# Welcome

Read this first.
Then ask.

- Be kind
  - Always
- Be brief

1. Open the door
2. Walk in

   Say hello.

- [x] Badge
- [ ] Laptop

More

Hidden detail.

> Less is more.

> ⚠️ Mind the gap.

\`\`\`shell
npm install
npm test
\`\`\`

| Plan | Price |
| --- | --- |
| Free | 0 \\| none |

---

## Columns

Left

Right

A diagram

[The guide](https://example.com/guide)

$$
E = mc^2
$$
`;

/**
 * A wiki: a page in a toggle, a page with a sub-page, an inline database (one of its pages trashed)
 * and a trashed page.
 */
function wiki() {
  const root = fake.addPage('Team Wiki', { blocks: [{ type: 'paragraph', text: 'Start here.' }] });
  const [toggle] = fake.append(root, [{ type: 'toggle', text: 'More pages' }]);
  const policies = fake.addPage('Policies', { parent: toggle, blocks: [{ type: 'paragraph', text: 'Be kind.' }] });
  const onboarding = fake.addPage('Onboarding', { parent: root, blocks: [{ type: 'paragraph', text: 'Day one.' }] });
  const firstWeek = fake.addPage('First week', { parent: onboarding, blocks: [{ type: 'paragraph', text: 'Meet.' }] });
  const faq = fake.addDatabase('FAQ', { parent: root });
  const rows = ['How do I reset my password?', 'Where is the office?', 'Old question', 'Who pays for lunch?'].map(
    (title) => fake.addRow(faq, title, [{ type: 'paragraph', text: `Answer: ${title}` }]),
  );
  fake.trash(rows[2]!);
  const drafts = fake.addPage('Drafts', { parent: root, blocks: [{ type: 'paragraph', text: 'Unfinished.' }] });
  fake.trash(drafts);
  return { root, policies, onboarding, firstWeek, faq, rows, drafts };
}

t.beforeEach(() => fake.reset());

t.test('the connector reads Notion through a connection', async (t) => {
  const { type, service, connectionOptional } = notionConnector;
  t.same({ type, service, connectionOptional }, { type: 'notion', service: 'notion', connectionOptional: false });
});

t.test('page and database links and ids become their canonical form', async (t) => {
  const id = '1f2e3d4c5b6a47988776655443322110';
  const canonical = `https://www.notion.so/${id}`;
  const accepted = [
    `https://www.notion.so/acme/Team-Handbook-${id}`,
    `https://www.notion.so/acme/Team-Handbook-${id}?pvs=4`,
    `https://www.notion.so/Team-Handbook-${id}#9a8b7c6d5e4f40312233445566778899`,
    `https://notion.so/${id}`,
    `https://www.notion.so/acme/${id}?v=0a1b2c3d4e5f46778899aabbccddeeff`,
    `https://www.notion.so/${id}?v=0a1b2c3d4e5f46778899aabbccddeeff&pvs=4`,
    `https://acme.notion.site/Team-Handbook-${id}`,
    `http://www.notion.so/acme/Team-Handbook-${id.toUpperCase()}`,
    `www.notion.so/acme/Team-Handbook-${id}`,
    `https://www.notion.so/acme/1f2e3d4c-5b6a-4798-8776-655443322110`,
    `  ${id}  `,
    '1f2e3d4c-5b6a-4798-8776-655443322110',
    '1F2E3D4C-5B6A-4798-8776-655443322110',
  ];
  for (const reference of accepted) t.equal(notionConnector.parseReference(reference), canonical, reference);

  const refused = [
    'https://www.notion.so/acme/Team-Handbook',
    'https://www.notion.so/my-integrations',
    `https://www.notion.so/acme/Team-Handbook-${id.slice(1)}`,
    `https://www.notion.so/acme/Team-Handbook-${id}0`,
    `https://www.notion.so/acme/Team-Handbook${id.replace('1f', 'zz')}`,
    `https://notion.so.evil.example/${id}`,
    `https://evil.example/notion.so/${id}`,
    `https://api.notion.com/v1/pages/${id}`,
    `ftp://www.notion.so/${id}`,
    id.slice(0, 31),
    '1f2e3d4c-5b6a-4798-8776-6554433221',
    'Team Handbook',
    '',
  ];
  for (const reference of refused) {
    const error = t.throws(() => notionConnector.parseReference(reference), reference) as Error;
    t.ok(error instanceof ValidationError, reference);
    t.equal(
      (error as ValidationError).message,
      'url must be a Notion page or database link or id, like ' +
        'https://www.notion.so/acme/Handbook-1f2e3d4c5b6a47988776655443322110 or 1f2e3d4c5b6a47988776655443322110.',
      reference,
    );
  }
});

t.test('a page without sub-pages is one document, read as Markdown', async (t) => {
  const id = fake.addPage('Handbook', { blocks: EVERY_KIND });
  fake.pageSize = 4;
  const read = context();
  const reference = notionConnector.parseReference(`https://www.notion.so/acme/Handbook-${hex(id)}`);
  const listing = await notionConnector.list(reference, read);
  t.same(listing, { title: 'Handbook', single: true, documents: [document(id, 'Handbook')] });
  t.equal(listing.documents[0]!.url, `https://www.notion.so/Handbook-${hex(id)}`);

  fake.requests.length = 0;
  const fetched = await notionConnector.fetch(reference, listing.documents[0]!, read);
  t.same(fetched, { kind: 'markdown', markdown: EVERY_KIND_MARKDOWN });
  // Twenty-one blocks in pages of four, then the children of each block that has them, in order.
  const blocks = fake.blockIds(id);
  const [column1, column2] = fake.blockIds(blocks[15]!);
  t.same(calls(), [
    `pages.retrieve ${id}`,
    `blocks.children.list ${id}`,
    ...[4, 8, 12, 16, 20].map((n) => `blocks.children.list ${id} ${blocks[n]}`),
    ...[2, 5, 8, 12, 15].map((n) => `blocks.children.list ${blocks[n]}`),
    `blocks.children.list ${column1}`,
    `blocks.children.list ${column2}`,
  ]);
  const issuedToken = await read.auth.accessToken();
  t.ok(fake.requests.every((request) => request.version === '2025-09-03' && request.token === issuedToken));
  t.ok(fake.requests.every((request) => request.route !== 'blocks.children.list' || request.query.page_size === '100'));

  // An edit moves the change token.
  fake.rename(id, 'Staff Handbook');
  const edited = await notionConnector.list(reference, read);
  t.same(edited.documents, [document(id, 'Staff Handbook')]);
  t.not(edited.documents[0]!.changeToken, listing.documents[0]!.changeToken);
});

t.test('a page is read with its sub-pages and the pages of its databases, each a document', async (t) => {
  const { root, policies, onboarding, firstWeek, faq, rows } = wiki();
  fake.pageSize = 2;
  const read = context();
  const listing = await notionConnector.list(`https://www.notion.so/${hex(root)}`, read);
  t.same(listing, {
    title: 'Team Wiki',
    single: false,
    documents: [
      document(root, 'Team Wiki'),
      document(policies, 'Policies'),
      document(onboarding, 'Onboarding'),
      document(rows[0]!, 'How do I reset my password?'),
      document(rows[1]!, 'Where is the office?'),
      document(rows[3]!, 'Who pays for lunch?'),
      document(firstWeek, 'First week'),
    ],
  });
  const [, toggle, , , drafts] = fake.blockIds(root);
  const source = fake.dataSourceOf(faq);
  // The root's five blocks (the trashed page's gone) in pages of two, the toggle's, the sub-pages';
  // the database through its data source, three pages in pages of two.
  t.same(calls(), [
    `pages.retrieve ${root}`,
    `blocks.children.list ${root}`,
    `blocks.children.list ${root} ${onboarding}`,
    `blocks.children.list ${toggle}`,
    `pages.retrieve ${policies}`,
    `blocks.children.list ${policies}`,
    `pages.retrieve ${onboarding}`,
    `blocks.children.list ${onboarding}`,
    `databases.retrieve ${faq}`,
    `dataSources.query ${source}`,
    `dataSources.query ${source} ${rows[3]}`,
    `pages.retrieve ${firstWeek}`,
    `blocks.children.list ${firstWeek}`,
  ]);
  t.notOk(fake.blockIds(root).slice(0, 4).includes(drafts!));
  t.same(
    fake.requests.filter((request) => request.route === 'dataSources.query').map((request) => request.body),
    [{ page_size: 100 }, { page_size: 100, start_cursor: rows[3] }],
  );

  // A page of the database is fetched like any page; the sub-page of a sub-page too.
  const row = await notionConnector.fetch(`https://www.notion.so/${hex(root)}`, listing.documents[4]!, read);
  t.same(row, { kind: 'markdown', markdown: '# Where is the office?\n\nAnswer: Where is the office?\n' });
  const sub = await notionConnector.fetch(`https://www.notion.so/${hex(root)}`, listing.documents[6]!, read);
  t.same(sub, { kind: 'markdown', markdown: '# First week\n\nMeet.\n' });
  // The root's own document leaves its sub-pages and database out.
  const own = await notionConnector.fetch(`https://www.notion.so/${hex(root)}`, listing.documents[0]!, read);
  t.same(own, { kind: 'markdown', markdown: '# Team Wiki\n\nStart here.\n\nMore pages\n' });
});

t.test('a database link lists its pages', async (t) => {
  const faq = fake.addDatabase('FAQ');
  const rows = ['One', 'Two', 'Three', 'Four', 'Five'].map((title) => fake.addRow(faq, title));
  fake.trash(rows[1]!);
  fake.pageSize = 2;
  const reference = notionConnector.parseReference(
    `https://www.notion.so/acme/${hex(faq)}?v=0a1b2c3d4e5f46778899aabbccddeeff&pvs=4`,
  );
  t.equal(reference, `https://www.notion.so/${hex(faq)}`);
  const listing = await notionConnector.list(reference, context());
  t.same(listing, {
    title: 'FAQ',
    single: false,
    documents: [
      document(rows[0]!, 'One'),
      document(rows[2]!, 'Three'),
      document(rows[3]!, 'Four'),
      document(rows[4]!, 'Five'),
    ],
  });
  const source = fake.dataSourceOf(faq);
  t.same(calls(), [
    `pages.retrieve ${faq}`,
    `databases.retrieve ${faq}`,
    `dataSources.query ${source}`,
    `dataSources.query ${source} ${rows[3]}`,
  ]);
  // Notion refuses a database id as a page: that is how a database is told from a page.
  t.same(JSON.parse(fake.requests[0]!.answered), {
    object: 'error',
    status: 400,
    code: 'validation_error',
    message: `Provided ID ${faq} is a database, not a page. Use the retrieve database API instead.`,
    request_id: (JSON.parse(fake.requests[0]!.answered) as { request_id: string }).request_id,
  });
});

t.test('the listing stops at the document limit', async (t) => {
  const { root, policies, onboarding } = wiki();
  const listing = await notionConnector.list(`https://www.notion.so/${hex(root)}`, context({ maxDocuments: 3 }));
  t.same(listing.documents, [
    document(root, 'Team Wiki'),
    document(policies, 'Policies'),
    document(onboarding, 'Onboarding'),
  ]);
  t.equal(listing.single, false);
  // The last page listed is not read for sub-pages.
  t.notOk(calls().includes(`blocks.children.list ${onboarding}`));

  const one = await notionConnector.list(`https://www.notion.so/${hex(root)}`, context({ maxDocuments: 1 }));
  t.same(one, { title: 'Team Wiki', single: false, documents: [document(root, 'Team Wiki')] });

  const faq = fake.addDatabase('Big FAQ');
  for (let i = 0; i < 5; i += 1) fake.addRow(faq, `Question ${i}`);
  fake.pageSize = 2;
  fake.requests.length = 0;
  const rows = await notionConnector.list(`https://www.notion.so/${hex(faq)}`, context({ maxDocuments: 2 }));
  t.same(
    rows.documents.map((row) => row.title),
    ['Question 0', 'Question 1'],
  );
  t.equal(fake.requests.filter((request) => request.route === 'dataSources.query').length, 1);
});

t.test('a 429 is waited for as Retry-After says, then the call succeeds', async (t) => {
  const id = fake.addPage('Handbook', { blocks: [{ type: 'paragraph', text: 'Hello.' }] });
  fake.answerNext('blocks.children.list', {
    status: 429,
    headers: { 'retry-after': '1' },
    body: JSON.stringify({
      object: 'error',
      status: 429,
      code: 'rate_limited',
      message: 'You have been rate limited. Please try again in a few minutes.',
    }),
  });
  const waits: number[] = [];
  const read = context({ waits });
  const fetched = await notionConnector.fetch(`https://www.notion.so/${hex(id)}`, document(id, 'Handbook'), read);
  t.same(fetched, { kind: 'markdown', markdown: '# Handbook\n\nHello.\n' });
  t.same(waits, [1000]);
  // Waited once, by the HTTP layer: the SDK did not retry on top.
  t.same(
    fake.requests.map((request) => [request.route, request.status]),
    [
      ['pages.retrieve', 200],
      ['blocks.children.list', 429],
      ['blocks.children.list', 200],
    ],
  );
});

t.test('Notion still limiting after the retries is a readable error', async (t) => {
  const id = fake.addPage('Handbook');
  for (let i = 0; i < 4; i += 1) {
    fake.answerNext('pages.retrieve', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: JSON.stringify({
        object: 'error',
        status: 429,
        code: 'rate_limited',
        message: 'You have been rate limited.',
      }),
    });
  }
  const error = await failure(notionConnector.list(`https://www.notion.so/${hex(id)}`, context()));
  t.ok(error instanceof ConnectorError);
  t.equal(error.message, 'Notion is limiting requests; try again later.');
  t.equal(fake.requests.length, 4);
});

t.test('a refused token is asked about once, then the call succeeds', async (t) => {
  const id = fake.addPage('Handbook', { blocks: [{ type: 'paragraph', text: 'Hello.' }] });
  const stale = token();
  fake.revokeTokens();
  const fresh = token();
  const read = context({ tokens: [stale, fresh] });
  const listing = await notionConnector.list(`https://www.notion.so/${hex(id)}`, read);
  t.equal(read.auth.refreshes, 1);
  t.same(listing.documents, [document(id, 'Handbook')]);
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['pages.retrieve', stale, 401],
      ['pages.retrieve', fresh, 200],
      ['blocks.children.list', fresh, 200],
    ],
  );
  t.same(JSON.parse(fake.requests[0]!.answered), {
    object: 'error',
    status: 401,
    code: 'unauthorized',
    message: 'API token is invalid.',
    request_id: JSON.parse(fake.requests[0]!.answered).request_id,
  });

  // A fetch asks the same way.
  fake.revokeTokens();
  const later = token();
  const again = context({ tokens: [fresh, later] });
  const fetched = await notionConnector.fetch(`https://www.notion.so/${hex(id)}`, listing.documents[0]!, again);
  t.same(fetched, { kind: 'markdown', markdown: '# Handbook\n\nHello.\n' });
  t.equal(again.auth.refreshes, 1);
});

t.test('a revoked token asks the owner to reconnect', async (t) => {
  const id = fake.addPage('Handbook');
  const first = token();
  const second = token();
  fake.revokeTokens();
  const read = context({ tokens: [first, second] });
  const error = await failure(notionConnector.list(`https://www.notion.so/${hex(id)}`, read));
  t.ok(error instanceof ReconnectError);
  t.equal(error.message, 'Reconnect Notion.');
  t.equal(read.auth.refreshes, 1);
  t.same(
    fake.requests.map((request) => [request.route, request.token, request.status]),
    [
      ['pages.retrieve', first, 401],
      ['pages.retrieve', second, 401],
    ],
  );

  // The connection itself refuses (a static token cannot be renewed): the same words.
  const refused = await failure(
    notionConnector.fetch(`https://www.notion.so/${hex(id)}`, document(id, 'Handbook'), context({ tokens: [first] })),
  );
  t.ok(refused instanceof ReconnectError);
  t.equal(refused.message, 'Reconnect Notion.');

  const none = await failure(
    notionConnector.list(`https://www.notion.so/${hex(id)}`, { ...context(), auth: undefined }),
  );
  t.ok(none instanceof ReconnectError);
  t.equal(none.message, 'Reconnect Notion.');
});

t.test('a page over the size cap: its size is unknown when listed, and reading it stops at the cap', async (t) => {
  const big = fake.addPage('Big', { blocks: [{ type: 'paragraph', text: 'x'.repeat(10_000) }] });
  // Listing reads a page's blocks too (for its sub-pages), under a cap that lets this one through.
  const listing = await notionConnector.list(
    `https://www.notion.so/${hex(big)}`,
    context({ maxDocumentBytes: 65_536 }),
  );
  t.same(listing.documents, [document(big, 'Big')]);
  t.equal(listing.documents[0]!.size, null);

  // Notion sends the blocks without a length: the HTTP layer cuts the answer at the cap.
  const read = context({ maxDocumentBytes: 4096 });
  fake.chunked = true;
  fake.requests.length = 0;
  const cut = await failure(notionConnector.fetch(`https://www.notion.so/${hex(big)}`, listing.documents[0]!, read));
  t.ok(cut instanceof ConnectorError);
  t.equal(cut.message, `${new URL(fake.url).host} sent more than 4 KB; the limit is 4 KB.`);
  t.same(
    fake.requests.map((request) => [request.route, request.chunked]),
    [
      ['pages.retrieve', true],
      ['blocks.children.list', true],
    ],
  );

  // Many small answers that add up past the cap are refused too.
  fake.chunked = false;
  fake.pageSize = 1;
  const long = fake.addPage('Long', {
    blocks: Array.from({ length: 8 }, (_, i) => ({ type: 'paragraph', text: `${i}`.repeat(800) })),
  });
  const over = await failure(notionConnector.fetch(`https://www.notion.so/${hex(long)}`, document(long, 'Long'), read));
  t.ok(over instanceof ConnectorError);
  t.equal(over.message, 'The Notion page Long is larger than the 4 KB limit.');
  t.equal(fake.requests.filter((request) => request.path === `/v1/blocks/${long}/children`).length, 6);
});

t.test('trashed pages are not listed, and one trashed or deleted after listing is gone', async (t) => {
  const { root, onboarding, policies, rows } = wiki();
  const read = context();
  const listing = await notionConnector.list(`https://www.notion.so/${hex(root)}`, read);
  const titles = listing.documents.map((listed) => listed.title);
  t.notOk(titles.includes('Drafts'));
  t.notOk(titles.includes('Old question'));
  t.equal(titles.length, 7);

  fake.trash(onboarding);
  const trashed = await failure(
    notionConnector.fetch(`https://www.notion.so/${hex(root)}`, listing.documents[2]!, read),
  );
  t.ok(trashed instanceof DocumentGoneError);
  t.equal(trashed.message, 'Notion no longer has the page Onboarding.');

  fake.delete(policies);
  const deleted = await failure(
    notionConnector.fetch(`https://www.notion.so/${hex(root)}`, listing.documents[1]!, read),
  );
  t.ok(deleted instanceof DocumentGoneError);
  t.equal(deleted.message, 'Notion no longer has the page Policies.');

  // Neither is listed again; the trashed page takes its sub-page with it.
  const again = await notionConnector.list(`https://www.notion.so/${hex(root)}`, read);
  t.same(
    again.documents.map((listed) => listed.id),
    [root, rows[0], rows[1], rows[3]],
  );
});

t.test('a reference that does not resolve says what is wrong', async (t) => {
  const missing = '0a1b2c3d-4e5f-4677-8899-aabbccddeeff';
  const unknown = await failure(notionConnector.list(`https://www.notion.so/${hex(missing)}`, context()));
  t.ok(unknown instanceof ConnectorError);
  t.equal(unknown.message, `Notion has no page or database ${missing} shared with the integration.`);
  t.same(calls(), [`pages.retrieve ${missing}`, `databases.retrieve ${missing}`]);

  const { root, faq } = wiki();
  fake.trash(root);
  const trashedPage = await failure(notionConnector.list(`https://www.notion.so/${hex(root)}`, context()));
  t.ok(trashedPage instanceof ConnectorError);
  t.equal(trashedPage.message, 'The Notion page Team Wiki is in the trash.');
  fake.trash(faq);
  const trashedDatabase = await failure(notionConnector.list(`https://www.notion.so/${hex(faq)}`, context()));
  t.equal(trashedDatabase.message, 'The Notion database FAQ is in the trash.');

  fake.answerNext('pages.retrieve', {
    status: 403,
    body: JSON.stringify({
      object: 'error',
      status: 403,
      code: 'restricted_resource',
      message: 'Insufficient permissions for this endpoint.',
    }),
  });
  const restricted = await failure(notionConnector.list(`https://www.notion.so/${hex(root)}`, context()));
  t.ok(restricted instanceof ConnectorError);
  t.equal(restricted.message, 'Notion refused access (HTTP 403): Insufficient permissions for this endpoint.');

  const other = fake.addPage('Other');
  fake.answerNext('blocks.children.list', {
    status: 502,
    headers: { 'content-type': 'text/html' },
    body: '<html><body>Bad gateway</body></html>',
  });
  const broken = await failure(
    notionConnector.fetch(`https://www.notion.so/${hex(other)}`, document(other, 'Other'), context()),
  );
  t.ok(broken instanceof ConnectorError);
  t.equal(broken.message, 'Notion answered HTTP 502.');
});

t.test('no error message holds a token, and the SDK prints nothing', async (t) => {
  const id = fake.addPage('Handbook');
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const captured = methods.map((method) => t.capture(console, method));
  const stale = token();
  fake.revokeTokens();
  await failure(notionConnector.list(`https://www.notion.so/${hex(id)}`, context({ tokens: [stale] })));
  fake.answerNext('pages.retrieve', {
    status: 500,
    body: JSON.stringify({
      object: 'error',
      status: 500,
      code: 'internal_server_error',
      message: 'Unexpected error occurred.',
    }),
  });
  const failed = await failure(notionConnector.list(`https://www.notion.so/${hex(id)}`, context()));
  t.equal(failed.message, 'Notion answered HTTP 500: Unexpected error occurred.');
  const printed = captured.flatMap((calls) => calls());
  t.same(printed, []);
  t.ok(messages.length >= 15, `${messages.length}`);
  const leaks = messages.filter((message) => issued.some((issuedToken) => message.includes(issuedToken)));
  t.same(leaks, []);
});
