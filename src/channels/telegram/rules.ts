import { splitText } from '../text-split.ts';

/** Telegram's limit on one message's text, in UTF-16 code units. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** A bot token as BotFather issues it: the bot's numeric id, a colon, a secret. */
export const TELEGRAM_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{30,64}$/;

/** The conversation of a Telegram chat. */
export function telegramSessionId(chatId: number): string {
  return `tg_${chatId}`;
}

/** The chat a `tg_` session talks to, or undefined for any other session. */
export function telegramChatId(sessionId: string): number | undefined {
  const match = /^tg_(-?\d{1,20})$/.exec(sessionId);
  return match ? Number(match[1]) : undefined;
}

/** Where Telegram posts a chatbot's updates in webhook mode. */
export function telegramWebhookPath(chatbotId: string): string {
  return `/channels/telegram/${chatbotId}`;
}

/** Splits a reply into messages Telegram accepts (see {@link splitText}). */
export function splitForTelegram(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  return splitText(text, limit);
}
