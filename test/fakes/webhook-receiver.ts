import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import t from 'tap';
import { standardWebhooksSecret } from '../../src/webhooks/standard-webhooks.ts';
import { webhookBodyProblems } from '../support/webhook-schemas.ts';

/** A request as the receiver saw it. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawHeaderNames: string[];
  raw: Buffer;
  body: any;
  signatureValid: boolean;
  /**
   * The Standard Webhooks headers verified by the official `standardwebhooks` library with one of
   * the secrets (in their Standard Webhooks form): `null` when the request has none of them.
   */
  standardSignatureValid: boolean | null;
  /** What docs/webhook-schemas/ finds wrong with the body (empty: it fits). */
  schemaProblems: string[];
  at: number;
}

/** How the receiver answers one request. */
export type ReceiverAnswer =
  { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

/**
 * A real HTTP receiver on loopback, as an owner's CRM would run it: it verifies
 * X-Switchboard-Signature over the raw bytes with timingSafeEqual before parsing anything, and the
 * Standard Webhooks headers, when a request carries them, with the official library. Every body is
 * checked against the webhook JSON Schemas in docs/: one that does not fit fails the running test
 * file, whichever test made it.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  secrets: string[] = [];
  answer: (request: ReceivedWebhook) => ReceiverAnswer = () => ({ status: 200, body: 'ok' });
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = String(req.headers['x-switchboard-signature'] ?? '');
        const request: ReceivedWebhook = {
          headers: req.headers,
          rawHeaderNames: req.rawHeaders.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase()),
          raw,
          body: undefined,
          signatureValid: this.secrets.some((secret) => verify(raw, signature, secret)),
          standardSignatureValid: verifyStandard(raw, req.headers, this.secrets),
          schemaProblems: webhookBodyProblems(raw.toString('utf8')),
          at: Date.now(),
        };
        if (request.schemaProblems.length > 0) {
          t.fail(`a webhook body does not fit docs/webhook-schemas/`, { problems: request.schemaProblems });
        }
        if (request.signatureValid) request.body = JSON.parse(raw.toString('utf8'));
        this.received.push(request);
        const answer = this.answer(request);
        if (answer === 'hang') return;
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          res.end(answer.body ?? '');
        }, answer.delayMs ?? 0);
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function verify(raw: Buffer, signature: string, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Verifies the Standard Webhooks headers as a receiver using the official library would: with the
 * secret's Standard Webhooks form, timestamp tolerance included. `null` when none of them was sent.
 */
function verifyStandard(raw: Buffer, headers: IncomingHttpHeaders, secrets: string[]): boolean | null {
  const names = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
  if (names.every((name) => headers[name] === undefined)) return null;
  const given = Object.fromEntries(names.map((name) => [name, String(headers[name] ?? '')]));
  return secrets.some((secret) => {
    try {
      new StandardWebhook(standardWebhooksSecret(secret)).verify(raw.toString('utf8'), given);
      return true;
    } catch {
      return false;
    }
  });
}
