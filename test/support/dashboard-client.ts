import type { App } from '../../src/app.ts';

/** One response of the dashboard API, read whole. */
export interface DashboardResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** An owner account with a dashboard password. */
export interface Owner {
  id: string;
  email: string;
  password: string;
}

export const PASSWORD = 'correct horse battery staple';

/** Creates an owner (plan `scale` unless told) and sets their dashboard password. */
export async function createOwner(app: App, plan = 'scale'): Promise<Owner> {
  const email = `owner-${crypto.randomUUID()}@example.com`;
  const account = await app.services.accounts.create(email, plan);
  await app.services.ownerAuth.setPassword(account.id, PASSWORD);
  return { id: account.id, email, password: PASSWORD };
}

/**
 * A real HTTP client of the management API that keeps the session cookie and sends the CSRF token
 * on state changes, as the web app does.
 */
export class DashboardClient {
  readonly baseUrl: string;
  cookie = '';
  csrf = '';

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  /** Signs in; throws unless the gateway answers 200. */
  static async signIn(baseUrl: string, owner: Owner): Promise<DashboardClient> {
    const client = new DashboardClient(baseUrl);
    const res = await client.request('POST', '/dashboard/api/session', {
      email: owner.email,
      password: owner.password,
    });
    if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
    return client;
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.request('GET', path, undefined, headers);
  }
  post(path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.request('POST', path, body, headers);
  }
  put(path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.request('PUT', path, body, headers);
  }
  patch(path: string, body?: unknown, headers: Record<string, string> = {}) {
    return this.request('PATCH', path, body, headers);
  }
  del(path: string, headers: Record<string, string> = {}) {
    return this.request('DELETE', path, undefined, headers);
  }

  /** Sends a request with the session cookie and CSRF token; remembers a new cookie and token. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<DashboardResponse> {
    const init: RequestInit = {
      method,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(this.csrf ? { 'x-csrf-token': this.csrf } : {}),
        ...(body !== undefined && !(body instanceof Uint8Array) ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : body instanceof Uint8Array ? body : JSON.stringify(body),
    };
    const res = await fetch(`${this.baseUrl}${path}`, init);
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const parsed = type.includes('json') && text ? JSON.parse(text) : text;
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const pair = setCookie.split(';')[0]!;
      this.cookie = pair.endsWith('=') ? '' : pair;
    }
    if (parsed && typeof parsed === 'object' && typeof parsed.csrf_token === 'string') this.csrf = parsed.csrf_token;
    return { status: res.status, body: parsed, headers: res.headers };
  }
}
