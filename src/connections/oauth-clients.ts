import type { Config } from '../config.ts';
import { ValidationError } from '../errors.ts';
import type { ConnectorBaseUrls } from '../sources/connectors/connector-http.ts';
import type { ConnectionService } from '../sources/connectors/connector.ts';

/** The services connected with OAuth (authorization code + PKCE, offline access). */
export const OAUTH_SERVICES = ['google_drive', 'dropbox', 'microsoft'] as const;
export type OAuthService = (typeof OAUTH_SERVICES)[number];

/** One service's OAuth client as configured, with its endpoints. */
export interface OAuthClient {
  service: OAuthService;
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Space-separated scopes asked for. */
  scope: string;
  /** What else the authorize URL carries to get a refresh token. */
  authorizeParams: Record<string, string>;
}

export function isOAuthService(service: string): service is OAuthService {
  return (OAUTH_SERVICES as readonly string[]).includes(service);
}

/** A service name that must be one connected with OAuth (`ValidationError` otherwise). */
export function assertOAuthService(service: string): asserts service is OAuthService {
  if (!isOAuthService(service)) {
    throw new ValidationError('service must be one of google_drive, dropbox, microsoft for OAuth.');
  }
}

/** The Microsoft identity platform's token endpoint of a tenant. */
export function microsoftTokenUrl(login: string, tenant: string): string {
  return `${login}/${tenant}/oauth2/v2.0/token`;
}

/**
 * The OAuth clients the configuration names (a service without its client id and secret cannot be
 * connected with OAuth), read-only scopes each.
 */
export function oauthClients(config: Config, urls: ConnectorBaseUrls): Partial<Record<ConnectionService, OAuthClient>> {
  const clients: Partial<Record<ConnectionService, OAuthClient>> = {};
  if (config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET) {
    clients.google_drive = {
      service: 'google_drive',
      clientId: config.GOOGLE_CLIENT_ID,
      clientSecret: config.GOOGLE_CLIENT_SECRET,
      authorizeUrl: urls.googleAuthorize,
      tokenUrl: urls.googleToken,
      scope: 'https://www.googleapis.com/auth/drive.readonly',
      // `prompt=consent` makes Google hand out a refresh token again when the owner reconnects.
      authorizeParams: { access_type: 'offline', prompt: 'consent' },
    };
  }
  if (config.DROPBOX_APP_KEY && config.DROPBOX_APP_SECRET) {
    clients.dropbox = {
      service: 'dropbox',
      clientId: config.DROPBOX_APP_KEY,
      clientSecret: config.DROPBOX_APP_SECRET,
      authorizeUrl: urls.dropboxAuthorize,
      tokenUrl: `${urls.dropboxApi}/oauth2/token`,
      scope: 'account_info.read files.metadata.read files.content.read sharing.read',
      authorizeParams: { token_access_type: 'offline' },
    };
  }
  if (config.MICROSOFT_CLIENT_ID && config.MICROSOFT_CLIENT_SECRET) {
    const tokenUrl = microsoftTokenUrl(urls.microsoftLogin, config.MICROSOFT_TENANT);
    clients.microsoft = {
      service: 'microsoft',
      clientId: config.MICROSOFT_CLIENT_ID,
      clientSecret: config.MICROSOFT_CLIENT_SECRET,
      authorizeUrl: tokenUrl.replace(/\/token$/, '/authorize'),
      tokenUrl,
      scope: 'offline_access Files.Read.All Sites.Read.All',
      authorizeParams: {},
    };
  }
  return clients;
}
