import type { Config } from '../../config.ts';
import { DEFAULT_BASE_URLS, type ConnectorBaseUrls } from './connector-http.ts';
import type { ConnectorLimits } from './connector.ts';

/**
 * The services' base URLs as configured: each `*_BASE_URL` replaces its real host (the OAuth pages
 * of a replaced host move with it, at the paths the real service uses).
 */
export function connectorBaseUrls(config: Config): ConnectorBaseUrls {
  const trim = (url: string) => url.replace(/\/+$/, '');
  const googleOauth = config.GOOGLE_OAUTH_BASE_URL && trim(config.GOOGLE_OAUTH_BASE_URL);
  const dropboxApi = config.DROPBOX_API_BASE_URL && trim(config.DROPBOX_API_BASE_URL);
  return {
    google: config.GOOGLE_API_BASE_URL ? `${trim(config.GOOGLE_API_BASE_URL)}/` : DEFAULT_BASE_URLS.google,
    googleToken: googleOauth ? `${googleOauth}/token` : DEFAULT_BASE_URLS.googleToken,
    googleAuthorize: googleOauth ? `${googleOauth}/o/oauth2/v2/auth` : DEFAULT_BASE_URLS.googleAuthorize,
    notion: config.NOTION_BASE_URL ? trim(config.NOTION_BASE_URL) : DEFAULT_BASE_URLS.notion,
    dropboxApi: dropboxApi || DEFAULT_BASE_URLS.dropboxApi,
    dropboxContent: config.DROPBOX_CONTENT_BASE_URL
      ? trim(config.DROPBOX_CONTENT_BASE_URL)
      : DEFAULT_BASE_URLS.dropboxContent,
    dropboxAuthorize: dropboxApi ? `${dropboxApi}/oauth2/authorize` : DEFAULT_BASE_URLS.dropboxAuthorize,
    graph: config.MICROSOFT_GRAPH_BASE_URL ? trim(config.MICROSOFT_GRAPH_BASE_URL) : DEFAULT_BASE_URLS.graph,
    microsoftLogin: config.MICROSOFT_LOGIN_BASE_URL
      ? trim(config.MICROSOFT_LOGIN_BASE_URL)
      : DEFAULT_BASE_URLS.microsoftLogin,
    gitbook: config.GITBOOK_API_BASE_URL ? trim(config.GITBOOK_API_BASE_URL) : DEFAULT_BASE_URLS.gitbook,
    youtube: config.YOUTUBE_BASE_URL ? trim(config.YOUTUBE_BASE_URL) : DEFAULT_BASE_URLS.youtube,
  };
}

/** Per-document size cap and documents per source. */
export function connectorLimits(config: Config): ConnectorLimits {
  return { maxDocumentBytes: config.CONNECTOR_MAX_DOCUMENT_BYTES, maxDocuments: config.CONNECTOR_MAX_DOCUMENTS };
}
