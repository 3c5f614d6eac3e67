import type { Clock } from '../../../clock.ts';
import {
  assertPublicHost,
  ForbiddenDestinationError,
  gotAgents,
  guardedLookup,
  hostOf,
  loadGot,
  systemEgress,
  type Egress,
} from '../../../net/ssrf-guard.ts';
import { retryAfterMs } from '../../../sources/connectors/connector-http.ts';
import { GRAPH_MAX_RETRY_AFTER_MS, GRAPH_RETRIES, GRAPH_TIMEOUT_MS } from './config.ts';
import { GraphApiError, GraphNetworkError, retryable, type GraphErrorBody } from './graph-errors.ts';

/** Where and how the Graph API is reached. */
export interface GraphApiOptions {
  /** `GRAPH_API_BASE_URL`: `https://graph.facebook.com`, a fake's in tests. */
  baseUrl: string;
  /** `GRAPH_API_VERSION`: every path is pinned to it (`/v26.0/…`). */
  version: string;
  /** `CRAWL_ALLOW_PRIVATE`: lifts the SSRF guard (tests, intranet installs). */
  allowPrivate: boolean;
  egress?: Egress;
  clock: Clock;
  /** `GRAPH_API_RETRY_MS`: the first wait before a retry, doubling after (without Retry-After). */
  firstRetryMs: number;
  retries?: number;
  timeoutMs?: number;
}

/**
 * The WhatsApp Business Cloud API's HTTP layer: a JSON call with the system user's token, through the
 * SSRF guard, answered with the body or thrown as {@link GraphApiError} (Meta said no, its code mapped
 * to a clear message) or {@link GraphNetworkError}. A throttled call (429, Meta's rate-limit codes) or
 * an outage (5xx) is tried again after `Retry-After` or a doubling wait on the injected clock. A call
 * that failed in the network is not: the Cloud API has no idempotency key, so a message that may have
 * reached Meta is never sent twice.
 */
export class GraphApi {
  private readonly options: GraphApiOptions;

  constructor(options: GraphApiOptions) {
    this.options = options;
  }

  /** `GET /{version}{path}`, e.g. a phone number's fields. */
  get<T>(path: string, token: string): Promise<T> {
    return this.call<T>('GET', path, token);
  }

  /** `POST /{version}{path}` with a JSON body. */
  post<T>(path: string, token: string, body: object): Promise<T> {
    return this.call<T>('POST', path, token, body);
  }

  private async call<T>(method: 'GET' | 'POST', path: string, token: string, body?: object): Promise<T> {
    const url = new URL(`${this.options.baseUrl.replace(/\/+$/, '')}/${this.options.version}${path}`);
    const retries = this.options.retries ?? GRAPH_RETRIES;
    for (let attempt = 0; ; attempt += 1) {
      const response = await this.request(method, url, token, body);
      if (response.status >= 200 && response.status < 300) return response.json as T;
      const error: GraphErrorBody = (response.json as { error?: GraphErrorBody } | undefined)?.error ?? {};
      const wait = this.waitBeforeRetry(response, attempt);
      if (attempt >= retries || !retryable(response.status, error.code) || wait === undefined) {
        throw new GraphApiError(response.status, error);
      }
      await this.sleep(wait);
    }
  }

  /** Meta's `Retry-After`, else the doubling wait; undefined when Meta asks for longer than is waited. */
  private waitBeforeRetry(response: GraphResponse, attempt: number): number | undefined {
    const asked = retryAfterMs(response.retryAfter, this.options.clock.nowMicros() / 1000);
    if (asked !== undefined) return asked <= GRAPH_MAX_RETRY_AFTER_MS ? asked : undefined;
    return Math.min(this.options.firstRetryMs * 2 ** attempt, GRAPH_MAX_RETRY_AFTER_MS);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.options.clock.setTimeout(resolve, ms));
  }

  private async request(method: string, url: URL, token: string, body?: object): Promise<GraphResponse> {
    const egress = this.options.egress ?? systemEgress;
    const { default: got, RequestError } = await loadGot();
    try {
      // A literal address never reaches the guarded lookup, so it is checked here.
      assertPublicHost(hostOf(url), this.options.allowPrivate);
      const response = await got(url, {
        method: method as 'GET',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        ...(body === undefined ? {} : { json: body }),
        timeout: { request: this.options.timeoutMs ?? GRAPH_TIMEOUT_MS },
        followRedirect: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
        dnsLookup: guardedLookup(this.options.allowPrivate, egress),
        ...gotAgents(egress),
      });
      const retryAfter = response.headers['retry-after'];
      return { status: response.statusCode, json: parseJson(response.body), retryAfter };
    } catch (error) {
      if (error instanceof ForbiddenDestinationError) throw new GraphNetworkError(error.message, { cause: error });
      if (error instanceof RequestError) {
        const reason = error.cause instanceof ForbiddenDestinationError ? error.cause.message : error.message;
        throw new GraphNetworkError(reason, { cause: error });
      }
      throw error;
    }
  }
}

interface GraphResponse {
  status: number;
  json: unknown;
  retryAfter: string | undefined;
}

/** A body as JSON; undefined for one that is not (a proxy's HTML error page). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
