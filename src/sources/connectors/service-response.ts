import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { ConnectorContext } from './connector.ts';
import type { ConnectorRequest, ConnectorResponse } from './connector-http.ts';

/**
 * Runs `run` with the connection's access token; when the service refuses it (`isUnauthorized`), asks
 * for a refreshed token once (single-flight across gateways, see ConnectorAuth.refresh) and runs it
 * again. A second refusal means the grant is gone: `ReconnectError("Reconnect <label>.")`. Without a
 * connection there is nothing to send: the owner must connect.
 */
export async function withAccessToken<T>(
  context: ConnectorContext,
  label: string,
  run: (token: string) => Promise<T>,
  isUnauthorized: (error: unknown) => boolean,
): Promise<T> {
  const auth = context.auth;
  if (!auth) throw new ReconnectError(`Reconnect ${label}.`);
  const token = await auth.accessToken();
  try {
    return await run(token);
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
  }
  try {
    return await run(await auth.refresh(token));
  } catch (error) {
    if (isUnauthorized(error)) throw new ReconnectError(`Reconnect ${label}.`, { statusCode: 401 });
    throw error;
  }
}

/** A 401 answer, inside `bearerRequest`'s retry. */
class Unauthorized extends Error {}

/**
 * Sends a request with the connection's token in `Authorization` (`credential` writes the header,
 * `Bearer <token>` by default), through `withAccessToken`'s one refresh on a 401. Without a
 * connection the request goes out as it is (a public help centre).
 */
export async function bearerRequest(
  context: ConnectorContext,
  label: string,
  url: string | URL,
  request: ConnectorRequest = {},
  credential: (token: string) => string = (token) => `Bearer ${token}`,
): Promise<ConnectorResponse> {
  if (!context.auth) return context.http.request(url, request);
  const send = async (token: string) => {
    const headers = { ...request.headers, authorization: credential(token) };
    const response = await context.http.request(url, { ...request, headers });
    if (response.statusCode === 401) throw new Unauthorized();
    return response;
  };
  return withAccessToken(context, label, send, (error) => error instanceof Unauthorized);
}

/**
 * The error an owner reads for a non-2xx answer: 401 → reconnect, 404 → the document is gone, 429
 * → rate limited (after the HTTP layer's own Retry-After waits), else the status with the service's
 * own message when it sent one.
 */
export function statusError(status: number, body: Buffer | string, label: string): ConnectorError {
  const said = serviceMessage(Buffer.from(body));
  const suffix = said ? `: ${said}` : '.';
  if (status === 401) return new ReconnectError(`Reconnect ${label}.`, { statusCode: status });
  if (status === 404 || status === 410) {
    return new DocumentGoneError(`${label} has no such document, or it is not shared with the connection.`, {
      statusCode: status,
    });
  }
  if (status === 429)
    return new ConnectorError(`${label} is limiting requests; try again later.`, { statusCode: status });
  if (status === 403) return new ConnectorError(`${label} refused access (HTTP 403)${suffix}`, { statusCode: status });
  return new ConnectorError(`${label} answered HTTP ${status}${suffix}`, { statusCode: status });
}

/** A 2xx response as it is; any other status as `statusError` words it. */
export function expectOk(response: ConnectorResponse, label: string): ConnectorResponse {
  if (response.statusCode >= 200 && response.statusCode < 300) return response;
  throw statusError(response.statusCode, response.body, label);
}

/** An SDK's failure that is not the service's answer (a size cap, an unreachable host), as an Error. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The JSON body of a 2xx response (see `expectOk`). */
export function okJson<T>(response: ConnectorResponse, label: string): T {
  expectOk(response, label);
  try {
    return JSON.parse(response.body.toString('utf8')) as T;
  } catch {
    throw new ConnectorError(`${label} sent a response that is not JSON.`);
  }
}

/** A short message from a JSON error body (`message`, `error.message`, `error_description`, `error`). */
function serviceMessage(body: Buffer): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return '';
  }
  const record = (parsed ?? {}) as Record<string, unknown>;
  const nested = record.error as Record<string, unknown> | string | undefined;
  const candidates = [
    record.message,
    typeof nested === 'object' ? nested?.message : undefined,
    record.error_description,
    record.error_summary,
    typeof nested === 'string' ? nested : undefined,
  ];
  const text = candidates.find((value): value is string => typeof value === 'string' && value.trim() !== '');
  return text ? text.trim().slice(0, 200) : '';
}
