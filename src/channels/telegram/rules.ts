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

/**
 * Splits a reply into messages Telegram accepts: at most `limit` UTF-16 units each, cut at a paragraph,
 * then a line, then a space when one lies in the second half of the piece, never inside a surrogate pair.
 */
export function splitForTelegram(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let cut = -1;
    for (const separator of ['\n\n', '\n', ' ']) {
      const at = window.lastIndexOf(separator);
      if (at >= limit / 2) {
        cut = at;
        break;
      }
    }
    if (cut === -1) {
      cut = limit;
      // A high surrogate at the end would be cut from its pair.
      const last = rest.charCodeAt(cut - 1);
      if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
      parts.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    } else {
      parts.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).replace(/^\s+/, '');
    }
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}
