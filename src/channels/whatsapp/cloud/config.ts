import { randomBytes } from 'node:crypto';
import { whatsappJid, whatsappSessionId } from '../rules.ts';

/** WhatsApp's limit on one text message's body (characters; counted here in UTF-16 units, the stricter). */
export const CLOUD_TEXT_LIMIT = 4096;

/**
 * The customer-service window: a business may send free-form messages to a WhatsApp user only within
 * 24 hours of that user's last message (outside it, only approved templates, which Switchboard does
 * not send).
 */
export const SERVICE_WINDOW_MS = 24 * 3600 * 1000;

/** What an agent is told when the window has closed. */
export const WINDOW_CLOSED = 'The 24-hour WhatsApp window has closed: the visitor must write first.';

/** Meta retries an unacknowledged webhook for up to 7 days: a message id is remembered a little longer. */
export const INBOUND_MEMORY_SECONDS = 8 * 24 * 3600;

/** Status callbacks come within days of a send; the reply a sent message belongs to is kept for 30. */
export const SENT_MEMORY_SECONDS = 30 * 24 * 3600;

/**
 * Meta's typing indicator disappears after 25 seconds or with the reply; it is shown again a little
 * before, while the AI still works.
 */
export const CLOUD_TYPING_RENEW_MS = 20_000;

/** How long one Graph API call may take. */
export const GRAPH_TIMEOUT_MS = 15_000;

/** Graph API calls tried again after a throttle or an outage (the first try not counted). */
export const GRAPH_RETRIES = 4;

/** The longest `Retry-After` waited for; a longer one fails the call at once. */
export const GRAPH_MAX_RETRY_AFTER_MS = 60_000;

/** Ids Meta gives phone numbers and business accounts: digits. */
const GRAPH_ID = /^\d{5,25}$/;

/** Longest notice an owner may set for messages that are not text. */
export const MAX_NOTICE_LENGTH = 500;

/** Where Meta posts a chatbot's Cloud API webhooks (and asks to verify the subscription). */
export function cloudWebhookPath(chatbotId: string): string {
  return `/channels/whatsapp/${chatbotId}`;
}

/** Whether a string is a Graph id (a phone number id, a WhatsApp Business account id). */
export function isGraphId(value: unknown): value is string {
  return typeof value === 'string' && GRAPH_ID.test(value);
}

/** A new verify token: Meta sends it back when it checks the webhook URL. */
export function newVerifyToken(): string {
  return `sbv_${randomBytes(18).toString('base64url')}`;
}

/**
 * The conversation of a Cloud API chat. The same as the linked device's for the same number
 * (`wa_<number>@s.whatsapp.net`), so a contact keeps one conversation when the owner switches transport.
 */
export function cloudSessionId(waId: string): string {
  return whatsappSessionId(`${waId}@s.whatsapp.net`);
}

/** The WhatsApp id (the number's digits) a `wa_` session writes to, or undefined for any other session. */
export function cloudRecipient(sessionId: string): string | undefined {
  const jid = whatsappJid(sessionId);
  return jid?.endsWith('@s.whatsapp.net') ? jid.slice(0, -'@s.whatsapp.net'.length) : undefined;
}
