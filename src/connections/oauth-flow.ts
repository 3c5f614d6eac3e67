import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { ForbiddenError, UpstreamError, ValidationError } from '../errors.ts';
import { ForbiddenDestinationError } from '../net/ssrf-guard.ts';
import { ConnectorError } from '../sources/connectors/connector-errors.ts';
import type { ConnectorHttp } from '../sources/connectors/connector-http.ts';
import { SERVICE_LABELS, type ConnectionService } from '../sources/connectors/connector.ts';
import type { ConnectionStore } from '../store/connection-store.ts';
import type { Connection } from './connection.ts';
import { LuaScript } from '../redis/lua-script.ts';
import { readPastCache, type RedisClient } from '../redis/redis-client.ts';
import type { RedisKeys } from '../redis/redis-keys.ts';
import { assertOAuthService, type OAuthClient, type OAuthService } from './oauth-clients.ts';
import { InvalidGrantError, requestToken } from './token-endpoint.ts';

// Takes a pending authorization for its one exchange (two callbacks with one code race).
const CLAIM = new LuaScript<{ keys: [state: string]; args: []; reply: 0 | 1 }>(`
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'exchanging')
return 1
`);

/** An authorization waits this long for its callback. */
export const OAUTH_STATE_TTL_SECONDS = 600;

/** Who started an authorization: an owner's dashboard session (its id) or the operator's CLI. */
export type OAuthStarter = { kind: 'dashboard'; sessionId: string } | { kind: 'cli' };

/** A pending or finished authorization, as the CLI polls it. */
export interface OAuthAttempt {
  service: OAuthService;
  userId: string;
  status: 'pending' | 'exchanging' | 'done' | 'failed';
  connectionId: string;
  error: string;
}

/** The OAuth callback failed in a way the person at the browser must be told. */
export class OAuthCallbackError extends ValidationError {
  override name = 'OAuthCallbackError';
}

/**
 * Connecting a service with OAuth 2.0 (authorization code with PKCE S256, offline access): `begin`
 * records a `state` (ten minutes, bound to the owner's dashboard session or made by the CLI) with the
 * PKCE verifier; `authorizeUrl` builds the service's authorize address for it; `complete` checks the
 * callback's state and session, exchanges the code at the token endpoint and stores the grant as a
 * connection — the owner's existing connection of that service that needs reconnecting is updated
 * in place, so its sources read again.
 */
export class OAuthFlow {
  private readonly deps: {
    redis: RedisClient;
    keys: RedisKeys;
    connections: ConnectionStore;
    clients: Partial<Record<ConnectionService, OAuthClient>>;
    clock: Clock;
    http: ConnectorHttp;
  };

  constructor(deps: OAuthFlow['deps']) {
    this.deps = deps;
  }

  /** The configured client of a service, or the error an owner or operator can act on. */
  client(service: string): OAuthClient {
    assertOAuthService(service);
    const client = this.deps.clients[service];
    if (!client) {
      const names = {
        google_drive: 'GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET',
        dropbox: 'DROPBOX_APP_KEY and DROPBOX_APP_SECRET',
        microsoft: 'MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET',
      };
      throw new ValidationError(`${SERVICE_LABELS[service]} is not set up on this server: set ${names[service]}.`);
    }
    return client;
  }

  /** Records a new authorization; returns its `state`. */
  async begin(service: string, userId: string, starter: OAuthStarter): Promise<string> {
    // Only the name is checked: the client is the gateway's configuration, checked when the
    // browser arrives there (the CLI that may call this has no say in it).
    assertOAuthService(service);
    const state = randomBytes(24).toString('base64url');
    const key = this.deps.keys.oauthState(state);
    await this.deps.redis
      .multi()
      .hSet(key, {
        service,
        user_id: userId,
        starter: starter.kind,
        session: starter.kind === 'dashboard' ? starter.sessionId : '',
        verifier: randomBytes(48).toString('base64url'),
        status: 'pending',
        connection_id: '',
        error: '',
      })
      .expire(key, OAUTH_STATE_TTL_SECONDS)
      .exec();
    return state;
  }

  /**
   * The service's authorize URL for a pending state; `redirectUri` is the gateway's callback. A state
   * brought by a link (`fromLink`) must be one the CLI made, for this service.
   */
  async authorizeUrl(state: string, redirectUri: string, fromLink?: { service: string }): Promise<string> {
    const row = await this.pending(state);
    if (fromLink && (row.starter !== 'cli' || row.service !== fromLink.service)) {
      throw new OAuthCallbackError('This sign-in link is not valid; start again.');
    }
    const client = this.client(row.service!);
    const url = new URL(client.authorizeUrl);
    const challenge = createHash('sha256').update(row.verifier!).digest('base64url');
    const params = {
      client_id: client.clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: client.scope,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...client.authorizeParams,
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.href;
  }

  /**
   * Finishes an authorization from the callback's query. `sessionId` is the browser's dashboard
   * session ('' when none): a state started in the dashboard completes only in that same session.
   * Returns the connection and who started the authorization.
   */
  async complete(
    service: string,
    query: { code?: string; state?: string; error?: string },
    sessionId: string,
    redirectUri: string,
  ): Promise<{ connection: Connection; starter: OAuthStarter['kind'] }> {
    const state = query.state ?? '';
    const row = await this.pending(state);
    if (row.service !== service) throw new OAuthCallbackError('This sign-in does not belong to this service.');
    if (row.starter === 'dashboard' && row.session !== sessionId) {
      throw new ForbiddenError('This sign-in was started in another browser session.');
    }
    const label = SERVICE_LABELS[service as OAuthService];
    if ((await CLAIM.run(this.deps.redis, [this.deps.keys.oauthState(state)], [])) !== 1) {
      throw new OAuthCallbackError('This sign-in was already used; start again.');
    }
    try {
      if (query.error || !query.code) {
        throw new OAuthCallbackError(
          query.error === 'access_denied'
            ? `${label} access was not granted.`
            : `${label} did not grant access (${query.error ?? 'no code'}).`,
        );
      }
      const connection = await this.exchange(row, query.code, redirectUri);
      await this.finish(state, { status: 'done', connection_id: connection.id });
      return { connection, starter: row.starter as OAuthStarter['kind'] };
    } catch (error) {
      const reason =
        error instanceof InvalidGrantError
          ? `${label} refused the sign-in; start again.`
          : error instanceof Error
            ? error.message
            : String(error);
      await this.finish(state, { status: 'failed', error: reason });
      if (error instanceof InvalidGrantError) throw new OAuthCallbackError(reason);
      // The token endpoint could not be reached, was refused by the guard, or answered nonsense: the
      // service's side (502). Anything else is the gateway's own fault and goes on to be logged.
      if (error instanceof ConnectorError || error instanceof ForbiddenDestinationError) {
        throw new UpstreamError(reason, { cause: error });
      }
      throw error;
    }
  }

  /** A state's progress (the CLI waits on it); undefined once it expired. */
  async attempt(state: string): Promise<OAuthAttempt | undefined> {
    const row = await readPastCache<Record<string, string>>(this.deps.redis, (multi) =>
      multi.hGetAll(this.deps.keys.oauthState(state)),
    );
    if (!row.service) return undefined;
    return {
      service: row.service as OAuthService,
      userId: row.user_id!,
      status: row.status as OAuthAttempt['status'],
      connectionId: row.connection_id ?? '',
      error: row.error ?? '',
    };
  }

  private async exchange(row: Record<string, string>, code: string, redirectUri: string): Promise<Connection> {
    const client = this.client(row.service!);
    const label = SERVICE_LABELS[client.service];
    const nowMs = Math.floor(this.deps.clock.nowMicros() / 1000);
    const token = await requestToken(
      this.deps.http,
      client.tokenUrl,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: client.clientId,
        client_secret: client.clientSecret,
        code_verifier: row.verifier!,
      },
      label,
      nowMs,
    );
    if (!token.refreshToken)
      throw new OAuthCallbackError(`${label} granted no offline access (no refresh token); start again.`);
    const secret = {
      access_token: token.accessToken,
      refresh_token: token.refreshToken,
      expires_at: String(token.expiresAt ?? nowMs + 3600_000),
    };
    const own = await this.deps.connections.listForUser(row.user_id!);
    const stale = own.find(
      (c) => c.service === client.service && c.auth_kind === 'oauth' && c.status === 'needs_reauth',
    );
    if (stale) {
      await this.deps.connections.setSecret(stale.id, secret);
      return this.deps.connections.get(stale.id);
    }
    return this.deps.connections.create(row.user_id!, { service: client.service, authKind: 'oauth', secret });
  }

  private async pending(state: string): Promise<Record<string, string>> {
    const row = state
      ? await readPastCache<Record<string, string>>(this.deps.redis, (multi) =>
          multi.hGetAll(this.deps.keys.oauthState(state)),
        )
      : {};
    if (!row.service) throw new OAuthCallbackError('This sign-in has expired or is unknown; start again.');
    if (row.status !== 'pending') throw new OAuthCallbackError('This sign-in was already used; start again.');
    return row;
  }

  private async finish(state: string, fields: Record<string, string>): Promise<void> {
    const key = this.deps.keys.oauthState(state);
    // A state that expired during the exchange must not come back without its expiry.
    await this.deps.redis.multi().hSet(key, fields).expire(key, OAUTH_STATE_TTL_SECONDS, 'NX').exec();
  }
}
