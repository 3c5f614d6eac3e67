import { ConnectorError, DocumentGoneError } from './connector-errors.ts';
import type { ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { bearerRequest, expectOk, okJson } from './service-response.ts';
import { webLink } from './web-link.ts';

/** How errors name the service: OneDrive and SharePoint read through the same Graph calls. */
export type GraphLabel = 'OneDrive' | 'SharePoint';

/** The extensions the document parsers read. */
const READABLE = new Set(['pdf', 'docx', 'pptx', 'txt', 'md', 'csv']);
/** Metadata answers are not documents: they are read up to this, whatever the document cap. */
const JSON_BYTES = 8 * 1024 * 1024;

/** The parts of a Graph `driveItem` the connectors read. */
export interface DriveItem {
  id: string;
  name: string;
  size?: number;
  cTag?: string;
  eTag?: string;
  webUrl?: string;
  file?: Record<string, unknown>;
  folder?: Record<string, unknown>;
  deleted?: Record<string, unknown>;
  parentReference?: { driveId?: string; id?: string };
}

/** An OData collection page: `value`, and `@odata.nextLink` (absolute) while there are more. */
export interface GraphPage<T> {
  value: T[];
  '@odata.nextLink'?: string;
}

/** A Graph v1.0 URL on the configured Graph host. */
export function graphUrl(context: ConnectorContext, path: string): string {
  return `${context.http.baseUrls.graph}/v1.0/${path}`;
}

/** One path segment of a Graph id; a SharePoint site id's commas stay as Graph writes them. */
export function segment(id: string): string {
  return encodeURIComponent(id).replace(/%2C/gi, ',');
}

/** The documented `/shares` key of a sharing URL: `u!` and the URL in unpadded base64url. */
export function shareKey(link: string): string {
  return `u!${Buffer.from(link, 'utf8').toString('base64url')}`;
}

/**
 * A pasted link as a URL: `https://` is assumed when no scheme is given, `http` becomes `https`, and
 * the fragment is dropped. Undefined when it is not an http(s) link.
 */
export function parseLink(reference: string): URL | undefined {
  const url = webLink(reference);
  if (!url) return undefined;
  if (url.username || url.password || url.port) return undefined;
  url.protocol = 'https:';
  url.hash = '';
  return url;
}

/**
 * A Graph call's JSON answer. A 404 becomes `ConnectorError(missing)` when `missing` is given; any
 * other failure reads as `okJson` says.
 */
export async function graphJson<T>(
  context: ConnectorContext,
  label: GraphLabel,
  url: string,
  options: { missing?: string; headers?: Record<string, string> } = {},
): Promise<T> {
  const headers = { accept: 'application/json', ...options.headers };
  const response = await bearerRequest(context, label, url, { headers, maxBytes: JSON_BYTES });
  if (response.statusCode === 404 && options.missing !== undefined) {
    throw new ConnectorError(options.missing, { statusCode: 404 });
  }
  return okJson<T>(response, label);
}

/**
 * Every page of a collection from `url`, handed to `take` until it returns false. `@odata.nextLink` is
 * followed as given, but only on the Graph host: the bearer token goes nowhere else. With
 * `missingIsEmpty`, a collection that does not exist (404) is an empty one.
 */
export async function eachGraphPage<T>(
  context: ConnectorContext,
  label: GraphLabel,
  url: string,
  take: (items: T[]) => boolean,
  options: { missingIsEmpty?: boolean } = {},
): Promise<void> {
  const origin = new URL(context.http.baseUrls.graph).origin;
  const request = { headers: { accept: 'application/json' }, maxBytes: JSON_BYTES };
  for (let next: string | undefined = url; next !== undefined;) {
    const response = await bearerRequest(context, label, next, request);
    if (response.statusCode === 404 && next === url && options.missingIsEmpty === true) return;
    const page = okJson<GraphPage<T>>(response, label);
    if (!take(page.value ?? [])) return;
    next = page['@odata.nextLink'];
    if (next !== undefined && (!URL.canParse(next) || new URL(next).origin !== origin)) {
      throw new ConnectorError(`${label} sent a next-page link to another host.`);
    }
  }
}

/** A file the parsers can read: a file (not a folder, notebook or package) with one of their extensions. */
export function isReadable(item: DriveItem): boolean {
  const extension = /\.([^.]+)$/.exec(item.name)?.[1]?.toLowerCase() ?? '';
  return item.file !== undefined && item.deleted === undefined && READABLE.has(extension);
}

/** A listed file. Its id is its Graph path, `drives/{drive-id}/items/{item-id}`, which `fetch` downloads. */
export function driveDocument(item: DriveItem, driveId: string): ConnectorDocument {
  return {
    id: `drives/${driveId}/items/${item.id}`,
    title: item.name,
    size: typeof item.size === 'number' ? item.size : null,
    changeToken: item.cTag ?? item.eTag ?? '',
    url: item.webUrl ?? '',
  };
}

/**
 * Adds the readable files under a folder (its `children` URL) and its subfolders, breadth first and
 * page by page, to `documents` until it holds `max`. Deleted items, folders' own entries, and files of
 * other types are skipped.
 */
export async function collectDriveItems(
  context: ConnectorContext,
  label: GraphLabel,
  driveId: string,
  childrenUrl: string,
  documents: ConnectorDocument[],
  max: number,
): Promise<void> {
  const folders = [childrenUrl];
  for (let folder = folders.shift(); folder !== undefined && documents.length < max; folder = folders.shift()) {
    await eachGraphPage<DriveItem>(context, label, folder, (items) => {
      for (const item of items) {
        if (documents.length >= max) return false;
        if (item.deleted !== undefined) continue;
        const drive = item.parentReference?.driveId ?? driveId;
        if (item.folder !== undefined) {
          folders.push(graphUrl(context, `drives/${segment(drive)}/items/${segment(item.id)}/children`));
        } else if (isReadable(item)) documents.push(driveDocument(item, drive));
      }
      return documents.length < max;
    });
  }
}

/** A file or folder behind a sharing link (`GET /shares/{key}/driveItem`), listed as one or many documents. */
export async function listSharingLink(
  context: ConnectorContext,
  label: GraphLabel,
  link: string,
): Promise<ConnectorListing> {
  const item = await graphJson<DriveItem>(context, label, graphUrl(context, `shares/${shareKey(link)}/driveItem`), {
    missing: `${label} has nothing at this link, or the connection may not open it.`,
    // Redeemed as a browser would, so the connection keeps access to the items for later syncs.
    headers: { prefer: 'redeemSharingLink' },
  });
  const driveId = item.parentReference?.driveId;
  if (!driveId) throw new ConnectorError(`${label} did not say which drive holds ${item.name}.`);
  if (item.folder !== undefined) {
    const documents: ConnectorDocument[] = [];
    const children = graphUrl(context, `drives/${segment(driveId)}/items/${segment(item.id)}/children`);
    await collectDriveItems(context, label, driveId, children, documents, context.limits.maxDocuments);
    return { title: item.name, single: false, documents };
  }
  if (!isReadable(item)) {
    throw new ConnectorError(`${item.name} is not a file Switchboard reads: a PDF, DOCX, PPTX, TXT, MD or CSV.`);
  }
  return { title: item.name, single: true, documents: [driveDocument(item, driveId)] };
}

const DRIVE_ITEM_ID = /^drives\/([^/]+)\/items\/([^/]+)$/;

/** Whether a listed document is a drive item (rather than a SharePoint page). */
export function isDriveItemId(id: string): boolean {
  return DRIVE_ITEM_ID.test(id);
}

/**
 * Downloads a listed file: `GET …/content` answers 302 to a pre-authenticated URL on another host,
 * which the HTTP layer follows without the `Authorization` header. A 404 means it is gone.
 */
export async function downloadDriveItem(
  context: ConnectorContext,
  label: GraphLabel,
  document: ConnectorDocument,
): Promise<FetchedDocument> {
  const [, driveId, itemId] = DRIVE_ITEM_ID.exec(document.id) ?? [];
  if (driveId === undefined || itemId === undefined) {
    throw new ConnectorError(`${document.title} is not a ${label} file Switchboard listed.`);
  }
  const url = graphUrl(context, `drives/${segment(driveId)}/items/${segment(itemId)}/content`);
  const response = await bearerRequest(context, label, url);
  if (response.statusCode === 404) {
    throw new DocumentGoneError(`${label} no longer has ${document.title}.`, { statusCode: 404 });
  }
  expectOk(response, label);
  return { kind: 'file', filename: document.title, bytes: response.body };
}
