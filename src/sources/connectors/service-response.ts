import { ConnectorError, DocumentGoneError, ReconnectError } from './connector-errors.ts';
import type { ConnectorContext } from './connector.ts';
import type { ConnectorRequest, ConnectorResponse } from './connector-http.ts';

/**
 * Sends a request with the connection's bearer token; on a 401 it asks for a refreshed token once
 * (single-flight across gateways, see ConnectorAuth.refresh) and sends it again. A second 401 means
 * the grant is gone: `ReconnectError("Reconnect <label>.")`.
 */
export async function bearerRequest(
  context: ConnectorContext,
  label: string,
  url: string | URL,
  request: ConnectorRequest = {},
  scheme = 'Bearer',
): Promise<ConnectorResponse> {
  const auth = context.auth;
  if (!auth) return context.http.request(url, request);
  const send = (token: string) =>
    context.http.request(url, { ...request, headers: { ...request.headers, authorization: `${scheme} ${token}` } });
  const token = await auth.accessToken();
  const first = await send(token);
  if (first.statusCode !== 401) return first;
  const second = await send(await auth.refresh(token));
  if (second.statusCode === 401) throw new ReconnectError(`Reconnect ${label}.`, { statusCode: 401 });
  return second;
}

/**
 * A 2xx response as it is; any other status as the error an owner reads: 401 → reconnect, 404 → the
 * document is gone, 429 → rate limited (after the HTTP layer's own Retry-After waits), else the
 * status with the service's own message when it sent one.
 */
export function expectOk(response: ConnectorResponse, label: string): ConnectorResponse {
  const status = response.statusCode;
  if (status >= 200 && status < 300) return response;
  const said = serviceMessage(response.body);
  const suffix = said ? `: ${said}` : '.';
  if (status === 401) throw new ReconnectError(`Reconnect ${label}.`, { statusCode: status });
  if (status === 404 || status === 410) {
    throw new DocumentGoneError(`${label} has no such document, or it is not shared with the connection.`, {
      statusCode: status,
    });
  }
  if (status === 429)
    throw new ConnectorError(`${label} is limiting requests; try again later.`, { statusCode: status });
  if (status === 403) throw new ConnectorError(`${label} refused access (HTTP 403)${suffix}`, { statusCode: status });
  throw new ConnectorError(`${label} answered HTTP ${status}${suffix}`, { statusCode: status });
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
