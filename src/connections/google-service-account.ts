import { createPrivateKey } from 'node:crypto';
import { gaxios, JWT, type Credentials } from 'google-auth-library';
import { ValidationError } from '../errors.ts';
import { ConnectorError } from '../sources/connectors/connector-errors.ts';
import { InvalidGrantError } from './token-endpoint.ts';

const LABEL = 'Google Drive';
const SCOPE = 'https://www.googleapis.com/auth/drive.readonly';
/** Where google-auth-library sends the assertion; it is also the assertion's audience, as Google requires. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const INVALID = 'service account key must be a Google service account JSON key file.';

/** The fields of a Google service account key file that sign its assertions. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
}

/**
 * Checks a service account's JSON key file (as the Cloud console downloads it: `type`
 * `service_account`, a `client_email` and a PEM `private_key`) and returns its signing fields.
 * Throws `ValidationError` on anything else, the private key included.
 */
export function parseServiceAccountKey(json: string): ServiceAccountKey {
  let key: unknown;
  try {
    key = JSON.parse(json);
  } catch {
    throw new ValidationError(INVALID);
  }
  const record = (typeof key === 'object' && key !== null ? key : {}) as Record<string, unknown>;
  const email = record.client_email;
  const privateKey = record.private_key;
  if (
    record.type !== 'service_account' ||
    typeof email !== 'string' ||
    !/^[^@\s]+@[^@\s]+$/.test(email) ||
    typeof privateKey !== 'string'
  ) {
    throw new ValidationError(INVALID);
  }
  try {
    createPrivateKey(privateKey);
  } catch {
    throw new ValidationError(INVALID);
  }
  return { client_email: email, private_key: privateKey };
}

/**
 * An access token for a service account (scope `drive.readonly`): google-auth-library's `JWT` signs
 * the assertion and exchanges it (the JWT-bearer grant) at `tokenUrl` through `fetchImpl`; the
 * Google token host built into the library is never contacted. A refused assertion throws
 * `InvalidGrantError`; an endpoint that fails otherwise, a `ConnectorError`.
 */
export async function serviceAccountToken(
  keyJson: string,
  tokenUrl: string,
  fetchImpl: typeof fetch,
): Promise<{ accessToken: string; expiresAt: number }> {
  const key = parseServiceAccountKey(keyJson);
  const fetchImplementation: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.href !== GOOGLE_TOKEN_URL) {
      throw new ConnectorError(`The Google library asked for ${url.host}, which is not Google's token endpoint.`);
    }
    return fetchImpl(tokenUrl, init);
  };
  const client = new JWT({
    email: key.client_email,
    key: key.private_key,
    scopes: [SCOPE],
    // The HTTP layer retries 429 and 503 itself.
    transporterOptions: { fetchImplementation, retryConfig: { retry: 0 } },
  });
  let credentials: Credentials;
  try {
    credentials = await client.authorize();
  } catch (error) {
    throw tokenFailure(error);
  }
  if (typeof credentials.access_token !== 'string' || credentials.access_token === '') {
    throw new ConnectorError(`${LABEL} could not issue an access token: the answer held none.`);
  }
  return { accessToken: credentials.access_token, expiresAt: credentials.expiry_date ?? Date.now() + 3600_000 };
}

/** A failed exchange as the connection's credentials read it (see ConnectionCredentials). */
function tokenFailure(error: unknown): Error {
  if (!(error instanceof gaxios.GaxiosError)) return error instanceof Error ? error : new Error(String(error));
  const response = error.response;
  if (!response) {
    return error.cause instanceof Error ? error.cause : new ConnectorError(`${LABEL} could not be reached.`);
  }
  const data = (typeof response.data === 'object' && response.data !== null ? response.data : {}) as {
    error?: unknown;
  };
  const code = typeof data.error === 'string' ? data.error : undefined;
  if (response.status === 400 || response.status === 401) {
    return new InvalidGrantError(`${LABEL} refused the service account (${code ?? response.status})`);
  }
  return new ConnectorError(
    `${LABEL} could not issue an access token: HTTP ${response.status}${code ? ` (${code})` : ''}.`,
    { statusCode: response.status },
  );
}
