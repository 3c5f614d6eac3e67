import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { ConnectorError, ReconnectError } from '../sources/connectors/connector-errors.ts';
import type { ConnectorHttp } from '../sources/connectors/connector-http.ts';
import { SERVICE_LABELS, type ConnectorAuth, type ConnectionService } from '../sources/connectors/connector.ts';
import { ValidationError } from '../errors.ts';
import type { ConnectionStore } from '../store/connection-store.ts';
import type { Connection, ConnectionSecret } from './connection.ts';
import type { ProcessLease } from '../redis/process-lease.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { microsoftTokenUrl, type OAuthClient } from './oauth-clients.ts';
import { InvalidGrantError, requestToken, type TokenResponse } from './token-endpoint.ts';

/** A token this close to its expiry is refreshed before use. */
const EXPIRY_MARGIN_MS = 60_000;
/** How long one gateway may hold a connection's refresh, and how long the others wait for it. */
const REFRESH_LOCK_MS = 30_000;
const REFRESH_POLL_MS = 50;

/** What credentials are made from. */
export interface CredentialsDeps {
  connections: ConnectionStore;
  lease: ProcessLease;
  keys: RedisKeys;
  clock: Clock;
  logger: Logger;
  /** The OAuth clients by service, as configured. */
  oauth: Partial<Record<ConnectionService, OAuthClient>>;
}

/**
 * Turns a stored connection into the `ConnectorAuth` a connector uses. Access tokens that expire
 * (OAuth, service accounts, app-only client credentials) are refreshed by one gateway at a time: the
 * first to take the connection's refresh lease asks the service and stores the new token (and a
 * rotated refresh token); the others wait and read it. A refused grant marks the connection
 * `needs_reauth`, and every source reading through it fails with "Reconnect <service>.".
 */
export class ConnectionCredentials {
  private readonly deps: CredentialsDeps;

  constructor(deps: CredentialsDeps) {
    this.deps = deps;
  }

  /** The credentials of a connection, checked to be usable now (one read of it). */
  async forConnection(connectionId: string, http: ConnectorHttp): Promise<ConnectorAuth> {
    const stored = await this.deps.connections.withSecret(connectionId);
    const connection = stored.connection;
    let secret = stored.secret;
    if (connection.status === 'needs_reauth')
      throw new ReconnectError(`Reconnect ${SERVICE_LABELS[connection.service]}.`);
    return {
      secret,
      baseUrl: connection.base_url,
      accessToken: async () => {
        if (connection.auth_kind === 'token') return secret.token ?? '';
        const expiresAt = Number(secret.expires_at ?? 0);
        if (secret.access_token && expiresAt - EXPIRY_MARGIN_MS > this.nowMs()) return secret.access_token;
        secret = await this.refreshed(connection, http, secret.access_token ?? '');
        return secret.access_token!;
      },
      refresh: async (rejected: string) => {
        secret = await this.refreshed(connection, http, rejected);
        return secret.access_token!;
      },
    };
  }

  /** The secret after `rejected` was replaced: by this gateway, or by the one holding the refresh. */
  private async refreshed(connection: Connection, http: ConnectorHttp, rejected: string): Promise<ConnectionSecret> {
    const label = SERVICE_LABELS[connection.service];
    if (connection.auth_kind === 'token') return this.reconnect(connection, 'the service refused the token');
    const lockKey = this.deps.keys.connectionRefresh(connection.id);
    // One holder per refresh, not per process: two sources of one connection in this gateway must not
    // both pass the lease (nor one release it while the other still asks the service).
    const holder = randomUUID();
    const deadline = this.nowMs() + REFRESH_LOCK_MS;
    for (;;) {
      const current = await this.current(connection);
      if (current.access_token && current.access_token !== rejected && !this.expired(current)) return current;
      if (await this.deps.lease.hold(lockKey, holder, REFRESH_LOCK_MS)) {
        try {
          // Read once more under the lease: the previous holder may have finished just now.
          const latest = await this.current(connection);
          if (latest.access_token && latest.access_token !== rejected && !this.expired(latest)) return latest;
          return await this.renew(connection, http, latest);
        } finally {
          await this.deps.lease.release(lockKey, holder);
        }
      }
      if (this.nowMs() > deadline) throw new ConnectorError(`Refreshing the ${label} token took too long.`);
      await sleep(REFRESH_POLL_MS);
    }
  }

  private async renew(
    connection: Connection,
    http: ConnectorHttp,
    secret: ConnectionSecret,
  ): Promise<ConnectionSecret> {
    const label = SERVICE_LABELS[connection.service];
    let token: TokenResponse;
    try {
      token = await this.requestFor(connection, http, secret, label);
    } catch (error) {
      if (error instanceof InvalidGrantError) return this.reconnect(connection, error.message);
      throw error;
    }
    const next: ConnectionSecret = {
      ...secret,
      access_token: token.accessToken,
      expires_at: String(token.expiresAt),
      ...(token.refreshToken ? { refresh_token: token.refreshToken } : {}),
    };
    await this.deps.connections.setSecret(connection.id, next);
    this.deps.logger.info({ connection_id: connection.id, service: connection.service }, 'connection token refreshed');
    return next;
  }

  private requestFor(
    connection: Connection,
    http: ConnectorHttp,
    secret: ConnectionSecret,
    label: string,
  ): Promise<TokenResponse> {
    const now = this.nowMs();
    if (connection.auth_kind === 'service_account') {
      return this.serviceAccount(secret, http, label);
    }
    if (connection.auth_kind === 'client_credentials') {
      const tokenUrl = microsoftTokenUrl(http.baseUrls.microsoftLogin, secret.tenant ?? '');
      const form = {
        grant_type: 'client_credentials',
        client_id: secret.client_id ?? '',
        client_secret: secret.client_secret ?? '',
        scope: 'https://graph.microsoft.com/.default',
      };
      return requestToken(http, tokenUrl, form, label, now);
    }
    const client = this.deps.oauth[connection.service];
    if (!client) throw new ConnectorError(`${label} is not configured for OAuth on this server.`);
    const form = {
      grant_type: 'refresh_token',
      refresh_token: secret.refresh_token ?? '',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    };
    return requestToken(http, client.tokenUrl, form, label, now);
  }

  /** A Google service account's token, from an assertion signed with its key (google-auth-library). */
  private async serviceAccount(secret: ConnectionSecret, http: ConnectorHttp, label: string): Promise<TokenResponse> {
    const { serviceAccountToken } = await import('./google-service-account.ts');
    try {
      return await serviceAccountToken(secret.key ?? '', http.baseUrls.googleToken, http.fetch);
    } catch (error) {
      // A key that no longer parses is a grant gone; a refused assertion already says so, and
      // anything else (the network, the guard) is no reason to ask the owner to reconnect.
      if (error instanceof ValidationError) {
        throw new InvalidGrantError(`${label} refused the service account`, { cause: error });
      }
      throw error;
    }
  }

  private async reconnect(connection: Connection, reason: string): Promise<never> {
    await this.deps.connections.setStatus(connection.id, 'needs_reauth');
    this.deps.logger.warn(
      { connection_id: connection.id, service: connection.service, reason },
      'connection needs reauthorization',
    );
    throw new ReconnectError(`Reconnect ${SERVICE_LABELS[connection.service]}.`);
  }

  private async current(connection: Connection): Promise<ConnectionSecret> {
    const stored = await this.deps.connections.withSecret(connection.id);
    if (stored.connection.status === 'needs_reauth') {
      throw new ReconnectError(`Reconnect ${SERVICE_LABELS[connection.service]}.`);
    }
    return stored.secret;
  }

  private expired(secret: ConnectionSecret): boolean {
    return Number(secret.expires_at ?? 0) - EXPIRY_MARGIN_MS <= this.nowMs();
  }

  private nowMs(): number {
    return Math.floor(this.deps.clock.nowMicros() / 1000);
  }
}
