import type { Got } from 'got';
import {
  assertPublicHost,
  ForbiddenDestinationError,
  gotAgents,
  guardedLookup,
  hostOf,
  loadGot,
  systemEgress,
  type Egress,
} from '../net/ssrf-guard.ts';
import { FetchError, SizeLimitError } from './ingest-errors.ts';

/** The crawler's `User-Agent`, and the name robots.txt rules are matched against. */
export const CRAWLER_USER_AGENT = 'SwitchboardBot/1.0';

/** How one resource is fetched. */
export interface FetchOptions {
  /** Lifts the SSRF guard (tests, intranet installs): `CRAWL_ALLOW_PRIVATE`. */
  allowPrivate: boolean;
  /** How hosts are resolved and reached (tests inject a fake resolver); the system's by default. */
  egress?: Egress;
  /** Per request, redirect hops each counted afresh. */
  timeoutMs: number;
  /** Largest body read, after decompression. */
  maxBytes: number;
  maxRedirects: number;
  accept: string;
  signal?: AbortSignal;
  /** Whether a redirect may go to this URL; refused hops fail the fetch. All are allowed by default. */
  allowRedirect?: (target: URL) => boolean;
  /** Whether to read a body of this media type; others come back with a null body unread. */
  wantsBody?: (mediaType: string) => boolean;
  /**
   * Validators of the copy already held (`If-None-Match` / `If-Modified-Since`): a `304 Not
   * Modified` answer then comes back as a resource with status 304 and no body.
   */
  validators?: Validators;
}

/** A response's cache validators, as the server sent them. */
export interface Validators {
  etag?: string;
  lastModified?: string;
}

/** A resource fetched with a 2xx status, after any redirects. */
export interface FetchedResource {
  /** Where the body came from: the last hop's URL. */
  url: string;
  statusCode: number;
  /** The media type, lowercased, without parameters. */
  mediaType: string;
  charset: string | null;
  body: Buffer | null;
  /** `ETag` and `Last-Modified` of the last hop, for a conditional request next time. */
  validators: Validators;
}

interface Hop {
  statusCode: number;
  location: string | null;
  mediaType: string;
  charset: string | null;
  body: Buffer | null;
  validators: Validators;
}

/**
 * GETs a URL with got behind the SSRF guard: a literal IP must be public, a host name is resolved by
 * `guardedLookup` and connected to at the address that was checked, and redirects are followed by
 * hand, at most `maxRedirects`, each hop checked the same way and against `allowRedirect`. A non-2xx
 * final status throws `FetchError` with `statusCode`; network failures, timeouts, oversized bodies
 * and refused redirects throw `FetchError` without; refused destinations `ForbiddenDestinationError`.
 * With `validators` (sent with the first request only, not to redirect targets), a 304 answer is
 * returned (status 304, no body) instead of thrown.
 */
export async function fetchResource(url: string, options: FetchOptions): Promise<FetchedResource> {
  let current = new URL(url);
  for (let redirects = 0; ; redirects += 1) {
    // Validators belong to the URL they were recorded for: a redirect target is asked unconditionally.
    const conditional = redirects === 0 ? options.validators : undefined;
    const { location, ...hop } = await fetchHop(current, { ...options, validators: conditional });
    if (location === null) {
      if (hop.statusCode >= 200 && hop.statusCode < 300) return { url: current.href, ...hop };
      if (hop.statusCode === 304 && conditional) return { url: current.href, ...hop, body: null };
      throw new FetchError(current.href, `HTTP ${hop.statusCode}`, { statusCode: hop.statusCode });
    }
    if (redirects === options.maxRedirects) {
      throw new FetchError(url, `more than ${options.maxRedirects} redirects`);
    }
    const target = URL.parse(location, current.href);
    if (!target) throw new FetchError(current.href, `redirect to an invalid URL: ${location}`);
    if (options.allowRedirect && !options.allowRedirect(target)) {
      throw new FetchError(current.href, `redirect to another site refused: ${target.href}`);
    }
    current = target;
  }
}

/** Decodes a fetched body as text in its declared charset, UTF-8 when none or an unknown one. */
export function bodyText(resource: Pick<FetchedResource, 'body' | 'charset'>): string {
  if (!resource.body) return '';
  try {
    return new TextDecoder(resource.charset ?? 'utf-8').decode(resource.body);
  } catch {
    return new TextDecoder('utf-8').decode(resource.body);
  }
}

function assertFetchable(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError(url.href, `unsupported protocol ${url.protocol}`);
  }
  // A literal address never reaches the DNS lookup, so it is checked here.
  assertPublicHost(hostOf(url), allowPrivate);
}

async function fetchHop(url: URL, options: FetchOptions): Promise<Hop> {
  assertFetchable(url, options.allowPrivate);
  const { default: got } = await loadGot();
  const stream = got.stream(url, {
    headers: { 'user-agent': CRAWLER_USER_AGENT, accept: options.accept, ...conditionalHeaders(options.validators) },
    timeout: { request: options.timeoutMs },
    followRedirect: false,
    retry: { limit: 0 },
    throwHttpErrors: false,
    dnsLookup: guardedLookup(options.allowPrivate, options.egress ?? systemEgress),
    ...gotAgents(options.egress ?? systemEgress),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return readHop(stream, url, options);
}

function conditionalHeaders(validators: Validators | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (validators?.etag) headers['if-none-match'] = validators.etag;
  if (validators?.lastModified) headers['if-modified-since'] = validators.lastModified;
  return headers;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type GotStream = ReturnType<Got['stream']>;

function readHop(stream: GotStream, url: URL, options: FetchOptions): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let head: Omit<Hop, 'body'> | null = null;
    const tooLarge = () => {
      const cause = new SizeLimitError('the response', options.maxBytes);
      stream.destroy();
      reject(new FetchError(url.href, cause.message, { cause }));
    };
    stream.once(
      'response',
      (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
        head = hopHead(response.statusCode, response.headers);
        const ok = head.statusCode >= 200 && head.statusCode < 300;
        if (!ok || (options.wantsBody && !options.wantsBody(head.mediaType))) {
          // Error pages, redirects and unwanted types are not downloaded.
          stream.destroy();
          resolve({ ...head, body: null });
        } else if (Number(response.headers['content-length']) > options.maxBytes) {
          tooLarge();
        }
      },
    );
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBytes) tooLarge();
      else chunks.push(chunk);
    });
    stream.once('end', () => resolve({ ...head!, body: Buffer.concat(chunks) }));
    stream.once('error', (error: Error & { code?: string }) => reject(hopError(error, url, options)));
  });
}

function hopHead(statusCode: number, headers: Record<string, string | string[] | undefined>): Omit<Hop, 'body'> {
  const location = REDIRECT_STATUSES.has(statusCode) ? headerValue(headers.location) : null;
  const [type = '', ...parameters] = (headerValue(headers['content-type']) ?? '').split(';');
  const charset = parameters
    .map((parameter) => /^\s*charset\s*=\s*"?([^";]+)"?\s*$/i.exec(parameter)?.[1])
    .find((value) => value !== undefined);
  const validators: Validators = {};
  const etag = headerValue(headers.etag);
  const lastModified = headerValue(headers['last-modified']);
  if (etag) validators.etag = etag;
  if (lastModified) validators.lastModified = lastModified;
  return {
    statusCode,
    location,
    mediaType: type.trim().toLowerCase(),
    charset: charset?.toLowerCase() ?? null,
    validators,
  };
}

function headerValue(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function hopError(error: Error & { code?: string }, url: URL, options: FetchOptions): Error {
  if (error.code === 'EFORBIDDEN') return new ForbiddenDestinationError(hostOf(url), { cause: error });
  if (error.code === 'ETIMEDOUT')
    return new FetchError(url.href, `timed out after ${options.timeoutMs} ms`, { cause: error });
  if (options.signal?.aborted) return new FetchError(url.href, 'aborted', { cause: error });
  return new FetchError(url.href, error.message, { cause: error });
}
