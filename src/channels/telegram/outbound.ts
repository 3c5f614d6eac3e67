import { autoRetry } from '@grammyjs/auto-retry';
import { Api } from 'grammy';
import { NotFoundError } from '../../errors.ts';
import type { TelegramStore } from './telegram-store.ts';
import { splitForTelegram, telegramChatId } from './rules.ts';

/** How the Bot API is reached: `apiRoot` points at another Bot API server (tests, a self-hosted one). */
export interface TelegramApiOptions {
  apiRoot?: string;
}

/** Retries 429 (after Telegram's `retry_after`), 5xx and network failures, a few times. */
export function retrying() {
  return autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 60 });
}

/** The Bot API client of one bot token, retrying as {@link retrying} says. */
export function telegramApi(token: string, options: TelegramApiOptions): Api {
  const api = new Api(token, options.apiRoot ? { apiRoot: options.apiRoot } : undefined);
  api.config.use(retrying());
  return api;
}

/** Sends to Telegram chats: text in as many messages as its limit needs, and the typing action. */
export class TelegramOutbound {
  private readonly api: Api;

  constructor(api: Api) {
    this.api = api;
  }

  /** Plain text (no parse mode), so nothing in a reply can be taken for formatting or break it. */
  async sendText(chatId: number, text: string): Promise<void> {
    for (const part of splitForTelegram(text)) await this.api.sendMessage(chatId, part);
  }

  async typing(chatId: number): Promise<void> {
    await this.api.sendChatAction(chatId, 'typing');
  }
}

/**
 * Sends a human agent's reply to a `tg_` session from any process (the Bot API needs no socket of
 * ours): the chatbot's current token is read from Redis.
 */
export class TelegramReplies {
  private readonly store: TelegramStore;
  private readonly options: TelegramApiOptions;
  /** One client per token, reused across replies. */
  private readonly outbounds = new Map<string, TelegramOutbound>();

  constructor(store: TelegramStore, options: TelegramApiOptions) {
    this.store = store;
    this.options = options;
  }

  async send(chatbotId: string, sessionId: string, text: string): Promise<void> {
    const chatId = telegramChatId(sessionId);
    if (chatId === undefined) throw new NotFoundError('Conversation not found.');
    const connection = await this.store.get(chatbotId);
    let outbound = this.outbounds.get(connection.token);
    if (!outbound) {
      outbound = new TelegramOutbound(telegramApi(connection.token, this.options));
      this.outbounds.set(connection.token, outbound);
    }
    await outbound.sendText(chatId, text);
  }
}
