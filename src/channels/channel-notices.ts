/** What a messaging chat (Telegram, WhatsApp) is told when it sends a photo, a sticker or anything but text. */
export const TEXT_ONLY_NOTICE = 'Sorry, I can only read text messages.';

/** What a new Telegram chat (`/start`) is told when the chatbot has no welcome text of its own. */
export const DEFAULT_WELCOME = 'Hi! How can I help you?';
