import { drive, type drive_v3 } from '@googleapis/drive';
import { gaxios, OAuth2Client } from 'google-auth-library';
import { ValidationError } from '../../errors.ts';
import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { Connector, ConnectorContext, ConnectorDocument, ConnectorListing, FetchedDocument } from './connector.ts';
import { asError, statusError, withAccessToken } from './service-response.ts';
import { webLink } from './web-link.ts';

const LABEL = 'Google Drive';
const OPEN = 'https://drive.google.com/open?id=';
const ID = /^[A-Za-z0-9_-]{19,100}$/;
const INVALID =
  'url must be a Google Drive file or folder link, or its id, like ' +
  'https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOpQrStUvWxYz012345.';
const FOLDER = 'application/vnd.google-apps.folder';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const FILE_FIELDS = 'id,name,mimeType,size,md5Checksum,version,modifiedTime,webViewLink';
const LIST_FIELDS = `nextPageToken,files(${FILE_FIELDS})`;
const DOCS_KINDS = new Set(['document', 'spreadsheets', 'presentation']);

/** How each readable mime type becomes a file for the parsers: downloaded as it is, or exported. */
const FORMATS: Readonly<Record<string, { extension: string; exportAs?: string }>> = {
  'application/vnd.google-apps.document': { extension: 'docx', exportAs: DOCX },
  'application/vnd.google-apps.presentation': { extension: 'pptx', exportAs: PPTX },
  // Drive exports a spreadsheet's first sheet only, as CSV.
  'application/vnd.google-apps.spreadsheet': { extension: 'csv', exportAs: 'text/csv' },
  'application/pdf': { extension: 'pdf' },
  [DOCX]: { extension: 'docx' },
  [PPTX]: { extension: 'pptx' },
  'text/plain': { extension: 'txt' },
  'text/markdown': { extension: 'md' },
  'text/x-markdown': { extension: 'md' },
  'text/csv': { extension: 'csv' },
};

/**
 * The id behind a Drive reference: a file link (`drive.google.com/file/d/{id}/…`, `/open?id={id}`), a
 * Docs, Sheets or Slides link (`docs.google.com/{document|spreadsheets|presentation}/d/{id}/…`), a
 * folder link (`drive.google.com/drive/folders/{id}`, also under `/u/{n}/`), or a bare id.
 */
function driveId(reference: string): string {
  const trimmed = reference.trim();
  if (ID.test(trimmed)) return trimmed;
  const url = webLink(trimmed);
  if (!url) throw new ValidationError(INVALID);
  const host = url.hostname.toLowerCase();
  // `/u/{n}/` picks one of several signed-in accounts; it says nothing about the item.
  const path = url.pathname.replace(/\/u\/\d+(?=\/|$)/, '');
  const segments = path.split('/').filter(Boolean);
  let id: string | undefined;
  if ((url.protocol === 'https:' || url.protocol === 'http:') && host === 'drive.google.com') {
    if (segments[0] === 'file' && segments[1] === 'd' && segments.length <= 4) id = segments[2];
    else if (path === '/open') id = url.searchParams.get('id') ?? undefined;
    else if (segments[0] === 'drive' && segments[1] === 'folders' && segments.length === 3) id = segments[2];
  } else if ((url.protocol === 'https:' || url.protocol === 'http:') && host === 'docs.google.com') {
    if (DOCS_KINDS.has(segments[0] ?? '') && segments[1] === 'd' && segments.length <= 4) id = segments[2];
  }
  if (id === undefined || !ID.test(id)) throw new ValidationError(INVALID);
  return id;
}

/** The canonical form of any accepted reference: `https://drive.google.com/open?id={id}`. */
export function canonicalDriveReference(reference: string): string {
  return `${OPEN}${driveId(reference)}`;
}

type Call = <T>(request: (client: drive_v3.Drive) => Promise<{ data: T }>) => Promise<T>;

/**
 * A Drive client on the connection's token, its every request through `context.http.fetch` (gaxios's
 * own retries off: the HTTP layer waits out 429s). The OAuth2Client holds only an access token, so
 * google-auth-library has nothing to refresh with; a 401 asks the connection for a new token once
 * and sends the request again, and a second 401 means the grant is gone.
 */
function driveSession(context: ConnectorContext): Call {
  const auth = context.auth;
  if (!auth) throw new ReconnectError(`Reconnect ${LABEL}.`);
  const fetchImplementation = context.http.fetch;
  const credentials = new OAuth2Client({
    transporterOptions: { fetchImplementation, retry: false },
    endpoints: { oauth2TokenUrl: context.http.baseUrls.googleToken },
  });
  const client = drive({
    version: 'v3',
    rootUrl: context.http.baseUrls.google,
    auth: credentials,
    fetchImplementation,
    retry: false,
    // Pinned, or GOOGLE_CLOUD_UNIVERSE_DOMAIN in the environment would move the configured host.
    universeDomain: 'googleapis.com',
  });
  const isUnauthorized = (error: unknown) => error instanceof gaxios.GaxiosError && error.status === 401;
  return (request) =>
    withAccessToken(
      context,
      LABEL,
      async (token) => {
        credentials.setCredentials({ access_token: token });
        return (await request(client)).data;
      },
      isUnauthorized,
    );
}

/** Drive's error body: `{error: {code, message, errors: [{reason, …}], status}}`. */
interface DriveErrorBody {
  error?: { message?: string; errors?: { reason?: string }[] };
}

function errorBody(data: unknown): DriveErrorBody {
  if (data instanceof ArrayBuffer || typeof data === 'string') {
    try {
      return JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8')) as DriveErrorBody;
    } catch {
      return {};
    }
  }
  return typeof data === 'object' && data !== null ? data : {};
}

/**
 * What a failed call means to the owner. `missing` is the error for a 404 (the reference or the
 * document is not there). Errors that are not Drive's answers (the HTTP layer's size cap, an
 * unreachable host) pass through as the HTTP layer raised them.
 */
function explain(error: unknown, missing: () => ConnectorError, name = 'The file'): Error {
  if (!(error instanceof gaxios.GaxiosError)) return asError(error);
  const response = error.response;
  if (!response) {
    return error.cause instanceof Error ? error.cause : new ConnectorError(`${LABEL} could not be reached.`);
  }
  const body = errorBody(response.data);
  const reasons = (body.error?.errors ?? []).map((item) => item.reason);
  if (response.status === 404) return missing();
  if (reasons.includes('exportSizeLimitExceeded')) {
    return new ConnectorError(`${name} is too large for ${LABEL} to export; its limit is 10 MB.`, {
      statusCode: response.status,
    });
  }
  if (reasons.includes('rateLimitExceeded') || reasons.includes('userRateLimitExceeded')) {
    return new ConnectorError(`${LABEL} is limiting requests; try again later.`, { statusCode: response.status });
  }
  return statusError(response.status, JSON.stringify(body), LABEL);
}

function unreadable(name: string): ConnectorError {
  return new ConnectorError(
    `${name} is not a file Switchboard reads: a Google Doc, Sheet or Slides, or a PDF, DOCX, PPTX, TXT, MD or CSV file.`,
  );
}

function toDocument(file: drive_v3.Schema$File): ConnectorDocument {
  const id = file.id ?? '';
  return {
    id,
    title: file.name ?? id,
    // Google's own files (Docs, Sheets, Slides) have no size until exported.
    size: file.size === null || file.size === undefined ? null : Number(file.size),
    changeToken: file.version ?? file.md5Checksum ?? file.modifiedTime ?? '',
    url: file.webViewLink ?? `https://drive.google.com/file/d/${id}/view`,
  };
}

/** Folders are walked depth-first, in Drive's order, until the listing holds `max` documents. */
async function walk(call: Call, folderId: string, documents: ConnectorDocument[], max: number, seen: Set<string>) {
  seen.add(folderId);
  let pageToken: string | undefined;
  do {
    const page = await call((client) =>
      client.files.list({
        q: `'${folderId.replace(/[\\']/g, '\\$&')}' in parents and trashed = false`,
        fields: LIST_FIELDS,
        pageSize: 1000,
        pageToken,
        supportsAllDrives: true,
        includeItemsFromAllDrives: true,
      }),
    );
    for (const file of page.files ?? []) {
      if (documents.length >= max) return;
      if (file.mimeType === FOLDER && file.id && !seen.has(file.id)) await walk(call, file.id, documents, max, seen);
      else if (FORMATS[file.mimeType ?? ''] && file.id) documents.push(toDocument(file));
    }
    pageToken = page.nextPageToken ?? undefined;
  } while (pageToken !== undefined && documents.length < max);
}

async function list(reference: string, context: ConnectorContext): Promise<ConnectorListing> {
  const id = driveId(reference);
  const call = driveSession(context);
  const missing = () =>
    new ConnectorError(`${LABEL} has no file or folder ${id}, or it is not shared with the connection.`, {
      statusCode: 404,
    });
  try {
    const root = await call((client) =>
      client.files.get({ fileId: id, fields: `${FILE_FIELDS},trashed`, supportsAllDrives: true }),
    );
    const title = root.name ?? id;
    if (root.trashed) throw new ConnectorError(`${title} is in the ${LABEL} trash.`);
    if (root.mimeType === FOLDER) {
      const documents: ConnectorDocument[] = [];
      await walk(call, id, documents, context.limits.maxDocuments, new Set());
      return { title, single: false, documents };
    }
    if (!FORMATS[root.mimeType ?? '']) throw unreadable(title);
    return { title, single: true, documents: [toDocument(root)] };
  } catch (error) {
    throw explain(error, missing);
  }
}

/** The file name the parsers see: an export gets its format's extension; a file keeps a fitting one. */
function filenameOf(name: string, mimeType: string, format: { extension: string; exportAs?: string }): string {
  const extension = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
  if (format.exportAs) return `${name}.${format.extension}`;
  // A text file's own extension says which text format it is (Drive often types `.md` as text/plain).
  const fits =
    extension === format.extension || (mimeType.startsWith('text/') && ['txt', 'md', 'csv'].includes(extension));
  return fits ? name : `${name}.${format.extension}`;
}

async function fetchDocument(
  _reference: string,
  document: ConnectorDocument,
  context: ConnectorContext,
): Promise<FetchedDocument> {
  const call = driveSession(context);
  const gone = () => new DocumentGoneError(`${LABEL} no longer has ${document.title}.`, { statusCode: 404 });
  try {
    const file = await call((client) =>
      client.files.get({ fileId: document.id, fields: 'id,name,mimeType,trashed', supportsAllDrives: true }),
    );
    // A trashed file still downloads; for a source it is deleted.
    if (file.trashed) throw gone();
    const mimeType = file.mimeType ?? '';
    const format = FORMATS[mimeType];
    if (!format) throw unreadable(file.name ?? document.title);
    const data = await call<unknown>((client) =>
      format.exportAs
        ? client.files.export({ fileId: document.id, mimeType: format.exportAs }, { responseType: 'arraybuffer' })
        : client.files.get(
            { fileId: document.id, alt: 'media', supportsAllDrives: true },
            { responseType: 'arraybuffer' },
          ),
    );
    const filename = filenameOf(file.name ?? document.title, mimeType, format);
    return { kind: 'file', filename, bytes: Buffer.from(data as ArrayBuffer) };
  } catch (error) {
    throw explain(error, gone, document.title);
  }
}

/**
 * Google Drive through @googleapis/drive, on the owner's connection (OAuth or a service account).
 * Lists Google Docs (exported as DOCX), Slides (PPTX), Sheets (the first sheet, as CSV), and PDF,
 * DOCX, PPTX, TXT, MD and CSV files; skips every other type (images, Forms, Drawings, shortcuts,
 * other Office formats) and trashed items. A document's change token is Drive's `version`.
 */
export const googleDriveConnector: Connector = {
  type: 'google_drive',
  service: 'google_drive',
  connectionOptional: false,
  parseReference: canonicalDriveReference,
  list,
  fetch: fetchDocument,
};
