import { createHmac } from 'node:crypto';
import {
  assertPublicHost,
  gotAgents,
  guardedLookup,
  hostOf,
  loadGot,
  systemEgress,
  type Egress,
} from '../net/ssrf-guard.ts';
import { standardWebhooksHeaders } from './standard-webhooks.ts';

/** How much of a receiver's response body is kept in the delivery log. */
export const RESPONSE_BODY_LIMIT = 4096;
export const USER_AGENT = 'Switchboard-Webhook/1.0';

/** One signed POST to deliver. */
export interface SignedRequest {
  url: string;
  secret: string;
  event: string;
  body: string;
  deliveryId: string;
  attempt: number;
  /** When the attempt is made, in Unix seconds (`webhook-timestamp`). */
  timestampSeconds: number;
  /** Whether the webhook opted in to the Standard Webhooks headers. */
  standardWebhooks: boolean;
}

/** The attempt's error when the guard refused the destination (whatever the reason, one text). */
export const REFUSED_DESTINATION = 'destination is not a public address';

/** What one attempt produced. */
export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string;
}

/** Hex HMAC-SHA256 of the exact body bytes with the webhook's secret. */
export function sign(body: string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * SPEC's headers (and DESIGN's delivery id and attempt number) on every request; the Standard Webhooks
 * headers besides them when the webhook opted in.
 */
export function requestHeaders(request: SignedRequest): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-switchboard-signature': sign(request.body, request.secret),
    'x-switchboard-event': request.event,
    'x-switchboard-delivery': request.deliveryId,
    'x-switchboard-attempt': String(request.attempt),
  };
  if (!request.standardWebhooks) return headers;
  return {
    ...headers,
    ...standardWebhooksHeaders(request.secret, request.deliveryId, request.timestampSeconds, request.body),
  };
}

/**
 * Sends webhook requests with got: one POST per attempt, a total timeout, no redirects followed, no
 * automatic retry, no decompression (so no Accept-Encoding), every status returned rather than
 * thrown, at most RESPONSE_BODY_LIMIT bytes of the response read, and the SSRF guard on the address
 * actually connected to.
 */
export class WebhookSender {
  private readonly timeoutMs: number;
  private readonly allowPrivate: boolean;
  private readonly lookup: ReturnType<typeof guardedLookup>;
  private readonly egress: Egress;

  constructor(options: { timeoutMs: number; allowPrivate: boolean; egress?: Egress }) {
    this.timeoutMs = options.timeoutMs;
    this.allowPrivate = options.allowPrivate;
    this.egress = options.egress ?? systemEgress;
    this.lookup = guardedLookup(options.allowPrivate, this.egress);
  }

  async send(request: SignedRequest): Promise<AttemptResult> {
    const { default: got } = await loadGot();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      // A literal address never reaches the guarded lookup, so it is judged here.
      assertPublicHost(hostOf(new URL(request.url)), this.allowPrivate);
    } catch {
      return { statusCode: null, error: REFUSED_DESTINATION, durationMs: 0, responseBody: '' };
    }
    return new Promise<AttemptResult>((resolve) => {
      let statusCode: number | null = null;
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (error: string | null) => {
        if (settled) return;
        settled = true;
        const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
        resolve({ statusCode, error, durationMs: elapsed(), responseBody });
      };
      const stream = got.stream(request.url, {
        method: 'POST',
        body: request.body,
        headers: requestHeaders(request),
        timeout: { request: this.timeoutMs },
        followRedirect: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
        decompress: false,
        dnsLookup: this.lookup,
        ...gotAgents(this.egress),
      });
      stream.on('response', (response: { statusCode: number }) => {
        statusCode = response.statusCode;
      });
      stream.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk);
        size += chunk.length;
        // The rest of an oversized body is never read.
        if (size >= RESPONSE_BODY_LIMIT) {
          stream.destroy();
          finish(null);
        }
      });
      stream.on('end', () => finish(null));
      stream.on('error', (error: Error & { code?: string }) => {
        if (error.code === 'ETIMEDOUT') finish(`timed out after ${this.timeoutMs} ms`);
        else if (error.code === 'EFORBIDDEN') finish(REFUSED_DESTINATION);
        else finish(error.message);
      });
    });
  }
}
