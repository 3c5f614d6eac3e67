import { Dropbox, DropboxResponseError, type files, type sharing } from 'dropbox';
import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { ConnectorHttp } from './connector-http.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { asError, statusError, withAccessToken } from './service-response.ts';
import { webLink } from './web-link.ts';

const LABEL = 'Dropbox';
const WEB = 'https://www.dropbox.com';
const LINK_HOSTS = new Set(['dropbox.com', 'www.dropbox.com']);
const KEY = /^[A-Za-z0-9_-]+$/;
const INVALID =
  'url must be a Dropbox shared link or a path in the connected Dropbox, like ' +
  'https://www.dropbox.com/scl/fo/4k2x9b7q3m1/AAB8f3k2?rlkey=a8f3k2lq9&dl=0 or /Team/Handbook.';
/** The extensions the document parsers read. */
const READABLE = new Set(['pdf', 'docx', 'pptx', 'txt', 'md', 'csv']);

/** A canonical reference: a shared link (file or folder) or a path in the connection's Dropbox. */
type Target = { kind: 'link'; url: string } | { kind: 'path'; path: string };

/**
 * The canonical form of a Dropbox reference: a shared link on `www.dropbox.com` (`/scl/fi/{id}/{name}`
 * and `/scl/fo/{id}/{key}` with their `rlkey`, legacy `/s/{id}/{name}` and `/sh/{id}/{key}…`) with
 * every parameter but `rlkey` dropped; or a path in the connected Dropbox starting with `/`, without a
 * trailing slash (`/` is the whole Dropbox, or an app's folder). Throws `ValidationError`.
 */
export function canonicalDropboxReference(reference: string): string {
  const trimmed = reference.trim();
  if (trimmed.startsWith('/')) return canonicalPath(trimmed);
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !LINK_HOSTS.has(url.hostname.toLowerCase())) {
    throw new ValidationError(INVALID);
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const [kind = '', sub = '', id = '', last = ''] = segments;
  const rlkey = url.searchParams.get('rlkey');
  const scl = kind === 'scl' && (sub === 'fi' || sub === 'fo') && segments.length === 4 && KEY.test(id);
  const legacy = (kind === 's' || kind === 'sh') && segments.length >= 3 && KEY.test(sub);
  if (!(scl && last !== '' && rlkey !== null && KEY.test(rlkey)) && !legacy) throw new ValidationError(INVALID);
  return `${WEB}/${segments.join('/')}${scl ? `?rlkey=${rlkey}` : ''}`;
}

function canonicalPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/$/, '') : path;
  const segments = trimmed.split('/').slice(1);
  // Dropbox refuses empty, `.` and `..` components; control characters are never in a name.
  const bad = (segment: string) => segment === '' || segment === '.' || segment === '..';
  const control = [...trimmed].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (control || (trimmed !== '/' && segments.some(bad))) {
    throw new ValidationError(INVALID);
  }
  return trimmed;
}

function targetOf(reference: string): Target {
  const canonical = canonicalDropboxReference(reference);
  return canonical.startsWith('/') ? { kind: 'path', path: canonical } : { kind: 'link', url: canonical };
}

/**
 * The SDK's fetch: the hosts built into it (`api.dropboxapi.com`, `content.dropboxapi.com`) become the
 * configured base URLs, and the request goes through the connector HTTP layer.
 */
function dropboxFetch(http: ConnectorHttp): typeof fetch {
  const bases: Record<string, string> = {
    'https://api.dropboxapi.com': http.baseUrls.dropboxApi,
    'https://content.dropboxapi.com': http.baseUrls.dropboxContent,
  };
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const base = bases[url.origin];
    if (base === undefined) {
      throw new ConnectorError(`The Dropbox library asked for ${url.host}, which is not Dropbox.`);
    }
    return http.fetch(`${base.replace(/\/+$/, '')}${url.pathname}${url.search}`, init);
  };
}

/** Dropbox's error body: `{error_summary, error: {".tag", …}}` (or plain text for a 400). */
interface DropboxErrorBody {
  error_summary?: string;
  error?: { '.tag'?: string; required_scope?: string; path?: { '.tag'?: string } };
}

function errorBody(error: DropboxResponseError<unknown>): DropboxErrorBody {
  return typeof error.error === 'object' && error.error !== null ? error.error : {};
}

/**
 * Runs `call` with an SDK client on the connection's token. Dropbox access tokens are short-lived: a
 * 401 asks for a refreshed token once and runs `call` again; a second 401 means the grant is gone. A
 * 401 for a missing scope is not retried: only connecting again with the scope helps (see `explain`).
 */
function withDropbox<T>(context: ConnectorContext, call: (client: Dropbox) => Promise<T>): Promise<T> {
  const run = (accessToken: string) => call(new Dropbox({ accessToken, fetch: dropboxFetch(context.http) }));
  return withAccessToken(context, LABEL, run, isUnauthorized);
}

function isUnauthorized(error: unknown): boolean {
  return (
    error instanceof DropboxResponseError &&
    error.status === 401 &&
    errorBody(error).error?.['.tag'] !== 'missing_scope'
  );
}

/**
 * What an SDK failure means to the owner. `gone` names the document being fetched: a path or link
 * that no longer resolves is then `DocumentGoneError`. Errors that are not Dropbox's answers (the HTTP
 * layer's size cap, an unreachable host) pass through.
 */
function explain(error: unknown, target: Target, gone?: string): Error {
  if (!(error instanceof DropboxResponseError)) return asError(error);
  const body = errorBody(error);
  if (error.status === 401 && body.error?.['.tag'] === 'missing_scope') {
    const scope = body.error.required_scope ?? 'needed';
    return new ReconnectError(`Reconnect ${LABEL} to grant the ${scope} permission.`, { statusCode: 401 });
  }
  if (error.status !== 409) {
    const text = typeof error.error === 'string' ? error.error : JSON.stringify(error.error ?? {});
    return statusError(error.status, text, LABEL);
  }
  const tag = body.error?.['.tag'];
  const notFound = tag === 'shared_link_not_found' || (tag === 'path' && body.error?.path?.['.tag'] === 'not_found');
  if (notFound && gone !== undefined) {
    return new DocumentGoneError(`${LABEL} no longer has ${gone}.`, { statusCode: 409 });
  }
  if (notFound && target.kind === 'path') {
    return new ConnectorError(`${LABEL} has no file or folder at ${target.path}.`, { statusCode: 409 });
  }
  if (notFound) {
    return new ConnectorError(`${LABEL} has no such shared link; it may have been turned off.`, { statusCode: 409 });
  }
  if (tag === 'shared_link_access_denied') {
    return new ConnectorError(`The ${LABEL} connection may not open this shared link.`, { statusCode: 409 });
  }
  const summary = (body.error_summary ?? 'unknown error').replace(/[/.]+$/, '');
  return new ConnectorError(`${LABEL} refused the request (${summary}).`, { statusCode: 409 });
}

/** A file the parsers can read: downloadable, with one of their extensions. */
function readable(entry: { name: string; is_downloadable?: boolean }): boolean {
  const extension = /\.([^.]+)$/.exec(entry.name)?.[1]?.toLowerCase() ?? '';
  return entry.is_downloadable !== false && READABLE.has(extension);
}

function unreadable(name: string): ConnectorError {
  return new ConnectorError(`${name} is not a file Switchboard reads: a downloadable PDF, DOCX, PPTX, TXT, MD or CSV.`);
}

/** The web page of a file in the connected Dropbox: its folder with the file previewed. */
function homeUrl(pathDisplay: string): string {
  const slash = pathDisplay.lastIndexOf('/');
  const folder = pathDisplay.slice(0, slash).split('/').map(encodeURIComponent).join('/');
  return `${WEB}/home${folder}?preview=${encodeURIComponent(pathDisplay.slice(slash + 1))}`;
}

function fileDocument(entry: files.FileMetadata, url: string, id = entry.id): ConnectorDocument {
  return { id, title: entry.name, size: entry.size, changeToken: entry.content_hash ?? entry.rev, url };
}

type Entry = files.FileMetadataReference | files.FolderMetadataReference | files.DeletedMetadataReference;

/**
 * Every page of one `list_folder` call, handed to `take` until it returns false (the listing is full).
 * Deleted entries never come: `include_deleted` stays off.
 */
async function eachPage(client: Dropbox, arg: files.ListFolderArg, take: (entries: Entry[]) => boolean): Promise<void> {
  let page = (await client.filesListFolder(arg)).result;
  while (take(page.entries) && page.has_more) {
    page = (await client.filesListFolderContinue({ cursor: page.cursor })).result;
  }
}

/** A folder in the connected Dropbox and all its subfolders, in one recursive listing. */
async function listPath(client: Dropbox, path: string, title: string, max: number): Promise<ConnectorListing> {
  const documents: ConnectorDocument[] = [];
  await eachPage(client, { path: path === '/' ? '' : path, recursive: true }, (entries) => {
    for (const entry of entries) {
      if (documents.length === max) return false;
      if (entry['.tag'] === 'file' && readable(entry)) {
        documents.push(fileDocument(entry, homeUrl(entry.path_display ?? `${path.replace(/\/$/, '')}/${entry.name}`)));
      }
    }
    return documents.length < max;
  });
  return { title, single: false, documents };
}

/**
 * A shared folder, walked a folder at a time (Dropbox lists shared links only non-recursively). Its
 * files have no path in the connection's Dropbox, so a document's id is its path inside the link.
 */
async function listLink(client: Dropbox, url: string, title: string, max: number): Promise<ConnectorListing> {
  const documents: ConnectorDocument[] = [];
  const folders = [''];
  for (let folder = folders.shift(); folder !== undefined && documents.length < max; folder = folders.shift()) {
    await eachPage(client, { path: folder, shared_link: { url } }, (entries) => {
      for (const entry of entries) {
        if (documents.length === max) return false;
        const path = `${folder}/${entry.name}`;
        if (entry['.tag'] === 'folder') folders.push(path);
        else if (entry['.tag'] === 'file' && readable(entry)) documents.push(fileDocument(entry, url, path));
      }
      return documents.length < max;
    });
  }
  return { title, single: false, documents };
}

async function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  const target = targetOf(reference);
  const max = context.limits.maxDocuments;
  try {
    return await withDropbox(context, async (client) => {
      if (target.kind === 'link') {
        const link = (await client.sharingGetSharedLinkMetadata({ url: target.url })).result;
        if (link['.tag'] === 'folder') return listLink(client, target.url, link.name, max);
        const file = link as sharing.FileLinkMetadata;
        if (!readable(file)) throw unreadable(file.name);
        const id = file.id ?? file.name;
        const document = { id, title: file.name, size: file.size, changeToken: file.rev, url: target.url };
        return { title: file.name, single: true, documents: [document] };
      }
      if (target.path === '/') return listPath(client, '/', LABEL, max);
      const entry = (await client.filesGetMetadata({ path: target.path })).result;
      if (entry['.tag'] === 'folder') return listPath(client, target.path, entry.name, max);
      if (entry['.tag'] !== 'file' || !readable(entry)) throw unreadable(entry.name);
      return { title: entry.name, single: true, documents: [fileDocument(entry, homeUrl(entry.path_display!))] };
    });
  } catch (error) {
    throw explain(error, target);
  }
}

async function fetchDocument(
  reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  const target = targetOf(reference);
  try {
    const result = await withDropbox(context, async (client) => {
      if (target.kind === 'path') return (await client.filesDownload({ path: document.id })).result;
      // A file of a shared folder is known by its path inside the link; a shared file by the link alone.
      const arg = document.id.startsWith('/') ? { url: target.url, path: document.id } : { url: target.url };
      return (await client.sharingGetSharedLinkFile(arg)).result;
    });
    const bytes = result.fileBinary ?? Buffer.from(await result.fileBlob.arrayBuffer());
    return { kind: 'file', filename: result.name, bytes: Buffer.from(bytes) };
  } catch (error) {
    throw explain(error, target, document.title);
  }
}

/**
 * Dropbox through the official SDK, on the owner's connection. Lists PDF, DOCX, PPTX, TXT, MD and CSV
 * files; skips other types, files Dropbox cannot download (Paper docs, cloud documents) and deleted
 * entries. A document's change token is its `content_hash` (a shared file's `rev`).
 */
export const dropboxConnector: Connector = {
  type: 'dropbox',
  service: 'dropbox',
  connectionOptional: false,
  parseReference: canonicalDropboxReference,
  list,
  fetch: fetchDocument,
};
