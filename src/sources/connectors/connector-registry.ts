import type { Connector, ConnectorType } from './connector.ts';

// Loaded on first use: the service SDKs (googleapis above all) are large, and most processes — the
// CLI, a gateway whose owners use two services — never need most of them.
const LOADERS: Readonly<Record<ConnectorType, () => Promise<Connector>>> = {
  youtube: async () => (await import('./youtube-connector.ts')).youtubeConnector,
  google_drive: async () => (await import('./google-drive-connector.ts')).googleDriveConnector,
  notion: async () => (await import('./notion-connector.ts')).notionConnector,
  dropbox: async () => (await import('./dropbox-connector.ts')).dropboxConnector,
  onedrive: async () => (await import('./onedrive-connector.ts')).onedriveConnector,
  sharepoint: async () => (await import('./sharepoint-connector.ts')).sharepointConnector,
  zendesk: async () => (await import('./zendesk-connector.ts')).zendeskConnector,
  gitbook: async () => (await import('./gitbook-connector.ts')).gitbookConnector,
};

/** The connector that reads sources of a type. */
export function connectorFor(type: ConnectorType): Promise<Connector> {
  return LOADERS[type]();
}
