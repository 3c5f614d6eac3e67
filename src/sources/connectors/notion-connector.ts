import {
  APIErrorCode,
  Client,
  isHTTPResponseError,
  iteratePaginatedAPI,
  RequestTimeoutError,
  type DatabaseObjectResponse,
  type PageObjectResponse,
} from '@notionhq/client';
import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError } from './connector-errors.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { blocksToMarkdown, plainText, readBlocks, trashed, type NotionBlockNode } from './notion-markdown.ts';
import { asError, statusError, withAccessToken } from './service-response.ts';
import { webLink } from './web-link.ts';

const LABEL = 'Notion';
const WEB = 'https://www.notion.so';
const HOSTS = /^(www\.)?notion\.so$|^[a-z0-9-]+\.notion\.site$/;
const HEX_ID = /^[0-9a-f]{32}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const INVALID =
  'url must be a Notion page or database link or id, like ' +
  'https://www.notion.so/acme/Handbook-1f2e3d4c5b6a47988776655443322110 or 1f2e3d4c5b6a47988776655443322110.';
/** The most Notion hands out per page of a listing. */
const PAGE_SIZE = 100;
// The HTTP layer times out each hop and waits out 429s itself; the SDK's own clock would cut that short.
const SDK_TIMEOUT_MS = 15 * 60 * 1000;

/** The 32 hex digits of a Notion id from a link (its last path segment ends with it) or a bare id. */
export function notionId(reference: string): string {
  const trimmed = reference.trim().toLowerCase();
  const bare = bareId(trimmed);
  if (bare) return bare;
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !HOSTS.test(url.hostname)) {
    throw new ValidationError(INVALID);
  }
  const last = url.pathname.split('/').filter(Boolean).at(-1) ?? '';
  const id = bareId(last) ?? /-([0-9a-f]{32})$/.exec(last)?.[1];
  if (!id) throw new ValidationError(INVALID);
  return id;
}

function bareId(text: string): string | undefined {
  if (HEX_ID.test(text)) return text;
  return UUID.test(text) ? text.replaceAll('-', '') : undefined;
}

/** The canonical form of a Notion reference: `https://www.notion.so/{32 hex digits}`. Throws `ValidationError`. */
export function canonicalNotionReference(reference: string): string {
  return `${WEB}/${notionId(reference)}`;
}

function dashed(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function client(context: ConnectorContext, token: string): Client {
  return new Client({
    auth: token,
    baseUrl: context.http.baseUrls.notion.replace(/\/+$/, ''),
    fetch: context.http.fetch,
    timeoutMs: SDK_TIMEOUT_MS,
    // The HTTP layer already waits out 429s and 503s as Retry-After says; SDK retries would repeat that.
    retry: false,
    // The SDK logs failed requests to the console by default; the connector's errors say what matters.
    logger: () => {},
  });
}

function isUnauthorized(error: unknown): boolean {
  return isHTTPResponseError(error) && error.status === 401;
}

/**
 * Runs `call` with an SDK client on the connection's token. Notion integration tokens do not
 * expire, but a 401 still asks the connection once (it answers a revoked token with
 * `ReconnectError`); a second 401 means the token is gone.
 */
function withNotion<T>(context: ConnectorContext, call: (notion: Client) => Promise<T>): Promise<T> {
  return withAccessToken(context, LABEL, (token) => call(client(context, token)), isUnauthorized);
}

/**
 * What an SDK failure means to the owner: Notion's error answers as `expectOk` words them (404 as
 * `missing()`), the SDK's own time-out as a sentence. Errors that are not Notion's answers (the HTTP
 * layer's size cap, an unreachable host) pass through.
 */
function explain(error: unknown, missing: () => ConnectorError): Error {
  if (error instanceof RequestTimeoutError) return new ConnectorError(`${LABEL} did not answer in time.`);
  if (!isHTTPResponseError(error)) return asError(error);
  if (error.status === 404) return missing();
  return statusError(error.status, error.body, LABEL);
}

function isFullPage(result: { object: string }): result is PageObjectResponse {
  return result.object === 'page' && 'properties' in result;
}

/** A page's title: its `title` property (named `title` on plain pages, as the database says on rows). */
function titleOf(page: PageObjectResponse): string {
  const property = Object.values(page.properties).find((value) => value.type === 'title');
  const title = property?.type === 'title' ? plainText(property.title).trim() : '';
  return title || 'Untitled';
}

function pageDocument(page: PageObjectResponse): ConnectorDocument {
  return { id: page.id, title: titleOf(page), size: null, changeToken: page.last_edited_time, url: page.url };
}

/** The child pages and databases anywhere in a page's blocks (in toggles, columns, …), in order. */
function childItems(nodes: NotionBlockNode[]): Item[] {
  return nodes.flatMap(({ block, children }): Item[] => {
    if (block.type === 'child_page') return [{ kind: 'page', id: block.id }];
    if (block.type === 'child_database') return [{ kind: 'database', id: block.id }];
    return childItems(children);
  });
}

type Item = { kind: 'page'; id: string; page?: PageObjectResponse } | { kind: 'database'; id: string };

/**
 * The pages of a database, from each of its data sources (API version 2025-09-03 queries those,
 * not the database), at most `room`. Trashed pages are not listed.
 */
async function databasePages(
  notion: Client,
  database: DatabaseObjectResponse,
  room: number,
  signal?: AbortSignal,
): Promise<ConnectorDocument[]> {
  const documents: ConnectorDocument[] = [];
  for (const source of database.data_sources) {
    const query = { data_source_id: source.id, page_size: PAGE_SIZE };
    for await (const result of iteratePaginatedAPI(notion.dataSources.query, query)) {
      signal?.throwIfAborted();
      if (!isFullPage(result) || trashed(result)) continue;
      documents.push(pageDocument(result));
      // Returning here stops the iterator before it asks for another page.
      if (documents.length === room) return documents;
    }
  }
  return documents;
}

async function retrieveDatabase(notion: Client, id: string): Promise<DatabaseObjectResponse | undefined> {
  const database = await notion.databases.retrieve({ database_id: id });
  return 'data_sources' in database ? database : undefined;
}

/** A child page or database in a tree that cannot be read (a linked database, one deleted meanwhile) is skipped. */
async function unlessMissing<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isHTTPResponseError(error) && (error.status === 404 || error.code === APIErrorCode.ValidationError)) {
      return undefined;
    }
    throw error;
  }
}

/**
 * A page and, breadth first, every child page and child database under it: each page is one
 * document, each database gives its pages (their own sub-pages are not followed).
 */
async function listTree(
  notion: Client,
  root: PageObjectResponse,
  context: ConnectorContext,
): Promise<ConnectorListing> {
  const max = context.limits.maxDocuments;
  const documents: ConnectorDocument[] = [];
  const seen = new Set([root.id]);
  const queue: Item[] = [{ kind: 'page', id: root.id, page: root }];
  for (let item = queue.shift(); item && documents.length < max; item = queue.shift()) {
    if (item.kind === 'database') {
      const database = await unlessMissing(retrieveDatabase(notion, item.id));
      if (database && !trashed(database)) {
        documents.push(...(await databasePages(notion, database, max - documents.length, context.signal)));
      }
      continue;
    }
    const page = item.page ?? (await unlessMissing(notion.pages.retrieve({ page_id: item.id })));
    if (!page || !isFullPage(page) || trashed(page)) continue;
    documents.push(pageDocument(page));
    if (documents.length === max && page !== root) break;
    const blocks = await readBlocks(notion, page.id, undefined, context.signal);
    for (const child of childItems(blocks)) {
      if (!seen.has(child.id)) queue.push(child);
      seen.add(child.id);
    }
  }
  const single = documents.length === 1 && queue.length === 0;
  return { title: titleOf(root), single, documents };
}

/** Whether Notion refused a page id because it names a database ("… is a database, not a page."). */
function isDatabaseId(error: unknown): boolean {
  return (
    isHTTPResponseError(error) &&
    (error.status === 404 || (error.code === APIErrorCode.ValidationError && /is a database/i.test(error.message)))
  );
}

async function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  const id = dashed(notionId(reference));
  const missing = () =>
    new ConnectorError(`${LABEL} has no page or database ${id} shared with the integration.`, { statusCode: 404 });
  try {
    return await withNotion(context, async (notion) => {
      let page;
      try {
        page = await notion.pages.retrieve({ page_id: id });
      } catch (error) {
        if (!isDatabaseId(error)) throw error;
      }
      if (page && isFullPage(page)) {
        if (trashed(page)) throw new ConnectorError(`The ${LABEL} page ${titleOf(page)} is in the trash.`);
        return listTree(notion, page, context);
      }
      const database = await retrieveDatabase(notion, id);
      if (!database) throw missing();
      const title = plainText(database.title).trim() || 'Untitled';
      if (trashed(database)) throw new ConnectorError(`The ${LABEL} database ${title} is in the trash.`);
      const documents = await databasePages(notion, database, context.limits.maxDocuments, context.signal);
      return { title, single: false, documents };
    });
  } catch (error) {
    throw explain(error, missing);
  }
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}

async function fetchDocument(
  _reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  const gone = () => new DocumentGoneError(`${LABEL} no longer has the page ${document.title}.`, { statusCode: 404 });
  const cap = context.limits.maxDocumentBytes;
  try {
    return await withNotion(context, async (notion) => {
      const page = await notion.pages.retrieve({ page_id: document.id });
      if (!isFullPage(page) || trashed(page)) throw gone();
      const title = titleOf(page);
      const over = () => new ConnectorError(`The ${LABEL} page ${title} is larger than the ${formatBytes(cap)} limit.`);
      const blocks = await readBlocks(notion, page.id, { left: cap, over }, context.signal);
      const body = blocksToMarkdown(blocks);
      const markdown = body === '' ? `# ${title}\n` : `# ${title}\n\n${body}\n`;
      if (Buffer.byteLength(markdown) > cap) throw over();
      return { kind: 'markdown', markdown };
    });
  } catch (error) {
    throw explain(error, gone);
  }
}

/**
 * Notion through the official SDK (API version 2025-09-03), with an internal integration's token. A
 * page is read with every child page under it, each its own document, and the pages of child
 * databases; a database gives its pages. Pages are read as Markdown from their blocks. Trashed pages,
 * linked databases, links to pages and the sub-pages of database pages are skipped. Sizes are not
 * known before a page is read; a page's change token is its `last_edited_time`.
 */
export const notionConnector: Connector = {
  type: 'notion',
  service: 'notion',
  connectionOptional: false,
  parseReference: canonicalNotionReference,
  list,
  fetch: fetchDocument,
};
