/** An answer of the management API other than 2xx: its status and `detail` text. */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;

  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

const BASE = '/dashboard/api';
let csrfToken = '';
let onSignedOut: (detail: string) => void = () => {};

/** The session's CSRF token, sent on every state-changing request. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** What happens when the server says the session is gone (401 on any call but sign-in). */
export function whenSignedOut(handler: (detail: string) => void): void {
  onSignedOut = handler;
}

/** GETs a JSON resource of the management API. */
export function get<T>(path: string): Promise<T> {
  return request<T>('GET', path);
}

/** A state-changing call with a JSON body (or raw bytes for uploads, with extra headers). */
export function send<T>(
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  return request<T>(method, path, body, headers);
}

async function request<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  const raw = body instanceof Blob;
  const headers: Record<string, string> = { ...extra };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined && !raw) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'The gateway could not be reached. Check the connection and try again.');
  }
  const text = await res.text();
  const parsed = parseJson(text);
  if (parsed === NOT_JSON) {
    // Not the gateway's answer: a proxy or load balancer in between (its 502 page, a login portal).
    const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    throw new ApiError(res.status, `The server answered ${status}, not the gateway's JSON. Try again in a moment.`);
  }
  if (res.ok) return parsed as T;
  const detail = (parsed as { detail?: string } | undefined)?.detail ?? `Request failed (${res.status}).`;
  if (res.status === 401 && path !== '/session' && path !== '/invite') onSignedOut(detail);
  throw new ApiError(res.status, detail);
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}
