import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError } from './connector-errors.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import {
  collectDriveItems,
  downloadDriveItem,
  eachGraphPage,
  graphJson,
  graphUrl,
  isDriveItemId,
  listSharingLink,
  parseLink,
  segment,
} from './graph-drive.ts';
import { bearerRequest, okJson } from './service-response.ts';

const LABEL = 'SharePoint';
const INVALID =
  'url must be a SharePoint site or sharing link, like https://contoso.sharepoint.com/sites/marketing ' +
  'or https://contoso.sharepoint.com/:f:/s/marketing/EgAbCdEfGhIjKlMn?e=x1Y2z3.';
/** A tenant's SharePoint host; `{tenant}-my` hosts are OneDrive's. */
const TENANT_HOST = /^[a-z0-9-]+\.sharepoint\.com$/;
const LINK_TYPE = /^:[a-z]{1,2}:$/;
const SITE_NAME = /^[\w.%-]+$/;
const PAGE_ID = /^sites\/([^/]+)\/pages\/([^/]+)$/;

/** What follows a site's name in links to its pages and libraries (not a subsite's name). */
const SITE_PARTS = new Set(['sitepages', 'shared documents', 'documents', 'forms', 'lists', '_layouts', 'pages']);

/**
 * The canonical form of a SharePoint reference: a site, `https://{tenant}.sharepoint.com/sites/{name}`
 * (or `/teams/{name}`) with the host in lower case and nothing after the name (a link to one of its pages
 * or libraries names it too); or a file or folder
 * sharing link (`https://{tenant}.sharepoint.com/:w:/s/{site}/…`) with its query and without a
 * fragment. Throws `ValidationError`.
 */
export function canonicalSharePointReference(reference: string): string {
  const url = parseLink(reference);
  const host = url?.hostname.toLowerCase() ?? '';
  if (!url || !TENANT_HOST.test(host) || host.endsWith('-my.sharepoint.com')) throw new ValidationError(INVALID);
  const [first = '', second = '', ...rest] = url.pathname.split('/').filter(Boolean);
  // A page or library of the site, as the browser's address bar shows it, names the site too.
  const ofSite = rest.length === 0 || SITE_PARTS.has(decodeURIComponent(rest[0]!).toLowerCase());
  if ((first === 'sites' || first === 'teams') && SITE_NAME.test(second) && ofSite) {
    return `https://${host}/${first}/${second}`;
  }
  if (LINK_TYPE.test(first) && rest.length >= 1) return `https://${host}${url.pathname}${url.search}`;
  throw new ValidationError(INVALID);
}

/** The parts of a Graph `site`, `drive` and `sitePage` the connector reads. */
interface Site {
  id: string;
  name?: string;
  displayName?: string;
}
interface Drive {
  id: string;
}
interface SitePage {
  id: string;
  name: string;
  title?: string;
  webUrl?: string;
  eTag?: string;
  lastModifiedDateTime?: string;
  publishingState?: { level?: string; versionId?: string };
  canvasLayout?: CanvasLayout;
}
interface WebPart {
  innerHtml?: string;
}
interface CanvasLayout {
  horizontalSections?: { columns?: { webparts?: WebPart[] }[] }[];
  verticalSection?: { webparts?: WebPart[] };
}

/** A page no reader can see: it was never published (its version is still 0.x). */
function unpublished(page: SitePage): boolean {
  return page.publishingState?.versionId?.startsWith('0.') === true;
}

/**
 * Adds the site's published pages (`GET /sites/{id}/pages/microsoft.graph.sitePage`, paged) until
 * `documents` holds `max`. A site without a Site Pages library (a classic site) answers 404: no pages.
 */
async function collectPages(
  context: ConnectorContext,
  siteId: string,
  documents: ConnectorDocument[],
  max: number,
): Promise<void> {
  const url = graphUrl(context, `sites/${segment(siteId)}/pages/microsoft.graph.sitePage`);
  const take = (pages: SitePage[]) => {
    for (const page of pages) {
      if (documents.length >= max) return false;
      if (unpublished(page)) continue;
      documents.push({
        id: `sites/${siteId}/pages/${page.id}`,
        title: page.title || page.name,
        size: null,
        changeToken: page.eTag ?? page.lastModifiedDateTime ?? '',
        url: page.webUrl ?? '',
      });
    }
    return documents.length < max;
  };
  await eachGraphPage<SitePage>(context, LABEL, url, take, { missingIsEmpty: true });
}

/** A site: its pages, then every readable file of its default document library. */
async function listSite(context: ConnectorContext, reference: string): Promise<ConnectorListing> {
  const { host, pathname } = new URL(reference);
  const site = await graphJson<Site>(context, LABEL, graphUrl(context, `sites/${host}:${pathname}`), {
    missing: `SharePoint has no site at ${reference}, or the connection may not open it.`,
  });
  const max = context.limits.maxDocuments;
  const documents: ConnectorDocument[] = [];
  await collectPages(context, site.id, documents, max);
  if (documents.length < max) {
    const drive = await graphJson<Drive>(context, LABEL, graphUrl(context, `sites/${segment(site.id)}/drive`));
    const root = graphUrl(context, `drives/${segment(drive.id)}/root/children`);
    await collectDriveItems(context, LABEL, drive.id, root, documents, max);
  }
  return { title: site.displayName || site.name || reference, single: false, documents };
}

function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  const canonical = canonicalSharePointReference(reference);
  const { pathname } = new URL(canonical);
  if (pathname.startsWith('/sites/') || pathname.startsWith('/teams/')) return listSite(context, canonical);
  return listSharingLink(context, LABEL, canonical);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page as one HTML document: its title, then the text web parts' HTML in layout order. */
export function sitePageHtml(page: SitePage, title: string): string {
  const layout = page.canvasLayout ?? {};
  const parts = [
    ...(layout.horizontalSections ?? []).flatMap((section) =>
      (section.columns ?? []).flatMap((column) => column.webparts ?? []),
    ),
    ...(layout.verticalSection?.webparts ?? []),
  ];
  const html = parts.flatMap((part) => (typeof part.innerHtml === 'string' ? [part.innerHtml] : []));
  const heading = escapeHtml(page.title || title);
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>${heading}</title></head>` +
    `<body><h1>${heading}</h1>\n${html.join('\n')}\n</body></html>`
  );
}

async function fetchPage(context: ConnectorContext, document: ConnectorDocument): Promise<FetchedDocument> {
  const [, siteId, pageId] = PAGE_ID.exec(document.id) ?? [];
  if (siteId === undefined || pageId === undefined) {
    throw new ConnectorError(`${document.title} is not a SharePoint file or page Switchboard listed.`);
  }
  const path = `sites/${segment(siteId)}/pages/${segment(pageId)}/microsoft.graph.sitePage?$expand=canvasLayout`;
  const response = await bearerRequest(context, LABEL, graphUrl(context, path), {
    headers: { accept: 'application/json' },
  });
  if (response.statusCode === 404) {
    throw new DocumentGoneError(`SharePoint no longer has ${document.title}.`, { statusCode: 404 });
  }
  return { kind: 'html', html: sitePageHtml(okJson<SitePage>(response, LABEL), document.title) };
}

function fetchDocument(
  _reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  return isDriveItemId(document.id) ? downloadDriveItem(context, LABEL, document) : fetchPage(context, document);
}

/**
 * SharePoint Online through Microsoft Graph, on the owner's Microsoft connection. A site gives its
 * published modern pages (as HTML, text web parts only) and then the readable files of its default
 * document library, subfolders included; a file or folder sharing link gives that file or folder.
 * Lists PDF, DOCX, PPTX, TXT, MD and CSV files; skips other types, deleted items, pages never
 * published, and other libraries and subsites. Change tokens: a file's `cTag`, a page's `eTag`.
 */
export const sharepointConnector: Connector = {
  type: 'sharepoint',
  service: 'microsoft',
  connectionOptional: false,
  parseReference: canonicalSharePointReference,
  list,
  fetch: fetchDocument,
};
