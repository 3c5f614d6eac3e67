import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A page of a fake space's tree. A document page with no Markdown is empty (it has no `documentId`). */
export interface FakeGitBookPage {
  id: string;
  title: string;
  type: 'document' | 'group' | 'link';
  slug: string;
  markdown: string;
  /** The document holding the body: a new one with every edit, as the page's `updatedAt` moves. */
  documentId: string | undefined;
  updatedAt: string | undefined;
  noIndex: boolean;
  /** A link page's target. */
  href: string;
  /** Send the page's content without `Content-Length`, so its size is unknown until it has arrived. */
  chunked: boolean;
  pages: FakeGitBookPage[];
}

export interface FakeGitBookSpace {
  id: string;
  title: string;
  organization: string;
  /** The published site's URL; undefined for a private space. */
  published: string | undefined;
  deletedAt: string | undefined;
  /** The current revision's id; every change to the tree or a page makes a new one. */
  revision: string;
  pages: FakeGitBookPage[];
}

/** A request as the fake received it. */
export interface GitBookRequest {
  method: string;
  /** The path without the query, `/v1/spaces/{spaceId}/content`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The bearer token it carried ('' for none). */
  token: string;
  status: number;
  answered: Record<string, string>;
}

/** The routes the fake serves, for canned answers. */
export type GitBookRoute = 'space' | 'content' | 'page';

/** A canned answer for the next call of a route, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;
type Answer = { status: number; headers?: Record<string, string>; body: string; chunked?: boolean };

const APP = 'https://app.gitbook.com';
const EPOCH = Date.parse('2025-03-14T09:26:53.000Z');
const RATE_LIMIT = 60;

/**
 * A loopback GitBook REST API (`/v1`), as GitBook's OpenAPI spec (`@gitbook/api`) describes it:
 * `GET /v1/spaces/{spaceId}` (a `Space`), `GET /v1/spaces/{spaceId}/content` (the current `Revision`
 * with its page tree: `document` pages with nested `pages`, `group` and `link` pages) and
 * `GET /v1/spaces/{spaceId}/content/page/{pageId}` (a `RevisionPage`, with `markdown` when
 * `format=markdown`, else a JSON `document`). Every request needs `Authorization: Bearer <token>`.
 * Errors are `{"error":{"code","message"}}` with the status; every answer carries GitBook's
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset` headers.
 */
export class FakeGitBook {
  readonly requests: GitBookRequest[] = [];
  /** The personal access tokens GitBook accepts. */
  readonly tokens = new Set<string>();
  url = '';
  private readonly spaces = new Map<string, FakeGitBookSpace>();
  private readonly canned = new Map<GitBookRoute, CannedAnswer[]>();
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private counter = 0;
  private remaining = RATE_LIMIT;

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => this.route(req, res));
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    this.server = server;
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Forgets spaces, tokens, canned answers and requests. */
  reset(): void {
    this.spaces.clear();
    this.tokens.clear();
    this.canned.clear();
    this.requests.length = 0;
    this.remaining = RATE_LIMIT;
  }

  /** A new personal access token GitBook accepts. */
  issueToken(): string {
    const token = `gb_api_${this.nextId('tok').slice(3)}`;
    this.tokens.add(token);
    return token;
  }

  /** The next call of `route` gets `answer`. */
  answerNext(route: GitBookRoute, answer: CannedAnswer): void {
    this.canned.set(route, [...(this.canned.get(route) ?? []), answer]);
  }

  addSpace(title: string, options: { published?: string } = {}): FakeGitBookSpace {
    const space: FakeGitBookSpace = {
      id: this.nextId('SpAcE'),
      title,
      organization: this.nextId('OrG'),
      published: options.published,
      deletedAt: undefined,
      revision: this.nextId('ReV'),
      pages: [],
    };
    this.spaces.set(space.id, space);
    return space;
  }

  /** Adds a page at the end of `parent`'s pages (the space's top level when undefined). */
  addPage(
    space: FakeGitBookSpace,
    parent: FakeGitBookPage | undefined,
    title: string,
    options: Partial<Pick<FakeGitBookPage, 'type' | 'markdown' | 'noIndex' | 'href' | 'chunked'>> = {},
  ): FakeGitBookPage {
    const markdown = options.markdown ?? '';
    const page: FakeGitBookPage = {
      id: this.nextId('PaGe'),
      title,
      type: 'document',
      slug: title.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      documentId: undefined,
      updatedAt: undefined,
      noIndex: false,
      href: '',
      chunked: false,
      pages: [],
      ...options,
      markdown,
    };
    if (page.type === 'document' && markdown !== '') this.write(page, markdown);
    (parent ? parent.pages : space.pages).push(page);
    space.revision = this.nextId('ReV');
    return page;
  }

  /** Edits a page's body: a new document, a new edit time, a new revision of the space. */
  editPage(space: FakeGitBookSpace, page: FakeGitBookPage, markdown: string): void {
    this.write(page, markdown);
    space.revision = this.nextId('ReV');
  }

  /** Deletes a page (and its children) from the space's current revision. */
  removePage(space: FakeGitBookSpace, page: FakeGitBookPage): void {
    const remove = (pages: FakeGitBookPage[]) => {
      const at = pages.indexOf(page);
      if (at >= 0) pages.splice(at, 1);
      else for (const child of pages) remove(child.pages);
    };
    remove(space.pages);
    space.revision = this.nextId('ReV');
  }

  /** Moves the space to the trash. */
  trash(space: FakeGitBookSpace): void {
    space.deletedAt = this.timestamp();
  }

  private write(page: FakeGitBookPage, markdown: string): void {
    page.markdown = markdown;
    page.documentId = this.nextId('DoC');
    page.updatedAt = this.timestamp();
  }

  private nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${this.counter.toString().padStart(20 - prefix.length, '0')}`;
  }

  private timestamp(): string {
    return new Date(EPOCH + this.counter * 1000).toISOString();
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const record: GitBookRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      token: auth?.[1] ?? '',
      status: 0,
      answered: {},
    };
    this.requests.push(record);
    const answer = this.answer(record);
    this.remaining = Math.max(0, this.remaining - 1);
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': String(RATE_LIMIT),
      'x-ratelimit-remaining': String(this.remaining),
      'x-ratelimit-reset': String(Math.floor(EPOCH / 1000) + 60),
      ...answer.headers,
    };
    const body = Buffer.from(answer.body);
    if (!answer.chunked) headers['content-length'] = String(body.length);
    record.status = answer.status;
    record.answered = headers;
    res.writeHead(answer.status, headers);
    if (answer.chunked) {
      // Written in two parts without a length, the body arrives chunked.
      res.write(body.subarray(0, 1));
      res.end(body.subarray(1));
    } else res.end(body);
  }

  private answer(record: GitBookRequest): Answer {
    const match = /^\/v1\/spaces\/([^/]+)(\/content(?:\/page\/([^/]+))?)?$/.exec(record.path);
    if (record.method !== 'GET' || !match) return error(404, 'Not found');
    if (!record.token) return error(401, 'You must be authenticated to access this resource.');
    if (!this.tokens.has(record.token)) return error(401, 'Invalid or expired access token.');
    const route: GitBookRoute = match[3] !== undefined ? 'page' : match[2] !== undefined ? 'content' : 'space';
    const canned = this.canned.get(route)?.shift();
    if (canned) return canned;
    const space = this.spaces.get(decodeURIComponent(match[1]!));
    if (!space) return error(404, 'Space not found');
    if (route === 'space') return json(this.spaceJson(space));
    if (route === 'content') return json(this.revisionJson(space));
    return this.page(space, decodeURIComponent(match[3]!), record.query.format);
  }

  private page(space: FakeGitBookSpace, pageId: string, format: string | undefined): Answer {
    if (format !== undefined && format !== 'markdown' && format !== 'document') {
      return error(400, 'Invalid query parameter "format": must be one of document, markdown');
    }
    const found = find(space.pages, pageId, '');
    if (!found) return error(404, 'Page not found');
    const base = pageJson(space, found.page, found.parentPath);
    if (found.page.type !== 'document') return json(base);
    // An empty page has no document: the body is `{}`, as the spec's "Empty" document says.
    const body =
      format === 'markdown'
        ? { markdown: found.page.markdown }
        : found.page.documentId
          ? { document: { object: 'document', data: {}, nodes: paragraphs(found.page.markdown) } }
          : {};
    return { ...json({ ...base, ...body }), chunked: found.page.chunked };
  }

  private spaceJson(space: FakeGitBookSpace): Json {
    return {
      object: 'space',
      id: space.id,
      title: space.title,
      emoji: '',
      visibility: space.published ? 'public' : 'private',
      createdAt: new Date(EPOCH).toISOString(),
      updatedAt: this.timestamp(),
      ...(space.deletedAt ? { deletedAt: space.deletedAt } : {}),
      urls: {
        location: `${this.url}/v1/spaces/${space.id}`,
        app: `${APP}/o/${space.organization}/s/${space.id}/`,
        ...(space.published ? { published: space.published, public: space.published } : {}),
      },
      organization: space.organization,
      revision: space.revision,
      defaultLevel: 'inherit',
      comments: 0,
      changeRequests: 0,
      changeRequestsOpen: 0,
      changeRequestsDraft: 0,
      permissions: { view: true, access: true, admin: false, edit: false, comment: true },
    };
  }

  private revisionJson(space: FakeGitBookSpace): Json {
    return {
      object: 'revision',
      id: space.revision,
      parents: [],
      type: 'edits',
      pages: space.pages.map((page) => pageJson(space, page, '')),
      files: [],
      reusableContents: [],
      tags: [],
      createdAt: this.timestamp(),
      urls: {
        app: `${APP}/o/${space.organization}/s/${space.id}/~/revisions/${space.revision}/`,
        ...(space.published ? { published: space.published } : {}),
      },
    };
  }
}

function find(
  pages: FakeGitBookPage[],
  id: string,
  parentPath: string,
): { page: FakeGitBookPage; parentPath: string } | undefined {
  for (const page of pages) {
    if (page.id === id) return { page, parentPath };
    const below = find(page.pages, id, join(parentPath, page.slug));
    if (below) return below;
  }
  return undefined;
}

function join(parentPath: string, slug: string): string {
  return parentPath === '' ? slug : `${parentPath}/${slug}`;
}

/** A `RevisionPageDocument`, `RevisionPageGroup` or `RevisionPageLink`, with its children. */
function pageJson(space: FakeGitBookSpace, page: FakeGitBookPage, parentPath: string): Json {
  const common = { id: page.id, title: page.title, ...(page.updatedAt ? { updatedAt: page.updatedAt } : {}) };
  if (page.type === 'link') {
    return { ...common, kind: 'link', type: 'link', target: { kind: 'url', url: page.href }, href: page.href };
  }
  const path = join(parentPath, page.slug);
  const pages = page.pages.map((child) => pageJson(space, child, path));
  if (page.type === 'group') return { ...common, kind: 'group', type: 'group', slug: page.slug, path, pages };
  return {
    ...common,
    kind: 'sheet',
    type: 'document',
    urls: { app: `${APP}/o/${space.organization}/s/${space.id}/${path}` },
    slug: page.slug,
    path,
    pages,
    layout: { cover: false, title: true, description: true, tableOfContents: true, outline: true, pagination: true },
    tags: [],
    ...(page.noIndex ? { noIndex: true } : {}),
    ...(page.documentId ? { documentId: page.documentId } : {}),
  };
}

function paragraphs(markdown: string): Json[] {
  return markdown
    .split('\n\n')
    .map((text) => ({ object: 'block', type: 'paragraph', nodes: [{ object: 'text', leaves: [{ text }] }] }));
}

function json(body: unknown, status = 200): Answer {
  return { status, body: JSON.stringify(body) };
}

/** GitBook's error body. */
function error(status: number, message: string): Answer {
  return json({ error: { code: status, message } }, status);
}
