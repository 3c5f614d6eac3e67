import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import got from 'got';
import { guardedLookup, isPublicAddress } from '../net/ssrf-guard.ts';

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
}

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
 * Sends webhook requests with got: one POST per attempt, a total timeout, no redirects followed, no
 * automatic retry, no decompression (so no Accept-Encoding), every status returned rather than
 * thrown, at most RESPONSE_BODY_LIMIT bytes of the response read, and the SSRF guard on the address
 * actually connected to.
 */
export class WebhookSender {
  private readonly timeoutMs: number;
  private readonly allowPrivate: boolean;
  private readonly lookup: ReturnType<typeof guardedLookup>;

  constructor(options: { timeoutMs: number; allowPrivate: boolean }) {
    this.timeoutMs = options.timeoutMs;
    this.allowPrivate = options.allowPrivate;
    this.lookup = guardedLookup(options.allowPrivate);
  }

  async send(request: SignedRequest): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const host = new URL(request.url).hostname.replace(/^\[|\]$/g, '');
    if (!this.allowPrivate && isIP(host) && !isPublicAddress(host)) {
      return { statusCode: null, error: 'destination is a non-public address', durationMs: 0, responseBody: '' };
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
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-switchboard-signature': sign(request.body, request.secret),
          'x-switchboard-event': request.event,
          'x-switchboard-delivery': request.deliveryId,
          'x-switchboard-attempt': String(request.attempt),
        },
        timeout: { request: this.timeoutMs },
        followRedirect: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
        decompress: false,
        dnsLookup: this.lookup,
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
        else if (error.code === 'EFORBIDDEN') finish('destination resolves to a non-public address');
        else finish(error.message);
      });
    });
  }
}
