import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { bearerRequest, okJson } from './service-response.ts';
import { webLink } from './web-link.ts';

const LABEL = 'GitBook';
const APP = 'https://app.gitbook.com';
/** GitBook's entity ids (`^[a-zA-Z0-9_-]+$`); real ones are 20 characters, a bare word is not one. */
const ID = /^[A-Za-z0-9_-]{12,64}$/;
const EXAMPLE = 'https://app.gitbook.com/o/4fJk2Lq9Xb7TmN3pRs8W/s/9aBcD3eFgH1iJkL2mNoP';
const INVALID = `url must be a GitBook space link or space id, like ${EXAMPLE} or 9aBcD3eFgH1iJkL2mNoP.`;
const PUBLISHED =
  'url must be a GitBook space link, not a published docs site: paste the space link from app.gitbook.com, ' +
  `like ${EXAMPLE}.`;
/** The space and its page tree are metadata, read whole even when the document cap is small. */
const METADATA_BYTES = 32 * 1024 * 1024;

/** `GET /v1/spaces/{spaceId}`: the fields read of GitBook's `Space`. */
interface GitBookSpace {
  id: string;
  title: string;
  deletedAt?: string;
  urls: { app: string; published?: string };
}

/** A page of a revision's tree (`RevisionPageDocument`, `…Group`, `…Link`, `…Computed`). */
interface GitBookPage {
  id: string;
  title: string;
  type: 'document' | 'group' | 'link' | 'computed';
  path?: string;
  urls?: { app?: string };
  /** The document holding the page's body; absent for an empty page (and a computed one). */
  documentId?: string;
  computed?: unknown;
  updatedAt?: string;
  noIndex?: boolean;
  pages?: GitBookPage[];
}

/** `GET /v1/spaces/{spaceId}/content`: the space's current revision. */
interface GitBookRevision {
  id: string;
  pages: GitBookPage[];
}

/**
 * The space id of a GitBook reference: a space link from the app (`https://app.gitbook.com/o/{org}/s/{space}`
 * or `/s/{space}`, with any trailing page path or query) or a bare space id. A published docs site cannot
 * be mapped to its space without a request, so it is refused with a detail saying what to paste instead.
 * Throws `ValidationError`.
 */
export function gitbookSpaceId(reference: string): string {
  const trimmed = reference.trim();
  if (ID.test(trimmed)) return trimmed;
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  const host = url.hostname.toLowerCase();
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !host.includes('.')) {
    throw new ValidationError(INVALID);
  }
  if (host !== 'app.gitbook.com') {
    throw new ValidationError(host === 'gitbook.com' || host.endsWith('.gitbook.com') ? INVALID : PUBLISHED);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const at = segments[0] === 'o' && ID.test(segments[1] ?? '') ? 2 : 0;
  const [kind, id = ''] = segments.slice(at);
  if (kind !== 's' || !ID.test(id)) throw new ValidationError(INVALID);
  return id;
}

/** The canonical form of a GitBook reference: `https://app.gitbook.com/s/{spaceId}`. */
export function canonicalGitbookReference(reference: string): string {
  return `${APP}/s/${gitbookSpaceId(reference)}`;
}

function spaceApi(context: ConnectorContext, spaceId: string): string {
  return `${context.http.baseUrls.gitbook.replace(/\/+$/, '')}/v1/spaces/${encodeURIComponent(spaceId)}`;
}

/** A GET with the connection's token; a 404 becomes `gone()`, other failures what `okJson` says. */
async function getJson<T>(
  context: ConnectorContext,
  url: string,
  gone: () => ConnectorError,
  maxBytes?: number,
): Promise<T> {
  if (!context.auth) throw new ReconnectError(`Reconnect ${LABEL}.`);
  const response = await bearerRequest(context, LABEL, url, {
    headers: { accept: 'application/json' },
    ...(maxBytes !== undefined ? { maxBytes: Math.max(maxBytes, context.limits.maxDocumentBytes) } : {}),
  });
  if (response.statusCode === 404) throw gone();
  return okJson<T>(response, LABEL);
}

/**
 * What tells a page changed without reading it: the id of the document holding its body with the
 * page's own edit time. Neither moves when another page of the space is edited, so a sync re-reads
 * only edited pages (the revision id changes with every edit anywhere). A computed page (generated
 * from an OpenAPI spec, say) has neither: its token is the revision and page ids, so it is re-read
 * whenever the space changes.
 */
function changeToken(revisionId: string, page: GitBookPage): string {
  if (page.documentId) return [page.documentId, page.updatedAt].filter(Boolean).join('@');
  return createHash('sha256').update(`${revisionId}\n${page.id}`).digest('hex');
}

/** The page on the published site when the space is published (GitBook serves `{published}{path}`), else in the app. */
function pageUrl(space: GitBookSpace, page: GitBookPage): string {
  const published = space.urls.published;
  if (published && page.path !== undefined) {
    return new URL(page.path, published.endsWith('/') ? published : `${published}/`).href;
  }
  return page.urls?.app ?? `${APP}/s/${space.id}`;
}

/** Depth-first, in the space's order: document pages with a body, then their and groups' children. */
function collect(
  pages: GitBookPage[],
  max: number,
  take: (page: GitBookPage) => ConnectorDocument,
): ConnectorDocument[] {
  const documents: ConnectorDocument[] = [];
  const walk = (level: GitBookPage[]) => {
    for (const page of level) {
      if (documents.length === max) return;
      if (page.type === 'document' && !page.noIndex && (page.documentId || page.computed)) documents.push(take(page));
      if (page.type === 'document' || page.type === 'group') walk(page.pages ?? []);
    }
  };
  walk(pages);
  return documents;
}

async function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  const spaceId = gitbookSpaceId(reference);
  const api = spaceApi(context, spaceId);
  const missing = () =>
    new ConnectorError(`${LABEL} has no space ${spaceId}, or the token may not read it.`, { statusCode: 404 });
  const space = await getJson<GitBookSpace>(context, api, missing, METADATA_BYTES);
  if (space.deletedAt) throw new ConnectorError(`The ${LABEL} space ${space.title} is in the trash.`);
  const revision = await getJson<GitBookRevision>(context, `${api}/content`, missing, METADATA_BYTES);
  const documents = collect(revision.pages, context.limits.maxDocuments, (page) => ({
    id: page.id,
    title: page.title,
    size: null,
    changeToken: changeToken(revision.id, page),
    url: pageUrl(space, page),
  }));
  return { title: space.title, single: false, documents };
}

async function fetchDocument(
  reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  const api = spaceApi(context, gitbookSpaceId(reference));
  const url = `${api}/content/page/${encodeURIComponent(document.id)}?format=markdown`;
  const gone = () => new DocumentGoneError(`${LABEL} no longer has the page ${document.title}.`, { statusCode: 404 });
  const page = await getJson<{ markdown?: unknown }>(context, url, gone);
  if (typeof page.markdown !== 'string') {
    throw new ConnectorError(`${LABEL} sent the page ${document.title} without its Markdown.`);
  }
  return { kind: 'markdown', markdown: page.markdown };
}

/**
 * GitBook through its REST API with a personal access token. A space's document pages are read as
 * Markdown, groups' children included; link pages, empty pages and pages kept out of search
 * (`noIndex`) are skipped, and deleted pages are not in the current revision. A space in the trash is
 * refused. Sizes are not known before a page is read.
 */
export const gitbookConnector: Connector = {
  type: 'gitbook',
  service: 'gitbook',
  connectionOptional: false,
  parseReference: canonicalGitbookReference,
  list,
  fetch: fetchDocument,
};
