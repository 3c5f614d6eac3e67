import type { ConnectorHttp } from './connector-http.ts';

/** The source types read through a connector (SPEC's types beyond url, file and text). */
export const CONNECTOR_TYPES = [
  'youtube',
  'google_drive',
  'notion',
  'dropbox',
  'onedrive',
  'sharepoint',
  'zendesk',
  'gitbook',
] as const;
export type ConnectorType = (typeof CONNECTOR_TYPES)[number];

/** Connector types an owner may add from the dashboard (SPEC: "Add from dashboard: yes"). */
export const DASHBOARD_CONNECTOR_TYPES: readonly ConnectorType[] = ['youtube', 'google_drive', 'notion', 'dropbox'];

/** Types support enables per account (`switchboard user connectors --enable`). */
export const BACKEND_ONLY_TYPES: readonly ConnectorType[] = ['onedrive', 'sharepoint', 'zendesk', 'gitbook'];

/** The services a connection can hold credentials for. OneDrive and SharePoint share Microsoft's. */
export const CONNECTION_SERVICES = ['google_drive', 'notion', 'dropbox', 'microsoft', 'zendesk', 'gitbook'] as const;
export type ConnectionService = (typeof CONNECTION_SERVICES)[number];

/** One document behind a reference: a file, a page, an article, a video. */
export interface ConnectorDocument {
  /** The service's stable id of the document (unique within the reference). */
  id: string;
  title: string;
  /** Bytes, when the service tells before the download; null when it does not. */
  size: number | null;
  /** Changes whenever the document's content changes (a revision, an etag, an edit time). */
  changeToken: string;
  /** A link a person can open, shown with the passages it gives; '' when there is none. */
  url: string;
}

/** What a reference holds. */
export interface ConnectorListing {
  /** The title of the folder, database, space or help centre, or of the single document. */
  title: string;
  /** True when the reference names one document rather than a collection. */
  single: boolean;
  documents: ConnectorDocument[];
}

/** One document's content: a file for the parsers (the extension picks one), or markup. */
export type FetchedDocument =
  | { kind: 'file'; filename: string; bytes: Buffer }
  | { kind: 'markdown'; markdown: string }
  | { kind: 'html'; html: string };

/**
 * The credentials of the connection a source reads through. Secrets never leave it except as the
 * values a request needs.
 */
export interface ConnectorAuth {
  /** The connection's stored fields: `token`, `email`, a service account's key JSON, … */
  readonly secret: Readonly<Record<string, string>>;
  /** The connection's base URL, where the service has one per customer (a Zendesk help centre). */
  readonly baseUrl: string;
  /** A current access token: the stored token, or an OAuth token refreshed first when it has expired. */
  accessToken(): Promise<string>;
  /**
   * The service refused `rejected` (401): refreshes once across all gateways and returns the new token.
   * Throws `ReconnectError` when the grant was revoked or the token cannot be refreshed.
   */
  refresh(rejected: string): Promise<string>;
}

/** Limits every connector honours. */
export interface ConnectorLimits {
  /** Largest document downloaded; a document over it is refused before download where the size is known. */
  maxDocumentBytes: number;
  /** Most documents listed behind one reference. */
  maxDocuments: number;
}

/** What a connector works with, given by the ingestion worker. */
export interface ConnectorContext {
  /** Undefined for services read without a connection (YouTube, a public Zendesk help centre). */
  auth: ConnectorAuth | undefined;
  http: ConnectorHttp;
  limits: ConnectorLimits;
  signal?: AbortSignal;
}

/**
 * One service's adapter. `parseReference` does no I/O; `list` and `fetch` reach the service only
 * through `context.http` (SSRF guard, redirects, Retry-After, one request at a time per connection).
 */
export interface Connector {
  readonly type: ConnectorType;
  /** The service whose connection it reads through; null when it needs none. */
  readonly service: ConnectionService | null;
  /** Whether a source of this type may be added without a connection. */
  readonly connectionOptional: boolean;
  /**
   * Checks a reference (a link or id as an owner pastes it) and returns its canonical form, the
   * source's stored `url`. Throws `ValidationError` whose detail says what is expected.
   */
  parseReference(reference: string): string;
  /** The documents behind a canonical reference, at most `limits.maxDocuments`. */
  list(reference: string, context: ConnectorContext): Promise<ConnectorListing>;
  /** One listed document's content, at most `limits.maxDocumentBytes`. */
  fetch(reference: string, document: ConnectorDocument, context: ConnectorContext): Promise<FetchedDocument>;
}

/** A person's words for each connector type, as errors and the dashboard name them. */
export const CONNECTOR_LABELS: Record<ConnectorType, string> = {
  youtube: 'YouTube',
  google_drive: 'Google Drive',
  notion: 'Notion',
  dropbox: 'Dropbox',
  onedrive: 'OneDrive',
  sharepoint: 'SharePoint',
  zendesk: 'Zendesk',
  gitbook: 'GitBook',
};

/** The service a connection holds, as a person names it. */
export const SERVICE_LABELS: Record<ConnectionService, string> = {
  google_drive: 'Google Drive',
  notion: 'Notion',
  dropbox: 'Dropbox',
  microsoft: 'Microsoft',
  zendesk: 'Zendesk',
  gitbook: 'GitBook',
};

export function isConnectorType(type: string): type is ConnectorType {
  return (CONNECTOR_TYPES as readonly string[]).includes(type);
}
