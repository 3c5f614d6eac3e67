import { setTimeout as sleepFor } from 'node:timers/promises';
import {
  assertPublicHost,
  ForbiddenDestinationError,
  gotAgents,
  guardedLookup,
  hostOf,
  loadGot,
  systemEgress,
  type Egress,
} from '../../net/ssrf-guard.ts';
import { ConnectorError } from './connector-errors.ts';

/** Where each service's API lives: the real hosts by default, a fake's in tests (configuration). */
export interface ConnectorBaseUrls {
  /** Google APIs root (`rootUrl` of @googleapis/drive), e.g. `https://www.googleapis.com/`. */
  google: string;
  /** Google's OAuth endpoints: `{base}/token`; the authorize page is `{authorize}`. */
  googleToken: string;
  googleAuthorize: string;
  notion: string;
  dropboxApi: string;
  dropboxContent: string;
  dropboxAuthorize: string;
  /** Microsoft Graph, without the version: `https://graph.microsoft.com`. */
  graph: string;
  microsoftLogin: string;
  gitbook: string;
  youtube: string;
}

/** The real services. */
export const DEFAULT_BASE_URLS: ConnectorBaseUrls = {
  google: 'https://www.googleapis.com/',
  googleToken: 'https://oauth2.googleapis.com/token',
  googleAuthorize: 'https://accounts.google.com/o/oauth2/v2/auth',
  notion: 'https://api.notion.com',
  dropboxApi: 'https://api.dropboxapi.com',
  dropboxContent: 'https://content.dropboxapi.com',
  dropboxAuthorize: 'https://www.dropbox.com/oauth2/authorize',
  graph: 'https://graph.microsoft.com',
  microsoftLogin: 'https://login.microsoftonline.com',
  gitbook: 'https://api.gitbook.com',
  youtube: 'https://www.youtube.com',
};

/** One request. The body is read up to `maxBytes` (the document cap by default). */
export interface ConnectorRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Follow redirects by hand (default); false hands a 3xx back as it is. */
  followRedirects?: boolean;
  maxBytes?: number;
}

/** A response, after redirects and rate-limit waits. */
export interface ConnectorResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL the body came from (the last hop). */
  url: string;
}

/** How the HTTP layer of the connectors behaves. */
export interface ConnectorHttpOptions {
  baseUrls: ConnectorBaseUrls;
  /** Lifts the SSRF guard (tests, intranet installs): `CRAWL_ALLOW_PRIVATE`. */
  allowPrivate: boolean;
  /** How hosts are resolved and reached (tests inject a fake resolver); the system's by default. */
  egress?: Egress;
  timeoutMs: number;
  /** The document size cap, the default body limit. */
  maxBytes: number;
  /** How many times a 429 or 503 is retried, and the longest `Retry-After` waited for. */
  retries: number;
  maxRetryAfterMs: number;
  maxRedirects?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The only way connectors reach the network. Every hop passes the SSRF guard (a literal address must
 * be public; a host name is resolved by `guardedLookup` and connected to at the checked address);
 * redirects are followed by hand, and `Authorization` never goes to a redirect's other origin; a 429
 * or 503 is retried after its `Retry-After` (or a short backoff) while that fits the limits.
 */
export interface ConnectorHttp {
  readonly baseUrls: ConnectorBaseUrls;
  request(url: string | URL, options?: ConnectorRequest): Promise<ConnectorResponse>;
  /** WHATWG `fetch` over `request`, for SDKs that take one (Notion, Dropbox, Google's gaxios). */
  readonly fetch: typeof fetch;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Error bodies are read for their message only. */
const ERROR_BODY_BYTES = 64 * 1024;

export function createConnectorHttp(options: ConnectorHttpOptions): ConnectorHttp {
  const sleep = options.sleep ?? ((ms: number) => sleepFor(ms));
  const request = async (url: string | URL, req: ConnectorRequest = {}): Promise<ConnectorResponse> => {
    let current = new URL(url);
    let method = (req.method ?? 'GET').toUpperCase();
    let body = req.body;
    const headers = { ...req.headers };
    let redirects = 0;
    let retries = 0;
    for (;;) {
      const response = await hop(
        current,
        { method, headers, body, maxBytes: req.maxBytes ?? options.maxBytes },
        options,
      );
      const location = REDIRECTS.has(response.statusCode) ? header(response.headers.location) : undefined;
      if (location !== undefined && req.followRedirects !== false) {
        if (redirects === (options.maxRedirects ?? 5)) {
          throw new ConnectorError(`${current.host} redirected more than ${redirects} times.`);
        }
        redirects += 1;
        const target = new URL(location, current);
        if (target.origin !== current.origin) {
          for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
        }
        if (
          response.statusCode === 303 ||
          ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
        }
        current = target;
        continue;
      }
      if ((response.statusCode === 429 || response.statusCode === 503) && retries < options.retries) {
        // Some services (GitBook) send only the time their window resets, in epoch seconds.
        const reset = Number(header(response.headers['x-ratelimit-reset']));
        const wait =
          retryAfterMs(header(response.headers['retry-after'])) ??
          (reset > 1e9 ? Math.max(0, reset * 1000 - Date.now()) : 1000 * 2 ** retries);
        if (wait <= options.maxRetryAfterMs) {
          retries += 1;
          await sleep(wait);
          continue;
        }
      }
      return { ...response, url: current.href };
    }
  };
  return { baseUrls: options.baseUrls, request, fetch: fetchOver(request) };
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The value of a header that may repeat. */
export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

interface Hop {
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  maxBytes: number;
}

async function hop(url: URL, req: Hop, options: ConnectorHttpOptions): Promise<Omit<ConnectorResponse, 'url'>> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConnectorError(`Unsupported protocol ${url.protocol} in ${url.host || url.href}.`);
  }
  // A literal address never reaches the guarded DNS lookup, so it is checked here.
  assertPublicHost(hostOf(url), options.allowPrivate);
  const { default: got } = await loadGot();
  const stream = got.stream(url, {
    method: req.method as 'GET',
    headers: req.headers,
    // A bodyless POST still needs its (empty) body ended, or got waits for one (Dropbox downloads).
    ...(req.body !== undefined
      ? { body: req.body }
      : req.method !== 'GET' && req.method !== 'HEAD'
        ? { body: '' }
        : {}),
    timeout: { request: options.timeoutMs },
    followRedirect: false,
    retry: { limit: 0 },
    throwHttpErrors: false,
    dnsLookup: guardedLookup(options.allowPrivate, options.egress ?? systemEgress),
    ...gotAgents(options.egress ?? systemEgress),
  });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let head: { statusCode: number; headers: ConnectorResponse['headers'] } | undefined;
    let failed = false;
    const tooLarge = () => {
      stream.destroy();
      reject(
        new ConnectorError(
          `${url.host} sent more than ${formatBytes(req.maxBytes)}; the limit is ${formatBytes(req.maxBytes)}.`,
        ),
      );
    };
    stream.once('response', (response: { statusCode: number; headers: ConnectorResponse['headers'] }) => {
      head = { statusCode: response.statusCode, headers: response.headers };
      failed = response.statusCode < 200 || response.statusCode >= 300;
      if (!failed && Number(header(response.headers['content-length'])) > req.maxBytes) tooLarge();
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (failed && size > ERROR_BODY_BYTES) {
        // An error page is read for its message only: cut, not refused.
        chunks.push(chunk.subarray(0, chunk.length - (size - ERROR_BODY_BYTES)));
        stream.destroy();
        resolve({ ...head!, body: Buffer.concat(chunks) });
      } else if (!failed && size > req.maxBytes) tooLarge();
      else chunks.push(chunk);
    });
    stream.once('end', () => resolve({ ...head!, body: Buffer.concat(chunks) }));
    stream.once('error', (error: Error & { code?: string }) => {
      if (error.code === 'EFORBIDDEN') reject(new ForbiddenDestinationError(hostOf(url), { cause: error }));
      else if (error.code === 'ETIMEDOUT')
        reject(new ConnectorError(`${url.host} did not answer within ${options.timeoutMs} ms.`, { cause: error }));
      else reject(new ConnectorError(`${url.host} could not be reached: ${error.message}`, { cause: error }));
    });
  });
}

/** A WHATWG fetch whose requests go through `request` (so through the guard, redirects and retries). */
function fetchOver(request: ConnectorHttp['request']): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = input instanceof Request ? input : undefined;
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    const headers = new Headers(req?.headers);
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
    const rawBody = init?.body ?? (req && req.body ? await req.arrayBuffer() : undefined);
    if (rawBody instanceof URLSearchParams && !headers.has('content-type')) {
      headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    }
    const body = rawBody === undefined || rawBody === null ? undefined : await bodyBytes(rawBody);
    const response = await request(url, {
      method: init?.method ?? req?.method ?? 'GET',
      headers: Object.fromEntries(headers),
      ...(body !== undefined ? { body } : {}),
      followRedirects: (init?.redirect ?? req?.redirect) !== 'manual',
    });
    const out = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      // got has already decoded the body.
      if (value === undefined || name === 'content-encoding' || name === 'content-length') continue;
      for (const item of Array.isArray(value) ? value : [value]) out.append(name, item);
    }
    const empty = response.statusCode === 204 || response.statusCode === 304 || response.statusCode < 200;
    return new Response(empty ? null : new Uint8Array(response.body), { status: response.statusCode, headers: out });
  };
}

async function bodyBytes(body: NonNullable<RequestInit['body']> | ArrayBuffer): Promise<string | Buffer> {
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return Buffer.from(await new Response(body as NonNullable<RequestInit['body']>).arrayBuffer());
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}

/**
 * The same HTTP layer with its requests run one at a time through `limit` (a connection's queue), so a
 * gateway never sends a service two requests of one connection at once.
 */
export function serializedHttp(http: ConnectorHttp, limit: <T>(task: () => Promise<T>) => Promise<T>): ConnectorHttp {
  const request: ConnectorHttp['request'] = (url, options) => limit(() => http.request(url, options));
  return { baseUrls: http.baseUrls, request, fetch: fetchOver(request) };
}
