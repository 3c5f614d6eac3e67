import type { Api } from 'grammy';
import { NotFoundError } from '../../errors.ts';
import { chatText, type ChannelPort, type VisitorPush } from '../channel-port.ts';
import { loadGrammy, type Grammy } from './grammy.ts';
import type { TelegramStore } from './telegram-store.ts';
import { splitForTelegram, telegramChatId } from './rules.ts';

/** How the Bot API is reached: `apiRoot` points at another Bot API server (tests, a self-hosted one). */
export interface TelegramApiOptions {
  apiRoot?: string;
}

/** Retries 429 (after Telegram's `retry_after`), 5xx and network failures, a few times. */
export function retrying(grammy: Grammy) {
  return grammy.autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 60 });
}

/** The Bot API client of one bot token, retrying as {@link retrying} says. */
export async function telegramApi(token: string, options: TelegramApiOptions): Promise<Api> {
  const grammy = await loadGrammy();
  const api = new grammy.Api(token, options.apiRoot ? { apiRoot: options.apiRoot } : undefined);
  api.config.use(retrying(grammy));
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
 * Hands a push to a Telegram chat: replies, notices and hand-off changes as text, typing as the chat
 * action.
 */
export async function deliverToChat(outbound: TelegramOutbound, chatId: number, push: VisitorPush): Promise<void> {
  const text = chatText(push);
  if (text !== undefined) await outbound.sendText(chatId, text);
  else if (push.type === 'typing') await outbound.typing(chatId);
  // The escalation frame shows nothing in a chat (its hand-off push says it), and Telegram's typing
  // action ends by itself.
}

/**
 * Reaches `tg_` sessions from any process (the Bot API needs no connection of ours), with the
 * chatbot's current token read from Redis: what an agent or the CLI sends, and what a gateway sends
 * for a chatbot whose bot it does not run.
 */
export class TelegramReplies implements Pick<ChannelPort, 'deliver'> {
  private readonly store: TelegramStore;
  private readonly options: TelegramApiOptions;
  /** One client per token, reused across replies. */
  private readonly outbounds = new Map<string, TelegramOutbound>();

  constructor(store: TelegramStore, options: TelegramApiOptions) {
    this.store = store;
    this.options = options;
  }

  async deliver(chatbotId: string, sessionId: string, push: VisitorPush): Promise<void> {
    // Nothing to show: no token read (the chatbot may have no Telegram connection any more).
    if (push.type !== 'typing' && chatText(push) === undefined) return;
    const chatId = telegramChatId(sessionId);
    if (chatId === undefined) throw new NotFoundError('Conversation not found.');
    const connection = await this.store.get(chatbotId);
    let outbound = this.outbounds.get(connection.token);
    if (!outbound) {
      outbound = new TelegramOutbound(await telegramApi(connection.token, this.options));
      this.outbounds.set(connection.token, outbound);
    }
    await deliverToChat(outbound, chatId, push);
  }
}
