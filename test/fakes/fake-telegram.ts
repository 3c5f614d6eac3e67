import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** One Bot API call as the fake received it. */
export interface BotApiCall {
  token: string;
  method: string;
  params: Record<string, any>;
  at: number;
}

/** A canned failure for the next call of a method. */
export interface BotApiFailure {
  status: number;
  description: string;
  retryAfter?: number;
}

/**
 * A loopback Bot API server speaking Telegram's wire protocol (`POST /bot<token>/<method>` with JSON,
 * answered `{"ok":true,"result":…}` or `{"ok":false,"error_code","description","parameters"}`), for
 * grammY pointed at it with `apiRoot`. It knows the bots it was told about, records every call, keeps
 * a getUpdates queue with long polling, and can fail the next call of a method.
 */
export class FakeTelegram {
  readonly calls: BotApiCall[] = [];
  private readonly bots = new Map<string, Record<string, unknown>>();
  private readonly failures = new Map<string, BotApiFailure[]>();
  private readonly updates = new Map<string, Array<Record<string, unknown>>>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private nextMessageId = 1;
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
        const text = Buffer.concat(chunks).toString('utf8');
        const params = text ? (JSON.parse(text) as Record<string, any>) : {};
        void this.answer(match?.[1] ?? '', match?.[2] ?? '', params).then(([status, body]) => {
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        });
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
    for (const wake of [...this.waiting.values()].flat()) wake();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Registers a bot and returns its token. */
  addBot(username: string): string {
    const id = 7_000_000_000 + this.bots.size;
    const token = `${id}:${'A'.repeat(20)}${crypto.randomUUID().replaceAll('-', '').slice(0, 15)}`;
    this.bots.set(token, {
      id,
      is_bot: true,
      first_name: username,
      username,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
    });
    return token;
  }

  /** The next call of `method` fails as given (several calls queue several failures). */
  failNext(method: string, failure: BotApiFailure): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), failure]);
  }

  /** Queues an update for a bot's getUpdates. */
  queueUpdate(token: string, update: Record<string, unknown>): void {
    this.updates.set(token, [...(this.updates.get(token) ?? []), update]);
    for (const wake of this.waiting.get(token)?.splice(0) ?? []) wake();
  }

  /** Calls of `method` (for one bot when `token` is given). */
  of(method: string, token?: string): BotApiCall[] {
    return this.calls.filter((call) => call.method === method && (token === undefined || call.token === token));
  }

  /** Waits until `count` calls of `method` were received. */
  async waitFor(method: string, count = 1, timeoutMs = 10_000): Promise<BotApiCall[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.of(method).length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} ${method} calls, got ${this.of(method).length}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.of(method);
  }

  private async answer(token: string, method: string, params: Record<string, any>): Promise<[number, object]> {
    const bot = this.bots.get(token);
    if (!bot) return [401, { ok: false, error_code: 401, description: 'Unauthorized' }];
    if (method !== 'getUpdates') this.calls.push({ token, method, params, at: Date.now() });
    const failure = this.failures.get(method)?.shift();
    if (failure) {
      const parameters = failure.retryAfter === undefined ? {} : { parameters: { retry_after: failure.retryAfter } };
      return [
        failure.status,
        { ok: false, error_code: failure.status, description: failure.description, ...parameters },
      ];
    }
    switch (method) {
      case 'getMe':
        return [200, { ok: true, result: bot }];
      case 'sendMessage':
        return [
          200,
          {
            ok: true,
            result: {
              message_id: this.nextMessageId++,
              date: Math.floor(Date.now() / 1000),
              chat: { id: params.chat_id, type: 'private' },
              from: { id: bot.id, is_bot: true, first_name: bot.first_name },
              text: params.text,
            },
          },
        ];
      case 'sendChatAction':
      case 'setWebhook':
      case 'deleteWebhook':
      case 'close':
        return [200, { ok: true, result: true }];
      case 'getUpdates':
        return [200, { ok: true, result: await this.poll(token, params) }];
      default:
        return [404, { ok: false, error_code: 404, description: 'Not Found: method not found' }];
    }
  }

  /** Long polling: confirms updates below `offset`, then answers at once or when one arrives. */
  private async poll(token: string, params: Record<string, any>): Promise<Array<Record<string, unknown>>> {
    const offset = Number(params.offset ?? 0);
    const pending = () => (this.updates.get(token) ?? []).filter((u) => Number(u.update_id) >= offset);
    this.updates.set(token, pending());
    if (pending().length === 0 && Number(params.timeout ?? 0) > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(Number(params.timeout) * 1000, 2000));
        this.waiting.set(token, [
          ...(this.waiting.get(token) ?? []),
          () => {
            clearTimeout(timer);
            resolve();
          },
        ]);
      });
    }
    return pending();
  }
}

/** A private chat's text message update, as Telegram sends it. */
export function textUpdate(updateId: number, chatId: number, text: string): Record<string, unknown> {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: 'private', first_name: 'Ada' },
      from: { id: chatId, is_bot: false, first_name: 'Ada' },
      text,
      ...(text.startsWith('/')
        ? { entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }] }
        : {}),
    },
  };
}
