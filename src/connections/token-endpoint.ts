import { ConnectorError } from '../sources/connectors/connector-errors.ts';
import type { ConnectorHttp } from '../sources/connectors/connector-http.ts';

/** The token endpoint refused the grant itself (RFC 6749 §5.2 `invalid_grant`, or a 401). */
export class InvalidGrantError extends Error {
  override name = 'InvalidGrantError';
}

/** A successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  accessToken: string;
  /** Present when the service hands out (or rotates) a refresh token. */
  refreshToken?: string;
  /** Milliseconds since the epoch (an hour from now when the token does not say). */
  expiresAt: number;
}

/**
 * POSTs a grant to an OAuth token endpoint (form-encoded, client credentials in the body, as Google,
 * Dropbox and Microsoft all accept) through the connectors' guarded HTTP layer. `invalid_grant` and
 * `invalid_client`-style refusals throw `InvalidGrantError`; anything else unusable a ConnectorError
 * naming `label`. Tokens never appear in either message.
 */
export async function requestToken(
  http: ConnectorHttp,
  tokenUrl: string,
  form: Record<string, string>,
  label: string,
  nowMs: number,
): Promise<TokenResponse> {
  const response = await http.request(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
    maxBytes: 64 * 1024,
  });
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    // Judged by the status below.
  }
  if (response.statusCode === 400 || response.statusCode === 401) {
    if (body.error === 'invalid_grant' || body.error === 'invalid_client' || response.statusCode === 401) {
      const code = typeof body.error === 'string' ? body.error : String(response.statusCode);
      throw new InvalidGrantError(`${label} refused the grant (${code})`);
    }
  }
  if (response.statusCode < 200 || response.statusCode >= 300 || typeof body.access_token !== 'string') {
    const code = typeof body.error === 'string' ? ` (${body.error})` : '';
    throw new ConnectorError(`${label} could not issue an access token: HTTP ${response.statusCode}${code}.`, {
      statusCode: response.statusCode,
    });
  }
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    expiresAt: nowMs + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600) * 1000,
  };
}
