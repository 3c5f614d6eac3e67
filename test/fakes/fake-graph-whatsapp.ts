import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** One Graph API call as the fake received it. */
export interface GraphCall {
  method: string;
  /** The path without the version: `/{phone-number-id}/messages`. */
  path: string;
  version: string;
  token: string;
  body: Record<string, any>;
  at: number;
  /** The id the fake gave a text message it accepted. */
  wamid?: string;
}

/** A canned failure for the next call of a kind (`send`, `read`, `number`, `subscribe`). */
export interface GraphFailure {
  status: number;
  code: number;
  /** The error's title; Meta puts it in `message` as `(#code) title`. */
  title: string;
  details?: string;
  retryAfter?: number;
}

/** A business phone number the fake knows, and the token that may use it. */
export interface FakeNumber {
  id: string;
  token: string;
  display: string;
  name: string;
}

type CallKind = 'send' | 'read' | 'number' | 'subscribe';

/** A status, a JSON body, and extra headers. */
type Answer = [number, object, Record<string, string>?];

/**
 * A loopback Graph API speaking the WhatsApp Business Cloud API's documented wire shapes, for the
 * gateway pointed at it with GRAPH_API_BASE_URL: `POST /{version}/{phone-number-id}/messages` (a text
 * message answered `{"messaging_product","contacts":[{input,wa_id}],"messages":[{id:"wamid.…"}]}`, a
 * read receipt with or without `typing_indicator` answered `{"success":true}`),
 * `GET /{version}/{phone-number-id}?fields=…` (the number's display number and verified name) and
 * `POST /{version}/{waba-id}/subscribed_apps`. Errors come as Meta sends them:
 * `{"error":{"message":"(#code) title","type":"OAuthException","code","error_data":{"messaging_product","details"},"fbtrace_id"}}`,
 * an unknown token as 401 code 190. It records every call and can fail the next call of a kind.
 */
export class FakeGraphWhatsApp {
  readonly calls: GraphCall[] = [];
  private readonly registered = new Map<string, FakeNumber>();
  private readonly accounts = new Map<string, string>();
  private readonly failures = new Map<CallKind, GraphFailure[]>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private sent = 0;
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [status, body, headers] = this.answer(req.method ?? 'GET', req.url ?? '/', req.headers, text);
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Registers a business phone number (and the token allowed to use it); ids are unique per fake. */
  addNumber(display = '+1 555-0100', name = 'Acme Support'): FakeNumber {
    const id = String(106_540_352_242_900 + this.registered.size);
    const number = { id, token: `EAAG${crypto.randomUUID().replaceAll('-', '')}`, display, name };
    this.registered.set(id, number);
    return number;
  }

  /** Every number registered. */
  numbers(): FakeNumber[] {
    return [...this.registered.values()];
  }

  /** Registers a WhatsApp Business account that `token` may manage. */
  addBusinessAccount(token: string): string {
    const id = String(102_290_129_340_300 + this.accounts.size);
    this.accounts.set(id, token);
    return id;
  }

  /** The next call of `kind` fails as given (several queue several failures). */
  failNext(kind: CallKind, failure: GraphFailure): void {
    this.failures.set(kind, [...(this.failures.get(kind) ?? []), failure]);
  }

  /** Text messages sent from a number: `[to, body]`. */
  texts(numberId?: string): Array<[string, string]> {
    return this.of('send', numberId).map((call) => [call.body.to as string, call.body.text.body as string]);
  }

  /** Calls of a kind (`send`, `read`, …), from one number when given. */
  of(kind: CallKind, numberId?: string): GraphCall[] {
    return this.calls.filter(
      (call) => kindOf(call) === kind && (numberId === undefined || call.path.startsWith(`/${numberId}`)),
    );
  }

  private answer(
    method: string,
    rawUrl: string,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): Answer {
    const url = new URL(rawUrl, 'http://graph');
    const match = /^\/(v\d+\.\d+)(\/.*)$/.exec(url.pathname);
    if (!match) return graphError(400, { status: 400, code: 2500, title: 'Unknown path components' });
    const token = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1] ?? '';
    const body = text ? (JSON.parse(text) as Record<string, any>) : {};
    const call: GraphCall = {
      method,
      path: `${match[2]!}${url.search}`,
      version: match[1]!,
      token,
      body,
      at: Date.now(),
    };
    this.calls.push(call);
    const failure = this.failures.get(kindOf(call))?.shift();
    if (failure) return graphError(failure.status, failure);
    const [, id, edge] = /^\/(\d+)(\/\w+)?$/.exec(match[2]!) ?? [];
    if (edge === '/subscribed_apps' && method === 'POST') {
      if (this.accounts.get(id ?? '') !== token) return invalidToken();
      return [200, { success: true }];
    }
    const number = this.registered.get(id ?? '');
    if (!number) return graphError(400, { status: 400, code: 100, title: 'Invalid parameter', details: `Unsupported post request. Object with ID '${id}' does not exist` }); // prettier-ignore
    if (number.token !== token) return invalidToken();
    if (!edge && method === 'GET') {
      return [200, { verified_name: number.name, display_phone_number: number.display, id: number.id }];
    }
    if (edge === '/messages' && method === 'POST') return this.message(call);
    return graphError(400, { status: 400, code: 100, title: 'Invalid parameter', details: 'Unknown edge' });
  }

  /** A text message or a read receipt, checked as the Cloud API checks them. */
  private message(call: GraphCall): Answer {
    const { body } = call;
    if (body.messaging_product !== 'whatsapp') {
      return graphError(400, { status: 400, code: 100, title: 'Invalid parameter', details: 'The parameter messaging_product is required.' }); // prettier-ignore
    }
    if (body.status === 'read') {
      if (typeof body.message_id !== 'string')
        return graphError(400, { status: 400, code: 100, title: 'Invalid parameter' });
      if (body.typing_indicator !== undefined && body.typing_indicator?.type !== 'text') {
        return graphError(400, { status: 400, code: 100, title: 'Invalid parameter', details: 'typing_indicator.type must be text' }); // prettier-ignore
      }
      return [200, { success: true }];
    }
    const textBody = body.text?.body;
    if (body.type !== 'text' || typeof body.to !== 'string' || typeof textBody !== 'string') {
      return graphError(400, { status: 400, code: 100, title: 'Invalid parameter' });
    }
    if (textBody.length > 4096) {
      return graphError(400, { status: 400, code: 100, title: 'Invalid parameter', details: "Param text['body'] must be at most 4096 characters long." }); // prettier-ignore
    }
    this.sent += 1;
    const wamid = `wamid.HBgL${String(this.sent).padStart(6, '0')}${Buffer.from(body.to).toString('base64url')}`;
    call.wamid = wamid;
    return [
      200,
      { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: wamid }] },
    ];
  }
}

function kindOf(call: GraphCall): CallKind {
  if (call.path.includes('/subscribed_apps')) return 'subscribe';
  if (call.method === 'GET') return 'number';
  return call.body.status === 'read' ? 'read' : 'send';
}

function graphError(status: number, failure: GraphFailure): Answer {
  const body = {
    error: {
      message: `(#${failure.code}) ${failure.title}`,
      type: 'OAuthException',
      code: failure.code,
      error_data: { messaging_product: 'whatsapp', details: failure.details ?? failure.title },
      fbtrace_id: 'AbCdEfGhIjK',
    },
  };
  return [status, body, failure.retryAfter === undefined ? undefined : { 'retry-after': String(failure.retryAfter) }];
}

function invalidToken(): Answer {
  return graphError(401, {
    status: 401,
    code: 190,
    title: 'Error validating access token: Session has expired',
  });
}

/** The `value.metadata` of a number's webhooks. */
function metadata(number: Pick<FakeNumber, 'id' | 'display'>) {
  return { display_phone_number: number.display.replace(/\D/g, ''), phone_number_id: number.id };
}

/** A webhook delivery as Meta posts it: one entry, one `messages` change. */
export function webhookPayload(number: Pick<FakeNumber, 'id' | 'display'>, value: Record<string, unknown>) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          { value: { messaging_product: 'whatsapp', metadata: metadata(number), ...value }, field: 'messages' },
        ],
      },
    ],
  };
}

/** A visitor's message (text, or any other `type` with its object) from `waId`, as a webhook. */
export function messageWebhook(
  number: Pick<FakeNumber, 'id' | 'display'>,
  waId: string,
  message: { id: string; type: string; [field: string]: unknown },
  sentAtMs = Date.now(),
) {
  return webhookPayload(number, {
    contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: waId }],
    messages: [{ from: waId, timestamp: String(Math.floor(sentAtMs / 1000)), ...message }],
  });
}

/** A text message from `waId`, as a webhook. */
export function textWebhook(
  number: Pick<FakeNumber, 'id' | 'display'>,
  waId: string,
  id: string,
  body: string,
  sentAtMs?: number,
) {
  return messageWebhook(number, waId, { id, type: 'text', text: { body } }, sentAtMs);
}

/** A status callback for a message the business sent. */
export function statusWebhook(
  number: Pick<FakeNumber, 'id' | 'display'>,
  wamid: string,
  recipient: string,
  status: 'sent' | 'delivered' | 'read' | 'failed',
  error?: { code: number; title: string; details: string },
) {
  return webhookPayload(number, {
    statuses: [
      {
        id: wamid,
        status,
        timestamp: String(Math.floor(Date.now() / 1000)),
        recipient_id: recipient,
        ...(status === 'failed' && error
          ? { errors: [{ code: error.code, title: error.title, message: error.title, error_data: { details: error.details }, href: '/documentation/business-messaging/whatsapp/support/error-codes' }] } // prettier-ignore
          : {
              conversation: { id: 'a1b2c3', origin: { type: 'service' } },
              pricing: { billable: false, pricing_model: 'PMP', category: 'service', type: 'free_customer_service' },
            }),
      },
    ],
  });
}

/** `sha256=` and the hex HMAC-SHA256 of the raw body with the app secret: `X-Hub-Signature-256`. */
export function hubSignature(rawBody: string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/**
 * Posts a webhook to a gateway as Meta does: the JSON serialized once and signed over exactly those
 * bytes (`signature` replaces the header; null leaves it out).
 */
export async function postWebhook(
  baseUrl: string,
  chatbotId: string,
  payload: unknown,
  appSecret: string,
  signature?: string | null,
): Promise<Response> {
  const raw = JSON.stringify(payload);
  const header = signature === undefined ? hubSignature(raw, appSecret) : signature;
  return fetch(`${baseUrl}/channels/whatsapp/${chatbotId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'x-hub-signature-256': header }) },
    body: raw,
  });
}
