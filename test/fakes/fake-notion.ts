import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Json = Record<string, unknown>;

/** A block as a test describes it; the fake turns it into Notion's wire shape (rich text and all). */
export interface BlockSpec {
  type: string;
  text?: string;
  children?: BlockSpec[];
  checked?: boolean;
  language?: string;
  emoji?: string;
  /** A `table_row`'s cells. */
  cells?: string[];
  url?: string;
  caption?: string;
  expression?: string;
}

/** A request as the fake received it. */
export interface NotionRequest {
  method: string;
  /** `pages.retrieve`, `databases.retrieve`, `dataSources.query`, `blocks.children.list` (the SDK's names). */
  route: string;
  path: string;
  query: Record<string, string>;
  body: Json | null;
  /** The bearer token it carried ('' for none), and its `Notion-Version`. */
  token: string;
  version: string | undefined;
  status: number;
  /** Whether the answer went without a Content-Length. */
  chunked: boolean;
  /** The body it answered. */
  answered: string;
}

/** A canned answer for the next call of a route, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

interface FakePage {
  id: string;
  title: string;
  /** `title` on a plain page; a database's title column (`Name`) on its pages. */
  titleProperty: string;
  parent: Json;
  blocks: string[];
  inTrash: boolean;
  deleted: boolean;
  edited: string;
}

interface FakeDatabase {
  id: string;
  title: string;
  parent: Json;
  dataSourceId: string;
  rows: string[];
  inTrash: boolean;
}

interface FakeBlock {
  id: string;
  type: string;
  content: Json;
  parent: Json;
  children: string[];
}

type Answer = { status: number; headers?: Record<string, string>; body: string };

const VERSION = '2025-09-03';
const CREATED = '2025-03-14T09:26:00.000Z';
const WORKSPACE = { type: 'workspace', workspace: true };
const USER = { object: 'user', id: '6b1c8a2e-4d3f-4e5a-9b7c-0d1e2f3a4b5c' };
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * A loopback Notion API (version 2025-09-03) for `@notionhq/client` pointed at it with `baseUrl`:
 * `GET /v1/pages/{id}`, `GET /v1/databases/{id}` (with its `data_sources`), `POST
 * /v1/data_sources/{id}/query` and `GET /v1/blocks/{id}/children`, paginated with `start_cursor` /
 * `page_size` and answered `{object: "list", results, next_cursor, has_more}` (the cursor is the id
 * of the next result, as Notion's are). Requests need `Authorization: Bearer` with a token the fake
 * issued and a `Notion-Version`. Errors as Notion sends them: `{object: "error", status, code,
 * message, request_id}` — 401 `unauthorized`, 404 `object_not_found` for what is deleted or not
 * shared, 400 `validation_error` for a database id asked for as a page. Trashed pages stay
 * retrievable (`in_trash: true`) but leave their parent's blocks and their database's queries.
 */
export class FakeNotion {
  readonly requests: NotionRequest[] = [];
  /** Results per page of a listing (and Notion's own limit of 100 above it). */
  pageSize = 100;
  /** Send every answer without a Content-Length, as a stream of unknown size. */
  chunked = false;
  url = '';
  private readonly tokens = new Set<string>();
  private readonly pages = new Map<string, FakePage>();
  private readonly databases = new Map<string, FakeDatabase>();
  private readonly blocks = new Map<string, FakeBlock>();
  private readonly canned = new Map<string, CannedAnswer[]>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private counter = 0;
  private minutes = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.route(req, Buffer.concat(chunks), res));
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Forgets content, tokens, canned answers and requests. */
  reset(): void {
    for (const store of [this.tokens, this.pages, this.databases, this.blocks, this.canned]) store.clear();
    this.requests.length = 0;
    this.pageSize = 100;
    this.chunked = false;
  }

  /** An internal integration token, as Notion shows one (`ntn_…`). */
  issueToken(): string {
    const token = `ntn_${randomBytes(20).toString('hex')}`;
    this.tokens.add(token);
    return token;
  }

  /** Every token stops working, as when the integration's secret is refreshed or it is deleted. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  /** The next call of `route` (e.g. `blocks.children.list`) gets `answer`. */
  answerNext(route: string, answer: CannedAnswer): void {
    this.canned.set(route, [...(this.canned.get(route) ?? []), answer]);
  }

  /** Adds a page, at the workspace's top or as a sub-page (a `child_page` block at the end of its parent). */
  addPage(title: string, options: { parent?: string; blocks?: BlockSpec[] } = {}): string {
    const id = this.nextId();
    const parent = options.parent ? this.attach(options.parent, id, 'child_page') : WORKSPACE;
    this.pages.set(id, { id, title, titleProperty: 'title', parent, blocks: [], ...this.fresh() });
    this.append(id, options.blocks ?? []);
    return id;
  }

  /** Adds a database (a `child_database` block in its parent page) with one data source. */
  addDatabase(title: string, options: { parent?: string } = {}): string {
    const id = this.nextId();
    const parent = options.parent ? this.attach(options.parent, id, 'child_database') : WORKSPACE;
    this.databases.set(id, { id, title, parent, dataSourceId: this.nextId(), rows: [], inTrash: false });
    return id;
  }

  /** Adds a page to a database's data source. */
  addRow(databaseId: string, title: string, blocks: BlockSpec[] = []): string {
    const database = this.databases.get(databaseId)!;
    const id = this.nextId();
    const parent = { type: 'data_source_id', data_source_id: database.dataSourceId, database_id: database.id };
    this.pages.set(id, { id, title, titleProperty: 'Name', parent, blocks: [], ...this.fresh() });
    database.rows.push(id);
    this.append(id, blocks);
    return id;
  }

  /** Appends blocks (and their children) to a page or block; returns their ids. */
  append(parentId: string, specs: BlockSpec[]): string[] {
    const page = this.pages.get(parentId);
    const list = page ? page.blocks : this.blocks.get(parentId)!.children;
    const parent = page ? { type: 'page_id', page_id: parentId } : { type: 'block_id', block_id: parentId };
    const ids = specs.map((spec) => {
      const id = this.nextId();
      this.blocks.set(id, { id, type: spec.type, content: content(spec), parent, children: [] });
      this.append(id, spec.children ?? []);
      return id;
    });
    list.push(...ids);
    if (page) page.edited = this.tick();
    return ids;
  }

  /** Moves a page or database to the trash. */
  trash(id: string): void {
    const page = this.pages.get(id);
    if (page) page.inTrash = true;
    const database = this.databases.get(id);
    if (database) database.inTrash = true;
  }

  /** Deletes a page for good (emptied from the trash): Notion then answers 404. */
  delete(id: string): void {
    this.pages.get(id)!.deleted = true;
  }

  /** Edits a page's title, as a person would. */
  rename(id: string, title: string): void {
    const page = this.pages.get(id)!;
    page.title = title;
    page.edited = this.tick();
  }

  /** The page's `last_edited_time` and link, as Notion reports them. */
  page(id: string): { edited: string; url: string } {
    const page = this.pages.get(id)!;
    return { edited: page.edited, url: pageUrl(page) };
  }

  /** The ids of the blocks in a page or block, in order (child pages and databases included). */
  blockIds(parentId: string): string[] {
    return [...(this.pages.get(parentId)?.blocks ?? this.blocks.get(parentId)!.children)];
  }

  dataSourceOf(databaseId: string): string {
    return this.databases.get(databaseId)!.dataSourceId;
  }

  private nextId(): string {
    this.counter += 1;
    return `1f2e3d4c-5b6a-4798-8776-${this.counter.toString(16).padStart(12, '0')}`;
  }

  /** Notion's edit times have minute precision. */
  private tick(): string {
    this.minutes += 1;
    return new Date(Date.parse(CREATED) + this.minutes * 60_000).toISOString();
  }

  private fresh(): Pick<FakePage, 'inTrash' | 'deleted' | 'edited'> {
    return { inTrash: false, deleted: false, edited: this.tick() };
  }

  /** Puts a child page's or database's block at the end of a page or block; returns the child's `parent`. */
  private attach(parentId: string, id: string, type: 'child_page' | 'child_database'): Json {
    const parent = this.pages.has(parentId)
      ? { type: 'page_id', page_id: parentId }
      : { type: 'block_id', block_id: parentId };
    this.blocks.set(id, { id, type, content: {}, parent, children: [] });
    (this.pages.get(parentId)?.blocks ?? this.blocks.get(parentId)!.children).push(id);
    return parent;
  }

  private route(req: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: NotionRequest = {
      method: req.method ?? 'GET',
      route: routeName(req.method ?? 'GET', url.pathname),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: null,
      token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '',
      version: typeof req.headers['notion-version'] === 'string' ? req.headers['notion-version'] : undefined,
      status: 0,
      chunked: this.chunked,
      answered: '',
    };
    this.requests.push(record);
    let answer: Answer;
    try {
      record.body = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Json) : null;
      answer = this.answer(record);
    } catch {
      answer = error(400, 'invalid_json', 'Error parsing JSON body.');
    }
    record.status = answer.status;
    record.answered = answer.body;
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
    // Written in two parts, so no Content-Length is sent.
    if (this.chunked) {
      res.write(answer.body.slice(0, 1));
      res.end(answer.body.slice(1));
    } else res.end(answer.body);
  }

  private answer(record: NotionRequest): Answer {
    if (!this.tokens.has(record.token)) return error(401, 'unauthorized', 'API token is invalid.');
    if (record.version === undefined) {
      return error(
        400,
        'missing_version',
        'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.',
      );
    }
    // The shapes served are version 2025-09-03's (databases with data sources); older ones differ.
    if (record.version !== VERSION) {
      return error(400, 'validation_error', `The fake Notion API serves Notion-Version ${VERSION} only.`);
    }
    if (record.route === '') return error(400, 'invalid_request_url', 'Invalid request URL.');
    const canned = this.canned.get(record.route)?.shift();
    if (canned) return canned;
    const id = decodeURIComponent(record.path.split('/')[3] ?? '');
    if (!UUID.test(id)) {
      const name = record.route === 'dataSources.query' ? 'data_source_id' : record.route.split('.')[0]!.slice(0, -1);
      return error(
        400,
        'validation_error',
        `path failed validation: path.${name}_id should be a valid uuid, instead was \`"${id}"\`.`,
      );
    }
    const uuid = dashed(id);
    switch (record.route) {
      case 'pages.retrieve':
        return this.retrievePage(uuid);
      case 'databases.retrieve':
        return this.retrieveDatabase(uuid);
      case 'dataSources.query':
        return this.query(uuid, record.body ?? {});
      default:
        return this.listChildren(uuid, record.query);
    }
  }

  private livePage(id: string): FakePage | undefined {
    const page = this.pages.get(id);
    return page && !page.deleted ? page : undefined;
  }

  private retrievePage(id: string): Answer {
    if (this.databases.has(id)) {
      return error(
        400,
        'validation_error',
        `Provided ID ${id} is a database, not a page. Use the retrieve database API instead.`,
      );
    }
    const page = this.livePage(id);
    if (!page) return notFound('page', id);
    return json(200, pageObject(page));
  }

  private retrieveDatabase(id: string): Answer {
    const database = this.databases.get(id);
    if (!database) return notFound('database', id);
    return json(200, {
      object: 'database',
      id,
      title: richText(database.title),
      description: [],
      parent: database.parent,
      is_inline: database.parent.type === 'page_id',
      in_trash: database.inTrash,
      archived: database.inTrash,
      is_locked: false,
      created_time: CREATED,
      last_edited_time: CREATED,
      data_sources: [{ id: database.dataSourceId, name: database.title }],
      icon: null,
      cover: null,
      url: `https://www.notion.so/${id.replaceAll('-', '')}`,
      public_url: null,
      request_id: randomUUID(),
    });
  }

  private query(dataSourceId: string, body: Json): Answer {
    const database = [...this.databases.values()].find((candidate) => candidate.dataSourceId === dataSourceId);
    if (!database) return notFound('data_source', dataSourceId);
    const rows = database.rows.map((id) => this.livePage(id)).filter((page) => page !== undefined && !page.inTrash);
    const size = pageSize(body.page_size);
    if (typeof size === 'string') return error(400, 'validation_error', `body failed validation: ${size}`);
    return this.list(
      rows.map((page) => pageObject(page!)),
      body.start_cursor,
      size,
      'page_or_data_source',
    );
  }

  private listChildren(id: string, query: Record<string, string>): Answer {
    const page = this.livePage(id);
    const block = this.blocks.get(id);
    if (!page && (!block || block.type === 'child_page')) return notFound('block', id);
    const size = pageSize(query.page_size === undefined ? undefined : Number(query.page_size));
    if (typeof size === 'string') return error(400, 'validation_error', `query failed validation: ${size}`);
    const results = (page ? page.blocks : block!.children)
      .map((childId) => this.blockObject(this.blocks.get(childId)!))
      .filter((result) => result !== undefined);
    return this.list(results, query.start_cursor, size, 'block');
  }

  /** A block on the wire; undefined for a child page or database that is trashed or deleted. */
  private blockObject(block: FakeBlock): Json | undefined {
    let content = block.content;
    let hasChildren = block.children.length > 0;
    if (block.type === 'child_page') {
      const page = this.livePage(block.id);
      if (!page || page.inTrash) return undefined;
      content = { title: page.title };
      hasChildren = page.blocks.length > 0;
    } else if (block.type === 'child_database') {
      const database = this.databases.get(block.id)!;
      if (database.inTrash) return undefined;
      content = { title: database.title };
    }
    return {
      object: 'block',
      id: block.id,
      parent: block.parent,
      created_time: CREATED,
      last_edited_time: CREATED,
      created_by: USER,
      last_edited_by: USER,
      has_children: hasChildren,
      archived: false,
      in_trash: false,
      type: block.type,
      [block.type]: content,
    };
  }

  private list(results: Json[], cursor: unknown, size: number, type: string): Answer {
    let start = 0;
    if (cursor !== undefined && cursor !== null) {
      start = results.findIndex((result) => result.id === cursor);
      if (start < 0)
        return error(400, 'validation_error', `The start_cursor provided is invalid: ${JSON.stringify(cursor)}`);
    }
    const page = results.slice(start, start + Math.min(size, this.pageSize));
    const next = results[start + page.length];
    return json(200, {
      object: 'list',
      results: page,
      next_cursor: next ? next.id : null,
      has_more: next !== undefined,
      type,
      [type]: {},
      request_id: randomUUID(),
    });
  }
}

function routeName(method: string, path: string): string {
  if (method === 'GET' && /^\/v1\/pages\/[^/]+$/.test(path)) return 'pages.retrieve';
  if (method === 'GET' && /^\/v1\/databases\/[^/]+$/.test(path)) return 'databases.retrieve';
  if (method === 'POST' && /^\/v1\/data_sources\/[^/]+\/query$/.test(path)) return 'dataSources.query';
  if (method === 'GET' && /^\/v1\/blocks\/[^/]+\/children$/.test(path)) return 'blocks.children.list';
  return '';
}

/** A `page_size` as Notion checks it (1 to 100, 100 when absent), or what is wrong with it. */
function pageSize(value: unknown): number | string {
  if (value === undefined) return 100;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    return `page_size should be a positive integer, instead was \`${JSON.stringify(value)}\`.`;
  }
  return value > 100 ? 'page_size should be ≤ `100`.' : value;
}

function dashed(id: string): string {
  const hex = id.replaceAll('-', '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Rich text as Notion sends it: text objects of at most 2000 characters each. */
export function richText(text: string): Json[] {
  const parts = text.match(/[\s\S]{1,2000}/g) ?? [];
  return parts.map((part) => ({
    type: 'text',
    text: { content: part, link: null },
    annotations: { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: 'default' },
    plain_text: part,
    href: null,
  }));
}

/** A block's content object for its type, as Notion shapes each. */
function content(spec: BlockSpec): Json {
  const rich = richText(spec.text ?? '');
  switch (spec.type) {
    case 'heading_1':
    case 'heading_2':
    case 'heading_3':
      return { rich_text: rich, is_toggleable: false, color: 'default' };
    case 'to_do':
      return { rich_text: rich, checked: spec.checked ?? false, color: 'default' };
    case 'code':
      return { caption: richText(spec.caption ?? ''), rich_text: rich, language: spec.language ?? 'plain text' };
    case 'callout':
      return { rich_text: rich, icon: { type: 'emoji', emoji: spec.emoji ?? '💡' }, color: 'gray_background' };
    case 'table':
      return {
        table_width: Math.max(...(spec.children ?? []).map((row) => row.cells?.length ?? 0)),
        has_column_header: true,
        has_row_header: false,
      };
    case 'table_row':
      return { cells: (spec.cells ?? []).map(richText) };
    case 'equation':
      return { expression: spec.expression ?? '' };
    case 'bookmark':
    case 'embed':
      return { caption: richText(spec.caption ?? ''), url: spec.url ?? '' };
    case 'image':
      return { caption: richText(spec.caption ?? ''), type: 'external', external: { url: spec.url ?? '' } };
    case 'divider':
    case 'column_list':
    case 'column':
    case 'table_of_contents':
    case 'breadcrumb':
      return {};
    default:
      return { rich_text: rich, color: 'default' };
  }
}

function pageUrl(page: FakePage): string {
  const slug = page.title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const hex = page.id.replaceAll('-', '');
  return `https://www.notion.so/${slug ? `${slug}-` : ''}${hex}`;
}

function pageObject(page: FakePage): Json {
  return {
    object: 'page',
    id: page.id,
    created_time: CREATED,
    last_edited_time: page.edited,
    created_by: USER,
    last_edited_by: USER,
    cover: null,
    icon: null,
    parent: page.parent,
    archived: page.inTrash,
    in_trash: page.inTrash,
    is_locked: false,
    properties: { [page.titleProperty]: { id: 'title', type: 'title', title: richText(page.title) } },
    url: pageUrl(page),
    public_url: null,
    request_id: randomUUID(),
  };
}

function json(status: number, body: Json): Answer {
  return { status, body: JSON.stringify(body) };
}

function error(status: number, code: string, message: string): Answer {
  return json(status, { object: 'error', status, code, message, request_id: randomUUID() });
}

function notFound(kind: string, id: string): Answer {
  return error(
    404,
    'object_not_found',
    `Could not find ${kind} with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
  );
}
