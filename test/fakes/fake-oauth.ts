import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One request the token endpoint received, its form fields as sent. */
export type TokenRequest = Record<string, string>;

/**
 * The OAuth 2.0 side of a fake service (RFC 6749 and PKCE, RFC 7636), mounted by the service's fake
 * at the service's own paths: an authorize page with an "Allow" button that redirects to the client's
 * `redirect_uri` with `code` and `state`, and a token endpoint for `authorization_code` (PKCE S256
 * checked), `refresh_token` and `client_credentials` grants. Refused grants answer 400
 * `{"error":"invalid_grant"}`, a wrong client 401 `{"error":"invalid_client"}`, as the specs say.
 */
export class OAuthFake {
  readonly tokenRequests: TokenRequest[] = [];
  readonly clientId: string;
  readonly clientSecret: string;
  readonly tokenPath: string;
  readonly authorizePath: string;
  /** Seconds in `expires_in`. */
  accessTokenTtl = 3600;
  /** Whether a refresh hands out a new refresh token (Microsoft and Google may; Dropbox does not). */
  rotateRefreshTokens = false;
  /** Delay before the token endpoint answers, so two gateways can race a refresh. */
  tokenDelayMs = 0;
  private readonly live = new Set<string>();
  private readonly refreshTokens = new Set<string>();
  private readonly codes = new Map<string, { challenge: string; redirectUri: string }>();

  constructor(options: { clientId: string; clientSecret: string; tokenPath: string; authorizePath: string }) {
    this.clientId = options.clientId;
    this.clientSecret = options.clientSecret;
    this.tokenPath = options.tokenPath;
    this.authorizePath = options.authorizePath;
  }

  /** Whether a bearer token may be used now. */
  isValid(accessToken: string | undefined): boolean {
    return accessToken !== undefined && this.live.has(accessToken);
  }

  /** The token from an `Authorization: Bearer …` header, when it is live. */
  authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    return header.startsWith('Bearer ') && this.isValid(header.slice(7));
  }

  /** A grant as if an owner had allowed access: seeds a connection without a browser. */
  issueGrant(): { access_token: string; refresh_token: string; expires_in: number } {
    const refresh = `rt-${randomBytes(9).toString('hex')}`;
    this.refreshTokens.add(refresh);
    return { access_token: this.newAccessToken(), refresh_token: refresh, expires_in: this.accessTokenTtl };
  }

  /** Every access token issued so far stops working (as at its expiry). */
  expireAccessTokens(): void {
    this.live.clear();
  }

  /** Every refresh token is refused from now on (the owner revoked the app). */
  revokeGrants(): void {
    this.live.clear();
    this.refreshTokens.clear();
  }

  /** Serves the authorize page or the token endpoint; false when the request is for neither. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === this.authorizePath && req.method === 'GET') {
      this.authorizePage(url, res);
      return true;
    }
    if (url.pathname === this.authorizePath + '/allow' && req.method === 'GET') {
      this.allow(url, res);
      return true;
    }
    if (url.pathname === this.tokenPath && req.method === 'POST') {
      const form = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
      this.tokenRequests.push(form);
      setTimeout(() => this.token(req, form, res), this.tokenDelayMs);
      return true;
    }
    return false;
  }

  private authorizePage(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    if (
      q.get('client_id') !== this.clientId ||
      q.get('response_type') !== 'code' ||
      q.get('code_challenge_method') !== 'S256'
    ) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('invalid authorization request');
      return;
    }
    const allow = new URL(this.authorizePath + '/allow', 'http://fake');
    for (const name of ['redirect_uri', 'state', 'code_challenge']) allow.searchParams.set(name, q.get(name) ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>Sign in</title><h1>Allow Switchboard to read your files?</h1>` +
        `<p>Scopes: ${escapeHtml(q.get('scope') ?? '')}</p><a id="allow" href="${escapeHtml(allow.pathname + allow.search)}">Allow</a>`,
    );
  }

  private allow(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const code = `code-${randomBytes(9).toString('hex')}`;
    this.codes.set(code, { challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '' });
    const target = new URL(q.get('redirect_uri') ?? '');
    target.searchParams.set('code', code);
    target.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: target.href });
    res.end();
  }

  private token(req: IncomingMessage, form: TokenRequest, res: ServerResponse): void {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [id, secret] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':')
      : [form.client_id, form.client_secret];
    if (id !== this.clientId || secret !== this.clientSecret) return json(res, 401, { error: 'invalid_client' });
    if (form.grant_type === 'refresh_token') {
      if (!this.refreshTokens.has(form.refresh_token ?? '')) return json(res, 400, { error: 'invalid_grant' });
      const out: Record<string, unknown> = {
        access_token: this.newAccessToken(),
        token_type: 'bearer',
        expires_in: this.accessTokenTtl,
      };
      if (this.rotateRefreshTokens) {
        this.refreshTokens.delete(form.refresh_token!);
        out.refresh_token = `rt-${randomBytes(9).toString('hex')}`;
        this.refreshTokens.add(out.refresh_token as string);
      }
      return json(res, 200, out);
    }
    if (form.grant_type === 'authorization_code') {
      const grant = this.codes.get(form.code ?? '');
      this.codes.delete(form.code ?? '');
      const challenge = createHash('sha256')
        .update(form.code_verifier ?? '')
        .digest('base64url');
      if (!grant || grant.challenge !== challenge || grant.redirectUri !== form.redirect_uri) {
        return json(res, 400, { error: 'invalid_grant' });
      }
      return json(res, 200, { ...this.issueGrant(), token_type: 'bearer' });
    }
    if (form.grant_type === 'client_credentials') {
      return json(res, 200, {
        access_token: this.newAccessToken(),
        token_type: 'bearer',
        expires_in: this.accessTokenTtl,
      });
    }
    return json(res, 400, { error: 'unsupported_grant_type' });
  }

  private newAccessToken(): string {
    const token = `at-${randomBytes(12).toString('hex')}`;
    this.live.add(token);
    return token;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
