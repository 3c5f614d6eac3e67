import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { ConnectorRequest, ConnectorResponse } from './connector-http.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing } from './connector.ts';
import { bearerRequest, okJson } from './service-response.ts';
import { webLink } from './web-link.ts';

const LABEL = 'Zendesk';
const INVALID =
  'url must be a Zendesk help centre, category, section or article link, like ' +
  'https://acme.zendesk.com/hc/en-us/articles/360001234567-Resetting-a-password.';
const KINDS = ['categories', 'sections', 'articles'] as const;
type Kind = (typeof KINDS)[number];
const NOUNS: Record<Kind, string> = { categories: 'category', sections: 'section', articles: 'article' };
/** Help Center locales: `en-us`, `fr`, `pt-br`, `es-419`, `zh-tw`. */
const LOCALE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$/;
/** `{id}-{slug}` or a bare id, as the path segment of a category, section or article link. */
const ITEM = /^(\d{1,20})(?:-|$)/;
/** The largest page cursor pagination gives. */
const PAGE_SIZE = 100;
/**
 * A listing page holds up to 100 whole article bodies, so it may be larger than one document may be;
 * listing requests are capped apart from the document limit.
 */
const LISTING_PAGE_BYTES = 32 * 1024 * 1024;

/** A canonical reference taken apart: the help centre, its locale, and the category, section or article. */
interface Target {
  origin: string;
  locale: string | null;
  kind: Kind | null;
  id: string;
}

/** An article as the Help Center API gives it (the fields read here). */
interface ZendeskArticle {
  id: number;
  title?: string | null;
  body?: string | null;
  html_url?: string;
  draft?: boolean;
  user_segment_id?: number | null;
  updated_at?: string;
  edited_at?: string | null;
}

/** A page of a list endpoint, offset-style (`next_page`) or cursor-style (`meta`, `links`). */
interface ArticlePage {
  articles?: ZendeskArticle[];
  next_page?: string | null;
  meta?: { has_more?: boolean; after_cursor?: string | null };
  links?: { next?: string | null };
}

/** What the connection's secret lets through besides published articles for everyone. */
interface Rules {
  restricted: boolean;
  drafts: boolean;
}

/**
 * A help centre link taken apart: `https://{host}/hc`, `/hc/{locale}`, and a category, section or
 * article under either (`/hc/{locale}/articles/{id}-{slug}`; slug, query and fragment ignored). Hosts
 * are any (custom domains); `http:` becomes `https:` on `zendesk.com`, which serves nothing else.
 * Throws `ValidationError`.
 */
function parseZendeskReference(reference: string): Target {
  const trimmed = reference.trim();
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') {
    throw new ValidationError(INVALID);
  }
  const [hc = '', ...rest] = url.pathname.split('/').filter(Boolean);
  if (hc.toLowerCase() !== 'hc') throw new ValidationError(INVALID);
  const locale = rest[0] !== undefined && LOCALE.test(rest[0].toLowerCase()) ? rest.shift()!.toLowerCase() : null;
  const origin = originOf(url);
  if (rest.length === 0) return { origin, locale, kind: null, id: '' };
  const [kind = '', item = '', ...extra] = rest;
  const id = ITEM.exec(item)?.[1];
  if (!(KINDS as readonly string[]).includes(kind) || id === undefined || extra.length > 0) {
    throw new ValidationError(INVALID);
  }
  return { origin, locale, kind: kind as Kind, id };
}

/** The canonical form of a Zendesk reference: origin + `/hc[/{locale}][/{kind}/{id}]`. */
export function canonicalZendeskReference(reference: string): string {
  const { origin, locale, kind, id } = parseZendeskReference(reference);
  return `${origin}/hc${locale ? `/${locale}` : ''}${kind ? `/${kind}/${id}` : ''}`;
}

function originOf(url: URL): string {
  const zendesk = /(^|\.)zendesk\.com$/.test(url.hostname);
  return zendesk && url.protocol === 'http:' ? `https://${url.host}` : url.origin;
}

function hostOf(target: Target): string {
  return new URL(target.origin).host;
}

/** A Help Center API address on the reference's own host, in its locale when it names one. */
function apiUrl(target: Target, path: string): string {
  return `${target.origin}/api/v2/help_center${target.locale ? `/${target.locale}` : ''}/${path}`;
}

/** A connection names its help centre: it must be the reference's, or its token would go to another. */
function checkConnection(context: ConnectorContext, target: Target): void {
  const base = context.auth?.baseUrl.trim();
  if (!base) return;
  const url = URL.parse(base);
  if (url && originOf(url) === target.origin) return;
  throw new ConnectorError(
    `This Zendesk connection is for another help centre (${url?.host || base}), not ${hostOf(target)}.`,
  );
}

/**
 * A GET with the connection's API token, `Authorization: Basic base64("{email}/token:{token}")` as
 * Zendesk documents it; anonymous without a connection (a public help centre).
 */
function get(context: ConnectorContext, url: string, maxBytes?: number): Promise<ConnectorResponse> {
  const request: ConnectorRequest = { headers: { accept: 'application/json' }, ...(maxBytes ? { maxBytes } : {}) };
  const email = context.auth?.secret.email?.trim();
  if (context.auth && !email) {
    throw new ReconnectError(`Reconnect ${LABEL} with the email address the API token belongs to.`);
  }
  const basic = (token: string) => `Basic ${Buffer.from(`${email}/token:${token}`).toString('base64')}`;
  return bearerRequest(context, LABEL, url, request, basic);
}

/**
 * The JSON of a response that lists the reference: a 404 means the help centre, category, section or
 * article is not there (or hidden from whoever asks), not that one document went away.
 */
function listingJson<T>(response: ConnectorResponse, target: Target, context: ConnectorContext): T {
  const who = context.auth ? 'to the connection' : 'without signing in';
  const host = hostOf(target);
  if (response.statusCode === 404) {
    const what = target.kind
      ? `Zendesk has no ${NOUNS[target.kind]} ${target.id} at ${host}`
      : `${host} has no Zendesk help centre${target.locale ? ` in ${target.locale}` : ''}`;
    throw new ConnectorError(`${what}, or it is not visible ${who}.`, { statusCode: 404 });
  }
  const status = response.statusCode;
  if (!context.auth && (status === 401 || status === 403)) {
    const advice = 'add the source with a Zendesk connection';
    throw new ConnectorError(`${host} lets only signed-in users read its help centre; ${advice}.`, {
      statusCode: status,
    });
  }
  return okJson<T>(response, LABEL);
}

function rulesOf(context: ConnectorContext): Rules {
  const secret = context.auth?.secret ?? {};
  return { restricted: secret.include_restricted === 'true', drafts: secret.include_drafts === 'true' };
}

/** Why an article is not read: a draft, or restricted to a user segment, unless the connection says so. */
function skipReason(article: ZendeskArticle, rules: Rules): 'a draft' | 'restricted to some users' | null {
  if (article.draft === true && !rules.drafts) return 'a draft';
  if (article.user_segment_id != null && !rules.restricted) return 'restricted to some users';
  return null;
}

function titleOf(article: ZendeskArticle): string {
  return article.title?.trim() || `Article ${article.id}`;
}

/** The article as indexed: its title as a heading, then its HTML body. */
function articleHtml(article: ZendeskArticle): string {
  const title = titleOf(article).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<h1>${title}</h1>${article.body ?? ''}`;
}

function documentOf(article: ZendeskArticle): ConnectorDocument {
  return {
    id: String(article.id),
    title: titleOf(article),
    size: Buffer.byteLength(articleHtml(article)),
    // `edited_at` moves when the title or body changes in the listed locale; `updated_at` also moves on
    // changes that leave the text as it was (labels, position, section, permissions).
    changeToken: article.edited_at ?? article.updated_at ?? '',
    url: article.html_url ?? '',
  };
}

/**
 * The next page to ask for. Cursor pagination is asked for (`page[size]`): `meta.has_more` with
 * `links.next`; a server that answers offset-style gives `next_page`. Only the path and query are
 * taken, on the reference's own origin, so the connection's credentials never go to another host.
 */
function nextPage(page: ArticlePage, first: string, target: Target): string | null {
  let next: string | null = null;
  if (page.meta) {
    const cursor = page.meta.after_cursor;
    if (page.meta.has_more === true) {
      next = page.links?.next ?? (cursor ? `${first}&page[after]=${encodeURIComponent(cursor)}` : null);
    }
  } else next = page.next_page ?? null;
  if (next === null) return null;
  const url = URL.parse(next, target.origin);
  if (!url || !url.pathname.startsWith('/api/v2/help_center/')) {
    throw new ConnectorError('Zendesk sent a next page that is not a Help Center API address.');
  }
  return `${target.origin}${url.pathname}${url.search}`;
}

/** The default locales asked for, per read (the worker's context) and help centre. */
const defaultLocales = new WeakMap<ConnectorContext, Map<string, string>>();

/**
 * The target in a locale: its own, else the help centre's default (`/api/v2/help_center/locales.json`),
 * as Zendesk wants one in the path from end users and anonymous users. Asked once per read.
 */
async function localized(target: Target, context: ConnectorContext): Promise<Target> {
  if (target.locale !== null) return target;
  const memo = defaultLocales.get(context) ?? new Map<string, string>();
  defaultLocales.set(context, memo);
  let locale = memo.get(target.origin);
  if (locale === undefined) {
    const response = await get(context, `${target.origin}/api/v2/help_center/locales.json`);
    const body = listingJson<{ default_locale?: unknown }>(response, { ...target, kind: null }, context);
    locale = typeof body.default_locale === 'string' ? body.default_locale.toLowerCase() : '';
    if (!LOCALE.test(locale)) throw new ConnectorError(`${hostOf(target)} did not say its help centre's language.`);
    memo.set(target.origin, locale);
  }
  return { ...target, locale };
}

/** The readable articles of a help centre, category or section, page by page, up to the limit. */
async function listArticles(target: Target, context: ConnectorContext): Promise<ConnectorDocument[]> {
  const rules = rulesOf(context);
  const path = target.kind ? `${target.kind}/${target.id}/articles.json` : 'articles.json';
  const first = `${apiUrl(target, path)}?page[size]=${PAGE_SIZE}`;
  const documents: ConnectorDocument[] = [];
  const asked = new Set<string>();
  let next: string | null = first;
  while (next !== null && !asked.has(next) && documents.length < context.limits.maxDocuments) {
    asked.add(next);
    const page: ArticlePage = listingJson<ArticlePage>(await get(context, next, LISTING_PAGE_BYTES), target, context);
    const articles = page.articles ?? [];
    for (const article of articles) {
      if (documents.length === context.limits.maxDocuments) break;
      if (skipReason(article, rules) === null) documents.push(documentOf(article));
    }
    next = articles.length > 0 ? nextPage(page, first, target) : null;
  }
  return documents;
}

/** The name of the category or section a reference names. */
async function containerName(target: Target, context: ConnectorContext): Promise<string> {
  const key = NOUNS[target.kind!];
  const response = await get(context, apiUrl(target, `${target.kind}/${target.id}.json`), LISTING_PAGE_BYTES);
  const body = listingJson<Record<string, { name?: string } | undefined>>(response, target, context);
  return body[key]?.name?.trim() || `${hostOf(target)} ${key} ${target.id}`;
}

async function listArticle(target: Target, context: ConnectorContext): Promise<ConnectorListing> {
  // Listed whatever its size: the worker refuses one over the document limit by its reported size.
  const response = await get(context, apiUrl(target, `articles/${target.id}.json`), LISTING_PAGE_BYTES);
  const { article } = listingJson<{ article: ZendeskArticle }>(response, target, context);
  const reason = skipReason(article, rulesOf(context));
  if (reason !== null) {
    throw new ConnectorError(`The Zendesk article "${titleOf(article)}" is ${reason}, so it is not read.`);
  }
  return { title: titleOf(article), single: true, documents: [documentOf(article)] };
}

/**
 * Zendesk Help Center articles, read through the Help Center API on the help centre's own host:
 * anonymously (what everyone sees), or with a connection's API token. Drafts and articles restricted
 * to a user segment are skipped unless the connection's `include_drafts` / `include_restricted` is
 * `'true'`; archived and deleted articles are never listed by Zendesk. `fetch` reads the article
 * again rather than reusing the listed body, so a changed article is read fresh.
 */
export const zendeskConnector: Connector = {
  type: 'zendesk',
  service: 'zendesk',
  connectionOptional: true,
  parseReference: canonicalZendeskReference,
  async list(reference, context) {
    const parsed = parseZendeskReference(reference);
    checkConnection(context, parsed);
    const target = await localized(parsed, context);
    if (target.kind === 'articles') return listArticle(target, context);
    const title = target.kind ? await containerName(target, context) : hostOf(target);
    return { title, single: false, documents: await listArticles(target, context) };
  },
  async fetch(reference, document, context) {
    const parsed = parseZendeskReference(reference);
    checkConnection(context, parsed);
    const target = await localized(parsed, context);
    const response = await get(context, apiUrl(target, `articles/${encodeURIComponent(document.id)}.json`));
    if (response.statusCode === 404) {
      throw new DocumentGoneError(`Zendesk no longer has the article "${document.title}".`, { statusCode: 404 });
    }
    const { article } = okJson<{ article: ZendeskArticle }>(response, LABEL);
    const reason = skipReason(article, rulesOf(context));
    if (reason !== null) throw new DocumentGoneError(`The Zendesk article "${document.title}" is now ${reason}.`);
    return { kind: 'html', html: articleHtml(article) };
  },
};
