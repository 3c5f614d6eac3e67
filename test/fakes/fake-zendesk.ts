import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** An article of the fake help centre. `archived` and `deleted` ones are never listed nor shown. */
export interface FakeZendeskArticle {
  id: number;
  title: string;
  body: string;
  sectionId: number;
  locale: string;
  draft: boolean;
  /** Non-null: only users of that segment (signed in) see it. */
  userSegmentId: number | null;
  archived: boolean;
  deleted: boolean;
  updatedAt: string;
  editedAt: string;
}

export interface FakeZendeskSection {
  id: number;
  name: string;
  categoryId: number;
  parentSectionId: number | null;
}

export interface FakeZendeskCategory {
  id: number;
  name: string;
}

/** A request as the fake received it. */
export interface ZendeskRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The `Authorization` header ('' for none). */
  authorization: string;
  status: number;
}

/** A canned answer for the next request, in place of the real one. */
export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

type Json = Record<string, unknown>;
type Answer = { status: number; headers?: Record<string, string>; body: string };

const NOT_FOUND: Answer = { status: 404, body: JSON.stringify({ error: 'RecordNotFound', description: 'Not found' }) };
const UNAUTHENTICATED: Answer = { status: 401, body: JSON.stringify({ error: "Couldn't authenticate you" }) };
const LOCALE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$/;
const KINDS = new Set(['articles', 'sections', 'categories']);
const EPOCH = Date.parse('2025-03-14T09:26:53Z');

/**
 * A loopback Zendesk Help Center API (`/api/v2/help_center[/{locale}]/…`), as Zendesk documents it:
 * `locales.json` (`{locales, default_locale}`), `articles.json`, `sections/{id}/articles.json` and `categories/{id}/articles.json` (a category's
 * articles are those of all its sections, subsections included), `articles/{id}.json`,
 * `sections/{id}.json`, `categories/{id}.json`, each `.json` optional. Lists paginate cursor-style
 * when asked with `page[size]` (`meta.has_more`, `meta.after_cursor`, `links.next`) unless
 * `cursorPagination` is off, else offset-style (`page`, `per_page`; `next_page`, `page_count`,
 * `count`). Anonymous requests see published articles for everyone; `Basic base64("{email}/token:
 * {token}")` with a token in `tokens` sees drafts and restricted articles too, as an agent does; any
 * other credential gets 401 `{"error":"Couldn't authenticate you"}`. A missing record is 404
 * `{"error":"RecordNotFound","description":"Not found"}`.
 */
export class FakeZendesk {
  readonly requests: ZendeskRequest[] = [];
  readonly email = 'agent@acme.test';
  /** API tokens that authenticate `email`. */
  readonly tokens = new Set<string>();
  /** The largest page either pagination gives (Zendesk's: 100); tests lower it. */
  pageSize = 100;
  /** Off: lists answer offset-style even when asked for `page[size]`. */
  cursorPagination = true;
  readonly defaultLocale = 'en-us';
  url = '';
  private readonly articles = new Map<number, FakeZendeskArticle>();
  private readonly sections = new Map<number, FakeZendeskSection>();
  private readonly categories = new Map<number, FakeZendeskCategory>();
  private readonly canned: CannedAnswer[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private counter = 0;

  async start(): Promise<this> {
    const server = createServer((req, res) => this.route(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    this.server = server;
    this.url = `http://127.0.0.1:${address.port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Forgets content, tokens, canned answers and requests; ids and times start again. */
  reset(): void {
    for (const store of [this.articles, this.sections, this.categories, this.tokens]) store.clear();
    this.canned.length = 0;
    this.requests.length = 0;
    this.counter = 0;
    this.pageSize = 100;
    this.cursorPagination = true;
  }

  /** The next request, whatever it asks, gets `answer`. */
  answerNext(answer: CannedAnswer): void {
    this.canned.push(answer);
  }

  addCategory(name: string): FakeZendeskCategory {
    const category = { id: this.nextId(), name };
    this.categories.set(category.id, category);
    return category;
  }

  addSection(name: string, categoryId: number, parentSectionId: number | null = null): FakeZendeskSection {
    const section = { id: this.nextId(), name, categoryId, parentSectionId };
    this.sections.set(section.id, section);
    return section;
  }

  addArticle(
    sectionId: number,
    title: string,
    body: string,
    options: Partial<Pick<FakeZendeskArticle, 'locale' | 'draft' | 'userSegmentId'>> = {},
  ): FakeZendeskArticle {
    const id = this.nextId();
    const at = this.timestamp();
    const article = { id, title, body, sectionId, locale: this.defaultLocale, draft: false, userSegmentId: null };
    this.articles.set(id, { ...article, ...options, archived: false, deleted: false, updatedAt: at, editedAt: at });
    return this.article(id);
  }

  article(id: number): FakeZendeskArticle {
    const article = this.articles.get(id);
    if (!article) throw new Error(`no article ${id}`);
    return article;
  }

  /** The article's page in the help centre: `/hc/{locale}/articles/{id}-{slug}`. */
  htmlUrl(article: FakeZendeskArticle): string {
    const slug = article.title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
    return `${this.url}/hc/${article.locale}/articles/${article.id}-${slug}`;
  }

  private nextId(): number {
    this.counter += 1;
    return 360_000_000_000 + this.counter;
  }

  private timestamp(): string {
    return new Date(EPOCH + this.counter * 1000).toISOString().replace('.000Z', 'Z');
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const authorization = req.headers.authorization ?? '';
    const answer = this.canned.shift() ?? this.answer(req.method ?? 'GET', url, authorization);
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization,
      status: answer.status,
    });
    const json = answer.body.startsWith('{');
    res.writeHead(answer.status, {
      'content-type': json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8',
      ...answer.headers,
    });
    // Written apart from `end`, so the body is chunked and its size unknown until it has arrived.
    res.write(answer.body);
    res.end();
  }

  private answer(method: string, url: URL, authorization: string): Answer {
    const agent = this.agent(authorization);
    if (agent === null) return UNAUTHENTICATED;
    const prefix = '/api/v2/help_center/';
    if (method !== 'GET' || !url.pathname.startsWith(prefix)) return NOT_FOUND;
    const segments = url.pathname
      .slice(prefix.length)
      .replace(/\.json$/, '')
      .split('/');
    const locale = !KINDS.has(segments[0]!) && LOCALE.test(segments[0]!) ? segments.shift()! : this.defaultLocale;
    const [kind = '', id = '', tail] = segments;
    const visible = (article: FakeZendeskArticle) =>
      !article.archived &&
      !article.deleted &&
      article.locale === locale &&
      (agent || (!article.draft && article.userSegmentId === null));
    if (segments.length === 1 && kind === 'locales') {
      const locales = new Set([this.defaultLocale, ...[...this.articles.values()].map((a) => a.locale)]);
      return ok({ locales: [...locales], default_locale: this.defaultLocale });
    }
    if (segments.length === 1 && kind === 'articles')
      return this.page(url, [...this.articles.values()].filter(visible));
    if (segments.length === 3 && tail === 'articles') {
      const inside = this.articlesIn(kind, Number(id));
      return inside ? this.page(url, inside.filter(visible)) : NOT_FOUND;
    }
    if (segments.length !== 2) return NOT_FOUND;
    if (kind === 'articles') {
      const article = this.articles.get(Number(id));
      return article && visible(article) ? ok({ article: this.articleJson(article) }) : NOT_FOUND;
    }
    const section = kind === 'sections' ? this.sections.get(Number(id)) : undefined;
    if (section) return ok({ section: this.sectionJson(section, locale) });
    const category = kind === 'categories' ? this.categories.get(Number(id)) : undefined;
    return category ? ok({ category: this.categoryJson(category, locale) }) : NOT_FOUND;
  }

  /** True for a valid API token, false for none (anonymous), null for a refused credential. */
  private agent(authorization: string): boolean | null {
    if (authorization === '') return false;
    const [scheme = '', encoded = ''] = authorization.split(' ');
    if (scheme.toLowerCase() !== 'basic') return null;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const [user = '', token = ''] = decoded.split(':');
    return user === `${this.email}/token` && this.tokens.has(token) ? true : null;
  }

  private articlesIn(kind: string, id: number): FakeZendeskArticle[] | undefined {
    const all = [...this.articles.values()];
    if (kind === 'sections') return this.sections.has(id) ? all.filter((a) => a.sectionId === id) : undefined;
    if (kind !== 'categories' || !this.categories.has(id)) return undefined;
    return all.filter((a) => this.sections.get(a.sectionId)?.categoryId === id);
  }

  /** One page of a list, cursor-style when asked for (and allowed), else offset-style. */
  private page(url: URL, articles: FakeZendeskArticle[]): Answer {
    const size = url.searchParams.get('page[size]');
    if (size !== null && this.cursorPagination) return this.cursorPage(url, articles, Number(size));
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 30), 100, this.pageSize);
    const page = Number(url.searchParams.get('page') ?? 1);
    const pageCount = Math.max(1, Math.ceil(articles.length / perPage));
    const link = (n: number) =>
      n >= 1 && n <= pageCount ? `${this.url}${url.pathname}?page=${n}&per_page=${perPage}` : null;
    return ok({
      articles: articles.slice((page - 1) * perPage, page * perPage).map((a) => this.articleJson(a)),
      page,
      previous_page: link(page - 1),
      next_page: link(page + 1),
      per_page: perPage,
      page_count: pageCount,
      count: articles.length,
      sort_by: 'position',
      sort_order: 'asc',
    });
  }

  private cursorPage(url: URL, articles: FakeZendeskArticle[], size: number): Answer {
    if (!Number.isInteger(size) || size < 1 || size > 100) {
      return {
        status: 400,
        body: JSON.stringify({ error: 'InvalidPaginationParameter', description: 'page[size] must be 1 to 100' }),
      };
    }
    const after = url.searchParams.get('page[after]');
    const start =
      after === null
        ? 0
        : Number(
            Buffer.from(after, 'base64url')
              .toString('utf8')
              .replace(/^offset:/, ''),
          );
    if (!Number.isInteger(start)) {
      return {
        status: 400,
        body: JSON.stringify({ error: 'InvalidPaginationParameter', description: 'invalid cursor' }),
      };
    }
    const end = Math.min(start + Math.min(size, this.pageSize), articles.length);
    const cursor = (at: number) => Buffer.from(`offset:${at}`).toString('base64url');
    const base = `${this.url}${url.pathname}?page[size]=${size}`;
    const hasMore = end < articles.length;
    return ok({
      articles: articles.slice(start, end).map((a) => this.articleJson(a)),
      meta: { has_more: hasMore, after_cursor: cursor(end), before_cursor: cursor(start) },
      links: {
        next: hasMore ? `${base}&page[after]=${cursor(end)}` : null,
        prev: start > 0 ? `${base}&page[before]=${cursor(start)}` : null,
      },
    });
  }

  private articleJson(article: FakeZendeskArticle): Json {
    return {
      id: article.id,
      url: `${this.url}/api/v2/help_center/${article.locale}/articles/${article.id}.json`,
      html_url: this.htmlUrl(article),
      author_id: 3_000_001,
      comments_disabled: false,
      draft: article.draft,
      promoted: false,
      position: 0,
      vote_sum: 0,
      vote_count: 0,
      section_id: article.sectionId,
      created_at: new Date(EPOCH).toISOString().replace('.000Z', 'Z'),
      updated_at: article.updatedAt,
      edited_at: article.editedAt,
      title: article.title,
      source_locale: this.defaultLocale,
      locale: article.locale,
      outdated: false,
      outdated_locales: [],
      permission_group_id: 5_000_001,
      user_segment_id: article.userSegmentId,
      label_names: [],
      content_tag_ids: [],
      body: article.body,
    };
  }

  private sectionJson(section: FakeZendeskSection, locale: string): Json {
    return {
      id: section.id,
      url: `${this.url}/api/v2/help_center/${locale}/sections/${section.id}.json`,
      html_url: `${this.url}/hc/${locale}/sections/${section.id}`,
      category_id: section.categoryId,
      parent_section_id: section.parentSectionId,
      position: 0,
      sorting: 'manual',
      name: section.name,
      description: '',
      locale,
      source_locale: this.defaultLocale,
      outdated: false,
    };
  }

  private categoryJson(category: FakeZendeskCategory, locale: string): Json {
    return {
      id: category.id,
      url: `${this.url}/api/v2/help_center/${locale}/categories/${category.id}.json`,
      html_url: `${this.url}/hc/${locale}/categories/${category.id}`,
      position: 0,
      name: category.name,
      description: '',
      locale,
      source_locale: this.defaultLocale,
      outdated: false,
    };
  }
}

function ok(body: Json): Answer {
  return { status: 200, body: JSON.stringify(body) };
}
